/* SPDX-License-Identifier: MIT */
/*
 * sampleagg.c - aggregates of numeric samples.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/be.h"
#include "codec/sampleagg.h"

static bool
is_float(enum sample_type t)
{
	return t == SAMPLE_F64 || t == SAMPLE_F32;
}

bool
sampleagg_numeric(enum sample_type t)
{
	return is_float(t) || t == SAMPLE_I64 || t == SAMPLE_I32 ||
	       t == SAMPLE_I16 || t == SAMPLE_I8 || t == SAMPLE_BOOL;
}

void
sampleagg_init(struct sampleagg *a, enum sample_type type)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->min.type = a->max.type = type;
}

/* An integer or bool value as an integer. */
static int64_t
integer(const struct sample_value *v)
{
	switch (v->type) {
	case SAMPLE_I64:
		return v->u.i64;
	case SAMPLE_I32:
		return v->u.i32;
	case SAMPLE_I16:
		return v->u.i16;
	case SAMPLE_I8:
		return v->u.i8;
	default:
		return v->u.b ? 1 : 0;
	}
}

void
sampleagg_add(struct sampleagg *a, const struct sample_value *v)
{
	/* Compared in the type's own domain (i64 does not fit a double);
	 * only the float sum is a long double. */
	if (is_float(v->type)) {
		double x = v->type == SAMPLE_F64 ? v->u.f64 : v->u.f32;

		if (isnan(x)) {
			a->nan_count++;
			return;
		}
		a->fsum += x;
		if (a->count == 0 || x < a->flo) {
			a->flo = x;
			a->min = *v;
		}
		if (a->count == 0 || x > a->fhi) {
			a->fhi = x;
			a->max = *v;
		}
	} else {
		int64_t i = integer(v);

		a->isum += i;
		if (a->count == 0 || i < a->ilo) {
			a->ilo = i;
			a->min = *v;
		}
		if (a->count == 0 || i > a->ihi) {
			a->ihi = i;
			a->max = *v;
		}
	}
	a->count++;
}

void
sampleagg_merge(struct sampleagg *a, const struct sampleagg *b)
{
	bool f = is_float(a->type);

	a->nan_count += b->nan_count;
	if (b->count == 0)
		return;
	if (a->count == 0 || (f ? b->flo < a->flo : b->ilo < a->ilo)) {
		a->flo = b->flo;
		a->ilo = b->ilo;
		a->min = b->min;
	}
	if (a->count == 0 || (f ? b->fhi > a->fhi : b->ihi > a->ihi)) {
		a->fhi = b->fhi;
		a->ihi = b->ihi;
		a->max = b->max;
	}
	a->isum += b->isum;
	a->fsum += b->fsum;
	a->count += b->count;
}

double
sampleagg_mean(const struct sampleagg *a)
{
	long double sum = is_float(a->type) ? a->fsum : (long double)a->isum;

	return a->count > 0 ? (double)(sum / (long double)a->count) : 0;
}

static void put_cell(struct buf *out, uint64_t k, const struct sampleagg *a);

/* A float aggregate in locals, for float_chunk()'s loop: the same
 * comparisons and sum as sampleagg_add(), with min and max kept as the
 * index of their sample. */
struct fagg {
	uint64_t count, nan_count;
	double lo, hi;
	uint32_t lo_at, hi_at;
	long double sum;
};

static inline void
fagg_add(struct fagg *f, double x, uint32_t i)
{
	if (isnan(x)) {
		f->nan_count++;
		return;
	}
	f->sum += x;
	if (f->count == 0 || x < f->lo) {
		f->lo = x;
		f->lo_at = i;
	}
	if (f->count == 0 || x > f->hi) {
		f->hi = x;
		f->hi_at = i;
	}
	f->count++;
}

/* Sample i of float chunk c. */
static struct sample_value
float_at(const struct xmch_chunk *c, uint32_t i)
{
	struct sample_value v = {.type = c->type};

	if (c->type == SAMPLE_F64)
		v.u.f64 = bef64_get(c->val_col + (size_t)i * 8);
	else
		v.u.f32 = bef32_get(c->val_col + (size_t)i * 4);
	return v;
}

/* a, of c's type, as f. */
static void
fagg_put(const struct fagg *f, const struct xmch_chunk *c, struct sampleagg *a)
{
	sampleagg_init(a, c->type);
	a->count = f->count;
	a->nan_count = f->nan_count;
	a->fsum = f->sum;
	if (f->count > 0) {
		a->flo = f->lo;
		a->fhi = f->hi;
		a->min = float_at(c, f->lo_at);
		a->max = float_at(c, f->hi_at);
	}
}

/*
 * The aggregates (and grid cells, g not NULL) of an f32 or f64 chunk, as
 * the walk with sampleagg_add() and sampleagg_grid_add() in
 * sampleagg_chunk_grid() gives them, bit for bit, without two calls and
 * two copies of each sample: ingest aggregates every chunk it stores.
 */
static void
float_chunk(const struct xmch_chunk *c, struct sampleagg *a,
	    struct sampleagg_grid *g)
{
	struct fagg all = {0}, cell = {0};
	uint64_t k;
	double x;

	for (uint32_t i = 0; i < c->sample_count; i++) {
		x = c->type == SAMPLE_F64
			    ? bef64_get(c->val_col + (size_t)i * 8)
			    : bef32_get(c->val_col + (size_t)i * 4);
		fagg_add(&all, x, i);
		if (g == NULL)
			continue;
		k = be64_get(c->ts_col + (size_t)i * 8) / SAMPLEAGG_GRID_US;
		if (g->samples > 0 && k != g->cell) {
			fagg_put(&cell, c, &g->cur);
			put_cell(g->out, g->cell, &g->cur);
			memset(&cell, 0, sizeof(cell));
			g->cells++;
		}
		g->cell = k;
		g->samples++;
		fagg_add(&cell, x, i);
	}
	fagg_put(&all, c, a);
	/* The open cell, which sampleagg_grid_finish() writes. */
	if (g != NULL)
		fagg_put(&cell, c, &g->cur);
}

enum xmch_status
sampleagg_chunk_grid(const uint8_t *p, size_t len, struct sampleagg *a,
		     struct buf *grid, bool *has_grid, struct xmch_error *err)
{
	struct xmch_chunk c;
	struct xmch_iter it;
	struct sample_value v;
	struct sampleagg_grid g;
	enum xmch_status st;
	size_t mark = grid != NULL ? grid->len : 0;
	uint64_t ts;

	if (has_grid != NULL)
		*has_grid = false;
	if ((st = xmch_open(p, len, &c, err)) != XMCH_OK)
		return st;
	sampleagg_init(a, c.type);
	if (!sampleagg_numeric(c.type)) {
		err->status = st = XMCH_E_INVALID_VALUE_TYPE;
		snprintf(err->msg, sizeof(err->msg), "%s does not aggregate",
			 xmbp_sample_type_name(c.type));
		goto out;
	}
	if (grid != NULL)
		sampleagg_grid_init(&g, c.type, grid);
	if (is_float(c.type)) {
		float_chunk(&c, a, grid != NULL ? &g : NULL);
	} else {
		xmch_iter_init(&c, &it);
		while (xmch_next(&it, &ts, &v)) {
			sampleagg_add(a, &v);
			if (grid != NULL)
				sampleagg_grid_add(&g, ts, &v);
		}
	}
	if (grid != NULL) {
		*has_grid = sampleagg_grid_finish(&g) && !grid->failed;
		if (!*has_grid)
			grid->len = mark;
	}
out:
	xmch_close(&c);
	return st;
}

enum xmch_status
sampleagg_chunk(const uint8_t *p, size_t len, struct sampleagg *a,
		struct xmch_error *err)
{
	return sampleagg_chunk_grid(p, len, a, NULL, NULL, err);
}

/* The two f64 whose sum is x exactly (a long double has 64 bits of
 * mantissa: the high part takes 53, the rest fits the low part). */
static void
split(long double x, double *hi, double *lo)
{
	*hi = (double)x;
	*lo = isfinite(*hi) ? (double)(x - (long double)*hi) : 0;
}

static int64_t bits(const struct sample_value *v);
static bool unbits(enum sample_type t, int64_t n, struct sample_value *v);
static int64_t integer(const struct sample_value *v);

/* Appends the record of cell k. */
static void
put_cell(struct buf *out, uint64_t k, const struct sampleagg *a)
{
	uint8_t r[SAMPLEAGG_CELL_SIZE];
	double hi, lo;

	be64_put(r, k);
	be32_put(r + 8, (uint32_t)a->count);
	be32_put(r + 12, (uint32_t)a->nan_count);
	be64_put(r + 16, (uint64_t)(a->count > 0 ? bits(&a->min) : 0));
	be64_put(r + 24, (uint64_t)(a->count > 0 ? bits(&a->max) : 0));
	if (is_float(a->type)) {
		split(a->fsum, &hi, &lo);
		bef64_put(r + 32, hi);
		bef64_put(r + 40, lo);
	} else {
		be64_put(r + 32, (uint64_t)((unsigned __int128)a->isum >> 64));
		be64_put(r + 40, (uint64_t)a->isum);
	}
	buf_append(out, r, sizeof(r));
}

void
sampleagg_grid_init(struct sampleagg_grid *g, enum sample_type type,
		    struct buf *out)
{
	memset(g, 0, sizeof(*g));
	g->out = out;
	sampleagg_init(&g->cur, type);
}

void
sampleagg_grid_add(struct sampleagg_grid *g, uint64_t ts,
		   const struct sample_value *v)
{
	uint64_t k = ts / SAMPLEAGG_GRID_US;

	if (g->samples > 0 && k != g->cell) {
		put_cell(g->out, g->cell, &g->cur);
		sampleagg_init(&g->cur, g->cur.type);
		g->cells++;
	}
	g->cell = k;
	g->samples++;
	sampleagg_add(&g->cur, v);
}

bool
sampleagg_grid_finish(struct sampleagg_grid *g)
{
	if (g->samples == 0)
		return false;
	put_cell(g->out, g->cell, &g->cur);
	g->cells++;
	return g->cells * 16 <= g->samples;
}

bool
sampleagg_grid_next(const uint8_t *p, size_t len, size_t *pos,
		    enum sample_type type, uint64_t *cell, struct sampleagg *a)
{
	const uint8_t *r = p + *pos;
	unsigned __int128 u;

	if (len - *pos < SAMPLEAGG_CELL_SIZE || !sampleagg_numeric(type))
		return false;
	sampleagg_init(a, type);
	*cell = be64_get(r);
	a->count = be32_get(r + 8);
	a->nan_count = be32_get(r + 12);
	if (!unbits(type, (int64_t)be64_get(r + 16), &a->min) ||
	    !unbits(type, (int64_t)be64_get(r + 24), &a->max))
		return false;
	if (is_float(type)) {
		a->flo =
			a->min.type == SAMPLE_F64 ? a->min.u.f64 : a->min.u.f32;
		a->fhi =
			a->max.type == SAMPLE_F64 ? a->max.u.f64 : a->max.u.f32;
		a->fsum = (long double)bef64_get(r + 32) + bef64_get(r + 40);
		if (a->count > 0 && (isnan(a->flo) || isnan(a->fhi)))
			return false;
	} else {
		a->ilo = integer(&a->min);
		a->ihi = integer(&a->max);
		u = (unsigned __int128)be64_get(r + 32) << 64 |
		    be64_get(r + 40);
		a->isum = (sampleagg_i128)u;
	}
	*pos += SAMPLEAGG_CELL_SIZE;
	return true;
}

/* A value as its stored integer: integers themselves, floats their
 * IEEE 754 bits (f32 in the low 32), so that every bit survives. */
static int64_t
bits(const struct sample_value *v)
{
	uint64_t u;
	uint32_t w;

	switch (v->type) {
	case SAMPLE_F64:
		memcpy(&u, &v->u.f64, 8);
		return (int64_t)u;
	case SAMPLE_F32:
		memcpy(&w, &v->u.f32, 4);
		return w;
	default:
		return integer(v);
	}
}

/* The value of type t whose stored integer is n; false when n is out of
 * the type's range. */
static bool
unbits(enum sample_type t, int64_t n, struct sample_value *v)
{
	uint64_t u = (uint64_t)n;
	uint32_t w;

	v->type = t;
	switch (t) {
	case SAMPLE_F64:
		memcpy(&v->u.f64, &u, 8);
		return true;
	case SAMPLE_F32:
		w = (uint32_t)n;
		memcpy(&v->u.f32, &w, 4);
		return n >= 0 && n <= UINT32_MAX;
	case SAMPLE_I64:
		v->u.i64 = n;
		return true;
	case SAMPLE_I32:
		v->u.i32 = (int32_t)n;
		return n >= INT32_MIN && n <= INT32_MAX;
	case SAMPLE_I16:
		v->u.i16 = (int16_t)n;
		return n >= INT16_MIN && n <= INT16_MAX;
	case SAMPLE_I8:
		v->u.i8 = (int8_t)n;
		return n >= INT8_MIN && n <= INT8_MAX;
	default:
		v->u.b = n == 1;
		return n == 0 || n == 1;
	}
}

/* Prints an exact 128-bit integer. */
static void
i128_text(sampleagg_i128 n, char *out, size_t len)
{
	char tmp[48];
	size_t i = sizeof(tmp);
	bool neg = n < 0;
	unsigned __int128 u =
		neg ? -(unsigned __int128)n : (unsigned __int128)n;

	tmp[--i] = '\0';
	do {
		tmp[--i] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u > 0);
	if (neg)
		tmp[--i] = '-';
	snprintf(out, len, "%s", tmp + i);
}

/* Reads a decimal integer of at most 38 digits; false otherwise. */
static bool
i128_parse(const char *s, sampleagg_i128 *out)
{
	bool neg = *s == '-';
	unsigned __int128 u = 0;
	size_t n;

	if (neg)
		s++;
	n = strlen(s);
	if (n == 0 || n > 38 || strspn(s, "0123456789") != n)
		return false;
	for (; *s != '\0'; s++)
		u = u * 10 + (unsigned)(*s - '0');
	*out = neg ? -(sampleagg_i128)u : (sampleagg_i128)u;
	return true;
}

void
sampleagg_to_text(const struct sampleagg *a, struct sampleagg_text *t)
{
	snprintf(t->count, sizeof(t->count), "%" PRIu64, a->count);
	snprintf(t->nan_count, sizeof(t->nan_count), "%" PRIu64, a->nan_count);
	snprintf(t->min, sizeof(t->min), "%" PRId64,
		 a->count > 0 ? bits(&a->min) : 0);
	snprintf(t->max, sizeof(t->max), "%" PRId64,
		 a->count > 0 ? bits(&a->max) : 0);
	if (!is_float(a->type))
		i128_text(a->isum, t->sum, sizeof(t->sum));
	else if (isnan(a->fsum))
		snprintf(t->sum, sizeof(t->sum), "NaN");
	else if (isinf(a->fsum))
		snprintf(t->sum, sizeof(t->sum), "%sInfinity",
			 a->fsum < 0 ? "-" : "");
	else /* 21 significant digits read back the same long double */
		snprintf(t->sum, sizeof(t->sum), "%.20Le", a->fsum);
}

/* A decimal u64; false otherwise. */
static bool
u64_parse(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* A decimal i64; false otherwise. */
static bool
i64_parse(const char *s, int64_t *out)
{
	char *end;

	if (*s == '\0')
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* A float value as a double. */
static double
real(const struct sample_value *v)
{
	return v->type == SAMPLE_F64 ? v->u.f64 : v->u.f32;
}

bool
sampleagg_from_text(enum sample_type type, const struct sampleagg_text *t,
		    struct sampleagg *a)
{
	int64_t lo, hi;
	char *end;

	sampleagg_init(a, type);
	if (!sampleagg_numeric(type) || !u64_parse(t->count, &a->count) ||
	    !u64_parse(t->nan_count, &a->nan_count) ||
	    !i64_parse(t->min, &lo) || !i64_parse(t->max, &hi) ||
	    !unbits(type, lo, &a->min) || !unbits(type, hi, &a->max))
		return false;
	if (!is_float(type)) {
		a->ilo = integer(&a->min);
		a->ihi = integer(&a->max);
		return i128_parse(t->sum, &a->isum);
	}
	a->flo = real(&a->min);
	a->fhi = real(&a->max);
	a->fsum = strtold(t->sum, &end);
	return t->sum[0] != '\0' && *end == '\0' &&
	       (a->count == 0 || (!isnan(a->flo) && !isnan(a->fhi)));
}
