/* SPDX-License-Identifier: MIT */
/*
 * spool.c - the sender's store-and-forward spool.
 *
 * Files in the directory:
 *   state             "xmhub-spool 1\nsession ID\nlines N\nseq S\n"
 *   NNNNNNNNNNNNNNNN  a batch: "XMSPOOL1", u64 line_end, u32 length
 *                     (big-endian), the batch; N its number in hex
 * Every file is written under a .tmp name, fsync'd, renamed and the
 * directory fsync'd, so a file is whole or absent.  The state is written
 * after the batch it follows, so on opening, the greater of the state's
 * and the newest batch's figures is the truth.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/be.h"
#include "core/fdio.h"
#include "core/spool.h"

#define MAGIC "XMSPOOL1"
#define HEAD 20 /* magic, line_end, length */
#define MAX_BATCH (16u << 20)

/* Writes n bytes as file name (via name.tmp), durably. */
static bool
write_file(int dirfd, const char *name, const void *a, size_t an, const void *b,
	   size_t bn)
{
	char tmp[64];
	int fd;
	bool ok = false;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	if (fdio_write_full(fd, a, an) &&
	    (bn == 0 || fdio_write_full(fd, b, bn)) && fsync(fd) == 0)
		ok = true;
	if (close(fd) != 0)
		ok = false;
	if (ok && (renameat(dirfd, tmp, dirfd, name) != 0 || fsync(dirfd) != 0))
		ok = false;
	if (!ok)
		unlinkat(dirfd, tmp, 0);
	return ok;
}

static bool
write_state(struct spool *sp)
{
	char text[160];
	int n = snprintf(text, sizeof(text),
			 "xmhub-spool 1\nsession %s\nlines %" PRIu64
			 "\nseq %u\n",
			 sp->session, sp->lines, (unsigned)sp->next_seq);

	return write_file(sp->dirfd, "state", text, (size_t)n, NULL, 0);
}

/* Reads the state file, if any; false when it is not a spool's. */
static bool
read_state(struct spool *sp, char *err, size_t errlen)
{
	char text[256], session[64];
	int fd = openat(sp->dirfd, "state", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	uint64_t lines;
	unsigned seq;

	if (fd < 0) {
		if (errno == ENOENT)
			return true;
		snprintf(err, errlen, "state: %s", strerror(errno));
		return false;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	text[n] = '\0';
	if (sscanf(text,
		   "xmhub-spool 1\nsession %63s\nlines %" SCNu64 "\nseq %u\n",
		   session, &lines, &seq) != 3 ||
	    seq > UINT16_MAX) {
		snprintf(err, errlen, "state: not a spool's state file");
		return false;
	}
	if (strcmp(session, sp->session) != 0) {
		snprintf(err, errlen,
			 "the spool belongs to session %s (send its batches "
			 "first, or use another --spool)",
			 session);
		return false;
	}
	sp->lines = lines;
	sp->next_seq = (uint16_t)seq;
	return true;
}

/* mkdir -p of path, mode 0700. */
static bool
make_dirs(const char *path)
{
	char tmp[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return errno = ENAMETOOLONG, false;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return false;
		*p = '/';
	}
	return mkdir(tmp, 0700) == 0 || errno == EEXIST;
}

/* The head of batch file number no: its line_end and length. */
static bool
read_head(int dirfd, uint64_t no, uint64_t *line_end, uint32_t *len, int *fdp)
{
	char name[32];
	uint8_t h[HEAD];
	int fd;

	snprintf(name, sizeof(name), "%016" PRIx64, no);
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (!fdio_read_full(fd, h, HEAD) || memcmp(h, MAGIC, 8) != 0 ||
	    be32_get(h + 16) > MAX_BATCH) {
		close(fd);
		return errno = EINVAL, false;
	}
	*line_end = be64_get(h + 8);
	*len = be32_get(h + 16);
	if (fdp != NULL)
		*fdp = fd;
	else
		close(fd);
	return true;
}

bool
spool_open(struct spool *sp, const char *path, const char *session, char *err,
	   size_t errlen)
{
	DIR *d = NULL;
	struct dirent *e;
	bool any = false, ok = false;

	memset(sp, 0, sizeof(*sp));
	sp->dirfd = -1;
	snprintf(sp->session, sizeof(sp->session), "%s", session);
	if (!make_dirs(path) ||
	    (sp->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(dup(sp->dirfd))) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!read_state(sp, err, errlen))
		goto out;
	while ((e = readdir(d)) != NULL) {
		const char *dot = strrchr(e->d_name, '.');
		char *end;
		uint64_t no;

		if (dot != NULL && strcmp(dot, ".tmp") == 0) {
			unlinkat(sp->dirfd, e->d_name, 0);
			continue;
		}
		if (strlen(e->d_name) != 16)
			continue;
		no = strtoull(e->d_name, &end, 16);
		if (*end != '\0')
			continue;
		if (!any || no < sp->first)
			sp->first = no;
		if (!any || no + 1 > sp->next)
			sp->next = no + 1;
		any = true;
	}
	if (any) {
		/* The newest batch may be newer than the state. */
		uint64_t line_end;
		uint32_t len;
		int fd;
		uint8_t env[8];

		if (!read_head(sp->dirfd, sp->next - 1, &line_end, &len, &fd)) {
			snprintf(err, errlen,
				 "%s: batch file %016" PRIx64 ": %s", path,
				 sp->next - 1, strerror(errno));
			goto out;
		}
		if (len < 8 || !fdio_read_full(fd, env, 8)) {
			close(fd);
			snprintf(err, errlen,
				 "%s: batch file %016" PRIx64 " is damaged",
				 path, sp->next - 1);
			goto out;
		}
		close(fd);
		if (line_end > sp->lines)
			sp->lines = line_end;
		sp->next_seq = (uint16_t)(be16_get(env + 6) + 1);
	}
	ok = true;
out:
	if (d != NULL)
		closedir(d);
	if (!ok)
		spool_close(sp);
	return ok;
}

void
spool_close(struct spool *sp)
{
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	sp->dirfd = -1;
}

uint64_t
spool_depth(const struct spool *sp)
{
	return sp->next - sp->first;
}

bool
spool_push(struct spool *sp, const uint8_t *batch, size_t len,
	   uint64_t line_end)
{
	uint8_t h[HEAD];
	char name[32];

	if (len < 8 || len > MAX_BATCH)
		return errno = EINVAL, false;
	memcpy(h, MAGIC, 8);
	be64_put(h + 8, line_end);
	be32_put(h + 16, (uint32_t)len);
	snprintf(name, sizeof(name), "%016" PRIx64, sp->next);
	if (!write_file(sp->dirfd, name, h, HEAD, batch, len))
		return false;
	sp->next++;
	sp->lines = line_end;
	sp->next_seq = (uint16_t)(be16_get(batch + 6) + 1);
	return write_state(sp);
}

bool
spool_get(const struct spool *sp, uint64_t i, struct buf *out)
{
	uint64_t line_end;
	uint32_t len;
	int fd;
	bool ok;

	if (i >= spool_depth(sp) ||
	    !read_head(sp->dirfd, sp->first + i, &line_end, &len, &fd))
		return false;
	ok = buf_reserve(out, len) &&
	     fdio_read_full(fd, out->p + out->len, len);
	if (ok)
		out->len += len;
	close(fd);
	return ok;
}

bool
spool_ack(struct spool *sp)
{
	char name[32];

	if (spool_depth(sp) == 0)
		return errno = EINVAL, false;
	snprintf(name, sizeof(name), "%016" PRIx64, sp->first);
	/* No fsync of the directory: an unlink lost in a crash only means
	 * the batch is sent again, which the server acknowledges without
	 * storing it twice. */
	if (unlinkat(sp->dirfd, name, 0) != 0)
		return false;
	sp->first++;
	return true;
}

bool
spool_done(struct spool *sp)
{
	if (spool_depth(sp) != 0)
		return errno = EINVAL, false;
	sp->lines = 0;
	return write_state(sp);
}
