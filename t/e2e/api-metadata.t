#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Metadata queries end to end (doc/queries.md): the session list with its
# filters and pagination envelope, one session with its streams, tenant
# isolation on every route, sample read-back of every value type identical to
# what was sent, time windows, paging through equal timestamps, csv, bucket
# aggregates, bad parameters.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use Xmhub::Ingest;
use Xmhub::Platform qw(keys_of is_error);
use Xmhub::Test ();

# Every answer is checked against doc/platform-www/openapi.json.
$ENV{XMHUB_OPENAPI_CHECK} = 1;

my $p = Xmhub::Platform->start;
my $fac = $p->facility('Meta A');
my $other = $p->facility('Meta B');
my $ta = $p->token($p->user('facility_admin', $fac));
my $tu = $p->token($p->user('user', $fac));
my $tb = $p->token($p->user('user', $other));
my $ts = $p->token($p->user('super_admin', undef));
my $NOBODY = '00000000-0000-4000-8000-000000000000';

my $in = Xmhub::Ingest->new($p, $p->api_key($ta, 'ingest'));
my $in_b = Xmhub::Ingest->new($p, $p->api_key($p->token($p->user(
	'facility_admin', $other)), 'ingest'));

# --- every value type, sent in two batches whose times interleave ---
my @types = qw(f64 f32 i64 i32 bool string bytes f64_array f32_array
	i32_array json i16 i8);
my $t = JSON::PP::true;
my $f = JSON::PP::false;
my %values = (
	f64 => [0.1, -1e308, 'NaN', 'Infinity', '-Infinity', 2.5, 5e-324],
	f32 => [0.5, -3.75, 'NaN', 'Infinity', 1e-3, 3.4e38, 1],
	i64 => ['-9223372036854775808', '9223372036854775807', 0, -1, 42, 7, 8],
	i32 => [-2147483648, 2147483647, 0, -1, 5, 6, 7],
	bool => [$t, $f, $t, $t, $f, $f, $t],
	string => ["h\x{1F600}llo", '', 'a,b', "q\"uote", "line\nbreak",
		"\x{e9}t\x{e9}", 'x' x 1000],
	bytes => ['AAEC/w==', '', 'AA==', 'QUJD', '////', 'AQID', 'AAAA'],
	f64_array => [[1.5, 'NaN'], [], [0.25], [1, 2, 3], [-1], [2], [3]],
	f32_array => [[(0.5) x 4096], [], ['Infinity'], [1], [2], [3], [4]],
	i32_array => [[1, -2, 2147483647], [], [0], [1], [2], [3], [4]],
	json => ['{"a":[1,2]}', '[]', '"x"', 'null', '{"\u00e9":1}', '1', '2'],
	i16 => [-32768, 32767, 0, 1, 2, 3, 4],
	i8 => [-128, 127, 0, 1, 2, 3, 4],
);
# Timestamps of the two batches: batch 2 fills gaps of batch 1, and both
# have a sample at 3000 (batch 1's first).
my @ts1 = (1000, 3000, 5000, 7000);
my @ts2 = (2000, 3000, 6000);

my $s1 = $in->session(11, map { [$_, $types[$_]] } 0 .. $#types);
my (%sent1, %sent2);
for my $i (0 .. $#types) {
	my $v = $values{$types[$i]};
	$v = [map { $_ =~ /^-?\d{10,}$/ ? $_ + 0 : $_ } @$v]
	    if $types[$i] eq 'i64';
	$sent1{$i} = [map { [$ts1[$_], $v->[$_]] } 0 .. 3];
	$sent2{$i} = [map { [$ts2[$_], $v->[$_ + 4]] } 0 .. 2];
}
$in->send($s1->{id}, 1, map { [$_, $types[$_], $sent1{$_}] } 0 .. $#types);
$in->send($s1->{id}, 2, map { [$_, $types[$_], $sent2{$_}] } 0 .. $#types);

for my $i (0 .. $#types) {
	my ($st, $b) = $in->samples($tu, $s1->{id}, $i);
	is($st, 200, "$types[$i]: 200");
	is($b->{value_type}, $types[$i], "$types[$i]: value_type");
	is_deeply($b->{samples}, $in->expected($sent1{$i}, $sent2{$i}),
	    "$types[$i]: read back identical, in time order, ties in order "
	    . 'sent') or diag explain $b->{samples};
	is($b->{count}, 7, "$types[$i]: count");
	is($b->{next_from_us}, undef, "$types[$i]: nothing more");
}

# The exact text of a few values (the CLI's form, not just equal).
{
	my ($st, $b, $res) = $in->samples($tu, $s1->{id}, 1, to_us => 3000);
	like($res->{content}, qr/"samples":\[\[1000,0\.5\],\[2000,1e-03\]|"samples":\[\[1000,0\.5\],\[2000,0\.001\]/,
	    'f32 printed in the shortest form');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 0, from_us => 3000,
		to_us => 3000);
	like($res->{content}, qr/"samples":\[\[3000,-1e\+308\],\[3000,2\.5\]\]/,
	    'f64 as the CLI prints it');
}

# --- time windows (both ends inclusive) ---
{
	my ($st, $b) = $in->samples($tu, $s1->{id}, 3, from_us => 2000,
		to_us => 6000);
	is_deeply([map { $_->[0] } @{$b->{samples}}],
	    [2000, 3000, 3000, 5000, 6000], 'window [2000, 6000]');
	is($b->{from_us}, 2000, 'from_us echoed');
	is($b->{to_us}, 6000, 'to_us echoed');
	($st, $b) = $in->samples($tu, $s1->{id}, 3, from_us => 7001);
	is_deeply($b->{samples}, [], 'window after the last sample: empty');
	($st, $b) = $in->samples($tu, $s1->{id}, 3, to_us => 999);
	is_deeply($b->{samples}, [], 'window before the first: empty');
	($st, $b) = $in->samples($tu, $s1->{id}, 3, from_us => 3000,
		to_us => 3000);
	is_deeply($b->{samples}, [[3000, 2147483647], [3000, 6]],
	    'a window of one timestamp: both samples, batch 1 first');
	($st, $b) = $in->samples($tu, $s1->{id}, 3,
		from_us => '18446744073709551615');
	is($st, 200, 'from_us 2^64-1: 200');
}

# --- limit and paging through equal timestamps ---
my $s2 = $in->session(12, [0, 'i32']);
my @eq = map { [100, $_] } 0 .. 24;
my @b1 = (@eq[0 .. 11], [50, -1], [200, 1000]);
my @b2 = (@eq[12 .. 24], [200, 1001], [300, 1002]);
$in->send($s2->{id}, 1, [0, 'i32', \@b1]);
$in->send($s2->{id}, 2, [0, 'i32', \@b2]);
my $want = $in->expected(\@b1, \@b2);
for my $limit (1, 3, 7, 13, 25, 26, 100) {
	my @got = $in->read_all($tu, $s2->{id}, 0, limit => $limit);
	is_deeply(\@got, $want, "limit $limit: paging loses and repeats "
	    . 'nothing') or diag explain \@got;
}
{
	my ($st, $b) = $in->samples($tu, $s2->{id}, 0, limit => 5);
	is($b->{count}, 5, 'limit 5: five samples');
	is($b->{next_from_us}, 100, 'next_from_us: the tied timestamp');
	is($b->{next_skip}, 4, 'next_skip: the samples at it already read');
	($st, $b) = $in->samples($tu, $s2->{id}, 0, limit => 26);
	is($b->{next_from_us}, 200, 'a page ending on a new timestamp');
	is($b->{next_skip}, 0, '... starts there with skip 0');
}

# --- csv ---
{
	my ($st, $b, $res) = $in->samples($tu, $s2->{id}, 0, format => 'csv',
		limit => 3);
	is($st, 200, 'csv: 200');
	like($res->{headers}{'content-type'}, qr{^text/csv}, 'csv: text/csv');
	is($res->{content}, "ts_us,value\n50,-1\n100,0\n100,1\n",
	    'csv: header and rows');
	is($res->{headers}{'x-next-from-us'}, 100, 'csv: X-Next-From-Us');
	is($res->{headers}{'x-next-skip'}, 2, 'csv: X-Next-Skip');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 5, format => 'csv',
		from_us => 2000, to_us => 3000);
	is($res->{content}, "ts_us,value\n2000,\"line\nbreak\"\n3000,\"\"\n"
	    . "3000,\"\xc3\xa9t\xc3\xa9\"\n",
	    'csv: strings quoted as UTF-8, newlines kept');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 5, format => 'csv',
		from_us => 5000, to_us => 5000);
	is($res->{content}, "ts_us,value\n5000,\"a,b\"\n", 'csv: a comma');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 5, format => 'csv',
		from_us => 7000);
	is($res->{content}, "ts_us,value\n7000,\"q\"\"uote\"\n",
	    'csv: quotes doubled');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 1, format => 'csv',
		from_us => 3000, to_us => 5000);
	is($res->{content}, "ts_us,value\n3000,-3.75\n3000,3.4e+38\n5000,NaN\n",
	    'csv: NaN and Infinity bare');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 9, format => 'csv',
		to_us => 1000);
	is($res->{content}, "ts_us,value\n1000,\"[1,-2,2147483647]\"\n",
	    'csv: arrays as quoted JSON');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 6, format => 'csv',
		to_us => 1000);
	is($res->{content}, "ts_us,value\n1000,AAEC/w==\n", 'csv: bytes base64');
	($st, $b, $res) = $in->samples($tu, $s1->{id}, 1, format => 'csv',
		to_us => 0);
	is($res->{content}, "ts_us,value\n", 'csv: an empty window, the header');
	ok(!exists $res->{headers}{'x-next-from-us'}, 'csv: no next when done');
}

# --- bucket aggregates ---
my $s3 = $in->session(13, [0, 'f64'], [1, 'i64'], [2, 'bool'], [3, 'f32'],
	[4, 'string']);
my (@f, @i, @bo, @f32);
srand(7);
for my $k (0 .. 299) {
	my $tsk = 10_000 + $k * 37;
	push @f, [$tsk, $k % 17 == 0 ? 'NaN' : sprintf('%.3f', rand(200) - 100) + 0];
	push @i, [$tsk, int(rand(2_000_000)) - 1_000_000];
	push @bo, [$tsk, rand() < 0.3 ? $t : $f];
	push @f32, [$tsk, $k % 50 == 0 ? 'NaN' : ($k % 8) * 0.5];
}
# Random again: File::Temp names its files with rand().
srand();
# All NaN in one bucket of its own.
push @f, [40_000, 'NaN'], [40_001, 'NaN'];
$in->send($s3->{id}, 1, [0, 'f64', [@f[0 .. 149]]], [1, 'i64', \@i],
	[2, 'bool', \@bo], [3, 'f32', \@f32]);
$in->send($s3->{id}, 2, [0, 'f64', [@f[150 .. $#f]]]);

# buckets(\@samples, $from, $width): what the API should answer.
sub buckets {
	my ($samples, $from, $width, $num) = @_;
	my (%b, @order);
	for my $s (@$samples) {
		my $start = $from + int(($s->[0] - $from) / $width) * $width;
		push @order, $start unless $b{$start};
		my $x = $b{$start} //= {start_us => $start, count => 0,
			nan_count => 0, sum => 0};
		if (!ref $s->[1] && $s->[1] eq 'NaN') {
			$x->{nan_count}++;
			next;
		}
		my $v = $num->($s->[1]);
		$x->{min} = $v if !defined $x->{min} || $v < $x->{min};
		$x->{max} = $v if !defined $x->{max} || $v > $x->{max};
		$x->{sum} += $v;
		$x->{count}++;
	}
	return [map { my $x = $b{$_};
		$x->{mean} = $x->{count} ? $x->{sum} / $x->{count} : undef;
		delete $x->{sum}; $x } @order];
}

sub close_enough {
	my ($a, $b) = @_;
	return !defined $a && !defined $b if !defined $a || !defined $b;
	return abs($a - $b) <= 1e-9 * (1 + abs($b));
}

sub check_buckets {
	my ($got, $want, $name) = @_;
	my $ok = @$got == @$want;
	for my $k (0 .. $#$want) {
		my ($g, $w) = ($got->[$k], $want->[$k]);
		$ok &&= keys_of($g) eq 'count,max,mean,min,nan_count,start_us'
		    && $g->{start_us} == $w->{start_us}
		    && $g->{count} == $w->{count}
		    && $g->{nan_count} == $w->{nan_count}
		    && close_enough($g->{min}, $w->{min})
		    && close_enough($g->{max}, $w->{max})
		    && close_enough($g->{mean}, $w->{mean});
	}
	ok($ok, $name) or diag explain [$got, $want];
}

my $id3 = $s3->{id};
my %num = (0 => sub { $_[0] }, 1 => sub { $_[0] },
	2 => sub { $_[0] ? 1 : 0 }, 3 => sub { $_[0] });
my %src = (0 => \@f, 1 => \@i, 2 => \@bo, 3 => \@f32);
for my $idx (0 .. 3) {
	for my $case ([1000, 0], [250, 10_500], [100_000, 0], [1, 20_000]) {
		my ($width, $from) = @$case;
		my ($st, $b) = $in->samples($tu, $id3, $idx, bucket_us => $width,
			from_us => $from);
		is($st, 200, "buckets of stream $idx, $width us from $from: 200");
		my @in_window = grep { $_->[0] >= $from } @{$src{$idx}};
		check_buckets($b->{buckets}, buckets(\@in_window, $from, $width,
			$num{$idx}), "buckets of stream $idx, $width us from $from");
		is($b->{bucket_us}, $width, 'bucket_us echoed');
	}
}
{
	my ($st, $b) = $in->samples($tu, $id3, 0, bucket_us => 1000,
		from_us => 40_000);
	is_deeply($b->{buckets}, [{start_us => 40_000, count => 0,
		nan_count => 2, min => undef, max => undef, mean => undef}],
	    'a bucket of NaNs only: count 0, nulls');
	($st, $b) = $in->samples($tu, $id3, 1, bucket_us => 1000, limit => 3);
	is(scalar @{$b->{buckets}}, 3, 'limit counts buckets');
	is($b->{next_from_us}, 13_000, 'next_from_us: the next bucket');
	my @pages;
	my %q = (bucket_us => 1000, limit => 4);
	while (1) {
		($st, $b) = $in->samples($tu, $id3, 1, %q);
		push @pages, @{$b->{buckets}};
		last unless defined $b->{next_from_us};
		$q{from_us} = $b->{next_from_us};
	}
	check_buckets(\@pages, buckets(\@i, 0, 1000, $num{1}),
	    'bucket pages join up to the whole');
	my $res;
	($st, $b, $res) = $in->samples($tu, $id3, 1, bucket_us => 100_000,
		format => 'csv');
	my $w = buckets(\@i, 0, 100_000, $num{1})->[0];
	like($res->{content}, qr/^start_us,count,nan_count,min,max,mean\n0,300,0,$w->{min},$w->{max},-?[\d.e+-]+\n\z/,
	    'bucket csv');
	($st, $b) = $in->samples($tu, $id3, 4, bucket_us => 10);
	is_error($st, $b, 400, 'buckets of a string stream');
	($st, $b) = $in->samples($tu, $s1->{id}, 7, bucket_us => 10);
	is_error($st, $b, 400, 'buckets of an array stream');
}

# --- stored aggregates (sql/017): buckets equal with and without them ---
# A session of another facility (the list counts below stay as they are):
# 40 batches of 25 samples 1 ms apart, so 40 inline chunks of 24 ms each;
# floats with few bits (their sums are exact whatever the order), NaN,
# bool, the i64 extremes (exact sums past 2^64), i8 and a string stream
# (no aggregates).
{
	my $fc = $p->facility('Meta C');
	my $tc = $p->token($p->user('user', $fc));
	my $in_c = Xmhub::Ingest->new($p, $p->api_key($p->token($p->user(
		'facility_admin', $fc)), 'ingest'));
	my $sa = $in_c->session(21, [0, 'f64'], [1, 'i64'], [2, 'bool'],
		[3, 'f32'], [4, 'i8'], [5, 'string']);
	my ($max, $min) = ('9223372036854775807' + 0, '-9223372036854775808' + 0);
	for my $bn (0 .. 39) {
		my (@d, @i, @bo, @f4, @i8, @str);
		for my $k (0 .. 24) {
			my $n = $bn * 25 + $k;
			my $tsn = 1_000_000 + $n * 1000;
			push @d, [$tsn, $n % 11 == 0 ? 'NaN' : ($n % 23 - 11) * 0.125];
			push @i, [$tsn, $n % 3 == 0 ? $max : $n % 3 == 1 ? $min : $n];
			push @bo, [$tsn, $n % 4 == 0 ? $t : $f];
			push @f4, [$tsn, $n % 29 == 0 ? 'NaN' : ($n % 7) * 0.25];
			push @i8, [$tsn, $n % 256 - 128];
			push @str, [$tsn, "s$n"];
		}
		$in_c->send($sa->{id}, $bn, [0, 'f64', \@d], [1, 'i64', \@i],
			[2, 'bool', \@bo], [3, 'f32', \@f4], [4, 'i8', \@i8],
			[5, 'string', \@str]);
	}
	# 100 samples a second: batches of 5 s cut by the grid of 2^20 us
	# (doc/queries.md), so aligned buckets are added up from cells.
	my $sg = $in_c->session(22, [0, 'f64'], [1, 'i64']);
	for my $bn (0 .. 3) {
		my (@d, @i);
		for my $k (0 .. 499) {
			my $n = $bn * 500 + $k;
			my $tsn = 3_000_000 + $n * 10_000;
			push @d, [$tsn, $n % 13 == 0 ? 'NaN' : ($n % 40 - 20) * 0.5];
			push @i, [$tsn, $n % 5 == 0 ? $max : $n % 5 == 1 ? $min : -$n];
		}
		$in_c->send($sg->{id}, $bn, [0, 'f64', \@d], [1, 'i64', \@i]);
	}
	my $gid = $sg->{id};
	my @gcases = ([bucket_us => 2**20], [bucket_us => 2**21, from_us => 2**20],
		[bucket_us => 3 * 2**20, from_us => 2**22, to_us => 14_000_000],
		[bucket_us => 2**20, from_us => 5], [bucket_us => 777_777]);
	my $granswers = sub {
		my %a;
		for my $idx (0, 1) {
			for my $c (@gcases) {
				my ($st, $b) = $in_c->samples($tc, $gid, $idx, @$c);
				die "samples: $st" if $st != 200;
				$a{"grid $idx @$c"} = $b;
			}
		}
		return \%a;
	};
	is($p->sql("SELECT count(*), count(agg_grid), min(octet_length(agg_grid)) "
		. "FROM stored_chunks WHERE stream_id IN (SELECT id FROM "
		. "ingest_streams WHERE session_id = '$gid')"), '8|8|240',
	    'aggregates: each chunk of 5 s has its grid (5 or 6 cells of 2^20 us)');
	my $gwith = $granswers->();
	my $g0 = "(SELECT id FROM stored_chunks WHERE stream_id = (SELECT id "
	    . "FROM ingest_streams WHERE session_id = '$gid' AND stream_index "
	    . "= 1) ORDER BY start_ts_us LIMIT 1)";
	my $ghex = $p->sql("SELECT encode(agg_grid, 'hex') FROM stored_chunks "
	    . "WHERE id = $g0");
	$p->sql("UPDATE stored_chunks SET agg_grid = substring(agg_grid FROM 1 "
	    . "FOR 48) WHERE id = $g0");
	my ($gst, $gb) = $in_c->samples($tc, $gid, 1, bucket_us => 2**20);
	isnt(scalar @{$gb->{buckets}}, scalar @{$gwith->{"grid 1 bucket_us " . 2**20}{buckets}},
	    'aggregates: buckets aligned to the grid are added up from its cells');
	($gst, $gb) = $in_c->samples($tc, $gid, 1, bucket_us => 2**20, from_us => 5);
	is_deeply($gb, $gwith->{"grid 1 bucket_us 1048576 from_us 5"},
	    'aggregates: buckets off the grid decode the chunk');
	$p->sql("UPDATE stored_chunks SET agg_grid = decode('$ghex', 'hex') "
	    . "WHERE id = $g0");
	my $sid = $sa->{id};
	my $streams = "(SELECT id FROM ingest_streams WHERE session_id IN "
	    . "('$sid', '$gid'))";
	is($p->sql("SELECT count(*) FILTER (WHERE agg_count IS NOT NULL), "
		. "count(*) FILTER (WHERE agg_count IS NULL AND st.value_type "
		. "= 'string') FROM stored_chunks c JOIN ingest_streams st ON "
		. "st.id = c.stream_id WHERE st.session_id = '$sid'"), '200|40',
	    'aggregates: stored at ingest for the numeric chunks, not strings');
	is($p->sql("SELECT agg_count, agg_nan_count, agg_min, agg_max, agg_sum "
		. "FROM stored_chunks WHERE stream_id = (SELECT id FROM "
		. "ingest_streams WHERE session_id = '$sid' AND stream_index = 1) "
		. "ORDER BY start_ts_us LIMIT 1"),
	    "25|0|-9223372036854775808|9223372036854775807|"
	    . "9223372036854775899",
	    'aggregates: an i64 chunk, its sum exact past the i64 range');
	# Whole stream in one bucket (every chunk whole), buckets holding
	# whole chunks, buckets cutting chunks, window edges inside chunks,
	# one sample a bucket.
	my @cases = ([bucket_us => 2**40], [bucket_us => 100_000],
		[bucket_us => 60_000], [bucket_us => 7_000],
		[bucket_us => 50_000, from_us => 1_013_000, to_us => 1_800_500],
		[bucket_us => 1, from_us => 1_500_000, to_us => 1_530_000]);
	my $answers = sub {
		my %a;
		for my $idx (0 .. 4) {
			for my $c (@cases) {
				my ($st, $b) = $in_c->samples($tc, $sid, $idx, @$c);
				die "samples: $st" if $st != 200;
				$a{"$idx @$c"} = $b;
			}
		}
		return \%a;
	};
	my $with = $answers->();
	my ($st, $b) = $in_c->samples($tc, $sid, 1, bucket_us => 2**40);
	is_deeply([@{$b->{buckets}[0]}{qw(count nan_count min max)}],
	    [1000, 0, $min, $max], 'aggregates: i64 extremes, one bucket');
	($st, $b) = $in_c->samples($tc, $sid, 0, bucket_us => 2**40);
	is($b->{buckets}[0]{nan_count}, 91, 'aggregates: NaNs counted apart');

	# A chunk's stored sum, changed by hand, shows where the aggregates
	# are used (buckets holding the chunk whole) and where the chunk is
	# decoded (a bucket edge inside it).
	my $first = "(SELECT id FROM stored_chunks WHERE stream_id = (SELECT "
	    . "id FROM ingest_streams WHERE session_id = '$sid' AND "
	    . "stream_index = 0) ORDER BY start_ts_us LIMIT 1)";
	my $sum = $p->sql("SELECT agg_sum FROM stored_chunks WHERE id = $first");
	$p->sql("UPDATE stored_chunks SET agg_sum = agg_sum + 1000 "
	    . "WHERE id = $first");
	($st, $b) = $in_c->samples($tc, $sid, 0, bucket_us => 2**40);
	isnt($b->{buckets}[0]{mean}, $with->{"0 bucket_us " . 2**40}{buckets}[0]{mean},
	    'aggregates: a bucket holding whole chunks adds their stored sums');
	($st, $b) = $in_c->samples($tc, $sid, 0, bucket_us => 7_000);
	is_deeply($b, $with->{'0 bucket_us 7000'},
	    'aggregates: chunks cut by bucket edges are decoded');
	$p->sql("UPDATE stored_chunks SET agg_sum = $sum WHERE id = $first");

	# Rows without aggregates (as before sql/017) are decoded: the same.
	$p->sql("UPDATE stored_chunks SET agg_grid = NULL, agg_count = NULL, "
	    . "agg_nan_count = NULL, agg_min = NULL, agg_max = NULL, agg_sum = "
	    . "NULL WHERE stream_id IN $streams");
	my $without = {%{$answers->()}, %{$granswers->()}};
	$with = {%$with, %$gwith};
	for my $k (sort keys %$with) {
		is_deeply($without->{$k}, $with->{$k},
		    "aggregates: stream $k, the same without them");
	}

	# Compaction writes them again, for chunks cut elsewhere.
	$in_c->close($sid);
	$in_c->close($gid);
	my @argv = ('env', 'XMHUB_ENV_FILE=' . $p->stack->env_file,
		'XMHUB_COMPACT_MIN_AGE=0', 'XMHUB_COMPACT_TARGET_SAMPLES=70',
		"$ENV{XMHUB_BUILDDIR}/jobs/xmhub-ingest-compact", '--once');
	unshift @argv, 'runuser', '-u', 'xmhub', '--' if $> == 0;
	my ($cs, $out, $err) = Xmhub::Test::run(\@argv);
	is($cs, 0, 'aggregates: compacted') or diag "$out$err";
	is($p->sql("SELECT count(*) FILTER (WHERE data IS NULL), "
		. "count(*) FILTER (WHERE agg_count IS NOT NULL) FROM "
		. "stored_chunks c JOIN ingest_streams st ON st.id = c.stream_id "
		. "WHERE st.session_id = '$sid' AND st.value_type <> 'string'"),
	    '75|75', 'aggregates: written by compaction (15 chunks a stream)');
	is($p->sql("SELECT count(*), count(agg_grid) FROM stored_chunks c JOIN "
		. "ingest_streams st ON st.id = c.stream_id WHERE st.session_id "
		. "= '$gid' AND c.data IS NULL"), '58|58',
	    'aggregates: and their grids (chunks of 70 samples, 2 cells at most)');
	my $compacted = {%{$answers->()}, %{$granswers->()}};
	for my $k (sort keys %$with) {
		is_deeply($compacted->{$k}, $with->{$k},
		    "aggregates: stream $k, the same after compaction");
	}
	# Gone again, so that the session lists below count what they did.
	$p->sql("DELETE FROM ingest_sessions WHERE id IN ('$sid', '$gid')");
}

# --- bad parameters: 400 before anything is read ---
for my $bad (
	[{from_us => -1}, 'from_us -1'],
	[{from_us => '18446744073709551616'}, 'from_us 2^64'],
	[{to_us => 'x'}, 'to_us x'],
	[{from_us => 10, to_us => 9}, 'from_us after to_us'],
	[{limit => 0}, 'limit 0'],
	[{limit => 100001}, 'limit 100001'],
	[{limit => 'ten'}, 'limit ten'],
	[{format => 'xml'}, 'format xml'],
	[{bucket_us => 0}, 'bucket_us 0'],
	[{bucket_us => '1.5'}, 'bucket_us 1.5'],
	[{bucket_us => 10, skip => 1}, 'skip with bucket_us'],
	[{skip => -2}, 'skip -2'],
    ) {
	my ($st, $b) = $in->samples($tu, $s2->{id}, 0, %{$bad->[0]});
	is_error($st, $b, 400, $bad->[1]);
}
for my $idx ('x', '65536', '-1', '1.0') {
	my ($st, $b) = $in->samples($tu, $s2->{id}, $idx);
	is_error($st, $b, 400, "stream_index $idx");
}
{
	my ($st, $b) = $in->samples($tu, $s2->{id}, 5);
	is_error($st, $b, 404, 'a stream the session does not have');
	($st, $b) = $in->samples($tu, $NOBODY, 0);
	is_error($st, $b, 404, 'samples of no session');
	($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$s2->{id}/"
		    . 'streams/0/samples');
	is_error($st, $b, 401, 'samples without a token');
}

# --- sessions: list, filters, pagination ---
my $closed = $in->session(14, [0, 'f32']);
$in->close($closed->{id});
my $sb = $in_b->session(11, [0, 'f32']);
my @mine = ($s1, $s2, $s3, $closed);

my ($st, $b) = $p->req(GET => '/api/v1/metadata/sessions', token => $tu);
is($st, 200, 'list: 200');
is(keys_of($b), 'items,page,per_page,total', 'list: the pagination envelope');
is($b->{total}, 4, "list: the facility's four sessions");
is($b->{page}, 1, 'list: page 1 by default');
is($b->{per_page}, 20, 'list: per_page 20 by default');
is_deeply([sort map { $_->{id} } @{$b->{items}}], [sort map { $_->{id} } @mine],
    'list: exactly those, none of the other facility');
my ($one) = grep { $_->{id} eq $s1->{id} } @{$b->{items}};
is(scalar @{$one->{streams}}, 13, 'list: items carry their streams');
is_deeply([map { $_->{value_type} } @{$one->{streams}}], \@types,
    'list: streams in stream_index order');
is($one->{total_samples}, 91, 'list: total_samples of the session');
is_deeply([map { $_->{id} } @{$b->{items}}],
    [map { $_->{id} } reverse @mine], 'list: newest first');

($st, $b) = $p->req(GET => '/api/v1/metadata/sessions?per_page=1&page=2',
	token => $tu);
is($st, 200, 'page 2 of per_page 1: 200');
is(scalar @{$b->{items}}, 1, 'page 2: one item');
is($b->{items}[0]{id}, $s3->{id}, 'page 2: the second newest');
is($b->{total}, 4, 'page 2: total of all pages');
is($b->{page}, 2, 'page echoed');
is($b->{per_page}, 1, 'per_page echoed');
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions?page=9', token => $tu);
is_deeply([$st, $b->{items}, $b->{total}], [200, [], 4],
    'a page past the end: empty items, the total');
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions?status=closed',
	token => $tu);
is_deeply([map { $_->{id} } @{$b->{items}}], [$closed->{id}],
    'status=closed');
is($b->{items}[0]{status}, 'closed', 'the closed one says so');
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions?status=active',
	token => $tu);
is($b->{total}, 3, 'status=active');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions?device_id="
	    . $s2->{device_id}, token => $tu);
is_deeply([map { $_->{id} } @{$b->{items}}], [$s2->{id}], 'device_id');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions?device_id="
	    . "$s2->{device_id}&status=closed", token => $tu);
is($b->{total}, 0, 'device_id and status together');
for my $bad ('per_page=0', 'per_page=101', 'page=0', 'page=-1', 'page=x',
	'status=open', 'device_id=42', 'per_page=') {
	($st, $b) = $p->req(GET => "/api/v1/metadata/sessions?$bad",
		token => $tu);
	is_error($st, $b, 400, "list: $bad");
}

# --- tenant isolation on every route ---
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions', token => $tb);
is_deeply([map { $_->{id} } @{$b->{items}}], [$sb->{id}],
    'other facility: only its own session');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions?facility_id=$fac",
	token => $tb);
is_deeply([$st, $b->{total}], [200, 1],
    'other facility: ?facility_id is ignored for a non-super_admin');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$s1->{id}",
	token => $tb);
is_error($st, $b, 403, "get: another facility's session");
($st, $b) = $in->samples($tb, $s1->{id}, 0);
is_error($st, $b, 403, "samples: another facility's session");
($st, $b) = $in->samples($tb, $s1->{id}, 0, bucket_us => 10);
is_error($st, $b, 403, "buckets: another facility's session");
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions', token => $ts);
is($b->{total}, 5, 'super_admin: every facility');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions?facility_id=$other",
	token => $ts);
is_deeply([map { $_->{id} } @{$b->{items}}], [$sb->{id}],
    'super_admin: ?facility_id filter');
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions?facility_id=x',
	token => $ts);
is_error($st, $b, 400, 'super_admin: a bad facility_id');
($st, $b) = $in->samples($ts, $s2->{id}, 0);
is_deeply([$st, $b->{count}], [200, 29], "super_admin: any session's samples");
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions');
is_error($st, $b, 401, 'list without a token');

# --- one session ---
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$s1->{id}",
	token => $tu);
is($st, 200, 'get: 200');
is($b->{id}, $s1->{id}, 'get: the session');
is(scalar @{$b->{streams}}, 13, 'get: with its streams');
is(keys_of($b->{streams}[0]), 'id,name,sample_rate_hz,stream_index,unit,'
    . 'value_type', 'get: stream objects as doc/queries.md');
is($b->{total_samples}, 91, 'get: counters');
($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$NOBODY", token => $tu);
is_error($st, $b, 404, 'get: no such session');
($st, $b) = $p->req(GET => '/api/v1/metadata/sessions/42', token => $tu);
is_error($st, $b, 400, 'get: not a UUID');
($st, $b) = $p->req(DELETE => "/api/v1/metadata/sessions/$s1->{id}",
	token => $ta);
is_error($st, $b, 405, 'DELETE: 405');

done_testing;
