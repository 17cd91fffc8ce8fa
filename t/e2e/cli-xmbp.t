#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# xmhub xmbp encode/decode from the outside: expected bytes are built with
# Perl's pack() straight from the formats of doc/xmbp.md (Xmhub::XMBP), not with
# the codec.
use strict;
use warnings;
use Test::More;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Test qw(xmhub hexstr);
# batch($seq, $device_id_or_undef, [$stream_id, $type, [[ts, v...], ...]], ...)
use Xmhub::XMBP qw(batch);

sub hexbytes { pack('H*', $_[0]) }

# [name, JSON given to encode, expected bytes, JSON decode prints]
my @cases = (
	['doc/xmbp.md example',
	 '{"version":1,"flags":1,"batch_seq":7,"device_id":42,"streams":[{"stream_id":0,"value_type":"f32","samples":[[1000,1.5],[2000,-0.25]]}]}',
	 batch(7, 42, [0, 'f32', [[1000, 1.5], [2000, -0.25]]]),
	 '{"version":1,"flags":1,"batch_seq":7,"device_id":42,"streams":[{"stream_id":0,"value_type":"f32","samples":[[1000,1.5],[2000,-0.25]]}]}'],
	['empty batch, no device',
	 '{"batch_seq":65535,"streams":[]}',
	 batch(65535, undef),
	 '{"version":1,"flags":0,"batch_seq":65535,"device_id":null,"streams":[]}'],
	['device_id null, u32 max device elsewhere',
	 '{"batch_seq":0,"device_id":null,"streams":[{"stream_id":65535,"value_type":"i8","samples":[[0,-128],[18446744073709551615,127]]}]}',
	 batch(0, undef, [65535, 'i8', [[0, -128], ['18446744073709551615', 127]]]),
	 '{"version":1,"flags":0,"batch_seq":0,"device_id":null,"streams":[{"stream_id":65535,"value_type":"i8","samples":[[0,-128],[18446744073709551615,127]]}]}'],
	['f32 shortest forms',
	 '{"batch_seq":1,"device_id":4294967295,"streams":[{"stream_id":1,"value_type":"f32","samples":[[1,0.1],[2,-0.0],[3,3.4028234663852886e38],[4,16777216]]}]}',
	 batch(1, 4294967295, [1, 'f32', [[1, 0.1], [2, -0.0], [3, 3.4028234663852886e38], [4, 16777216]]]),
	 '{"version":1,"flags":1,"batch_seq":1,"device_id":4294967295,"streams":[{"stream_id":1,"value_type":"f32","samples":[[1,0.1],[2,-0.0],[3,3.4028235e+38],[4,16777216]]}]}'],
	['f64 and its specials',
	 '{"batch_seq":2,"streams":[{"stream_id":2,"value_type":"f64","samples":[[1,0.1],[2,"NaN"],[3,"Infinity"],[4,"-Infinity"],[5,"NaN:0xfff8000000000001"],[6,1e300]]}]}',
	 batch(2, undef, [2, 'f64', [[1, 0.1]]])
		 =~ s/\x00\x01(?=\x00{7}\x01)/\x00\x06/r
		 . pack('Q>', 2) . hexbytes('7ff8000000000000')
		 . pack('Q>', 3) . hexbytes('7ff0000000000000')
		 . pack('Q>', 4) . hexbytes('fff0000000000000')
		 . pack('Q>', 5) . hexbytes('fff8000000000001')
		 . pack('Q> d>', 6, 1e300),
	 '{"version":1,"flags":0,"batch_seq":2,"device_id":null,"streams":[{"stream_id":2,"value_type":"f64","samples":[[1,0.1],[2,"NaN"],[3,"Infinity"],[4,"-Infinity"],[5,"NaN:0xfff8000000000001"],[6,1e+300]]}]}'],
	['integers at their limits',
	 '{"batch_seq":3,"streams":[{"stream_id":0,"value_type":"i64","samples":[[1,-9223372036854775808],[2,9223372036854775807]]},{"stream_id":1,"value_type":"i32","samples":[[1,-2147483648],[2,2147483647]]},{"stream_id":2,"value_type":"i16","samples":[[1,-32768],[2,32767]]}]}',
	 batch(3, undef,
		 [0, 'i64', [[1, -9223372036854775808], [2, 9223372036854775807]]],
		 [1, 'i32', [[1, -2147483648], [2, 2147483647]]],
		 [2, 'i16', [[1, -32768], [2, 32767]]]),
	 '{"version":1,"flags":0,"batch_seq":3,"device_id":null,"streams":[{"stream_id":0,"value_type":"i64","samples":[[1,-9223372036854775808],[2,9223372036854775807]]},{"stream_id":1,"value_type":"i32","samples":[[1,-2147483648],[2,2147483647]]},{"stream_id":2,"value_type":"i16","samples":[[1,-32768],[2,32767]]}]}'],
	['bool, string, bytes, json',
	 '{"batch_seq":4,"streams":[{"stream_id":0,"value_type":"bool","samples":[[1,true],[2,false]]},{"stream_id":1,"value_type":"string","samples":[[1,"h\u00e9 \"q\"\n\u0000 \ud83d\ude00"],[2,""]]},{"stream_id":2,"value_type":"bytes","samples":[[1,"AAH/"],[2,""]]},{"stream_id":3,"value_type":"json","samples":[[1,"{\"a\": [1, 2]}"]]}]}',
	 batch(4, undef,
		 [0, 'bool', [[1, 1], [2, 0]]],
		 [1, 'string', [[1, "h\xc3\xa9 \"q\"\n\x00 \xf0\x9f\x98\x80"], [2, '']]],
		 [2, 'bytes', [[1, "\x00\x01\xff"], [2, '']]],
		 [3, 'json', [[1, '{"a": [1, 2]}']]]),
	 "{\"version\":1,\"flags\":0,\"batch_seq\":4,\"device_id\":null,\"streams\":[{\"stream_id\":0,\"value_type\":\"bool\",\"samples\":[[1,true],[2,false]]},{\"stream_id\":1,\"value_type\":\"string\",\"samples\":[[1,\"h\xc3\xa9 \\\"q\\\"\\n\\u0000 \xf0\x9f\x98\x80\"],[2,\"\"]]},{\"stream_id\":2,\"value_type\":\"bytes\",\"samples\":[[1,\"AAH/\"],[2,\"\"]]},{\"stream_id\":3,\"value_type\":\"json\",\"samples\":[[1,\"{\\\"a\\\": [1, 2]}\"]]}]}"],
	['arrays',
	 '{"batch_seq":5,"streams":[{"stream_id":0,"value_type":"f64_array","samples":[[1,[0.5,-1,"NaN"]],[2,[]]]},{"stream_id":1,"value_type":"f32_array","samples":[[1,[1.5,2]]]},{"stream_id":2,"value_type":"i32_array","samples":[[1,[-2147483648,0,2147483647]]]}]}',
	 batch(5, undef, [0, 'f64_array', [[1, 0.5, -1, 0], [2]]],
		 [1, 'f32_array', [[1, 1.5, 2]]],
		 [2, 'i32_array', [[1, -2147483648, 0, 2147483647]]])
		 =~ s/\x00{8}(?=\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00)/\x7f\xf8\x00\x00\x00\x00\x00\x00/r,
	 '{"version":1,"flags":0,"batch_seq":5,"device_id":null,"streams":[{"stream_id":0,"value_type":"f64_array","samples":[[1,[0.5,-1,"NaN"]],[2,[]]]},{"stream_id":1,"value_type":"f32_array","samples":[[1,[1.5,2]]]},{"stream_id":2,"value_type":"i32_array","samples":[[1,[-2147483648,0,2147483647]]]}]}'],
);

for my $c (@cases) {
	my ($name, $json, $bytes, $printed) = @$c;
	my ($st, $out, $err) = xmhub(['xmbp', 'encode', '-'], $json);
	is($st, 0, "$name: encode exits 0") or diag($err);
	is(hexstr($out), hexstr($bytes), "$name: encode gives doc/xmbp.md's bytes");
	($st, $out, $err) = xmhub(['xmbp', 'decode'], $bytes);
	is($st, 0, "$name: decode exits 0") or diag($err);
	is($out, "$printed\n", "$name: decode prints doc/xmbp.md's form");
	($st, $out) = xmhub(['xmbp', 'encode'], $out);
	is(hexstr($out), hexstr($bytes), "$name: encode(decode(x)) == x");
}

# The size facts of doc/xmbp.md through the CLI.
my %size = (
	'{"batch_seq":0,"streams":[]}' => 10,
	'{"batch_seq":0,"device_id":1,"streams":[]}' => 14,
	'{"batch_seq":0,"streams":[{"stream_id":0,"value_type":"f32","samples":[[0,1]]}]}' => 27,
);
my $four = join(',', map {
	my $s = $_;
	'{"stream_id":' . $s . ',"value_type":"f32","samples":['
	    . join(',', map { "[$_,$_.5]" } 1 .. 100) . ']}'
} 0 .. 3);
$size{'{"batch_seq":9,"device_id":7,"streams":[' . $four . ']}'} = 4834;
for my $json (sort { $size{$a} <=> $size{$b} } keys %size) {
	my ($st, $out) = xmhub(['xmbp', 'encode'], $json);
	is(length($out), $size{$json}, "encoded batch is $size{$json} bytes");
}

# Decoder errors: exit 1, nothing on stdout, `xmbp: KIND: message`.
my $good = batch(1, undef, [0, 'string', [[1, 'ok']]]);
my @errors = (
	['InvalidMagic', 'XMBQ' . substr($good, 4)],
	['UnsupportedVersion', substr($good, 0, 4) . "\x02" . substr($good, 5)],
	['UnsupportedVersion', substr($good, 0, 5) . "\x02" . substr($good, 6)],
	['InvalidValueType', pack('a4 C C n n n C n', 'XMBP', 1, 0, 0, 1, 0, 0x0D, 0)],
	['InvalidValueType', pack('a4 C C n n n C n', 'XMBP', 1, 0, 0, 1, 0, 0xFF, 0)],
	['UnexpectedEof', substr($good, 0, -1)],
	['UnexpectedEof', ''],
	['InvalidUtf8', batch(1, undef, [0, 'string', [[1, "\xc0\x80"]]])],
	['InvalidUtf8', batch(1, undef, [0, 'json', [[1, "\xed\xa0\x80"]]])],
	['BufferOverflow', pack('a4 C C n n', 'XMBP', 1, 0, 0, 257)],
	['BufferOverflow', batch(1, undef, [0, 'i32_array', [[1, (0) x 4097]]])],
	['TrailingData', $good . "\x00"],
);
for my $e (@errors) {
	my ($kind, $bytes) = @$e;
	my ($st, $out, $err) = xmhub(['xmbp', 'decode'], $bytes);
	ok($st == 1 && $out eq '' && $err =~ /\Axmbp: \Q$kind\E: \S.*\n\z/,
	   "decode error $kind") or diag("status $st, stderr: $err");
}
my ($st, $out, $err) = xmhub(['xmbp', 'decode'],
	batch(1, undef, [0, 'i32_array', [[1, (7) x 4096]]]));
is($st, 0, '4096-element array accepted');
($st, $out, $err) = xmhub(['xmbp', 'decode'],
	batch(1, undef, map { [$_, 'bool', []] } 1 .. 256));
is($st, 0, '256 stream blocks accepted');

# Encoder refusals.
my @bad = (
	['InvalidInput', '{"batch_seq":1,'],
	['InvalidInput', '[]'],
	['InvalidInput', '{"batch_seq":1,"streams":[],"extra":1}'],
	['InvalidInput', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"i8","samples":[[1,128]]}]}'],
	['InvalidInput', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"f64","samples":[[-1,1]]}]}'],
	['InvalidInput', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"f64","samples":[[18446744073709551616,1]]}]}'],
	['InvalidInput', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"string","samples":[[1,"\ud800"]]}]}'],
	['InvalidInput', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"f64","samples":[[1,NaN]]}]}'],
	['InvalidInput', "{'batch_seq':1,'streams':[]}"],
	['InvalidValueType', '{"batch_seq":1,"streams":[{"stream_id":0,"value_type":"f16","samples":[]}]}'],
	['UnsupportedVersion', '{"version":2,"batch_seq":1,"streams":[]}'],
	['UnsupportedVersion', '{"flags":2,"batch_seq":1,"streams":[]}'],
	['BufferOverflow', '{"batch_seq":1,"streams":[' . join(',', map { '{"stream_id":0,"value_type":"i8","samples":[]}' } 1 .. 257) . ']}'],
);
for my $b (@bad) {
	my ($kind, $json) = @$b;
	($st, $out, $err) = xmhub(['xmbp', 'encode'], $json);
	ok($st == 1 && $out eq '' && $err =~ /\Axmbp: \Q$kind\E: \S.*\n\z/,
	   "encode refuses with $kind: " . substr($json, 0, 60))
	    or diag("status $st, stderr: $err");
}

# Files, standard input and usage.
($st, $out, $err) = xmhub(['xmbp', 'decode', '/nonexistent/batch']);
ok($st == 1 && $err =~ m{/nonexistent/batch}, 'unreadable file: exit 1 naming it');
($st, $out, $err) = xmhub(['xmbp', 'frobnicate']);
ok($st == 2 && $err =~ /usage/, 'unknown command: exit 2 with usage');
($st, $out, $err) = xmhub([]);
is($st, 2, 'no command: exit 2');

# Every valid seed of the fuzz corpus survives decode then encode.  Some
# seeds are deliberately non-canonical (reserved flag bits set, bool bytes
# above 1); the encoder writes those canonically, so what must hold for
# every seed is that the re-encoded batch decodes to the same JSON.
my @seeds = glob("$ENV{XMHUB_SRCDIR}/fuzz/corpus/xmbp/*");
my ($valid, $same) = (0, 0);
for my $f (@seeds) {
	($st, $out) = xmhub(['xmbp', 'decode', $f]);
	next if $st != 0;
	$valid++;
	my (undef, $again) = xmhub(['xmbp', 'encode'], $out);
	my (undef, $json) = xmhub(['xmbp', 'decode'], $again);
	s/"flags":(\d+)/'"flags":' . ($1 & 1)/e for $out, $json;
	$same++ if $json eq $out;
}
ok($valid >= 3, "corpus has valid batches ($valid)");
is($same, $valid, 'each valid corpus batch decodes the same after re-encoding');

done_testing();
