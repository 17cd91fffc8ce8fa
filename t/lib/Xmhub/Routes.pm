# SPDX-License-Identifier: MIT
package Xmhub::Routes;

# The route tables of the cgi-bin programs, read from their source
# (t/e2e/authz-matrix.t): each program's
#   static const struct route routes[] = { {"GET", "/api/v1/x/{id}",
#       ROUTE_JWT, ROLE_USER, NULL, handler}, ... };
# (lib/web/route.h) with the file's object-like #defines expanded, and the
# enums of lib/web/route.h and lib/core/auth.h that name who may call.
# Anything of another shape dies with the file and the text it could not
# read, so that a new kind of table is noticed rather than left out.
#
#   my @r = routes($srcdir, skip => ['face.c']);
#   # ({program, method, pattern, auth, min_role, scope, handler}, ...)
#   my %role = enum_values("$srcdir/lib/core/auth.h", 'auth_role');
#   my @r = parse_routes($c_text, 'name.c');
#
# Core modules only.

use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(routes parse_routes enum_values);

my $METHOD = qr/GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS/;

sub slurp {
	my ($path) = @_;
	open my $f, '<', $path or die "$path: $!\n";
	local $/;
	return scalar <$f>;
}

# C text without its comments (string literals kept as they are).
sub strip_comments {
	my ($s) = @_;
	$s =~ s{("(?:\\.|[^"\\])*")|/\*.*?\*/|//[^\n]*}{defined $1 ? $1 : ' '}gse;
	return $s;
}

# enum_values($header, $name): the names and values of `enum $name { ... }`
# in $header (explicit values and implicit increments); dies when there is
# no such enum or a value is not a plain integer.
sub enum_values {
	my ($path, $name) = @_;
	my $text = strip_comments(slurp($path));
	$text =~ /\benum\s+\Q$name\E\s*\{([^}]*)\}/
	    or die "$path: no enum $name\n";
	my ($n, %v) = (0);
	for my $item (split /,/, $1) {
		next if $item !~ /\S/;
		$item =~ /^\s*([A-Za-z_]\w*)\s*(?:=\s*(-?\d+)\s*)?$/
		    or die "$path: enum $name: cannot read '$item'\n";
		$n = $2 if defined $2;
		$v{$1} = $n++;
	}
	return %v;
}

# The object-like #defines of C text, expanded into it (repeatedly, for
# macros naming macros); dies on a function-like macro used in a table.
sub expand {
	my ($text, $file) = @_;
	my %def;
	while ($text =~ /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\(?)([^\n]*)$/mg) {
		my ($name, $paren, $body) = ($1, $2, $3);
		if ($paren) {
			$def{$name} = undef;
			next;
		}
		$body =~ s/^\s+|\s+$//g;
		$def{$name} = $body;
	}
	$text =~ s/^[ \t]*#[^\n]*$//mg;
	for (1 .. 8) {
		my $changed = 0;
		$text =~ s{("(?:\\.|[^"\\])*")|\b([A-Za-z_]\w*)\b}{
			if (defined $1) { $1 }
			elsif (exists $def{$2}) {
				die "$file: function-like macro $2 in a route table\n"
				    unless defined $def{$2};
				$changed = 1;
				$def{$2};
			} else { $2 }
		}ge;
		return $text unless $changed;
	}
	die "$file: macros nest too deep\n";
}

# Splits s at the commas outside string literals.
sub fields {
	my ($s) = @_;
	my @f = ('');
	while ($s =~ /\G("(?:\\.|[^"\\])*"|,|[^",]+)/gc) {
		if ($1 eq ',') {
			push @f, '';
		} else {
			$f[-1] .= $1;
		}
	}
	die "unbalanced quotes\n" if (pos($s) // 0) != length $s;
	s/^\s+|\s+$//g for @f;
	return @f;
}

# parse_routes($c_text, $file): the entries of the one route table of a
# program's source, as hashes; dies when there is no such table, more
# than one, or an entry of another shape.
sub parse_routes {
	my ($text, $file) = @_;
	$text = expand(strip_comments($text), $file);
	my @tables = $text =~ /\bstruct\s+route\b[^;{]*?=\s*\{(.*?)\}\s*;/sg;
	my $mentions = () = $text =~ /\bstruct\s+route\s+\w+\s*\[/g;
	die "$file: no route table (struct route NAME[] = {...};)\n"
	    unless @tables;
	die "$file: " . scalar(@tables) . " route tables; expected one\n"
	    if @tables != 1;
	die "$file: a route table of another shape\n" if $mentions != 1;
	my $body = $tables[0];
	my @routes;
	while ($body =~ /\G\s*\{((?:"(?:\\.|[^"\\])*"|[^{}"])*)\}\s*(,|\z)/gc) {
		my $entry = $1;
		my @f = eval { fields($entry) };
		die "$file: entry '$entry': $@" if $@;
		die "$file: entry '$entry': " . scalar(@f) . " fields, not 6\n"
		    if @f != 6;
		my ($m, $pat, $auth, $role, $scope, $fn) = @f;
		$m =~ /^"($METHOD)"$/ or die "$file: entry '$entry': method $m\n";
		$m = $1;
		$pat =~ m{^"(/[A-Za-z0-9_./{}-]*)"$}
		    or die "$file: entry '$entry': path $pat\n";
		$pat = $1;
		$auth =~ /^ROUTE_[A-Z_]+$/
		    or die "$file: entry '$entry': auth $auth\n";
		$role =~ /^(?:\d+|ROLE_[A-Z_]+)$/
		    or die "$file: entry '$entry': min role $role\n";
		$scope =~ /^(?:NULL|"([a-z_]+)")$/
		    or die "$file: entry '$entry': scope $scope\n";
		$scope = $1;
		$fn =~ /^[A-Za-z_]\w*$/
		    or die "$file: entry '$entry': handler $fn\n";
		push @routes, {method => $m, pattern => $pat, auth => $auth,
			min_role => $role, scope => $scope, handler => $fn};
	}
	my $rest = substr($body, pos($body) // 0);
	die "$file: cannot read the table from '" . substr($rest, 0, 80)
	    . "'\n" if $rest =~ /\S/;
	die "$file: an empty route table\n" unless @routes;
	return @routes;
}

# routes($srcdir, skip => [file names]): the routes of every
# $srcdir/cgi-bin/*.c but those skipped, each with its program (the file
# name without .c); in file, then table order.
sub routes {
	my ($src, %opt) = @_;
	my %skip = map { $_ => 1 } @{$opt{skip} // []};
	my @files = sort glob("$src/cgi-bin/*.c");
	die "$src/cgi-bin: no programs\n" unless @files;
	my @all;
	for my $path (@files) {
		(my $file = $path) =~ s{.*/}{};
		next if $skip{$file};
		(my $program = $file) =~ s/\.c$//;
		push @all, map { {%$_, program => $program} }
		    parse_routes(slurp($path), $file);
	}
	return @all;
}

1;
