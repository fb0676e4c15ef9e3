#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# pg_profile.sh [BUILD_DIR] - where allot's time goes on PostgreSQL, statement by statement:
# a private server with pg_stat_statements (track = all, so statements inside allot's
# PL/pgSQL count too; track_planning on), one allotd, bank_loadgen with CLIENTS clients
# (default 64) on one allocation; prints the ledger rows written and the statements by total
# execution time, once on a fresh bank and once after ANALYZE.  Measures and prints; asserts
# nothing.
#   PAIRS=2000 [CLIENTS=64] bash bench/pg_profile.sh build-rel
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/20-postgres.sh"
tmp=$(mktemp -d /tmp/allot-pgprofile-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
cleanup() { pg_allotd_stop A; pg_stop -m immediate; rm -rf "$tmp"; }
trap cleanup EXIT
pg_start "$tmp/pg" || exit 1
# pg_stat_statements must be preloaded: add it to the server pg_start made, and restart.
cat >>"$PG_DIR/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on
CONF
pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
    -o "-p $PG_PORT" restart >/dev/null || { tail -n 20 "$PG_DIR/server.log"; exit 1; }
pg_psql "CREATE EXTENSION pg_stat_statements" >/dev/null || exit 1
pg_allotd_start A "Threads=64" ConnectionsPerPeer=4096 || exit 1
pga A POST /v1/clusters '{"name":"c1"}' >/dev/null &&
pga A POST /v1/accounts '{"name":"acct0","parent":"root"}' >/dev/null &&
pga A POST /v1/users '{"name":"root","uid":0}' >/dev/null &&
pga A POST /v1/assocs '{"cluster":"c1","account":"acct0","user":"root"}' >/dev/null &&
pga A POST /v1/partitions '{"cluster":"c1","name":"batch","resource":"cpu"}' >/dev/null &&
pga A POST /v1/allocations '{"account":"acct0","resource":"cpu","start":"2020-01-01","end":"2099-01-01","amount_sumin":100000000000}' >/dev/null || exit 1
top_statements() {
    pg_psql "SELECT calls, plans, round(total_plan_time::numeric, 1) AS plan_ms,
        round(total_exec_time::numeric, 1) AS exec_ms,
        round((total_exec_time / greatest(calls, 1))::numeric, 3) AS ms_per_call,
        left(regexp_replace(query, '\s+', ' ', 'g'), 90) FROM pg_stat_statements
        ORDER BY total_exec_time DESC LIMIT 14"
}
run() { # $1 = job base
    pg_psql "SELECT pg_stat_statements_reset()" >/dev/null
    "$ALLOT_BUILD_DIR/bench/bank_loadgen" --tcp "${PGA_URL_A#http://}" --clients "${CLIENTS:-64}" \
        --pairs "${PAIRS:-2000}" --accounts 1 --cluster c1 --partition batch --job-base "$1"
    echo "ledger: $(pg_psql "SELECT kind, count(*) FROM ledger GROUP BY kind ORDER BY kind" | paste -sd' ')"
    echo "calls|plans|plan_ms|exec_ms|ms_per_call|statement"
    top_statements
}
echo "== fresh bank"
run 1
pg_psql "ANALYZE" >/dev/null
echo "== after ANALYZE"
run 10000000000
