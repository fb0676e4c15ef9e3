#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# pg_run.sh PROGRAM [ARGS...] - run one libstore test program against PostgreSQL.
# Starts a private server on 127.0.0.1 (tests/sharness.d/20-postgres.sh) in a temporary
# directory, exports ALLOT_TEST_PG_CONNINFO for the fixture (store_test_pg.h), runs the
# program, stops the server and removes the directory.  When ALLOT_TEST_PG_CONNINFO is
# already set, that server is used instead and nothing is started.
set -u
: "${ALLOT_SRC_DIR:=$(cd "$(dirname "$0")/../../.." && pwd)}"
if [ -n "${ALLOT_TEST_PG_CONNINFO:-}" ]; then
    exec "$@"
fi
. "$ALLOT_SRC_DIR/tests/sharness.d/00-common.sh"
. "$ALLOT_SRC_DIR/tests/sharness.d/20-postgres.sh"
tmp=$(mktemp -d /tmp/allot-store-pg-XXXXXX) || exit 1
cleanup() { pg_stop -m immediate; rm -rf "$tmp"; }
trap cleanup EXIT
pg_start "$tmp/pg" || { echo "pg_run.sh: cannot start PostgreSQL" >&2; exit 1; }
export ALLOT_TEST_PG_CONNINFO="$ALLOT_TEST_PG"
"$@"
