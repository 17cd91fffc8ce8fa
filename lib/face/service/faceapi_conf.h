/* SPDX-License-Identifier: MIT */
/*
 * faceapi_conf.h - the face service's settings (doc/face.md "Settings"),
 * read once at start-up.
 *
 * Every FACE_API_* variable comes from the environment or the env file
 * (lib/core/conf, call conf_init() first).  A value that is set but not
 * understood stops the program with a message: a service must not run
 * with a setting its operator did not mean.  doc/face.md lists them all.
 */
#ifndef XMHUB_FACEAPI_CONF_H
#define XMHUB_FACEAPI_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "face/face.h"

#define FACEAPI_ORIGINS_MAX 16 /* entries of FACE_API_CORS_ORIGINS */
#define FACEAPI_ORIGIN_LEN 256 /* bytes of one origin */
#define FACEAPI_SECRET_MIN 32  /* characters of FACE_API_URL_SECRET */
#define FACEAPI_PATH_MAX 1024  /* bytes of a directory setting */
#define FACEAPI_ARGON2ID "$argon2id$v=19$m=" /* a hashed admin password */
#define FACEAPI_SHIPPED_MODEL "yunet"	     /* the model in models/ (MIT) */

/* A rate limit "N/unit": limit requests per period_s seconds. */
struct faceapi_rate {
	long long limit;
	long long period_s;
};

struct faceapi_conf {
	char model[64];			  /* FACE_API_MODEL */
	char model_dir[FACEAPI_PATH_MAX]; /* FACE_API_MODEL_DIR */
	int det_size;			  /* FACE_API_DET_SIZE */
	int threads;			  /* FACE_API_ORT_THREADS (0: auto) */
	double confidence;		  /* FACE_API_CONFIDENCE */
	double nms;			  /* FACE_API_NMS_THRESHOLD */
	enum face_method method;	  /* FACE_API_BLUR_METHOD */
	int strength;			  /* FACE_API_BLUR_STRENGTH */
	double padding;			  /* FACE_API_PADDING */
	long long max_bytes;		  /* FACE_API_MAX_IMAGE_BYTES */
	long long max_pixels;		  /* FACE_API_MAX_IMAGE_PIXELS */
	int max_requests;		  /* FACE_API_MAX_CONCURRENT_REQUESTS */
	int max_inference;		 /* FACE_API_MAX_CONCURRENT_INFERENCE */
	struct faceapi_rate rate_detect; /* FACE_API_RATE_LIMIT_DETECT */
	struct faceapi_rate rate_mask;	 /* FACE_API_RATE_LIMIT_MASK */
	bool storage;			 /* FACE_API_STORAGE_ENABLED */
	bool keys;			 /* FACE_API_API_KEY_ENABLED */
	const char *database_url;	 /* FACE_API_DATABASE_URL or XMHUB_'s */
	const char *admin_user;		 /* FACE_API_ADMIN_USER ("admin") */
	const char *admin_password; /* FACE_API_ADMIN_PASSWORD (NULL: none) */
	bool admin_hashed;	    /* it is an Argon2id hash ($argon2id$...) */
	char origins[FACEAPI_ORIGINS_MAX][FACEAPI_ORIGIN_LEN];
	size_t norigins; /* FACE_API_CORS_ORIGINS ("*" allowed) */
	char state_dir[FACEAPI_PATH_MAX]; /* FACE_API_STATE_DIR */
	bool limits_pg;		/* FACE_API_LIMITS=postgres (default file) */
	const char *url_secret; /* FACE_API_URL_SECRET (NULL: generated) */
	int url_ttl;		/* FACE_API_URL_TTL, seconds */
	int worker_timeout;	/* FACE_API_WORKER_TIMEOUT, seconds */
};

/*
 * Fills c from the settings.  False with the first bad setting named in
 * detail.  Strings point into the environment (valid for the process's
 * life).  Also maps FACE_API_S3_* onto the XMHUB_S3_* names lib/store/storage
 * reads, when FACE_API_S3_ENDPOINT is set (this process only).
 */
bool faceapi_conf_load(struct faceapi_conf *c, char *detail, size_t dlen);

/*
 * FACE_API_MODEL's default: the best model with a file in dir
 * (face_model_best), else the shipped YuNet (doc/face-models.md).
 * Static.
 */
const char *faceapi_default_model(const char *dir);

/*
 * Parses a rate limit: "N/unit" or "N per unit", N >= 1, unit second,
 * minute, hour or day (a plural s is fine), blanks around the parts
 * allowed.  False for anything else.
 */
bool faceapi_rate_parse(const char *s, struct faceapi_rate *out);

/* Parses a boolean setting: true/false, 1/0, yes/no, on/off (any case). */
bool faceapi_bool_parse(const char *s, bool *out);

/* The method called name (gaussian, pixelate, solid, elliptical); false
 * for another name. */
bool faceapi_method_parse(const char *name, enum face_method *out);

/* The name of method m ("gaussian", ...), static. */
const char *faceapi_method_name(enum face_method m);

#endif
