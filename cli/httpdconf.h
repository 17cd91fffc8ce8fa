/* SPDX-License-Identifier: MIT */
/*
 * httpdconf.h - `xmhub httpd-conf lighttpd|apache|htaccess [OPTION...]`:
 * a ready web server configuration for the installed tree (doc/deploy.md),
 * or a shared host's site (doc/shared-hosting.md).
 */
#ifndef XMHUB_HTTPDCONF_H
#define XMHUB_HTTPDCONF_H

/* Runs the installed generator ($(libexecdir)/xmhub/httpd-conf-gen site)
 * with this build's directories and argv (the words after httpd-conf),
 * its output and messages going to ours; returns its exit status (1 when
 * it could not be run or was killed, 2 for usage). */
int httpdconf_cli(int argc, char *argv[]);

#endif
