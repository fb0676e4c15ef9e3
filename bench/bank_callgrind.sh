#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bank_callgrind.sh [BUILD_DIR] - instruction counts (valgrind callgrind) of allotd's hot path:
# allotd on SQLite runs under callgrind while bank_loadgen sends PAIRS hold+settle pairs and
# then PAIRS/2 admit+hold+settle triples; prints instructions per request overall and per
# call of the main stages.  Wall-clock numbers on this shared VM are noisy; instruction
# counts repeat, so this is the before/after measure for code changes (bench/results/bank.md).
#   PAIRS=1000 bash bench/bank_callgrind.sh build-rel    (CG_OUT=FILE keeps the profile)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
PAIRS=${PAIRS:-1000}
CLIENTS=${CLIENTS:-8}
ACCOUNTS=${ACCOUNTS:-4}   # allocations the load is spread over (bank_bench.sh: 32 and 1)
. "$src/tests/sharness.d/00-common.sh"
command -v valgrind >/dev/null || { echo "bank_callgrind: valgrind is not installed" >&2; exit 1; }
tmp=$(mktemp -d /tmp/allot-bankcg-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
port=$(find_free_port) || exit 1
url=http://127.0.0.1:$port
cat >allot.conf <<CONF
StorageType=sqlite
StorageLoc=$tmp/bank.sqlite
ListenAddr=127.0.0.1:$port
AuthType=none
TestMode=local
SuperUsers=root
LogFile=$tmp/allotd.log
ConnectionsPerPeer=4096
Threads=$CLIENTS
LogLevel=warn
CONF
# SQLite's allocator as in production (db_sqlite_mem.c stands aside under valgrind unless
# told; ALLOT_SQLITE_MEM=malloc measures SQLite on glibc's malloc).
ALLOT_SQLITE_MEM=${ALLOT_SQLITE_MEM:-lists} \
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
    "$ALLOT_BUILD_DIR/src/allotd/allotd" --config allot.conf --foreground >stderr 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
wait_for 60 curl -sf "$url/healthz" || { cat stderr; exit 1; }
post() { curl -sf -H 'X-Allot-User: root' -H 'Content-Type: application/json' -d "$2" "$url$1" >/dev/null; }
post /v1/clusters '{"name":"bench"}' || exit 1
post /v1/partitions '{"cluster":"bench","name":"cpu","resource":"cpu"}' || exit 1
post /v1/users '{"name":"root","uid":0}' || exit 1
for i in $(seq 0 $((ACCOUNTS - 1))); do
    post /v1/accounts "{\"name\":\"acct$i\",\"parent\":\"root\"}" &&
    post /v1/assocs "{\"cluster\":\"bench\",\"account\":\"acct$i\",\"user\":\"root\"}" &&
    post /v1/allocations "{\"account\":\"acct$i\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000000000}" || exit 1
done
"$ALLOT_BUILD_DIR/bench/bank_loadgen" --tcp "127.0.0.1:$port" --clients "$CLIENTS" \
    --pairs "$PAIRS" --accounts "$ACCOUNTS" --job-base 1 >/dev/null || exit 1
"$ALLOT_BUILD_DIR/bench/bank_loadgen" --tcp "127.0.0.1:$port" --clients "$CLIENTS" \
    --pairs $((PAIRS / 2)) --accounts "$ACCOUNTS" --admit --job-base 9000000000 >/dev/null || exit 1
kill -TERM $pid
wait $pid 2>/dev/null
[ -n "${CG_OUT:-}" ] && cp "$tmp/cg.out" "$CG_OUT"
requests=$((2 * PAIRS + 3 * (PAIRS / 2)))
echo "# allotd under callgrind: $PAIRS hold+settle pairs, then $((PAIRS / 2)) admit+hold+settle;" \
    "$requests requests, $CLIENTS clients, $ACCOUNTS allocations (setup requests and startup included in the total)"
# In --tree=caller output each function's block lists its callers ("<", with call counts)
# and then the function itself ("*", inclusive Ir): per call = inclusive / sum of calls.
callgrind_annotate --inclusive=yes --tree=caller "$tmp/cg.out" 2>/dev/null | awk -v req=$requests '
    /PROGRAM TOTALS/ {t = $1; gsub(",", "", t); printf "total: %.0f Ir/request\n", t / req}
    /^ *[0-9,]+ .*< .*\([0-9,]+x\)/ {n = $0; sub(/.*\(/, "", n); sub(/x\).*/, "", n);
        gsub(",", "", n); calls += n; next}
    /^ *[0-9,]+ .*\* / {
        ir = $1; gsub(",", "", ir); name = $0; sub(/ \[.*/, "", name); sub(/.*:/, "", name)
        if (name ~ /^(on_request|send_reply|run_batch|api_job_admit|api_job_hold|api_job_settle|limit_check_admit|store_hold|store_settle|store_payer|store_ledger_apply|ledger_apply|store_commit|json_dumps|json_fast_job_reply|json_job|json_balance)$/ && calls > 0)
            printf "%-20s %8d calls %10.0f Ir/call\n", name, calls, ir / calls
        calls = 0; next}
    /^$/ {calls = 0}'
