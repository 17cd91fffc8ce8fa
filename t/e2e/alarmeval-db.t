#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Threshold rules in ingest rounds against a real PostgreSQL: runs the C
# program t/e2e/alarmeval-db (from t/e2e/alarmeval-db.c) on a migrated
# database of its own (no stack: Xmhub::Pg->test_database); its TAP is
# this script's.
use strict;
use warnings;
use Xmhub::Pg;

$ENV{XMHUB_TEST_DATABASE_URL} = Xmhub::Pg->test_database;
system("$ENV{XMHUB_BUILDDIR}/t/e2e/alarmeval-db");
exit($? == -1 ? 1 : ($? >> 8) || ($? & 127 ? 1 : 0));
