/* SPDX-License-Identifier: MIT */
/*
 * settings.h - the table of every setting (lib/core/settings.def): name,
 * type, default, range, who reads it, what it means.  conf_get() and
 * conf_get_int() take their defaults and ranges from it; `xmhub
 * settings` prints it as an env file or a man page; `xmhub check-config`
 * checks values against it.
 */
#ifndef XMHUB_SETTINGS_H
#define XMHUB_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

enum setting_type {
	SETTING_STR,
	SETTING_INT,
	SETTING_NUM,
	SETTING_BOOL,
	SETTING_DIR
};

#define SETTING_REQUIRED 0x1u /* the programs named refuse to start without */
#define SETTING_SECRET 0x2u   /* a value never shown */

struct setting {
	const char *name;
	enum setting_type type;
	const char *def; /* NULL: none */
	double min, max; /* INT, NUM: the range; STR: min is the least length */
	unsigned flags;
	const char *programs; /* space-separated, as in settings.def */
	const char *meaning;
};

/* Every setting, in the order of settings.def; settings_count of them. */
extern const struct setting settings[];
extern const size_t settings_count;

/* The setting named name, or NULL. */
const struct setting *settings_find(const char *name);

/* The type's name as settings.def writes it ("INT"). */
const char *settings_type_name(enum setting_type t);

/*
 * Whether value is one s accepts (its type and range; a DIR must be a
 * directory the process can read); false with the reason in why.
 */
bool settings_check(const struct setting *s, const char *value, char *why,
		    size_t why_len);

/* "true"/"1"/"yes"/"on" and "false"/"0"/"no"/"off" (any case) into
 * *out; false for anything else. */
bool settings_bool(const char *value, bool *out);

#endif
