/* SPDX-License-Identifier: MIT */
/*
 * fcgiproc.h - a FastCGI process's ties to the rest of the stack: it
 * ends with its web server, and shows that it lives.
 *
 * A web server that dies (kill -9, a crash) leaves the FastCGI programs
 * it spawned running.  lighttpd, started again, finds their sockets
 * answering, takes them for programs someone else runs and never
 * respawns them once they die: the endpoint group then answers 503 for
 * good.  fcgiproc_watch_parent() ends a program with its parent instead;
 * httpd-conf/stack also removes the sockets before starting lighttpd.
 *
 * Liveness: each process of a group holds a shared flock() on
 * XMHUB_ALIVE_DIR/NAME.alive for its whole life.  The kernel drops the
 * lock when the process ends however it ends, so a group whose file is
 * not locked by anyone has no process left (fcgiproc_dead_groups(),
 * which /api/health/ready reports).  Unset (Apache's mod_fcgid, which
 * starts processes on demand and ends idle ones): nothing is checked.
 */
#ifndef XMHUB_FCGIPROC_H
#define XMHUB_FCGIPROC_H

#include <stdbool.h>
#include <stddef.h>

/* Longest group name held by fcgiproc_alive() (the program's name). */
#define FCGIPROC_NAME_MAX 64

/*
 * Asks for SIGTERM when the parent (the web server that spawned this
 * program) dies; with app_stop_on_signals() that ends the accept loop
 * after the request in progress.  The one call a FastCGI main with an
 * accept loop of its own makes, first thing.  The signal is delivered to
 * any thread that does not block it: other threads must block SIGTERM,
 * so that the accepting one is interrupted.  False when the parent is
 * already gone (the program should exit 0) or prctl() fails (errno).
 */
bool fcgiproc_watch_parent(void);

/*
 * Takes the shared lock of group name (XMHUB_ALIVE_DIR/NAME.alive,
 * created mode 0600) and keeps it until the process ends; nothing when
 * XMHUB_ALIVE_DIR is unset.  Call after conf_init().  False with detail
 * set when the file cannot be opened or locked.
 */
bool fcgiproc_alive(const char *name, char *detail, size_t len);

/*
 * Writes into out (len bytes, NUL-terminated, truncated at a name) the
 * names, comma-separated, of the groups of XMHUB_ALIVE_DIR whose file no
 * process holds.  Returns how many such groups there are (0 when
 * XMHUB_ALIVE_DIR is unset), -1 when the directory cannot be read (out
 * then holds why).
 */
int fcgiproc_dead_groups(char *out, size_t len);

#endif
