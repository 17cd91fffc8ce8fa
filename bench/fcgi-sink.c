/* SPDX-License-Identifier: MIT */
/*
 * bench/fcgi-sink.c - the floor of bench/ingest: a FastCGI program that
 * reads the request body and answers 200 with a small JSON body, doing
 * nothing else.  Built by `make bench` only, never installed; served at
 * /bench/sink by httpd-conf/lighttpd.d/bench.conf.
 */
#include "config.h"

#include <fcgiapp.h>
#include <signal.h>
#include <sys/prctl.h>

int
main(void)
{
	FCGX_Request req;
	char buf[65536];

	/* Ends with the lighttpd that spawned it, as the platform's programs
	 * do (t/e2e/self-heal.t counts what a killed lighttpd leaves). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || FCGX_Init() != 0 ||
	    FCGX_InitRequest(&req, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&req) >= 0) {
		while (FCGX_GetStr(buf, sizeof(buf), req.in) > 0)
			;
		FCGX_FPrintF(req.out, "Status: 200 OK\r\nContent-Type: "
				      "application/json\r\nContent-Length: "
				      "12\r\n\r\n{\"ok\":true}\n");
		FCGX_Finish_r(&req);
	}
	return 0;
}
