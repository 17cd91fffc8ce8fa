#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# lib/web/dbjson.c against a real PostgreSQL: the C program t/e2e/dbjson-db
# (from t/e2e/dbjson-db.c) on a migrated database of its own (no stack);
# its TAP is this script's (Xmhub::Pg->run_db_program).
use strict;
use warnings;
use Xmhub::Pg;

exit Xmhub::Pg->run_db_program('dbjson-db');
