/* SPDX-License-Identifier: MIT */
/*
 * allow.h - a list of client networks (CIDR), such as XMHUB_METRICS_ALLOW:
 * "127.0.0.1/32, ::1/128, 10.0.0.0/8" (commas or blanks between; a bare
 * address is the one host).  IPv4 and IPv6; an IPv4-mapped IPv6 client
 * (::ffff:a.b.c.d) matches the IPv4 networks.
 */
#ifndef XMHUB_ALLOW_H
#define XMHUB_ALLOW_H

#include <stdbool.h>
#include <stddef.h>

#define ALLOW_MAX 32			       /* networks in one list */
#define ALLOW_LOOPBACK "127.0.0.1/32 ::1/128" /* the default of the lists */

struct allow_net {
	unsigned char addr[16]; /* IPv4 in the first 4 bytes */
	int family;		/* AF_INET or AF_INET6 */
	unsigned bits;		/* prefix length */
};

struct allow {
	struct allow_net net[ALLOW_MAX];
	size_t n;
};

/*
 * Parses list into *a (an empty list allows no one).  False with the bad
 * entry named in detail when an entry is not an address with an optional
 * /BITS within its family's length, or there are more than ALLOW_MAX.
 */
bool allow_parse(struct allow *a, const char *list, char *detail,
		 size_t detail_len);

/* Whether the textual address addr (REMOTE_ADDR; NULL is no) is in a. */
bool allow_match(const struct allow *a, const char *addr);

#endif
