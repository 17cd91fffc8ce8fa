/*
 * conf.c - settings from the environment and an env file.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"

#define SYSTEM_ENV_FILE "/etc/xmhub/xmhub.env"

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
conf_load_file(const char *path, char *detail, size_t detail_len)
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
		/* The environment wins over the file. */
		if (setenv(key, val, 0) != 0) {
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

bool
conf_init(char *detail, size_t detail_len)
{
	const char *path = getenv("XMHUB_ENV_FILE");

	return conf_load_file(path != NULL && *path != '\0' ? path
							    : SYSTEM_ENV_FILE,
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
