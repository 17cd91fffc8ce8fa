/* SPDX-License-Identifier: MIT */
/*
 * be.h - big-endian loads and stores.
 *
 * Every XMBP and XMCH integer and float is big-endian.  These helpers
 * read and write them at any alignment; the compiler turns the byte
 * shuffles into single bswap instructions.
 */
#ifndef XMHUB_BE_H
#define XMHUB_BE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t
be16_get(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t
be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
be64_get(const uint8_t *p)
{
	return (uint64_t)be32_get(p) << 32 | be32_get(p + 4);
}

static inline void
be16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
be64_put(uint8_t *p, uint64_t v)
{
	be32_put(p, (uint32_t)(v >> 32));
	be32_put(p + 4, (uint32_t)v);
}

static inline float
bef32_get(const uint8_t *p)
{
	uint32_t u = be32_get(p);
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline double
bef64_get(const uint8_t *p)
{
	uint64_t u = be64_get(p);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static inline void
bef32_put(uint8_t *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	be32_put(p, u);
}

static inline void
bef64_put(uint8_t *p, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	be64_put(p, u);
}

#endif
