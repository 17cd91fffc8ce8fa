/* SPDX-License-Identifier: MIT */
/*
 * allow.c - client networks in CIDR form (allow.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/allow.h"

/* Parses "ADDR" into family and addr; false when it is neither form. */
static bool
parse_addr(const char *s, int *family, unsigned char addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		static const unsigned char mapped[12] = {
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		*family = AF_INET6;
		/* ::ffff:a.b.c.d is the IPv4 client a.b.c.d. */
		if (memcmp(addr, mapped, 12) == 0) {
			memmove(addr, addr + 12, 4);
			memset(addr + 4, 0, 12);
			*family = AF_INET;
		}
		return true;
	}
	return false;
}

bool
allow_parse(struct allow *a, const char *list, char *detail, size_t detail_len)
{
	const char *p = list;

	a->n = 0;
	while (*p != '\0') {
		char entry[64], *slash, *end;
		size_t len = strcspn(p, ", \t");
		struct allow_net *net;
		unsigned long bits;
		unsigned max;

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(entry) || a->n == ALLOW_MAX) {
			snprintf(detail, detail_len,
				 len >= sizeof(entry) ? "an entry is too long"
						      : "more than %d networks",
				 ALLOW_MAX);
			return false;
		}
		memcpy(entry, p, len);
		entry[len] = '\0';
		p += len;
		net = &a->net[a->n];
		if ((slash = strchr(entry, '/')) != NULL)
			*slash = '\0';
		if (!parse_addr(entry, &net->family, net->addr))
			goto bad;
		max = net->family == AF_INET ? 32 : 128;
		bits = max;
		if (slash != NULL) {
			if (slash[1] < '0' || slash[1] > '9')
				goto bad;
			bits = strtoul(slash + 1, &end, 10);
			if (*end != '\0' || bits > max)
				goto bad;
		}
		net->bits = (unsigned)bits;
		a->n++;
		continue;
	bad:
		if (slash != NULL)
			*slash = '/';
		snprintf(detail, detail_len, "not a network: %s", entry);
		return false;
	}
	return true;
}

bool
allow_match(const struct allow *a, const char *addr)
{
	unsigned char b[16];
	int family;

	if (addr == NULL || !parse_addr(addr, &family, b))
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct allow_net *n = &a->net[i];
		unsigned full = n->bits / 8, rest = n->bits % 8;

		if (n->family != family || memcmp(n->addr, b, full) != 0)
			continue;
		if (rest == 0 || ((n->addr[full] ^ b[full]) &
				  (0xff << (8 - rest)) & 0xff) == 0)
			return true;
	}
	return false;
}
