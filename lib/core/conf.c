/* SPDX-License-Identifier: MIT */
/*
 * conf.c - settings from the environment and an env file.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/settings.h"

/* XMHUB_ENV_DEFAULT, SYSCONFDIR/xmhub/xmhub.env, comes from Makefile.am. */

/* The account's own env file under its home (conf_env_file()). */
#define CONF_HOME_ENV "/.config/xmhub/xmhub.env"

/* Puts the account's home into home (len bytes): $HOME, else the
 * password database's (suexec starts CGI programs without HOME).  False
 * when there is none or it does not fit. */
static bool
home_dir(char *home, size_t len)
{
	const char *h = getenv("HOME");
	struct passwd pw, *found = NULL;
	char buf[4096];

	if ((h == NULL || *h != '/') &&
	    getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &found) == 0 &&
	    found != NULL)
		h = found->pw_dir;
	return h != NULL && *h == '/' &&
	       (size_t)snprintf(home, len, "%s", h) < len;
}

const char *
conf_env_file(void)
{
	static char path[4096];
	char home[4096 - sizeof(CONF_HOME_ENV)];

	if (access(XMHUB_ENV_DEFAULT, F_OK) == 0 || errno != ENOENT ||
	    !home_dir(home, sizeof(home)))
		return XMHUB_ENV_DEFAULT;
	snprintf(path, sizeof(path), "%s" CONF_HOME_ENV, home);
	return access(path, F_OK) == 0 ? path : XMHUB_ENV_DEFAULT;
}

/* Strips white space at both ends of s in place; returns the start. */
static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && strchr(" \t\r\n", e[-1]) != NULL)
		*--e = '\0';
	return s;
}

/* True for a name of letters, digits and underscores, not starting
 * with a digit. */
static bool
valid_name(const char *s)
{
	if (*s == '\0' || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool
conf_file_each(const char *path, bool (*fn)(const char *, const char *, void *),
	       void *arg, char *detail, size_t detail_len)
{
	FILE *f;
	char *line = NULL, *key, *val, *eq;
	size_t cap = 0, n = 0;
	bool ok = true;

	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return true;
		snprintf(detail, detail_len, "%s: %s", path, strerror(errno));
		return false;
	}
	while (getline(&line, &cap, f) >= 0) {
		n++;
		key = trim(line);
		if (*key == '\0' || *key == '#')
			continue;
		if ((eq = strchr(key, '=')) == NULL) {
			snprintf(detail, detail_len, "%s:%zu: not KEY=VALUE",
				 path, n);
			ok = false;
			break;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		if (!valid_name(key)) {
			snprintf(detail, detail_len, "%s:%zu: bad name", path,
				 n);
			ok = false;
			break;
		}
		if (val[0] == '"' && strlen(val) >= 2 &&
		    val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = '\0';
			val++;
		}
		if (!fn(key, val, arg)) {
			snprintf(detail, detail_len, "%s:%zu: %s", path, n,
				 strerror(errno));
			ok = false;
			break;
		}
	}
	if (ok && ferror(f)) {
		snprintf(detail, detail_len, "%s: read error", path);
		ok = false;
	}
	free(line);
	fclose(f);
	return ok;
}

/* conf_load_file()'s step: the environment wins over the file. */
static bool
set_unless_set(const char *key, const char *val, void *arg)
{
	(void)arg;
	return setenv(key, val, 0) == 0;
}

bool
conf_load_file(const char *path, char *detail, size_t detail_len)
{
	return conf_file_each(path, set_unless_set, NULL, detail, detail_len);
}

bool
conf_init(char *detail, size_t detail_len)
{
	const char *path = getenv("XMHUB_ENV_FILE");

	return conf_load_file(path != NULL && *path != '\0' ? path
							    : conf_env_file(),
			      detail, detail_len);
}

const char *
conf_str(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : def;
}

bool
conf_int(const char *name, long long def, long long min, long long max,
	 long long *out)
{
	const char *v = conf_str(name, NULL);
	char *end;
	long long n;

	*out = def;
	if (v == NULL)
		return true;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < min || n > max)
		return false;
	*out = n;
	return true;
}

const char *
conf_get(const char *name)
{
	const struct setting *s = settings_find(name);

	return conf_str(name, s != NULL ? s->def : NULL);
}

bool
conf_get_int(const char *name, long long *out)
{
	const struct setting *s = settings_find(name);

	*out = 0;
	if (s == NULL || s->type != SETTING_INT)
		return false;
	return conf_int(name, s->def != NULL ? strtoll(s->def, NULL, 10) : 0,
			(long long)s->min, (long long)s->max, out);
}

bool
conf_get_num(const char *name, double *out)
{
	const struct setting *s = settings_find(name);
	const char *v = conf_str(name, NULL);
	char *end;
	double d;

	*out = 0;
	if (s == NULL || s->type != SETTING_NUM)
		return false;
	*out = s->def != NULL ? strtod(s->def, NULL) : 0;
	if (v == NULL)
		return true;
	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !isfinite(d) ||
	    d < s->min || d > s->max)
		return false;
	*out = d;
	return true;
}
