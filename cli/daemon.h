/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - `xmhub daemon NAME`: runs one daemon of httpd-conf/programs
 * (websocketd, the WebSocket front, the runners) with the ports of the
 * settings (XMHUB_WS_PORT, XMHUB_WSD_PORT), as the installed units start
 * them, so that a port is changed in the env file only (doc/deploy.md
 * "Ports").  The command comes from httpd-conf/gen, the one reader of
 * the table; this process becomes it (execvp of its words: no shell).
 *
 * NAME ingest-authorizer is Apache's FastCGI authorizer of the ingest
 * WebSocket: a socket listening on 127.0.0.1:XMHUB_AUTHZ_PORT becomes
 * its standard input (where libfcgi looks for it), then it is run.
 */
#ifndef XMHUB_DAEMON_H
#define XMHUB_DAEMON_H

/* argv: the words after `daemon`.  Returns only on failure: 1, or 2
 * for usage (an unknown name). */
int daemon_main(int argc, char *argv[]);

#endif
