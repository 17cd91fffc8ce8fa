/* SPDX-License-Identifier: MIT */
/*
 * spool.c - the sender's spool (lib/core/spool.c): batches kept across
 * a reopening in order, the line count and batch_seq taken from the
 * newest batch when the state file is older (a crash between the two
 * writes), half-written files removed, another session's spool refused,
 * spool_done resetting the line count.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/spool.h"
#include "tap.h"

/* Removes the files of directory path, then it. */
static void
rm_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char f[512];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
		unlink(f);
	}
	if (d != NULL)
		closedir(d);
	rmdir(path);
}

/* A 12-byte "batch": the XMBP envelope with batch_seq seq, then a tag. */
static void
batch(uint8_t *b, uint16_t seq, uint8_t tag)
{
	memcpy(b, "XMBP\x01\x00", 6);
	b[6] = (uint8_t)(seq >> 8);
	b[7] = (uint8_t)seq;
	b[8] = b[9] = 0;
	b[10] = tag;
	b[11] = 0xee;
}

int
main(void)
{
	char dir[] = "/tmp/xmhub-spool-XXXXXX", path[256], err[256];
	struct spool sp;
	struct buf got;
	uint8_t b[12];
	const char *sid = "11111111-2222-4333-8444-555555555555";

	if (mkdtemp(dir) == NULL)
		return 1;
	buf_init(&got, 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	ok(spool_open(&sp, path, sid, err, sizeof(err)),
	   "a new spool (parents made)");
	ok(spool_depth(&sp) == 0 && sp.lines == 0 && sp.next_seq == 0,
	   "empty, line 0, batch_seq 0");
	batch(b, 65535, 1);
	ok(spool_push(&sp, b, sizeof(b), 10), "push batch_seq 65535");
	batch(b, 0, 2);
	ok(spool_push(&sp, b, sizeof(b), 25), "push batch_seq 0");
	ok(sp.next_seq == 1 && sp.lines == 25, "next batch_seq 1 (wrapped)");
	spool_close(&sp);

	ok(spool_open(&sp, path, sid, err, sizeof(err)) &&
		   spool_depth(&sp) == 2 && sp.lines == 25 && sp.next_seq == 1,
	   "reopened: 2 batches, line 25, batch_seq 1");
	ok(spool_get(&sp, 0, &got) && got.len == 12 && got.p[10] == 1,
	   "the oldest first");
	got.len = 0;
	ok(spool_get(&sp, 1, &got) && got.p[10] == 2, "then the next");
	ok(!spool_get(&sp, 2, &got), "no third");
	ok(spool_ack(&sp) && spool_depth(&sp) == 1, "ack removes the oldest");
	got.len = 0;
	ok(spool_get(&sp, 0, &got) && got.p[10] == 2, "the next is now first");
	spool_close(&sp);

	/* A crash after a batch file but before the state: the state says
	 * line 25 and batch_seq 1, the newer batch more. */
	{
		char f[300];
		uint8_t raw[20 + 12] = "XMSPOOL1";
		int fd;

		raw[15] = 40; /* line_end 40 */
		raw[19] = 12;
		batch(raw + 20, 1, 3);
		snprintf(f, sizeof(f), "%s/%016x", path, 2);
		fd = open(f, O_WRONLY | O_CREAT, 0600);
		ok(fd >= 0 && write(fd, raw, sizeof(raw)) == sizeof(raw),
		   "a batch file written behind the state's back");
		close(fd);
		snprintf(f, sizeof(f), "%s/0000000000000003.tmp", path);
		fd = open(f, O_WRONLY | O_CREAT, 0600);
		close(fd);
		ok(spool_open(&sp, path, sid, err, sizeof(err)) &&
			   spool_depth(&sp) == 2 && sp.lines == 40 &&
			   sp.next_seq == 2,
		   "the newest batch wins over the state: line 40, seq 2");
		ok(access(f, F_OK) != 0, "the half-written file is removed");
	}
	got.len = 0;
	ok(spool_get(&sp, 1, &got) && got.p[10] == 3 && spool_ack(&sp) &&
		   spool_ack(&sp) && spool_depth(&sp) == 0,
	   "it is queued after the other; both acknowledged");
	spool_close(&sp);

	ok(!spool_open(&sp, path, "99999999-2222-4333-8444-555555555555", err,
		       sizeof(err)) &&
		   strstr(err, sid) != NULL,
	   "another session's spool is refused, naming its session");

	snprintf(path, sizeof(path), "%s/c", dir);
	ok(spool_open(&sp, path, sid, err, sizeof(err)), "a second spool");
	batch(b, 7, 4);
	ok(spool_push(&sp, b, sizeof(b), 3) && spool_ack(&sp) &&
		   spool_done(&sp),
	   "push, ack, done");
	spool_close(&sp);
	ok(spool_open(&sp, path, sid, err, sizeof(err)) && sp.lines == 0 &&
		   sp.next_seq == 8 && spool_depth(&sp) == 0,
	   "after done: line 0, batch_seq goes on at 8");
	batch(b, 8, 5);
	ok(spool_push(&sp, b, sizeof(b), 1) && !spool_done(&sp),
	   "done refused while a batch is queued");
	spool_close(&sp);
	buf_free(&got);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	rm_dir(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	rm_dir(path);
	snprintf(path, sizeof(path), "%s/c", dir);
	rm_dir(path);
	rm_dir(dir);
	return tap_done();
}
