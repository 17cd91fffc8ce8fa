/*
 * conf.h - settings from the environment and an env file.
 *
 * Settings are environment variables (XMHUB_* for the platform).  An env
 * file of KEY=VALUE lines fills in variables the environment does not
 * set, so a deployment can keep them in /etc/xmhub/xmhub.env.  Values
 * are read once at start-up; nothing here allocates per request.
 */
#ifndef XMHUB_CONF_H
#define XMHUB_CONF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Loads the env file: $XMHUB_ENV_FILE if set, else /etc/xmhub/xmhub.env
 * if it exists.  A missing file is not an error.  Lines are KEY=VALUE;
 * blank lines and lines starting with # are skipped; a value may be in
 * double quotes.  Returns false with a reason in detail on a file that
 * cannot be read or a malformed line.
 */
bool conf_init(char *detail, size_t detail_len);

/* Loads one env file as conf_init() does (not overriding set names). */
bool conf_load_file(const char *path, char *detail, size_t detail_len);

/* The setting's value, or def when unset or empty. */
const char *conf_str(const char *name, const char *def);

/*
 * The setting as an integer in [min, max] into *out, or def when unset.
 * False (with *out = def) when set to anything else: callers refuse to
 * start rather than run with a setting they did not mean.
 */
bool conf_int(const char *name, long long def, long long min, long long max,
	      long long *out);

#endif
