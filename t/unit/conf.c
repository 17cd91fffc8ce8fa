/* SPDX-License-Identifier: MIT */
/*
 * conf.t - settings from the environment and env files (lib/core/conf.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Without XMHUB_ENV_FILE nor configure's file (a test build's
 * prefix), the account's ~/.config/xmhub/xmhub.env is read: a shared
 * host's way (doc/shared-hosting.md). */
static void
home_env_file(void)
{
	char home[] = "/tmp/conf-home-XXXXXX", dir[256], file[300];
	char detail[256], def[4096];
	bool had;
	FILE *f;

	if (mkdtemp(home) == NULL)
		abort();
	snprintf(dir, sizeof(dir), "%s/.config", home);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/.config/xmhub", home);
	mkdir(dir, 0700);
	snprintf(file, sizeof(file), "%s/xmhub.env", dir);
	setenv("HOME", home, 1);
	unsetenv("XMHUB_ENV_FILE");
	unsetenv("XMT_HOME");
	/* configure's file: no file in the home. */
	snprintf(def, sizeof(def), "%s", conf_env_file());
	if ((f = fopen(file, "w")) == NULL ||
	    fputs("XMT_HOME=from-home\n", f) < 0 || fclose(f) != 0)
		abort();
	had = access(def, F_OK) == 0;
	ok(strcmp(conf_env_file(), had ? def : file) == 0,
	   "configure's file when it exists, else the home's");
	ok(conf_init(detail, sizeof(detail)) &&
		   strcmp(conf_str("XMT_HOME", ""), had ? "" : "from-home") ==
			   0,
	   "conf_init reads it");
	ok(strcmp(def, file) != 0, "not the home's while it is missing");
	unlink(file);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/.config", home);
	rmdir(dir);
	rmdir(home);
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
	home_env_file();
	unlink(bad);
	unlink(bad2);
	unlink(path);
	return tap_done();
}
