#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# lib/core/settings.def is every setting the programs read: each XMHUB_*
# or FACE_API_* name in a C file's strings (but getenv()'s) is in it, none
# passes its own range (conf_int() with such a name: the range lives in the
# table), and each name of the table is read somewhere (a C file, or the
# web server configuration for the httpd ones).  The generated
# xmhub.env.example names every setting of the table.
use strict;
use warnings;
use File::Find;
use Test::More;

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
my $build = $ENV{XMHUB_BUILDDIR} or die "XMHUB_BUILDDIR is not set\n";

sub slurp {
	my ($f) = @_;
	open my $h, '<', $f or die "$f: $!\n";
	local $/;
	return <$h>;
}

my %table;
my $def = slurp("$src/lib/core/settings.def");
while ($def =~ /^SETTING\((\w+),\s*(\w+),\s*[^,]+,[^,]+,[^,]+,[^,]+,\s*"([^"]*)"/mg) {
	$table{$1} = {type => $2, programs => $3};
}
cmp_ok(scalar keys %table, '>', 50, 'settings.def has its settings');

my (%read, @bad);
find({no_chdir => 1, wanted => sub {
	my $f = $File::Find::name;
	# Relative: the tree itself may lie under a _build/ (make distcheck).
	(my $rel = $f) =~ s{^\Q$src\E/}{};
	return unless $rel =~ /\.(c|cpp)$/ && $rel !~ m{(^|/)(t|_build|bench)/};
	my $text = slurp($f);
	# Every such name in a string is a setting (called with conf_*() or
	# kept in a table of names for it), but those given to getenv() or
	# FCGX_GetParam(): the environment's and the request's variables.
	while ($text =~ /(\w+)?\(?\s*"((?:XMHUB|FACE_API)_\w+)"/g) {
		my ($fn, $name) = ($1 // '', $2);
		next if $fn =~ /^(getenv|FCGX_GetParam)$/;
		$read{$name} = 1;
		push @bad, "$rel: $name is not in settings.def" unless $table{$name};
		push @bad, "$rel: conf_int(\"$name\", ...) gives its own range"
			if $fn eq 'conf_int';
	}
}}, map { "$src/$_" } qw(lib jobs ws cli));
is(join("\n", @bad), '', 'every conf_* name is in the table, without a range');

my $httpd = join '', map { slurp($_) } "$src/httpd-conf/stack",
	"$src/httpd-conf/apache.conf.in";
my @unread = grep {
	!$read{$_} && !($table{$_}{programs} eq 'httpd' && $httpd =~ /\b$_\b/)
} sort keys %table;
is(join(' ', @unread), '', 'every setting of the table is read');

# The ports' defaults are httpd-conf/programs' port lines (the stack and
# the units' defaults), whatever changes one of them.
my $programs = slurp("$src/httpd-conf/programs");
for (['XMHUB_WS_PORT', 'WS_PORT'], ['XMHUB_AUTHZ_PORT', 'AUTHZ_PORT'],
    ['XMHUB_WSD_PORT', 'WSD_PORT']) {
	my ($setting, $line) = @$_;
	my ($def) = $def =~ /^SETTING\(\Q$setting\E,\s*INT,\s*"(\d+)"/m;
	my ($port) = $programs =~ /^port \Q$line\E (\d+)$/m;
	ok(defined $def && defined $port && $def == $port,
	    "$setting defaults to programs' port $line (" . ($def // '?')
	    . ' vs ' . ($port // '?') . ')');
}

my $example = slurp("$build/xmhub.env.example");
my @missing = grep { $example !~ /^#$_=/m } sort keys %table;
is(join(' ', @missing), '', 'xmhub.env.example names every setting');
my $man = slurp("$build/man/xmhub.env.5");
@missing = grep { $man !~ /^\.It Ev $_$/m } sort keys %table;
is(join(' ', @missing), '', 'xmhub.env(5) describes every setting');

done_testing();
