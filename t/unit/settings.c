/* SPDX-License-Identifier: MIT */
/*
 * settings.t - the table of settings (lib/core/settings.c) and what
 * conf_get(), conf_get_int(), conf_get_num() and conf_file_each() make of
 * it; the table's defaults agree with the constants the code keeps.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/uploads.h"
#include "codec/xmch.h"
#include "core/auth.h"
#include "core/conf.h"
#include "core/settings.h"
#include "web/wsguard.h"
#include "tap.h"

/* The setting's default as an integer. */
static long long
def_int(const char *name)
{
	const struct setting *s = settings_find(name);

	return s != NULL && s->def != NULL ? atoll(s->def) : -1;
}

/* conf_file_each's callback: remembers the last name. */
static bool
last_name(const char *name, const char *value, void *arg)
{
	static char last[64];

	(void)value;
	snprintf(last, sizeof(last), "%s", name);
	((const char **)arg)[0] = last;
	return true;
}

int
main(void)
{
	char why[256], path[] = "/tmp/settings-t-XXXXXX", detail[256];
	const char *last = NULL;
	long long v;
	double d;
	int fd;

	/* Names are unique. */
	for (size_t i = 0; i < settings_count; i++)
		for (size_t j = i + 1; j < settings_count; j++)
			if (strcmp(settings[i].name, settings[j].name) == 0)
				ok(false, "%s twice", settings[i].name);
	ok(settings_find("XMHUB_DATABASE_URL") != NULL &&
		   settings_find("XMHUB_NOPE") == NULL,
	   "settings_find");

	/* Every default is accepted by its own setting (DIRs aside: they
	 * name installed places; the sample rate's 0, "the input's rate",
	 * is the one default outside the range a value must be in). */
	for (size_t i = 0; i < settings_count; i++) {
		const struct setting *s = &settings[i];

		if (s->def == NULL || *s->def == '\0' ||
		    s->type == SETTING_DIR ||
		    strcmp(s->name, "XMHUB_TRANSCODE_SAMPLE_RATE") == 0)
			continue;
		if (!settings_check(s, s->def, why, sizeof(why)))
			ok(false, "%s's default %s: %s", s->name, s->def, why);
	}
	ok(true, "the defaults are in their ranges");

	/* The defaults the code keeps as constants agree. */
	is_int(def_int("XMHUB_ACCESS_TTL"), AUTH_ACCESS_TTL, "access TTL");
	is_int(def_int("XMHUB_REFRESH_TTL"), AUTH_REFRESH_TTL, "refresh TTL");
	is_int(def_int("XMHUB_MAX_UPLOAD_BYTES"), UPLOADS_MAX_DEFAULT,
	       "upload limit");
	is_int(def_int("XMHUB_WS_MAX_MESSAGE"), WSGUARD_MAX_MESSAGE,
	       "WebSocket message");
	ok(settings_find("XMHUB_COMPACT_TARGET_BYTES")->max ==
		   XMCH_MAX_BYTES / 2,
	   "compaction's byte target ends at half a chunk");

	/* Absolute default paths (configure's). */
	ok(settings_find("FACE_API_MODEL_DIR")->def[0] == '/' &&
		   strstr(settings_find("FACE_API_MODEL_DIR")->def,
			  "/models") != NULL,
	   "the model directory default is absolute");
	ok(settings_find("XMHUB_STORAGE_DIR")->def[0] == '/',
	   "the storage default is absolute");
	ok(conf_env_file()[0] == '/' &&
		   strstr(conf_env_file(), "/xmhub/xmhub.env") != NULL,
	   "the env file is under sysconfdir");

	/* conf_get*: the table's default and range. */
	unsetenv("XMHUB_READY_INTERVAL");
	ok(conf_get_int("XMHUB_READY_INTERVAL", &v) && v == 10,
	   "unset: the table's default");
	setenv("XMHUB_READY_INTERVAL", "3600", 1);
	ok(conf_get_int("XMHUB_READY_INTERVAL", &v) && v == 3600,
	   "the top of the range");
	setenv("XMHUB_READY_INTERVAL", "3601", 1);
	ok(!conf_get_int("XMHUB_READY_INTERVAL", &v) && v == 10,
	   "out of range: refused, the default");
	ok(!conf_get_int("XMHUB_NOPE", &v) &&
		   !conf_get_int("XMHUB_S3_REGION", &v),
	   "not an INT setting: refused");
	unsetenv("XMHUB_S3_REGION");
	is_str(conf_get("XMHUB_S3_REGION"), "us-east-1", "string default");
	unsetenv("XMHUB_S3_ENDPOINT");
	ok(conf_get("XMHUB_S3_ENDPOINT") == NULL, "no default: NULL");
	unsetenv("FACE_API_PADDING");
	ok(conf_get_num("FACE_API_PADDING", &d) && d == 0.15, "number default");
	setenv("FACE_API_PADDING", "2.5", 1);
	ok(!conf_get_num("FACE_API_PADDING", &d) && d == 0.15,
	   "number out of range");

	/* settings_check. */
	ok(!settings_check(settings_find("XMHUB_JWT_SECRET"), "short", why,
			   sizeof(why)) &&
		   strstr(why, "32") != NULL,
	   "a short secret");
	ok(settings_check(settings_find("FACE_API_STORAGE_ENABLED"), "Yes", why,
			  sizeof(why)) &&
		   !settings_check(settings_find("FACE_API_STORAGE_ENABLED"),
				   "maybe", why, sizeof(why)),
	   "booleans");
	ok(settings_check(settings_find("XMHUB_TMP_DIR"), "/tmp", why,
			  sizeof(why)) &&
		   !settings_check(settings_find("XMHUB_TMP_DIR"),
				   "/nonexistent/dir", why, sizeof(why)),
	   "directories");
	ok(!settings_check(settings_find("XMHUB_ACCESS_TTL"), "12x", why,
			   sizeof(why)),
	   "not a number");

	/* conf_file_each: each line, without setting anything. */
	if ((fd = mkstemp(path)) < 0 ||
	    write(fd, "# c\nXMT_A=1\n\nXMT_B = \"2\"\n", 25) != 25)
		abort();
	close(fd);
	unsetenv("XMT_B");
	ok(conf_file_each(path, last_name, &last, detail, sizeof(detail)) &&
		   last != NULL && strcmp(last, "XMT_B") == 0 &&
		   getenv("XMT_B") == NULL,
	   "conf_file_each sees the names and sets nothing");
	unlink(path);
	return tap_done();
}
