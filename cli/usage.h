/* SPDX-License-Identifier: MIT */
/*
 * usage.h - usage errors of the xmhub CLI: what was wrong with a
 * command's arguments, said in one line on standard error before the
 * command's usage, "xmhub GROUP [COMMAND]: WHY", WHY naming the argument
 * and the form it takes (`--devices: expected a whole number from 1 to
 * 1000, got "x"`).  Exit status 2.
 *
 * main names the command (usage_begin) before it runs it; a command that
 * finds its arguments wrong says so with one of these and returns 2, and
 * main prints the usage after the line.  Values only the database can
 * judge (an unknown facility, a taken e-mail) are not usage errors: the
 * commands refuse them with exit 1.
 */
#ifndef XMHUB_CLI_USAGE_H
#define XMHUB_CLI_USAGE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

/* The command about to run, for the messages: its words (name NULL for
 * a one-word command, group NULL before one is known) and the arguments
 * of its usage line, where the form of an option's value is found. */
void usage_begin(const char *group, const char *name, const char *args);

/* Prints "xmhub GROUP [COMMAND]: " and the message on standard error;
 * returns 2. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An option's missing value ("--email: missing value (--email E)") or a
 * required option that is absent ("--url is required (--url BASE_URL)"),
 * the form taken from the usage line; returns 2. */
int usage_missing_value(const char *name);
int usage_required(const char *name);

/* One --option of a command. */
struct usage_opt {
	const char *name; /* without the dashes */
	bool flag;
	bool required;
	const char *value; /* the value, or "" for a flag that is set */
};

/*
 * Fills the n opts from argv (the arguments after the command's words).
 * When operand is not NULL, the one argument that is no option goes
 * there, and is required (operand_name says what it is: "ID|EMAIL").
 * False after a usage_error on an unknown, repeated or incomplete
 * option, a missing required one or operand, or a stray argument.
 */
bool usage_opts(int argc, char *argv[], struct usage_opt *opts, size_t n,
		const char *operand_name, const char **operand);

/* The value s of option name (without the dashes) as a whole number
 * from min to max into *v; false after a usage_error naming the range. */
bool usage_whole(const char *name, const char *s, long long min, long long max,
		 long long *v);

/* The same for a number that may have decimals. */
bool usage_number(const char *name, const char *s, double min, double max,
		  double *v);

/* Says what getopt_long (its optstring starting with ":") found wrong
 * in argv: opt is what it returned (':' a missing value, '?' anything
 * else), longopts its table; returns 2. */
int usage_getopt(int opt, char *const argv[], const struct option *longopts);

#endif
