/* SPDX-License-Identifier: MIT */
/*
 * xmhub-ws-guard - the WebSocket front between the web server and
 * websocketd (doc/websocket.md): limits the size of clients' messages,
 * which websocketd 0.4.1 reads whole into memory, and gives clients a
 * Close frame when a session ends.
 *
 *   xmhub-ws-guard --listen=127.0.0.1:PORT --backend=127.0.0.1:PORT
 *
 * Settings (environment or env file): XMHUB_WS_MAX_MESSAGE (bytes,
 * default 266240), XMHUB_WS_MAX_CONNECTIONS (default 256).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/conf.h"
#include "web/wsguard.h"
#include "core/log.h"

/* File descriptors besides two per connection. */
#define SPARE_FDS 32

/* Makes room for two descriptors per connection; false when the hard
 * limit does not allow it. */
static bool
enough_fds(long long conns)
{
	struct rlimit r;
	rlim_t need = (rlim_t)(2 * conns + SPARE_FDS);

	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return false;
	if (r.rlim_cur >= need)
		return true;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < need)
		return false;
	r.rlim_cur = need;
	return setrlimit(RLIMIT_NOFILE, &r) == 0;
}

int
main(int argc, char **argv)
{
	struct wsguard_conf c = {.listen_fd = -1};
	struct sockaddr_in listen_at;
	char detail[256];
	long long max_msg, max_conns;
	bool have_listen = false, have_backend = false, bad = false;
	int rc = 1;

	log_init("xmhub-ws-guard");
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--listen=", 9) == 0)
			have_listen = wsguard_addr(argv[i] + 9, &listen_at);
		else if (strncmp(argv[i], "--backend=", 10) == 0)
			have_backend = wsguard_addr(argv[i] + 10, &c.backend);
		else
			bad = true;
	}
	if (bad || !have_listen || !have_backend) {
		fprintf(stderr, "usage: xmhub-ws-guard --listen=A.B.C.D:PORT "
				"--backend=A.B.C.D:PORT\n");
		goto out;
	}
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		goto out;
	}
	if (!conf_get_int("XMHUB_WS_MAX_MESSAGE", &max_msg) ||
	    !conf_get_int("XMHUB_WS_MAX_CONNECTIONS", &max_conns)) {
		log_error("XMHUB_WS_MAX_MESSAGE must be 1024 to 1073741824 "
			  "(bytes), XMHUB_WS_MAX_CONNECTIONS 1 to 65536");
		goto out;
	}
	if (!enough_fds(max_conns)) {
		log_error("%lld connections need %lld file descriptors (ulimit "
			  "-n)",
			  max_conns, 2 * max_conns + SPARE_FDS);
		goto out;
	}
	c.max_message = (uint64_t)max_msg;
	c.max_conns = (int)max_conns;
	if ((c.listen_fd = wsguard_listen(&listen_at, detail, sizeof(detail))) <
	    0) {
		log_error("%s", detail);
		goto out;
	}
	log_info("relaying to websocketd, messages up to %lld bytes, %lld "
		 "connections",
		 max_msg, max_conns);
	rc = wsguard_serve(&c);
out:
	if (c.listen_fd >= 0)
		close(c.listen_fd);
	return rc;
}
