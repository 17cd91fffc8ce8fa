/*
 * xmhub - command-line tool (DESIGN.md "CLI xmhub").
 *
 * A table maps "GROUP COMMAND" to a handler; each handler reads its
 * input, calls one lib/ function and writes the answer.  Exit status: 0
 * done, 1 the input was refused or could not be read, 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "jsonform.h"
#include "xmbp.h"
#include "xmch.h"

/* Input files are read whole; larger ones are refused. */
#define INPUT_MAX (1UL << 30)

struct cmd {
	const char *group, *name, *args;
	/* Turns the whole input into the whole output; 1 after a message. */
	int (*run)(const struct buf *in, struct buf *out);
};

static int cmd_xmbp_decode(const struct buf *, struct buf *);
static int cmd_xmbp_encode(const struct buf *, struct buf *);
static int cmd_xmch_dump(const struct buf *, struct buf *);
static int cmd_xmch_pack(const struct buf *, struct buf *);

static const struct cmd cmds[] = {
	{"xmbp", "decode", "[FILE|-]", cmd_xmbp_decode},
	{"xmbp", "encode", "[FILE|-]", cmd_xmbp_encode},
	{"xmch", "dump", "FILE|-", cmd_xmch_dump},
	{"xmch", "pack", "[FILE|-]", cmd_xmch_pack},
};

/* Reads path ("-" or NULL: standard input) into b; prints why not. */
static int
read_input(const char *path, const char *prog, struct buf *b)
{
	int fd = 0, rc = 0;

	if (path != NULL && strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	if (!buf_read_fd(b, fd)) {
		if (b->failed)
			fprintf(stderr, "%s: %s: larger than %lu bytes\n", prog,
				path ? path : "-", INPUT_MAX);
		else
			fprintf(stderr, "%s: %s: %s\n", prog, path ? path : "-",
				strerror(errno));
		rc = 1;
	}
	if (fd != 0)
		close(fd);
	return rc;
}

/* Writes b to standard output. */
static int
write_output(const char *prog, const struct buf *b)
{
	if (b->failed) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
		fprintf(stderr, "%s: standard output: %s\n", prog,
			strerror(errno));
		return 1;
	}
	return 0;
}

static int
cmd_xmbp_decode(const struct buf *in, struct buf *out)
{
	struct xmbp_batch batch;
	struct xmbp_error e;

	if (xmbp_decode(in->p, in->len, &batch, &e) != XMBP_OK) {
		fprintf(stderr, "xmbp: %s: %s (at byte %zu)\n",
			xmbp_status_name(e.status), e.msg, e.offset);
		return 1;
	}
	jsonform_batch(out, &batch);
	return 0;
}

static int
cmd_xmbp_encode(const struct buf *in, struct buf *out)
{
	struct jsonform_error e;

	if (!jsonform_encode_batch((const char *)in->p, in->len, out, &e)) {
		fprintf(stderr, "xmbp: %s: %s\n", e.kind, e.msg);
		return 1;
	}
	return 0;
}

static int
cmd_xmch_dump(const struct buf *in, struct buf *out)
{
	struct xmch_chunk chunk;
	struct xmch_error e;

	if (xmch_open(in->p, in->len, &chunk, &e) != XMCH_OK) {
		fprintf(stderr, "xmch: %s: %s\n", xmch_status_name(e.status),
			e.msg);
		return 1;
	}
	jsonform_chunk(out, &chunk);
	xmch_close(&chunk);
	return 0;
}

static int
cmd_xmch_pack(const struct buf *in, struct buf *out)
{
	struct jsonform_error e;

	if (!jsonform_pack_chunk((const char *)in->p, in->len, out, &e)) {
		fprintf(stderr, "xmch: %s: %s\n", e.kind, e.msg);
		return 1;
	}
	return 0;
}

/* Reads the input, runs the command, writes its output. */
static int
run(const struct cmd *c, const char *path)
{
	struct buf in, out;
	int rc;

	buf_init(&in, INPUT_MAX);
	buf_init(&out, 0);
	if ((rc = read_input(path, c->group, &in)) == 0 &&
	    (rc = c->run(&in, &out)) == 0)
		rc = write_output(c->group, &out);
	buf_free(&in);
	buf_free(&out);
	return rc;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  xmhub %s %s %s\n", cmds[i].group, cmds[i].name,
			cmds[i].args);
}

int
main(int argc, char *argv[])
{
	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 || argc == 4)
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(argv[1], cmds[i].group) == 0 &&
			    strcmp(argv[2], cmds[i].name) == 0)
				return run(&cmds[i],
					   argc == 4 ? argv[3] : NULL);
	usage(stderr);
	return 2;
}
