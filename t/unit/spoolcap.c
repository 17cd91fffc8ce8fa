/* SPDX-License-Identifier: MIT */
/*
 * t/unit/spoolcap.c - the host's spool slots (lib/web/spoolcap): taken up
 * to XMHUB_SPOOL_MAX, given back by their token only, free again once
 * their lease ran out.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "web/spoolcap.h"
#include "tap.h"

int
main(void)
{
	char path[] = "/tmp/spoolcap-XXXXXX", a[SPOOLCAP_TOKEN_MAX],
	     b[SPOOLCAP_TOKEN_MAX], c[SPOOLCAP_TOKEN_MAX];
	int64_t past = 1;
	int fd;

	unsetenv("XMHUB_SPOOL_SLOTS");
	ok(spoolcap_take(a) == SPOOLCAP_OFF && a[0] == '\0',
	   "no slots file: not capped");
	if ((fd = mkstemp(path)) < 0)
		return 1;
	setenv("XMHUB_SPOOL_SLOTS", path, 1);
	setenv("XMHUB_SPOOL_MAX", "2", 1);
	ok(spoolcap_take(a) == SPOOLCAP_TAKEN && strncmp(a, "0-", 2) == 0,
	   "the first slot: %s", a);
	ok(spoolcap_take(b) == SPOOLCAP_TAKEN && strncmp(b, "1-", 2) == 0,
	   "the second slot: %s", b);
	ok(spoolcap_take(c) == SPOOLCAP_FULL, "a third: full");

	spoolcap_give(a);
	ok(spoolcap_take(c) == SPOOLCAP_TAKEN && strncmp(c, "0-", 2) == 0 &&
		   strcmp(a, c) != 0,
	   "given back: taken again, with a new token");
	spoolcap_give(a);
	ok(spoolcap_take(a) == SPOOLCAP_FULL,
	   "the old token does not free the slot's new holder");
	spoolcap_give("x");
	spoolcap_give("0-");
	spoolcap_give("0-1234x");
	spoolcap_give("99999999-0000000000000000");
	spoolcap_give("-1-0000000000000000");
	ok(spoolcap_take(a) == SPOOLCAP_FULL, "malformed tokens: ignored");

	/* The second slot's lease ran out (its body never arrived). */
	ok(pwrite(fd, &past, sizeof(past), 16) == sizeof(past),
	   "a lease set in the past");
	ok(spoolcap_take(a) == SPOOLCAP_TAKEN && strncmp(a, "1-", 2) == 0,
	   "a slot whose lease ran out is taken");
	spoolcap_give(b);
	ok(spoolcap_take(b) == SPOOLCAP_FULL,
	   "and its first holder can not give it back");

	setenv("XMHUB_SPOOL_MAX", "0", 1);
	ok(spoolcap_take(a) == SPOOLCAP_OFF, "XMHUB_SPOOL_MAX 0: not capped");
	setenv("XMHUB_SPOOL_SLOTS", "/nonexistent/dir/slots", 1);
	setenv("XMHUB_SPOOL_MAX", "2", 1);
	ok(spoolcap_take(a) == SPOOLCAP_ERROR, "an unusable file: an error");

	close(fd);
	unlink(path);
	return tap_done();
}
