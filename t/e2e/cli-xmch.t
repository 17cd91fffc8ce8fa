#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# xmhub xmch dump/pack from the outside: expected chunks are built here
# with Perl's pack() from the XMCH table of doc/xmbp.md, not with the
# codec.
use strict;
use warnings;
use Test::More;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Test qw(xmhub hexstr);

# chunk($tag, [ts...], $value_column): a plain XMCH chunk.
sub chunk {
	my ($tag, $ts, $values, %o) = @_;
	my $data = pack('(Q>)*', @$ts) . $values;
	return pack('a4 C C n N Q> Q> N', 'XMCH', $o{version} // 1, $tag, 0,
		scalar @$ts, $o{start} // ($ts->[0] // 0),
		$o{end} // ($ts->[-1] // 0), length $data) . $data;
}

my @cases = (
	['f32', chunk(1, [10, 20, 20, 30], pack('(f>)*', 1.5, -2, 0.1) . pack('H8', '7fc00000')),
	 '"value_type":"f32","sample_count":4,"start_ts_us":10,"end_ts_us":30',
	 '[[10,1.5],[20,-2],[20,0.1],[30,"NaN"]]',
	 '{"value_type":"f32","samples":[[10,1.5],[20,-2],[20,0.1],[30,"NaN"]]}'],
	['string, u32 prefixes', chunk(5, [1, 2], pack('(N/a*)*', "caf\xc3\xa9", '')),
	 '"value_type":"string","sample_count":2,"start_ts_us":1,"end_ts_us":2',
	 "[[1,\"caf\xc3\xa9\"],[2,\"\"]]",
	 "{\"value_type\":\"string\",\"samples\":[[1,\"caf\xc3\xa9\"],[2,\"\"]]}"],
	['i32_array, u32 counts', chunk(9, [5], pack('N (l>)*', 3, -1, 0, 1)),
	 '"value_type":"i32_array","sample_count":1,"start_ts_us":5,"end_ts_us":5',
	 '[[5,[-1,0,1]]]',
	 '{"value_type":"i32_array","samples":[[5,[-1,0,1]]]}'],
	['json and bytes types alike', chunk(10, [7], pack('N/a*', '{"k":null}')),
	 '"value_type":"json","sample_count":1,"start_ts_us":7,"end_ts_us":7',
	 '[[7,"{\"k\":null}"]]',
	 '{"value_type":"json","samples":[[7,"{\"k\":null}"]]}'],
	['empty chunk is the header alone', chunk(0, [], ''),
	 '"value_type":"f64","sample_count":0,"start_ts_us":0,"end_ts_us":0',
	 '[]', '{"value_type":"f64","samples":[]}'],
);
for my $c (@cases) {
	my ($name, $bytes, $head, $samples, $json) = @$c;
	my ($st, $out, $err) = xmhub(['xmch', 'dump', '-'], $bytes);
	is($out, "{\"version\":1,$head,\"compressed\":false,\"stored_bytes\":"
	    . length($bytes) . ",\"samples\":$samples}\n", "$name: dump")
	    or diag($err);
	($st, $out, $err) = xmhub(['xmch', 'pack'], $json);
	is(hexstr($out), hexstr($bytes), "$name: pack gives doc/xmbp.md's bytes")
	    or diag($err);
}
is(length(chunk(0, [], '')), 32, 'an empty chunk is 32 bytes');

# Compression when it pays, and dump | pack reproducing the stored bytes.
my $many = '{"value_type":"f64","compressed":true,"samples":['
    . join(',', map { "[$_,20.5]" } 1 .. 5000) . ']}';
my ($st, $z, $err) = xmhub(['xmch', 'pack'], $many);
is($st, 0, 'pack of 5000 samples') or diag($err);
is(substr($z, 0, 4), "\x28\xb5\x2f\xfd", 'stored as a zstd frame');
cmp_ok(length($z), '<', 32 + 5000 * 16 / 10, 'at least 10x smaller than plain');
my ($st2, $dump) = xmhub(['xmch', 'dump'], $z);
like($dump, qr/"sample_count":5000,"start_ts_us":1,"end_ts_us":5000,"compressed":true,/,
     'dump reads the compressed chunk');
my (undef, $again) = xmhub(['xmch', 'pack'], $dump);
ok($again eq $z, 'pack(dump(x)) == x for a compressed chunk');
my (undef, $one) = xmhub(['xmch', 'pack'],
	'{"value_type":"i8","compressed":true,"samples":[[1,5]]}');
is(substr($one, 0, 4), 'XMCH', 'a chunk that does not compress is stored plain');

# Chunk values are not held to the batch limits (u32 prefixes).
my $long = 'x' x 70000;
($st, my $big, $err) = xmhub(['xmch', 'pack'],
	qq({"value_type":"string","samples":[[1,"$long"]]}));
is($st, 0, 'pack takes a 70000-byte string') or diag($err);
is(substr($big, 32 + 8, 4), pack('N', 70000), 'with a u32 length prefix');
(undef, $dump) = xmhub(['xmch', 'dump'], $big);
ok(index($dump, qq("samples":[[1,"$long"]]}\n)) > 0, 'and dumps it back');

# Reader errors: exit 1, `xmch: KIND: message`.
my $ok = chunk(3, [1, 2], pack('(l>)*', 1, 2));
my @errors = (
	['InvalidMagic', 'XMCX' . substr($ok, 4)],
	['UnsupportedVersion', chunk(3, [1], pack('l>', 1), version => 2)],
	['InvalidValueType', chunk(13, [], '')],
	['UnexpectedEof', substr($ok, 0, -1)],
	['UnexpectedEof', substr($ok, 0, 31)],
	['TrailingData', chunk(3, [1], pack('l>', 1) . "\x00")],
	['UnorderedTimestamps', chunk(3, [2, 1], pack('(l>)*', 1, 2), start => 2, end => 1)],
	['InvalidHeader', chunk(3, [1, 2], pack('(l>)*', 1, 2), end => 3)],
	['InvalidUtf8', chunk(5, [1], pack('N/a*', "\xff"))],
	['CorruptCompression', "\x28\xb5\x2f\xfd" . ("\xee" x 40)],
);
for my $e (@errors) {
	my ($kind, $bytes) = @$e;
	($st, my $out, $err) = xmhub(['xmch', 'dump'], $bytes);
	ok($st == 1 && $out eq '' && $err =~ /\Axmch: \Q$kind\E: \S.*\n\z/,
	   "dump error $kind") or diag("status $st, stderr: $err");
}

# pack refusals.
for my $b (['UnorderedTimestamps', '{"value_type":"i8","samples":[[2,1],[1,1]]}'],
	   ['InvalidHeader', '{"value_type":"i8","sample_count":3,"samples":[[1,1]]}'],
	   ['InvalidValueType', '{"value_type":"u8","samples":[]}'],
	   ['InvalidInput', '{"value_type":"i8","samples":[[1,1.5]]}']) {
	my ($kind, $json) = @$b;
	($st, my $out, $err) = xmhub(['xmch', 'pack'], $json);
	ok($st == 1 && $out eq '' && $err =~ /\Axmch: \Q$kind\E: /,
	   "pack refuses with $kind") or diag("status $st, stderr: $err");
}

done_testing();
