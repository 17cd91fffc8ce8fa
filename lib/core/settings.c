/* SPDX-License-Identifier: MIT */
/*
 * settings.c - the table of every setting, from settings.def.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/settings.h"

/* XMHUB_STORAGE_DEFAULT, XMHUB_MODEL_DEFAULT and XMHUB_SQL_DEFAULT,
 * configure's paths, come from Makefile.am. */
#define REQUIRED SETTING_REQUIRED
#define SECRET SETTING_SECRET

const struct setting settings[] = {
#define SETTING(name, type, def, min, max, flags, programs, meaning)           \
	{#name, SETTING_##type, def, min, max, flags, programs, meaning},
#include "core/settings.def"
#undef SETTING
};

const size_t settings_count = sizeof(settings) / sizeof(settings[0]);

const struct setting *
settings_find(const char *name)
{
	for (size_t i = 0; i < settings_count; i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

const char *
settings_type_name(enum setting_type t)
{
	static const char *const names[] = {
		[SETTING_STR] = "STR", [SETTING_INT] = "INT",
		[SETTING_NUM] = "NUM", [SETTING_BOOL] = "BOOL",
		[SETTING_DIR] = "DIR",
	};

	return names[t];
}

bool
settings_bool(const char *value, bool *out)
{
	static const char *const yes[] = {"true", "1", "yes", "on"};
	static const char *const no[] = {"false", "0", "no", "off"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

bool
settings_check(const struct setting *s, const char *value, char *why,
	       size_t why_len)
{
	struct stat sb;
	char *end;
	double d;
	bool b;

	switch (s->type) {
	case SETTING_INT:
	case SETTING_NUM:
		errno = 0;
		d = s->type == SETTING_INT ? (double)strtoll(value, &end, 10)
					   : strtod(value, &end);
		if (errno != 0 || end == value || *end != '\0' ||
		    !isfinite(d) || d < s->min || d > s->max) {
			if (s->type == SETTING_INT)
				snprintf(why, why_len,
					 "an integer from %.0f to %.0f", s->min,
					 s->max);
			else
				snprintf(why, why_len, "a number from %g to %g",
					 s->min, s->max);
			return false;
		}
		return true;
	case SETTING_BOOL:
		if (!settings_bool(value, &b)) {
			snprintf(why, why_len, "true or false");
			return false;
		}
		return true;
	case SETTING_DIR:
		errno = 0;
		if (stat(value, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
		    access(value, R_OK | X_OK) != 0) {
			snprintf(why, why_len, "%s: %s", value,
				 errno != 0 ? strerror(errno)
					    : "not a readable directory");
			return false;
		}
		return true;
	case SETTING_STR:
		if (strlen(value) < (size_t)s->min) {
			snprintf(why, why_len, "%.0f characters or more",
				 s->min);
			return false;
		}
		return true;
	}
	snprintf(why, why_len, "unknown type");
	return false;
}
