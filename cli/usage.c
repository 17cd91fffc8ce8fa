/* SPDX-License-Identifier: MIT */
/*
 * usage.c - the usage errors of the xmhub CLI (usage.h): one line
 * naming the argument and its form, in one format for every command.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usage.h"

/* The command run (usage_begin). */
static const char *cmd_group, *cmd_name, *cmd_args = "";

void
usage_begin(const char *group, const char *name, const char *args)
{
	cmd_group = group;
	cmd_name = name;
	cmd_args = args;
}

int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xmhub%s%s%s%s: ", cmd_group ? " " : "",
		cmd_group ? cmd_group : "", cmd_name ? " " : "",
		cmd_name ? cmd_name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/*
 * The form of option name's value in the usage line ("E" of "--email
 * E", "API_KEY" of "[--key API_KEY]") into *form and its length; false
 * when the line shows no value for it.
 */
static bool
value_form(const char *name, const char **form, int *len)
{
	size_t n = strlen(name), w;
	const char *p = cmd_args;
	int depth = 0;

	while ((p = strstr(p, "--")) != NULL &&
	       !(strncmp(p + 2, name, n) == 0 && p[2 + n] == ' ' &&
		 strchr("-[|", p[3 + n]) == NULL))
		p += 2;
	if (p == NULL)
		return false;
	*form = p + 3 + n;
	w = strcspn(*form, " ");
	for (size_t i = 0; i < w; i++)
		depth += ((*form)[i] == '[') - ((*form)[i] == ']');
	/* The brackets that close an optional option are not the value's. */
	for (; depth < 0 && w > 0 && (*form)[w - 1] == ']'; depth++)
		w--;
	*len = (int)w;
	return w > 0;
}

/* "--NAME" and what, with the form of its value when the usage line
 * shows one; returns 2. */
static int
option_error(const char *name, const char *what)
{
	const char *form;
	int len;

	if (!value_form(name, &form, &len))
		return usage_error("--%s%s", name, what);
	return usage_error("--%s%s (--%s %.*s)", name, what, name, len, form);
}

int
usage_missing_value(const char *name)
{
	return option_error(name, ": missing value");
}

int
usage_required(const char *name)
{
	return option_error(name, " is required");
}

bool
usage_opts(int argc, char *argv[], struct usage_opt *opts, size_t n,
	   const char *operand_name, const char **operand)
{
	if (operand != NULL)
		*operand = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (operand == NULL || *operand != NULL) {
				usage_error("stray argument \"%s\"", a);
				return false;
			}
			*operand = a;
			continue;
		}
		for (k = 0; k < n && (strncmp(a, "--", 2) != 0 ||
				      strcmp(a + 2, opts[k].name) != 0);
		     k++)
			continue;
		if (k == n) {
			usage_error("%s: no such option", a);
			return false;
		}
		if (opts[k].value != NULL) {
			usage_error("%s given twice", a);
			return false;
		}
		if (opts[k].flag)
			opts[k].value = "";
		else if (i + 1 < argc)
			opts[k].value = argv[++i];
		else {
			usage_missing_value(opts[k].name);
			return false;
		}
	}
	for (size_t k = 0; k < n; k++)
		if (opts[k].required && opts[k].value == NULL) {
			usage_required(opts[k].name);
			return false;
		}
	if (operand != NULL && *operand == NULL) {
		usage_error("%s is required", operand_name);
		return false;
	}
	return true;
}

bool
usage_whole(const char *name, const char *s, long long min, long long max,
	    long long *v)
{
	char *e;

	errno = 0;
	*v = strtoll(s, &e, 10);
	if (*s != '\0' && *e == '\0' && errno == 0 && *v >= min && *v <= max)
		return true;
	usage_error("--%s: expected a whole number from %lld to %lld, got "
		    "\"%s\"",
		    name, min, max, s);
	return false;
}

bool
usage_number(const char *name, const char *s, double min, double max, double *v)
{
	char *e;

	errno = 0;
	*v = strtod(s, &e);
	if (*s != '\0' && *e == '\0' && errno == 0 && *v >= min && *v <= max)
		return true;
	usage_error("--%s: expected a number from %.15g to %.15g, got \"%s\"",
		    name, min, max, s);
	return false;
}

int
usage_getopt(int opt, char *const argv[], const struct option *longopts)
{
	const char *a = argv[optind - 1];
	int len = (int)strcspn(a, "="), matches = 0;

	if (opt == ':' || (optopt != 0 && strncmp(a, "--", 2) == 0)) {
		while (longopts->name != NULL && longopts->val != optopt)
			longopts++;
		if (opt == ':')
			return usage_missing_value(longopts->name);
		return usage_error("--%s takes no value", longopts->name);
	}
	if (optopt != 0)
		return usage_error("-%c: no such option", optopt);
	/* getopt_long takes an abbreviation of one option only. */
	for (; strncmp(a, "--", 2) == 0 && longopts->name != NULL; longopts++)
		matches += strncmp(longopts->name, a + 2, (size_t)len - 2) == 0;
	if (matches > 1)
		return usage_error("%.*s: ambiguous, give the option's whole "
				   "name",
				   len, a);
	return usage_error("%.*s: no such option", len, a);
}
