#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# t/e2e/ingest-defer.t with the database reached through PgBouncer in
# transaction mode (doc/scaling.md "PgBouncer", XMHUB_DATABASE_POOLED): a
# round's deferrals and its failures, relayed by the pooler.
use strict;
use warnings;
use Xmhub::PgBouncer;

Xmhub::PgBouncer->run_test('t/e2e/ingest-defer.t');
