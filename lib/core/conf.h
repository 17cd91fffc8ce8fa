/* SPDX-License-Identifier: MIT */
/*
 * conf.h - settings from the environment and an env file.
 *
 * Settings are environment variables (XMHUB_* for the platform).  An env
 * file of KEY=VALUE lines fills in variables the environment does not
 * set, so a deployment can keep them in SYSCONFDIR/xmhub/xmhub.env.
 * Values are read once at start-up; nothing here allocates per request.
 * Every setting is in lib/core/settings.def: conf_get() and
 * conf_get_int() take its default and range from there.
 */
#ifndef XMHUB_CONF_H
#define XMHUB_CONF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Loads the env file: $XMHUB_ENV_FILE if set, else conf_env_file() if
 * it exists.  A missing file is not an error.  Lines are KEY=VALUE;
 * blank lines and lines starting with # are skipped; a value may be in
 * double quotes.  Returns false with a reason in detail on a file that
 * cannot be read or a malformed line.
 */
bool conf_init(char *detail, size_t detail_len);

/*
 * The env file read without XMHUB_ENV_FILE: configure's sysconfdir with
 * /xmhub/xmhub.env; when that does not exist, the account's own
 * ~/.config/xmhub/xmhub.env if it exists (HOME, else the password
 * database's home: suexec clears the environment of the CGI programs it
 * starts, doc/shared-hosting.md).  A static string; not thread-safe.
 */
const char *conf_env_file(void);

/* Loads one env file as conf_init() does (not overriding set names). */
bool conf_load_file(const char *path, char *detail, size_t detail_len);

/*
 * Calls fn(name, value, arg) for each KEY=VALUE line of env file path,
 * read as conf_init() reads it (a missing file has no lines).  False
 * with the reason in detail on a file that cannot be read, a malformed
 * line, or fn returning false (detail then names the line and errno's
 * reason).
 */
bool conf_file_each(const char *path,
		    bool (*fn)(const char *name, const char *value, void *arg),
		    void *arg, char *detail, size_t detail_len);

/* The setting's value, or def when unset or empty. */
const char *conf_str(const char *name, const char *def);

/*
 * The setting as an integer in [min, max] into *out, or def when unset.
 * False (with *out = def) when set to anything else: callers refuse to
 * start rather than run with a setting they did not mean.
 */
bool conf_int(const char *name, long long def, long long min, long long max,
	      long long *out);

/*
 * The setting's value, or its default from settings.def (NULL for none)
 * when unset or empty.  name must be in settings.def (t/settings.t
 * checks every call); a name that is not gives NULL.
 */
const char *conf_get(const char *name);

/*
 * The integer setting into *out, with the default and range of
 * settings.def; false (with *out the default) when set to anything
 * else or when name is not an INT setting there.
 */
bool conf_get_int(const char *name, long long *out);

/* As conf_get_int() for a NUM setting (a decimal number). */
bool conf_get_num(const char *name, double *out);

#endif
