#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# libxmbp as installed (doc/device.md): `make install DESTDIR=...` puts
# the headers, libxmbp.a, xmbp.pc, xmbp(3) (clean under mandoc -Tlint,
# linked from each function's name) and the freestanding sources in
# place; a program built with nothing but `pkg-config --cflags --libs
# xmbp` (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR into DESTDIR)
# encodes and decodes a batch; the example's own build line works there;
# the size macros agree with the spec's two examples; the installed
# encoder sources compile freestanding.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Test qw(run);

my $B = $ENV{XMHUB_BUILDDIR} or BAIL_OUT('XMHUB_BUILDDIR is not set');
my $S = $ENV{XMHUB_SRCDIR} or BAIL_OUT('XMHUB_SRCDIR is not set');
my $D = tempdir(CLEANUP => 1);

my ($st, $out, $err) = run(['make', '-s', '-C', $B, 'install', "DESTDIR=$D"]);
is($st, 0, 'make install DESTDIR=...') or BAIL_OUT($err);

open my $pc, '<', "$B/xmbp.pc" or BAIL_OUT("xmbp.pc: $!");
my ($prefix) = grep { defined } map { /^prefix=(.*)$/ ? $1 : undef } <$pc>;
close $pc;
my $P = "$D$prefix";
for my $f (qw(include/xmbp/codec/xmbpenc.h include/xmbp/codec/xmbp.h
    include/xmbp/codec/sample.h lib/libxmbp.a lib/pkgconfig/xmbp.pc
    share/man/man3/xmbp.3 share/xmbp/codec/xmbpenc.c
    include/xmbp/codec/xmbpaudio.h share/xmbp/codec/xmbpaudio.c
    share/xmbp/codec/utf8.c)) {
	ok(-f "$P/$f", "installed: $f");
}

($st, $out, $err) = run(['mandoc', '-Tlint', "$P/share/man/man3/xmbp.3"]);
is("$st $out$err", '0 ', 'xmbp(3) is clean under mandoc -Tlint');

# Every function of the installed headers has its man page: a link.
my @fns;
for my $h (qw(xmbpenc.h xmbp.h xmbpaudio.h)) {
	open my $fh, '<', "$P/include/xmbp/codec/$h" or die "$h: $!";
	push @fns, map { /^[a-z].*?\b(xmbp(?:audio)?_\w+)\(/ ? $1 : () } <$fh>;
	close $fh;
}
cmp_ok(scalar @fns, '>=', 25, 'the headers declare the functions');
is_deeply([grep { (readlink("$P/share/man/man3/$_.3") // '') ne 'xmbp.3' }
    @fns], [], 'man xmbp_NAME: a link to xmbp.3 for each function');

$ENV{PKG_CONFIG_PATH} = "$P/lib/pkgconfig";
$ENV{PKG_CONFIG_SYSROOT_DIR} = $D;
($st, $out, $err) = run(['pkg-config', '--cflags', '--libs', 'xmbp']);
is($st, 0, 'pkg-config knows xmbp') or diag $err;
my @pkg = split ' ', $out;
is_deeply(\@pkg, ["-I$P/include/xmbp", "-L$P/lib", '-lxmbp'],
    'pkg-config: the installed include and library directories');
# Every name the library defines for a linker is in its namespace, xmbp_
# or xmbpaudio_: a device program's own names never clash with it.
($st, $out) = run(['nm', '-g', '--defined-only', "$P/lib/libxmbp.a"]);
my @exported = map { /^[0-9a-f]+ [A-Z] (\S+)$/ ? $1 : () } split /\n/, $out;
ok(@exported >= 10, 'libxmbp defines its functions: ' . scalar @exported);
is_deeply([grep { !/^xmbp(?:audio)?_/ } @exported], [],
    'every exported name of libxmbp starts with xmbp_ or xmbpaudio_');
# A sanitizer build's library needs the sanitizers' runtimes to link.
($st, $out) = run(['nm', '-u', "$P/lib/libxmbp.a"]);
my @san = $out =~ /__asan_/ ? ('-fsanitize=address,undefined') : ();

my $tmp = tempdir(CLEANUP => 1);
open my $c, '>', "$tmp/tiny.c" or die "tiny.c: $!";
print {$c} <<'EOF';
#include <stdio.h>
#include <codec/xmbp.h>

int
main(void)
{
	uint8_t buf[64];
	struct xmbp_enc enc;
	struct xmbp_batch b;
	struct xmbp_error e;
	uint32_t dev = 42;
	size_t len;

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 7, &dev);
	xmbp_enc_stream(&enc, 0, SAMPLE_F32);
	xmbp_enc_f32(&enc, 1000, 1.5f);
	xmbp_enc_stream(&enc, 3, SAMPLE_STRING);
	xmbp_enc_string(&enc, 2000, "h\xc3\xa9", 3);
	if (xmbp_enc_finish(&enc, &len) != XMBP_ENC_OK)
		return 1;
	if (xmbp_decode(buf, len, &b, &e) != XMBP_OK)
		return 1;
	printf("len %zu seq %u device %u streams %u\n", len,
	       (unsigned)b.batch_seq, (unsigned)b.device_id,
	       (unsigned)b.stream_count);
	for (uint16_t i = 0; i < b.stream_count; i++) {
		struct xmbp_stream s;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;

		xmbp_stream_at(&b, i, &s);
		xmbp_samples(&s, &it);
		while (xmbp_sample_next(&it, &ts, &v))
			if (v.type == SAMPLE_F32)
				printf("%u %s %u %g\n", (unsigned)s.stream_id,
				       xmbp_sample_type_name(v.type), (unsigned)ts,
				       v.u.f32);
			else
				printf("%u %s %u %.*s\n", (unsigned)s.stream_id,
				       xmbp_sample_type_name(v.type), (unsigned)ts,
				       (int)v.u.raw.len, (const char *)v.u.raw.p);
	}
	xmbp_enc_init(&enc, buf, 12);
	xmbp_enc_begin(&enc, 0, NULL);
	xmbp_enc_stream(&enc, 0, SAMPLE_I8);
	printf("%d %s\n", (int)xmbp_enc_finish(&enc, &len),
	       xmbp_enc_detail(&enc));
	printf("%s\n", xmbp_status_name(xmbp_decode(buf + 1, 11, &b, &e)));
	printf("sizes %zu %zu\n",
	       XMBP_ENVELOPE_SIZE(1) + 4 * XMBP_BLOCK_SIZE(100, 4),
	       XMBP_ENVELOPE_SIZE(0) + XMBP_BLOCK_SIZE(1, 4));
	return 0;
}
EOF
close $c;
($st, $out, $err) = run(['gcc', '-std=c99', '-Wall', '-Wextra', '-Werror',
    @san, '-o', "$tmp/tiny", "$tmp/tiny.c", @pkg]);
is($st, 0, 'a program builds against the installed tree') or diag $err;
($st, $out, $err) = run(["$tmp/tiny"]);
is($st, 0, 'it runs') or diag $err;
is($out, "len 49 seq 7 device 42 streams 2\n0 f32 1000 1.5\n"
    . "3 string 2000 h\xc3\xa9\n1 the batch does not fit the buffer\n"
    . "InvalidMagic\nsizes 4834 27\n",
    'it encodes and decodes with libxmbp; the size macros give the spec\'s sizes');

# The build line at the top of examples/device-posix.c.
($st, $out, $err) = run(['cc', @san, '-o', "$tmp/device-posix",
    "$S/examples/device-posix.c", @pkg]);
is($st, 0, 'the example builds as its header says') or diag $err;
($st, $out, $err) = run(["$tmp/device-posix"]);
is($st, 2, 'the example without arguments: exit 2');
like($err, qr/^usage: device-posix /, 'the example: its usage');

# What a firmware build takes: the installed sources, freestanding.
($st, $out, $err) = run(['pkg-config', '--variable=sourcedir', 'xmbp']);
chomp $out;
(my $src = $out) =~ s/^(?!\Q$D\E)/$D/;
is($src, "$P/share/xmbp", 'pkg-config names the sources directory');
for my $f (qw(xmbpenc.c utf8.c)) {
	($st, undef, $err) = run(['gcc', '-std=c99', '-ffreestanding',
	    '-Wall', '-Werror', "-I$src", '-c', "$src/codec/$f",
	    '-o', "$tmp/$f.o"]);
	is($st, 0, "the installed codec/$f compiles freestanding") or diag $err;
}

done_testing;
