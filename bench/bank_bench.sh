#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bank_bench.sh [BUILD_DIR] - durable hold+settle pairs through allotd's
# HTTP API on the SQLite backend, with N keep-alive clients, spread over many allocations and
# all on one allocation, over allotd's Unix socket (the Slurm plugins' default path:
# AllotdUrl empty = unix:ListenSocket) and over TCP (loopback).  Prints bank_loadgen's lines
# (ops/s, p50/p99/p99.9) and the CPU each phase cost.  allotd runs in a temporary directory
# with AuthType=none (test build, loopback) and its default Threads, and is stopped at the end.
#   CLIENTS=32 PAIRS=100000 [THREADS=N: allotd's HTTP worker threads] bash bench/bank_bench.sh build
# For A/B rounds: FIRST_ONLY=1 stops after the first phase (Unix socket, over ACCOUNTS
# allocations); SETUP_SQL='...' runs that SQL on the bank file after setup (a what-if such
# as 'DROP INDEX jobs_held_account', measured, never shipped).
# IDLE=N: every phase also holds N connections open and quiet (bank_loadgen --idle), as
# a site's clients that keep a connection between requests.
# HADM=0 skips the HADM-style baseline (its PL/pgSQL pre-debit on a private PostgreSQL 15,
# same clients, HADM_PAIRS pairs, default 20,000) that runs first so every allotd phase is
# also printed as a ratio to it, measured in the same run on the same host.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
CLIENTS=${CLIENTS:-32}
PAIRS=${PAIRS:-100000}
ACCOUNTS=${ACCOUNTS:-32}
. "$src/tests/sharness.d/00-common.sh"
tmp=$(mktemp -d /tmp/allot-bankbench-XXXXXX) && cd "$tmp" || exit 1
port=$(find_free_port) || exit 1
url=http://127.0.0.1:$port
cat >allot.conf <<CONF
StorageType=sqlite
StorageLoc=$tmp/bank.sqlite
ListenAddr=127.0.0.1:$port
ListenSocket=$tmp/allotd.sock
AuthType=none
TestMode=local
SuperUsers=root
LogFile=$tmp/allotd.log
# The load comes from one address and one uid by design.
ConnectionsPerPeer=4096
${THREADS:+Threads=$THREADS}
LogLevel=warn
CONF
"$ALLOT_BUILD_DIR/src/allotd/allotd" --config allot.conf --foreground >stderr 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
wait_for 20 curl -sf "$url/healthz" || { cat stderr; exit 1; }
post() { curl -sf -H 'X-Allot-User: root' -H 'Content-Type: application/json' -d "$2" "$url$1" >/dev/null; }
post /v1/clusters '{"name":"bench"}' || exit 1
post /v1/partitions '{"cluster":"bench","name":"cpu","resource":"cpu"}' || exit 1
post /v1/users '{"name":"root","uid":0}' || exit 1
for i in $(seq 0 $((ACCOUNTS - 1))); do
    post /v1/accounts "{\"name\":\"acct$i\",\"parent\":\"root\"}" &&
    post /v1/assocs "{\"cluster\":\"bench\",\"account\":\"acct$i\",\"user\":\"root\"}" &&
    post /v1/allocations "{\"account\":\"acct$i\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000000000}" || exit 1
done
if [ -n "${SETUP_SQL:-}" ]; then
    sqlite3 "$tmp/bank.sqlite" "$SETUP_SQL" || exit 1
fi
# CPU used by allotd (utime+stime of /proc/PID/stat, clock ticks) and by the load
# generator (bash's time), so a run shows what one request costs on these shared cores.
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14, $15}' "/proc/$pid/stat"; }
TIMEFORMAT='loadgen cpu: user %U s, sys %S s'
# The writer's time by phase and its batch count, from /metrics (allot_writer_seconds_total).
writer_phases() {
    curl -sf "$url/metrics" | awk '/^allot_writer_seconds_total\{phase="run"\}/ {r = $2}
        /^allot_writer_seconds_total\{phase="commit"\}/ {c = $2}
        /^allot_writer_seconds_total\{phase="sync"\}/ {y = $2}
        /^allot_writer_seconds_total\{phase="complete"\}/ {d = $2}
        /^allot_commit_batch_ops_count/ {n = $2} END {print r + 0, c + 0, y + 0, d + 0, n + 0}'
}
# CPU per request by thread (utime+stime of /proc/PID/task/*): the writer and the
# completers are allotd's threads named "allotd" (the writer is the busiest of them).
tasks() { for t in /proc/$pid/task/*; do echo "$(basename "$t") $(tr -d ' ' <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done | sort; }
run_loadgen() {
    local before after reqs wb wa
    tasks >"$tmp/tasks.a"
    wb=$(writer_phases)
    before=$(cpu_ticks)
    { time "$ALLOT_BUILD_DIR/bench/bank_loadgen" ${IDLE:+--idle "$IDLE"} "$@" >"$tmp/lg.out"; } 2>"$tmp/lg.time"
    after=$(cpu_ticks)
    cat "$tmp/lg.out" "$tmp/lg.time"
    local rate
    rate=$(sed -n 's/.*pairs_per_s=\([0-9]*\).*/\1/p' "$tmp/lg.out")
    # (not for the HTTP floor's GETs: no storage, nothing to compare)
    [[ " $* " != *" --floor "* ]] && [ -n "$hadm_rate" ] && [ -n "$rate" ] && [ "$hadm_rate" -gt 0 ] &&
        awk -v a="$rate" -v h="$hadm_rate" 'BEGIN { printf "ratio to the HADM-style baseline of this run: %.2f (%d / %d pairs/s)\n", a / h, a, h }'
    reqs=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' "$tmp/lg.out")
    awk -v b="$before" -v a="$after" -v hz="$tck" -v n="${reqs:-0}" 'BEGIN {
        split(b, x, " "); split(a, y, " "); u = (y[1] - x[1]) / hz; s = (y[2] - x[2]) / hz
        printf "allotd cpu: user %.2f s, sys %.2f s", u, s
        if (n > 0) printf "; %.0f us user + %.0f us sys per request", 1e6 * u / n, 1e6 * s / n
        print ""}'
    wa=$(writer_phases)
    tasks >"$tmp/tasks.b"
    join "$tmp/tasks.a" "$tmp/tasks.b" | awk -v n="${reqs:-0}" -v hz="$tck" '
        {d = $5 - $3} $2 == "allotd" {if (d > w) {o += w; w = d} else o += d; next} {h += d}
        END {if (n > 0) printf "allotd cpu per request: writer %.1f us, its other threads (completers, main) %.1f us, HTTP workers %.1f us\n",
            1e6 * w / hz / n, 1e6 * o / hz / n, 1e6 * h / hz / n}'
    awk -v b="$wb" -v a="$wa" 'BEGIN {
        split(b, x, " "); split(a, y, " "); n = y[5] - x[5]; if (n <= 0) exit
        printf "writer: %d batches; per batch: writer runs %.0f us, commits %.0f us; completer syncs %.0f us, completes %.0f us\n",
            n, 1e6 * (y[1] - x[1]) / n, 1e6 * (y[2] - x[2]) / n, 1e6 * (y[3] - x[3]) / n, 1e6 * (y[4] - x[4]) / n}'
}
echo "# host: $(nproc) cores, $(uname -r); SQLite $(sqlite3 --version | cut -d' ' -f1), synchronous=FULL (durable)"
# What the host gives (fdatasync, HTTP floor, CPU share, wake-up latency): numbers from
# different hosts compare only beside these lines.
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
hadm_rate=
if [ "${HADM:-1}" != 0 ] && [ -x "$ALLOT_BUILD_DIR/bench/hadm_baseline" ]; then
    . "$src/tests/sharness.d/20-postgres.sh"
    trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; pg_stop -m immediate; rm -rf "$tmp"' EXIT
    if pg_start "$tmp/pg" >/dev/null &&
        psql -X -q "$ALLOT_TEST_PG" -v ON_ERROR_STOP=1 -f "$src/bench/hadm_baseline.sql" >/dev/null 2>&1 &&
        pg_psql "INSERT INTO hadm.allocations (workgroup, resource, start_date, end_date) VALUES ('acct0', 'cpu', now() - interval '1 day', now() + interval '1 year'); INSERT INTO hadm.credits (allocation_id, amount) VALUES (1, 100000000000)" >/dev/null; then
        echo "== HADM-style baseline: $CLIENTS clients, ${HADM_PAIRS:-20000} pairs, PL/pgSQL pre-debit on PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{print $3}') (fsync=on, synchronous_commit=on)"
        "$ALLOT_BUILD_DIR/bench/hadm_baseline" --conninfo "$ALLOT_TEST_PG" --clients "$CLIENTS" \
            --pairs "${HADM_PAIRS:-20000}" | tee "$tmp/hadm.out"
        hadm_rate=$(sed -n 's/.*pairs_per_s=\([0-9]*\).*/\1/p' "$tmp/hadm.out")
    else
        echo "# HADM-style baseline: PostgreSQL did not start; no ratios"
    fi
    pg_stop -m immediate
fi
unix=(--unix "$tmp/allotd.sock")
tcp=(--tcp "127.0.0.1:$port")
# Each phase gets job ids of its own, so none is a replay of an earlier one.
phase=0
for t in unix tcp; do
    declare -n target=$t
    for a in "$ACCOUNTS" 1; do
        where="over $a allocations"
        [ "$a" = 1 ] && where="on one allocation"
        echo "== $CLIENTS clients, $PAIRS pairs $where, $t"
        run_loadgen "${target[@]}" --clients "$CLIENTS" --pairs "$PAIRS" --accounts "$a" \
            --job-base $((phase * 2000000000 + 1))
        [ -n "${FIRST_ONLY:-}" ] && exit 0
        phase=$((phase + 1))
    done
done
echo "== $CLIENTS clients, $((PAIRS / 4)) admit+hold+settle over $ACCOUNTS allocations, unix"
run_loadgen "${unix[@]}" --clients "$CLIENTS" --pairs $((PAIRS / 4)) --accounts "$ACCOUNTS" \
    --admit --job-base $((phase * 2000000000 + 1))
for t in unix tcp; do
    echo "== $CLIENTS clients, HTTP floor: $PAIRS x 2 GET /v1/whoami, $t (no storage; the ceiling this machine allows)"
    declare -n target=$t
    run_loadgen "${target[@]}" --clients "$CLIENTS" --pairs "$PAIRS" --floor
done
# Group commit: ops per committed batch over the whole run (from allotd's /metrics).
curl -sf "$url/metrics" | awk '/^allot_commit_batch_ops_sum/ {s = $2} /^allot_commit_batch_ops_count/ {c = $2}
    END {if (c > 0) printf "group commit: %d batches, %.1f ops/batch\n", c, s / c}'
curl -sf -H 'X-Allot-User: root' "$url/v1/check" | head -c 300; echo
