#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# pg_bench.sh [BUILD_DIR] - allot on PostgreSQL with 1 and 2 allotd versus the HADM
# baseline, same load, same server, same run.  The baseline runs twice:
# its procedures called straight over libpq (hadm_baseline), and behind an HTTP API as
# HADM deploys them (hadm_api, driven by the same bank_loadgen as allotd).  Prints
# ops/s and latency percentiles of each and the ratios.  Starts a private PostgreSQL (fsync on,
# synchronous_commit on) and the allotd in a temporary directory, stops them at the end.
#   CLIENTS=64 PAIRS=4000 bash bench/pg_bench.sh build
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
CLIENTS=${CLIENTS:-64}
PAIRS=${PAIRS:-4000}
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/20-postgres.sh"
tmp=$(mktemp -d /tmp/allot-pgbench-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
hadm_api_pid=
hadm_api_stop() {
    [ -n "$hadm_api_pid" ] || return 0
    kill "$hadm_api_pid" 2>/dev/null
    wait "$hadm_api_pid" 2>/dev/null
    hadm_api_pid=
}
cleanup() { hadm_api_stop; pg_allotd_stop A; pg_allotd_stop B; pg_stop -m immediate; rm -rf "$tmp"; }
trap cleanup EXIT
pg_start "$tmp/pg" || exit 1
LG=$ALLOT_BUILD_DIR/bench/bank_loadgen
TICK=$(getconf CLK_TCK)

# CPU seconds (user+sys) so far of one process: its own plus its reaped children's.
cpu_of() { # $1 = pid
    [ -r "/proc/$1/stat" ] || { echo 0; return; }
    awk -v t="$TICK" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / t }' "/proc/$1/stat"
}
# CPU seconds of the PostgreSQL server: postmaster (with reaped backends) + live children.
pg_cpu() {
    local pm c sum
    pm=$(head -n 1 "$PG_DIR/data/postmaster.pid") || { echo 0; return; }
    sum=$(cpu_of "$pm")
    for c in $(pgrep -P "$pm"); do sum=$(awk -v a="$sum" -v b="$(cpu_of "$c")" 'BEGIN { printf "%.2f", a + b }'); done
    echo "$sum"
}
# Where the CPU went during one part: PostgreSQL, the allotd given by pid (cpu_name names
# another server: hadm_api), the rest.
cpu_mark() { m_pg=$(pg_cpu); m_all=$(awk '/^cpu / { printf "%.2f", ($2 + $3 + $4 + $7 + $8) / '"$TICK"' }' /proc/stat); m_d="$*"; m_dcpu=0; for p in $m_d; do m_dcpu=$(awk -v a="$m_dcpu" -v b="$(cpu_of "$p")" 'BEGIN { printf "%.2f", a + b }'); done; }
cpu_report() {
    local pg all d=0 p
    pg=$(pg_cpu); all=$(awk '/^cpu / { printf "%.2f", ($2 + $3 + $4 + $7 + $8) / '"$TICK"' }' /proc/stat)
    for p in $m_d; do d=$(awk -v a="$d" -v b="$(cpu_of "$p")" 'BEGIN { printf "%.2f", a + b }'); done
    awk -v pg="$(awk -v a="$pg" -v b="$m_pg" 'BEGIN { print a - b }')" \
        -v d="$(awk -v a="$d" -v b="$m_dcpu" 'BEGIN { print a - b }')" \
        -v all="$(awk -v a="$all" -v b="$m_all" 'BEGIN { print a - b }')" \
        -v name="${cpu_name:-allotd}" \
        'BEGIN { printf "cpu_s postgres=%.2f " name "=%.2f machine=%.2f (rest: load generator, other work on the host)\n", pg, d, all }'
}

setup_bank() { # $1 = allotd instance
    pga "$1" POST /v1/clusters '{"name":"c1"}' >/dev/null &&
    pga "$1" POST /v1/accounts '{"name":"acct0","parent":"root"}' >/dev/null &&
    pga "$1" POST /v1/users '{"name":"root","uid":0}' >/dev/null &&
    pga "$1" POST /v1/assocs '{"cluster":"c1","account":"acct0","user":"root"}' >/dev/null &&
    pga "$1" POST /v1/partitions '{"cluster":"c1","name":"batch","resource":"cpu"}' >/dev/null &&
    pga "$1" POST /v1/allocations '{"account":"acct0","resource":"cpu","start":"2020-01-01","end":"2099-01-01","amount_sumin":100000000000}' >/dev/null
}

echo "# host: $(nproc) cores; PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{print $3}'), fsync=on synchronous_commit=on"
echo "# load: $CLIENTS clients, $PAIRS hold+settle pairs, one allocation"

echo "== HADM baseline (PL/pgSQL pre-debit under pg_advisory_xact_lock, one transaction per request)"
psql -X -q "$ALLOT_TEST_PG" -v ON_ERROR_STOP=1 -f "$src/bench/hadm_baseline.sql" 2>/dev/null &&
pg_psql "INSERT INTO hadm.allocations (workgroup, resource, start_date, end_date) VALUES ('acct0', 'cpu', now() - interval '1 day', now() + interval '1 year'); INSERT INTO hadm.credits (allocation_id, amount) VALUES (1, 100000000000)" >/dev/null || exit 1
cpu_mark
"$ALLOT_BUILD_DIR/bench/hadm_baseline" --conninfo "$ALLOT_TEST_PG" --clients "$CLIENTS" --pairs "$PAIRS" | tee hadm.out
cpu_report

echo "== HADM baseline through HTTP (C libmicrohttpd front end, one PostgreSQL connection per API worker)"
# A fresh hadm schema, as the first part had: same allocation and credit, job ids from 1.
psql -X -q "$ALLOT_TEST_PG" -v ON_ERROR_STOP=1 -f "$src/bench/hadm_baseline.sql" 2>/dev/null &&
pg_psql "INSERT INTO hadm.allocations (workgroup, resource, start_date, end_date) VALUES ('acct0', 'cpu', now() - interval '1 day', now() + interval '1 year'); INSERT INTO hadm.credits (allocation_id, amount) VALUES (1, 100000000000)" >/dev/null || exit 1
hport=$(find_free_port) || exit 1
"$ALLOT_BUILD_DIR/bench/hadm_api" --conninfo "$ALLOT_TEST_PG" --listen "127.0.0.1:$hport" \
    --threads $((CLIENTS + 8)) &
hadm_api_pid=$!
# Any HTTP answer (a 404 here) means it listens; bounded by wait_for.
wait_for 10 curl -s -o /dev/null "http://127.0.0.1:$hport/" || exit 1
cpu_mark "$hadm_api_pid"
"$LG" --tcp "127.0.0.1:$hport" --clients "$CLIENTS" --pairs "$PAIRS" --accounts 1 \
    --cluster c1 --partition batch --job-base 1 | tee hadm_http.out
cpu_name=hadm_api cpu_report
hadm_api_stop

echo "== allot, 1 allotd on PostgreSQL"
pg_allotd_start A "Threads=$CLIENTS" ConnectionsPerPeer=4096 || exit 1
setup_bank A || exit 1
cpu_mark "$PGA_PID_A"
"$LG" --tcp "${PGA_URL_A#http://}" --clients "$CLIENTS" --pairs "$PAIRS" --accounts 1 \
    --cluster c1 --partition batch --job-base 1 | tee one.out
cpu_report
# Which server processes spent it: allotd's writer connection is one backend, its HTTP
# workers' read connections the others (one per worker).
pm=$(head -n 1 "$PG_DIR/data/postmaster.pid")
ps --ppid "$pm" -o cputime=,args= | sort -r | head -n 4 | sed 's/^/top backend: /'
echo "backends: $(ps --ppid "$pm" -o args= | grep -c 'idle\|idle in transaction') connected"

echo "== allot, 2 allotd on PostgreSQL ($((CLIENTS / 2)) clients each)"
pg_allotd_start B "Threads=$CLIENTS" ConnectionsPerPeer=4096 || exit 1
cpu_mark "$PGA_PID_A" "$PGA_PID_B"
"$LG" --tcp "${PGA_URL_A#http://}" --clients $((CLIENTS / 2)) --pairs $((PAIRS / 2)) \
    --accounts 1 --cluster c1 --partition batch --job-base 10000000000 >twoA.out &
a=$!
"$LG" --tcp "${PGA_URL_B#http://}" --clients $((CLIENTS / 2)) --pairs $((PAIRS / 2)) \
    --accounts 1 --cluster c1 --partition batch --job-base 20000000000 >twoB.out &
b=$!
wait $a $b
cat twoA.out twoB.out
cpu_report

rate() { sed -n 's/.*requests_per_s=\([0-9]*\).*/\1/p' "$1"; }
h=$(rate hadm.out); hh=$(rate hadm_http.out); o=$(rate one.out); t=$(( $(rate twoA.out) + $(rate twoB.out) ))
echo "== requests/s: hadm=$h hadm_http=$hh allot_1=$o allot_2=$t"
awk -v h="$h" -v hh="$hh" -v o="$o" -v t="$t" 'BEGIN { printf "ratio allot_1/hadm=%.2f allot_2/hadm=%.2f allot_1/hadm_http=%.2f allot_2/hadm_http=%.2f\n", o / h, t / h, o / hh, t / hh }'
