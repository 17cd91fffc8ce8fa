/* SPDX-License-Identifier: MIT */
/*
 * faceapi_params.c - the upload and the parameters of detect and mask.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "face/service/faceapi_params.h"
#include "codec/multipart.h"
#include "codec/utf8.h"

const char *const faceapi_param_names[FACEAPI_NPARAMS] = {
	[FACEAPI_P_CONFIDENCE] = "confidence",
	[FACEAPI_P_NMS] = "nms_threshold",
	[FACEAPI_P_MAX_FACES] = "max_faces",
	[FACEAPI_P_METHOD] = "method",
	[FACEAPI_P_STRENGTH] = "strength",
	[FACEAPI_P_PADDING] = "padding",
	[FACEAPI_P_FORMAT] = "format",
	[FACEAPI_P_QUALITY] = "quality",
};

int
faceapi_field_begin(struct faceapi_upload *up, const char *name)
{
	for (int i = 0; i < FACEAPI_NPARAMS; i++)
		if (strcmp(name, faceapi_param_names[i]) == 0) {
			up->has_field[i] = true;
			up->fields[i][0] = '\0';
			return i;
		}
	return -1;
}

bool
faceapi_field_data(struct faceapi_upload *up, int i, size_t *flen,
		   const void *p, size_t n)
{
	if (*flen + n > FACEAPI_FIELD_MAX)
		return false;
	memcpy(up->fields[i] + *flen, p, n);
	*flen += n;
	up->fields[i][*flen] = '\0';
	return true;
}

/* What the parser's callbacks are filling. */
struct reader {
	struct faceapi_upload *up;
	size_t max_image;
	int part;    /* -1 ignored, FACEAPI_NPARAMS the image, else a field */
	size_t flen; /* bytes of the current field */
	enum faceapi_upload_result stop; /* why a callback stopped it */
};

static int
part_begin(void *arg, const struct multipart_part *part)
{
	struct reader *r = arg;
	struct faceapi_upload *up = r->up;
	size_t n;

	r->part = -1;
	r->flen = 0;
	if (strcmp(part->name, "image") == 0) {
		if (up->has_image) {
			r->stop = FACEAPI_UPLOAD_SECOND_FILE;
			return 1;
		}
		up->has_image = true;
		r->part = FACEAPI_NPARAMS;
		n = part->filename != NULL ? strlen(part->filename) : 0;
		if (n <= FACEAPI_FILENAME_MAX &&
		    xmbp_utf8_valid((const uint8_t *)part->filename, n))
			memcpy(up->filename, part->filename, n);
		return 0;
	}
	r->part = faceapi_field_begin(up, part->name);
	return 0;
}

static int
part_data(void *arg, const void *p, size_t n)
{
	struct reader *r = arg;
	struct faceapi_upload *up = r->up;

	if (r->part == FACEAPI_NPARAMS) {
		if (up->image.len + n > r->max_image) {
			r->stop = FACEAPI_UPLOAD_FILE_TOO_LARGE;
			return 1;
		}
		buf_append(&up->image, p, n);
		if (up->image.failed) {
			r->stop = FACEAPI_UPLOAD_NO_MEMORY;
			return 1;
		}
		return 0;
	}
	if (r->part >= 0 && !faceapi_field_data(up, r->part, &r->flen, p, n)) {
		r->stop = FACEAPI_UPLOAD_FIELD_TOO_LONG;
		up->bad_field = faceapi_param_names[r->part];
		return 1;
	}
	return 0;
}

static int
part_end(void *arg)
{
	((struct reader *)arg)->part = -1;
	return 0;
}

static const struct multipart_cb callbacks = {part_begin, part_data, part_end};

enum faceapi_upload_result
faceapi_upload_read(struct http_req *req, size_t max_image,
		    struct faceapi_upload *up, char *detail, size_t dlen)
{
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	size_t limit = max_image + FACEAPI_FORM_OVERHEAD;
	struct reader r = {up, max_image, -1, 0, FACEAPI_UPLOAD_OK};
	enum faceapi_upload_result res;

	memset(up, 0, sizeof(*up));
	buf_init(&up->image, 0);
	if (!multipart_boundary(req->content_type, boundary, detail, dlen))
		return FACEAPI_UPLOAD_NOT_FORM;
	if (req->content_length > (long long)limit)
		res = FACEAPI_UPLOAD_BODY_TOO_LARGE;
	else
		switch (http_multipart_read(req, boundary, &callbacks, &r,
					    limit, detail, dlen)) {
		case HTTP_BODY_OK:
			return !up->has_image	    ? FACEAPI_UPLOAD_NO_FILE
			       : up->image.len == 0 ? FACEAPI_UPLOAD_EMPTY_FILE
						    : FACEAPI_UPLOAD_OK;
		case HTTP_BODY_MALFORMED:
			return FACEAPI_UPLOAD_MALFORMED;
		case HTTP_BODY_UNREADABLE:
			return FACEAPI_UPLOAD_UNREADABLE;
		case HTTP_BODY_TOO_LARGE:
			res = FACEAPI_UPLOAD_FILE_TOO_LARGE;
			break;
		case HTTP_BODY_STOPPED:
			res = r.stop;
			break;
		default:
			res = FACEAPI_UPLOAD_NO_MEMORY;
			break;
		}
	/* Refused before its end: the client may still be sending. */
	http_body_drain(req, 4 * (unsigned long long)limit);
	return res;
}

void
faceapi_upload_free(struct faceapi_upload *up)
{
	buf_free(&up->image);
}

/* The raw text of parameter i: the form field, else the query's. */
static const char *
raw(const struct http_req *req, const struct faceapi_upload *up, int i)
{
	return up->has_field[i] ? up->fields[i]
				: http_query(req, faceapi_param_names[i]);
}

static bool
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double d;

	if (*s == '\0' || *s == ' ')
		return false;
	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(d) || d < min || d > max)
		return false;
	*out = d;
	return true;
}

static bool
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (*s == '\0' || (*s != '-' && (*s < '0' || *s > '9')))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool
parse_format(const char *s, enum face_fmt *out)
{
	static const enum face_fmt fmts[] = {FACE_FMT_JPEG, FACE_FMT_PNG,
					     FACE_FMT_WEBP};

	for (size_t i = 0; i < sizeof(fmts) / sizeof(*fmts); i++)
		if (strcmp(s, face_fmt_name(fmts[i])) == 0) {
			*out = fmts[i];
			return true;
		}
	return false;
}

bool
faceapi_params_get(const struct http_req *req, const struct faceapi_upload *up,
		   const struct faceapi_conf *c, bool mask,
		   struct faceapi_params *p, struct http_resp *resp)
{
	const char *v;
	long l = 0;
	int i;

	p->confidence = c->confidence;
	p->nms = c->nms;
	p->max_faces = 0;
	p->method = c->method;
	p->strength = c->strength;
	p->padding = c->padding;
	p->format = FACE_FMT_JPEG;
	p->quality = 95;
	for (i = 0; i < (mask ? FACEAPI_NPARAMS : FACEAPI_P_METHOD); i++) {
		if ((v = raw(req, up, i)) == NULL)
			continue;
		switch (i) {
		case FACEAPI_P_CONFIDENCE:
			if (!parse_double(v, 0.01, 1.0, &p->confidence))
				goto bad;
			break;
		case FACEAPI_P_NMS:
			if (!parse_double(v, 0.01, 1.0, &p->nms))
				goto bad;
			break;
		case FACEAPI_P_MAX_FACES:
			if (!parse_long(v, 0, INT_MAX, &p->max_faces))
				goto bad;
			break;
		case FACEAPI_P_METHOD:
			if (!faceapi_method_parse(v, &p->method))
				goto bad;
			break;
		case FACEAPI_P_STRENGTH:
			if (!parse_long(v, 1, 999, &l))
				goto bad;
			p->strength = (int)l;
			break;
		case FACEAPI_P_PADDING:
			if (!parse_double(v, 0.0, 2.0, &p->padding))
				goto bad;
			break;
		case FACEAPI_P_FORMAT:
			if (!parse_format(v, &p->format))
				goto bad;
			break;
		default:
			if (!parse_long(v, 1, 100, &l))
				goto bad;
			p->quality = (int)l;
			break;
		}
	}
	return true;
bad : {
	static const char *const ranges[FACEAPI_NPARAMS] = {
		[FACEAPI_P_CONFIDENCE] = "a number from 0.01 to 1.0",
		[FACEAPI_P_NMS] = "a number from 0.01 to 1.0",
		[FACEAPI_P_MAX_FACES] = "an integer >= 0 (0: all)",
		[FACEAPI_P_METHOD] = "gaussian, pixelate, solid or elliptical",
		[FACEAPI_P_STRENGTH] = "an integer from 1 to 999",
		[FACEAPI_P_PADDING] = "a number from 0.0 to 2.0",
		[FACEAPI_P_FORMAT] = "jpeg, png or webp",
		[FACEAPI_P_QUALITY] = "an integer from 1 to 100",
	};
	http_error(resp, 400, "%s must be %s", faceapi_param_names[i],
		   ranges[i]);
}
	return false;
}
