/* SPDX-License-Identifier: MIT */
/*
 * t/unit/throttle.c - the address keys of login throttling
 * (lib/domain/throttle.h throttle_addr_key()): the counters an address
 * falls under.  The counting itself is in PostgreSQL and tested end to
 * end (t/e2e/login-throttle.t).
 */
#include "config.h"

#include <string.h>

#include "tap.h"
#include "domain/throttle.h"

static const struct {
	const char *remote, *key;
} cases[] = {
	{"127.0.0.1", "127.0.0.1"},
	{"203.0.113.7", "203.0.113.7"},
	/* One host of an IPv6 network usually has its whole /64. */
	{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	{"2001:db8:1:2::ffff", "2001:db8:1:2::/64"},
	{"2001:DB8:1:2:aaaa::1", "2001:db8:1:2::/64"},
	{"::1", "::/64"},
	/* IPv4 through an IPv6 socket is the IPv4 address. */
	{"::ffff:192.0.2.9", "192.0.2.9"},
	/* Not an address: one shared key, never the text itself. */
	{NULL, "unknown"},
	{"", "unknown"},
	{"localhost", "unknown"},
	{"fe80::1%eth0", "unknown"},
	{"192.0.2.1 X: y", "unknown"},
	{"1.2.3.4.5", "unknown"},
	{"::ffff:999.0.0.1", "unknown"},
	{"2001:db8:1:2:3:4:5:6:7", "unknown"},
};

int
main(void)
{
	char key[THROTTLE_ADDR_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(key, 'x', sizeof(key));
		throttle_addr_key(cases[i].remote, key);
		ok(strcmp(key, cases[i].key) == 0, "%s -> %s (got %.*s)",
		   cases[i].remote ? cases[i].remote : "NULL", cases[i].key,
		   (int)strnlen(key, sizeof(key)), key);
	}
	/* The longest IPv6 text and its /64 suffix fit the key. */
	throttle_addr_key("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", key);
	ok(strcmp(key, "ffff:ffff:ffff:ffff::/64") == 0, "longest IPv6: %s",
	   key);
	return tap_done();
}
