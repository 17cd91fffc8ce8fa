#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# t/e2e/api-devices.t with every stack's database reached through PgBouncer in
# transaction mode (doc/scaling.md "PgBouncer", XMHUB_DATABASE_POOLED).
use strict;
use warnings;
use Xmhub::PgBouncer;

Xmhub::PgBouncer->run_test('t/e2e/api-devices.t');
