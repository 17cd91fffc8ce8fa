/* SPDX-License-Identifier: MIT */
/*
 * cgi.h - a FastCGI program run as a plain CGI: one request per process.
 *
 * Under a web server without FastCGI (mod_cgi or mod_cgid on a shared
 * host, doc/shared-hosting.md) a program is started for each request
 * with the request's variables in its environment, the body on standard
 * input and the answer expected on standard output.  libfcgi's accept
 * (FCGX_Accept_r) then fails at once, standard input being no listening
 * socket, and its plain-CGI support is only in the stdio layer
 * (FCGI_Accept), which the programs do not use.  This module makes that
 * request an FCGX_Request of its own, so that lib/web/app serves it as
 * any other and the answers are the same.
 */
#ifndef XMHUB_CGI_H
#define XMHUB_CGI_H

#include <fcgiapp.h>
#include <stdbool.h>

/* True when the process was started as a plain CGI: its standard input
 * is not a FastCGI listening socket (FCGX_IsCGI()).  After FCGX_Init(). */
bool cgi_is_cgi(void);

/*
 * Makes *r the process's one CGI request: its parameters the environment
 * (environ), its in, out and err streams standard input, output and
 * error, buffered here.  False (errno set) when memory runs out, *r then
 * holding nothing.  Ended with cgi_finish(), never FCGX_Finish_r().
 */
bool cgi_request(FCGX_Request *r);

/* Writes what out and err still buffer and frees the streams of a
 * cgi_request(); false when a write failed (the client left).  */
bool cgi_finish(FCGX_Request *r);

#endif
