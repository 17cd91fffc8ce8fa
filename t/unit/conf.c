/* SPDX-License-Identifier: MIT */
/*
 * conf.t - settings from the environment and env files (lib/core/conf.c).
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/conf.h"
#include "tap.h"

/* Writes text to a new temporary file; its path in path. */
static void
write_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

int
main(void)
{
	char path[] = "/tmp/conf-t-XXXXXX", bad[] = "/tmp/conf-t-XXXXXX";
	char bad2[] = "/tmp/conf-t-XXXXXX";
	char detail[256];
	long long v;

	setenv("XMT_SET", "from-env", 1);
	unsetenv("XMT_NEW");
	unsetenv("XMT_QUOTED");
	unsetenv("XMT_NUM");
	write_file(path, "# a comment\n\n"
			 "XMT_SET=from-file\n"
			 "  XMT_NEW = spaced  \n"
			 "XMT_QUOTED=\"a = b # c\"\n"
			 "XMT_NUM=42\n"
			 "XMT_EMPTY=\n");
	ok(conf_load_file(path, detail, sizeof(detail)), "env file loads");
	is_str(conf_str("XMT_SET", NULL), "from-env",
	       "the environment wins over the file");
	is_str(conf_str("XMT_NEW", NULL), "spaced", "white space trimmed");
	is_str(conf_str("XMT_QUOTED", NULL), "a = b # c",
	       "double quotes removed, content kept");
	ok(conf_str("XMT_EMPTY", "dflt") != NULL &&
		   strcmp(conf_str("XMT_EMPTY", "dflt"), "dflt") == 0,
	   "an empty value means the default");
	ok(conf_int("XMT_NUM", 7, 0, 100, &v) && v == 42, "integer read");
	ok(!conf_int("XMT_NUM", 7, 0, 10, &v) && v == 7,
	   "out of range: refused, default kept");
	setenv("XMT_NUM", "12abc", 1);
	ok(!conf_int("XMT_NUM", 7, 0, 100, &v) && v == 7, "not a number");
	ok(conf_int("XMT_UNSET_NAME", 7, 0, 100, &v) && v == 7,
	   "unset: the default");
	ok(conf_load_file("/nonexistent/xmhub.env", detail, sizeof(detail)),
	   "a missing file is not an error");
	write_file(bad, "XMT_OK=1\nno equals sign here\n");
	ok(!conf_load_file(bad, detail, sizeof(detail)) &&
		   strstr(detail, ":2:") != NULL,
	   "a malformed line is refused with its line number");
	write_file(bad2, "1BAD=x\n");
	ok(!conf_load_file(bad2, detail, sizeof(detail)),
	   "a name starting with a digit is refused");
	setenv("XMHUB_ENV_FILE", path, 1);
	unsetenv("XMT_NEW");
	ok(conf_init(detail, sizeof(detail)) &&
		   strcmp(conf_str("XMT_NEW", ""), "spaced") == 0,
	   "conf_init reads $XMHUB_ENV_FILE");
	unlink(bad);
	unlink(bad2);
	unlink(path);
	return tap_done();
}
