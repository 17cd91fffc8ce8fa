#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Behind a load balancer (doc/scaling.md "Client addresses"): with
# XMHUB_TRUSTED_PROXIES, lighttpd (mod_extforward) takes the client's
# address from the X-Forwarded-For of those addresses only, and the
# login throttle keys on it; from any other address the header is
# ignored.  The stack listens on 127.0.0.2; the balancer is 127.0.0.1.
use strict;
use warnings;
use Test::More;
use Xmhub::Accounts qw(login_addr);
use Xmhub::Platform;

my $p = Xmhub::Platform->start(addr => '127.0.0.2',
	env => {XMHUB_TRUSTED_PROXIES => '127.0.0.1'});
my $s = $p->stack;
my $base = $s->url('') =~ s{/$}{}r;

is(login_addr($s, $base, '127.0.0.1', '203.0.113.7'), '203.0.113.7',
    'from the balancer: the client of its X-Forwarded-For');
is(login_addr($s, $base, '127.0.0.1', '198.51.100.1, 203.0.113.8'),
    '203.0.113.8',
    'a client that sent its own X-Forwarded-For: the address the '
    . 'balancer saw, not the one it claimed');
is(login_addr($s, $base, '127.0.0.1', undef), '127.0.0.1',
    'from the balancer without the header: the balancer');
is(login_addr($s, $base, '127.0.0.3', '198.51.100.9'), '127.0.0.3',
    'from another address: its X-Forwarded-For is ignored');

done_testing;
