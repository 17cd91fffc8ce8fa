/* SPDX-License-Identifier: MIT */
/*
 * faceapi_conf.c - the face service's settings.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/conf.h"
#include "core/settings.h"
#include "face/service/faceapi_conf.h"

static const char *const method_names[] = {
	[FACE_GAUSSIAN] = "gaussian",
	[FACE_PIXELATE] = "pixelate",
	[FACE_SOLID] = "solid",
	[FACE_ELLIPTICAL] = "elliptical",
};

bool
faceapi_method_parse(const char *name, enum face_method *out)
{
	for (size_t i = 0; i < sizeof(method_names) / sizeof(*method_names);
	     i++)
		if (strcmp(name, method_names[i]) == 0) {
			*out = (enum face_method)i;
			return true;
		}
	return false;
}

const char *
faceapi_method_name(enum face_method m)
{
	return (size_t)m < sizeof(method_names) / sizeof(*method_names)
		       ? method_names[m]
		       : "unknown";
}

bool
faceapi_bool_parse(const char *s, bool *out)
{
	return settings_bool(s, out);
}

static const char *
skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

bool
faceapi_rate_parse(const char *s, struct faceapi_rate *out)
{
	static const struct {
		const char *name;
		long long seconds;
	} units[] = {
		{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}};
	char *end;
	long long n;
	size_t len;

	s = skip_blanks(s);
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || n < 1 || n > 1000000000LL)
		return false;
	s = skip_blanks(end);
	if (*s == '/')
		s = skip_blanks(s + 1);
	else if (strncmp(s, "per", 3) == 0 && (s[3] == ' ' || s[3] == '\t'))
		s = skip_blanks(s + 3);
	else
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
		len = strlen(units[i].name);
		if (strncmp(s, units[i].name, len) != 0)
			continue;
		s += len;
		if (*s == 's')
			s++;
		if (*skip_blanks(s) != '\0')
			return false;
		out->limit = n;
		out->period_s = units[i].seconds;
		return true;
	}
	return false;
}

/* An integer setting as int, with settings.def's default and range. */
static bool
conf_int_i(const char *name, int *out)
{
	long long v;
	bool ok = conf_get_int(name, &v);

	*out = (int)v;
	return ok;
}

/* A boolean setting, settings.def's default when unset. */
static bool
conf_bool(const char *name, bool *out)
{
	return faceapi_bool_parse(conf_get(name), out);
}

static bool
conf_copy(const char *name, char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s", conf_get(name)) < len;
}

/* FACE_API_CORS_ORIGINS: comma-separated origins, blanks trimmed. */
static bool
parse_origins(struct faceapi_conf *c)
{
	const char *s = conf_get("FACE_API_CORS_ORIGINS"), *e;
	size_t n;

	c->norigins = 0;
	while (*s != '\0') {
		s = skip_blanks(s);
		e = s + strcspn(s, ",");
		n = (size_t)(e - s);
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n > 0) {
			if (c->norigins == FACEAPI_ORIGINS_MAX ||
			    n >= FACEAPI_ORIGIN_LEN)
				return false;
			memcpy(c->origins[c->norigins], s, n);
			c->origins[c->norigins++][n] = '\0';
		}
		s = *e == ',' ? e + 1 : e;
	}
	return true;
}

/*
 * FACE_API_S3_* onto lib/store/storage's names.  setenv overrides what the env
 * file gave the platform: this process is the face service only.
 */
static bool
map_s3(void)
{
	static const char *const map[][2] = {
		{"FACE_API_S3_ENDPOINT", "XMHUB_S3_ENDPOINT"},
		{"FACE_API_S3_BUCKET", "XMHUB_S3_BUCKET"},
		{"FACE_API_S3_ACCESS_KEY", "XMHUB_S3_ACCESS_KEY"},
		{"FACE_API_S3_SECRET_KEY", "XMHUB_S3_SECRET_KEY"},
		{"FACE_API_S3_REGION", "XMHUB_S3_REGION"},
	};
	const char *v;

	if (conf_get("FACE_API_S3_ENDPOINT") == NULL)
		return true;
	for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++) {
		v = conf_get(map[i][0]);
		if (v == NULL)
			unsetenv(map[i][1]);
		else if (setenv(map[i][1], v, 1) != 0)
			return false;
	}
	return true;
}

const char *
faceapi_default_model(const char *dir)
{
	const char *best = face_model_best(dir);

	return best != NULL ? best : FACEAPI_SHIPPED_MODEL;
}

bool
faceapi_conf_load(struct faceapi_conf *c, char *detail, size_t dlen)
{
	const char *bad = NULL, *v;

	memset(c, 0, sizeof(*c));
	if (!conf_copy("FACE_API_MODEL_DIR", c->model_dir,
		       sizeof(c->model_dir)))
		bad = "FACE_API_MODEL_DIR";
	/* Unset: the best model present (settings.def has no default). */
	else if ((size_t)snprintf(
			 c->model, sizeof(c->model), "%s",
			 conf_str("FACE_API_MODEL",
				  faceapi_default_model(c->model_dir))) >=
		 sizeof(c->model))
		bad = "FACE_API_MODEL";
	else if (!conf_int_i("FACE_API_DET_SIZE", &c->det_size) ||
		 c->det_size % 32 != 0)
		bad = "FACE_API_DET_SIZE (a multiple of 32, 32 to 4096)";
	else if (!conf_int_i("FACE_API_ORT_THREADS", &c->threads))
		bad = "FACE_API_ORT_THREADS (0 to 256)";
	else if (!conf_get_num("FACE_API_CONFIDENCE", &c->confidence))
		bad = "FACE_API_CONFIDENCE (0.01 to 1.0)";
	else if (!conf_get_num("FACE_API_NMS_THRESHOLD", &c->nms))
		bad = "FACE_API_NMS_THRESHOLD (0.01 to 1.0)";
	else if (!faceapi_method_parse(conf_get("FACE_API_BLUR_METHOD"),
				       &c->method))
		bad = "FACE_API_BLUR_METHOD";
	else if (!conf_int_i("FACE_API_BLUR_STRENGTH", &c->strength))
		bad = "FACE_API_BLUR_STRENGTH (1 to 999)";
	else if (!conf_get_num("FACE_API_PADDING", &c->padding))
		bad = "FACE_API_PADDING (0.0 to 2.0)";
	else if (!conf_get_int("FACE_API_MAX_IMAGE_BYTES", &c->max_bytes))
		bad = "FACE_API_MAX_IMAGE_BYTES (1024 to 1073741824)";
	else if (!conf_get_int("FACE_API_MAX_IMAGE_PIXELS", &c->max_pixels))
		bad = "FACE_API_MAX_IMAGE_PIXELS (100 to 1000000000)";
	else if (!conf_int_i("FACE_API_MAX_CONCURRENT_REQUESTS",
			     &c->max_requests))
		bad = "FACE_API_MAX_CONCURRENT_REQUESTS (1 to 1000)";
	else if (!conf_int_i("FACE_API_MAX_CONCURRENT_INFERENCE",
			     &c->max_inference))
		bad = "FACE_API_MAX_CONCURRENT_INFERENCE (1 to 256)";
	else if (!faceapi_rate_parse(conf_get("FACE_API_RATE_LIMIT_DETECT"),
				     &c->rate_detect))
		bad = "FACE_API_RATE_LIMIT_DETECT (like 60/minute)";
	else if (!faceapi_rate_parse(conf_get("FACE_API_RATE_LIMIT_MASK"),
				     &c->rate_mask))
		bad = "FACE_API_RATE_LIMIT_MASK (like 30/minute)";
	else if (!conf_bool("FACE_API_STORAGE_ENABLED", &c->storage))
		bad = "FACE_API_STORAGE_ENABLED (true or false)";
	else if (!conf_bool("FACE_API_API_KEY_ENABLED", &c->keys))
		bad = "FACE_API_API_KEY_ENABLED (true or false)";
	else if (c->keys && !c->storage)
		bad = "FACE_API_API_KEY_ENABLED: API keys live in the "
		      "database, which needs FACE_API_STORAGE_ENABLED=true";
	else if (!parse_origins(c))
		bad = "FACE_API_CORS_ORIGINS (at most 16 origins)";
	else if (!conf_copy("FACE_API_STATE_DIR", c->state_dir,
			    sizeof(c->state_dir)) ||
		 c->state_dir[0] != '/')
		bad = "FACE_API_STATE_DIR (an absolute path)";
	else if ((v = conf_get("FACE_API_URL_SECRET")) != NULL &&
		 strlen(v) < FACEAPI_SECRET_MIN)
		bad = "FACE_API_URL_SECRET (32 characters or more)";
	else if (!conf_int_i("FACE_API_URL_TTL", &c->url_ttl))
		bad = "FACE_API_URL_TTL (1 to 604800 seconds)";
	else if (!conf_int_i("FACE_API_WORKER_TIMEOUT", &c->worker_timeout))
		bad = "FACE_API_WORKER_TIMEOUT (1 to 3600 seconds)";
	else if (!map_s3())
		bad = "FACE_API_S3_*";
	if (bad != NULL) {
		snprintf(detail, dlen, "bad setting %s", bad);
		return false;
	}
	c->url_secret = conf_get("FACE_API_URL_SECRET");
	c->database_url = conf_str("FACE_API_DATABASE_URL",
				   conf_get("XMHUB_DATABASE_URL"));
	c->admin_user = conf_get("FACE_API_ADMIN_USER");
	c->admin_password = conf_get("FACE_API_ADMIN_PASSWORD");
	/* A value in the form of a libargon2 hash is one: an $argon2i$ or
	 * $argon2d$ hash taken for a clear password would lock the admin
	 * out without a word. */
	if (c->admin_password != NULL &&
	    strncmp(c->admin_password, "$argon2", 7) == 0) {
		if (strncmp(c->admin_password, FACEAPI_ARGON2ID,
			    strlen(FACEAPI_ARGON2ID)) != 0) {
			snprintf(detail, dlen,
				 "bad setting FACE_API_ADMIN_PASSWORD (a "
				 "hash must be %s...: xmhub hash-password)",
				 FACEAPI_ARGON2ID);
			return false;
		}
		c->admin_hashed = true;
	}
	v = conf_get("FACE_API_LIMITS");
	c->limits_pg = strcmp(v, "postgres") == 0;
	if (!c->limits_pg && strcmp(v, "file") != 0) {
		snprintf(detail, dlen,
			 "bad setting FACE_API_LIMITS (file or postgres)");
		return false;
	}
	if (c->limits_pg && c->database_url == NULL) {
		snprintf(detail, dlen,
			 "FACE_API_LIMITS=postgres needs FACE_API_DATABASE_URL "
			 "(or XMHUB_DATABASE_URL)");
		return false;
	}
	if (c->storage && c->database_url == NULL) {
		snprintf(detail, dlen,
			 "FACE_API_STORAGE_ENABLED needs FACE_API_DATABASE_URL "
			 "(or XMHUB_DATABASE_URL)");
		return false;
	}
	return true;
}
