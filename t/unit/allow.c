/* SPDX-License-Identifier: MIT */
/*
 * t/unit/allow.c - client networks in CIDR form (lib/web/allow).
 */
#include "config.h"

#include "core/allow.h"
#include "tap.h"

int
main(void)
{
	struct allow a;
	char detail[128];

	ok(allow_parse(&a, "127.0.0.1/32, ::1/128", detail, sizeof(detail)) &&
		   a.n == 2,
	   "the default list");
	ok(allow_match(&a, "127.0.0.1") && allow_match(&a, "::1"),
	   "loopback of both families");
	ok(!allow_match(&a, "127.0.0.2") && !allow_match(&a, "::2"),
	   "other hosts: no");
	ok(allow_match(&a, "::ffff:127.0.0.1"), "IPv4-mapped IPv6: as IPv4");
	ok(!allow_match(&a, NULL) && !allow_match(&a, "") &&
		   !allow_match(&a, "localhost"),
	   "no address or a name: no");

	ok(allow_parse(&a, "10.0.0.0/8 192.168.1.128/25,fd00::/8,203.0.113.7",
		       detail, sizeof(detail)) &&
		   a.n == 4,
	   "blanks and commas between, a bare address");
	ok(allow_match(&a, "10.255.1.2") && !allow_match(&a, "11.0.0.1"), "/8");
	ok(allow_match(&a, "192.168.1.200") &&
		   !allow_match(&a, "192.168.1.127"),
	   "/25: the bits inside a byte");
	ok(allow_match(&a, "fd12::1") && !allow_match(&a, "fe80::1"),
	   "an IPv6 network");
	ok(allow_match(&a, "203.0.113.7") && !allow_match(&a, "203.0.113.8"),
	   "a bare address is one host");

	ok(allow_parse(&a, "0.0.0.0/0", detail, sizeof(detail)) &&
		   allow_match(&a, "8.8.8.8") && !allow_match(&a, "::1"),
	   "/0: every address of its family");
	ok(allow_parse(&a, "", detail, sizeof(detail)) && a.n == 0 &&
		   !allow_match(&a, "127.0.0.1"),
	   "an empty list allows no one");

	ok(!allow_parse(&a, "10.0.0.0/33", detail, sizeof(detail)),
	   "/33 of IPv4: refused");
	is_str(detail, "not a network: 10.0.0.0/33", "the entry named");
	ok(!allow_parse(&a, "::/129", detail, sizeof(detail)), "/129: refused");
	ok(!allow_parse(&a, "10.0.0.0/", detail, sizeof(detail)) &&
		   !allow_parse(&a, "10.0.0.0/-1", detail, sizeof(detail)) &&
		   !allow_parse(&a, "10.0.0.0/8x", detail, sizeof(detail)),
	   "an empty, negative or trailing prefix: refused");
	ok(!allow_parse(&a, "example.org", detail, sizeof(detail)),
	   "a name: refused");
	ok(!allow_parse(&a,
			"1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			"1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			"1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			"1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			"1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			"1.1.1.1 1.1.1.1 1.1.1.1",
			detail, sizeof(detail)),
	   "more than ALLOW_MAX: refused");
	return tap_done();
}
