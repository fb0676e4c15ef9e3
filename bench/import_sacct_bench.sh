#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# import_sacct_bench.sh [BUILD_DIR] - finished jobs into the bank through the documented
# commands, for each size in JOBS (default "100000 1000000": a busy cluster's month and
# year): a `sacct -P` file made by tests/lib/sacct_gen.py (500 users in 50 accounts)
#   - `allot import sacct FILE cluster=bench` into allotd on SQLite (durable, its defaults)
#     over its Unix socket with MUNGE, as a site runs it, then the same file again (nothing
#     to do: the idempotent rerun), then with BACKFILL=1 on a fresh bank, backfill=yes;
#   - `allot-agent --once --reconcile-from` on a fresh bank with the same jobs listed by a
#     sacct stand-in in the agent's format (AGENT=0 leaves it out): each job settled as a
#     post-paid run through POST /v1/jobs/settle/bulk.
# Prints each command's own summary and its wall time, with the host lines first.  allotd
# and munged run in a temporary directory and are stopped at the end.
#   bash bench/import_sacct_bench.sh build          (JOBS=100000 for one size; BACKFILL=1)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
JOBS=${JOBS:-100000 1000000}
AGENT=${AGENT:-1}
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/03-munged.sh"
tmp=$(mktemp -d /tmp/allot-importbench-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
pid=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; munged_stop; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
munged_start "$tmp/munge" || exit 1
allot() { "$ALLOT_BUILD_DIR/src/cli/allot" --url "unix:$tmp/allotd.sock" "$@"; }

start_allotd() {
    rm -f "$tmp"/bank.sqlite*
    cat >allot.conf <<CONF
StorageLoc=$tmp/bank.sqlite
ListenAddr=127.0.0.1:$(find_free_port)
ListenSocket=$tmp/allotd.sock
MungeSocket=$MUNGE_SOCKET
SuperUsers=root
LogFile=$tmp/allotd.log
LogLevel=${LOGLEVEL:-warn}
CONF
    "$ALLOT_BUILD_DIR/src/allotd/allotd" --config allot.conf --foreground >stderr 2>&1 &
    pid=$!
    wait_for 20 test -S "$tmp/allotd.sock" || { cat stderr; exit 1; }
    wait_for 20 allot whoami >/dev/null || { cat stderr; exit 1; }
    allot cluster add bench >/dev/null &&
    allot partition add batch cluster=bench resource=cpu billing=CPU=1.0,Mem=0.25G >/dev/null ||
        exit 1
    for i in $(seq 0 49); do
        allot account add "a$i" >/dev/null &&
        allot alloc add "a$i" resource=cpu su=1000000000h start=2020-01-01 end=2100-01-01 >/dev/null || exit 1
    done
}
stop_allotd() { kill $pid; wait $pid 2>/dev/null; pid=; }

# sacct_gen.py's listing as allot-agent's sacct prints it (src/agent/collect.c SACCT_FORMAT:
# JobIDRaw,State,User,Account,Partition,QOS,Start,End,ElapsedRaw,Timelimit,AllocTRES,
# AllocCPUS,JobID), without the header.
agent_format() {
    awk 'BEGIN { FS = OFS = "|" }
    NR > 1 {
        n = split($8, t, /[-:]/)
        s = (n == 4 ? t[1] * 86400 : 0) + t[n - 2] * 3600 + t[n - 1] * 60 + t[n]
        cpus = 1; if (match($9, /cpu=[0-9]+/)) cpus = substr($9, RSTART + 4, RLENGTH - 4)
        print $1, $2, $3, $4, $5, $10, $6, $7, s, $11, $9, cpus, $1
    }' "$1"
}
allotd_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f s", ($14 + $15) / hz}' /proc/$pid/stat; }

for n in $JOBS; do
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $(git -C "$src" rev-parse --short HEAD) jobs=$n"
    t0=$(date +%s.%N)
    python3 "$src/tests/lib/sacct_gen.py" "$n" --cluster bench >year.txt || exit 1
    t1=$(date +%s.%N)
    echo "generated $(wc -l <year.txt) lines, $(du -m year.txt | cut -f1) MB in $(echo "$t1 - $t0" | bc) s"
    TIMEFORMAT='wall %R s (allot: user %U s, sys %S s)'
    start_allotd
    echo "## allot import sacct year.txt cluster=bench"
    time allot import sacct year.txt cluster=bench || exit 1
    echo "allotd cpu (utime+stime): $(allotd_cpu)"
    echo "## again (idempotent: nothing new)"
    time allot import sacct year.txt cluster=bench || exit 1
    echo "allotd cpu (utime+stime), both: $(allotd_cpu)"
    stop_allotd
    if [ -n "${BACKFILL:-}" ]; then
        start_allotd
        echo "## allot import sacct year.txt cluster=bench backfill=yes (fresh bank)"
        time allot import sacct year.txt cluster=bench backfill=yes || exit 1
        "$ALLOT_BUILD_DIR/src/cli/allot" --config allot.conf db check && echo "allot db check: ok"
        stop_allotd
    fi
    if [ "$AGENT" = 1 ]; then
        agent_format year.txt >agent.txt || exit 1
        printf '#!/bin/sh\ncat "%s/agent.txt"\n' "$tmp" >sacct && chmod +x sacct || exit 1
        start_allotd
        echo "## allot-agent --once --reconcile-from (the same jobs from a sacct stand-in, fresh bank)"
        TIMEFORMAT='wall %R s (allot-agent: user %U s, sys %S s)'
        time ALLOT_SACCT=$tmp/sacct "$ALLOT_BUILD_DIR/src/agent/allot-agent" \
            --url "unix:$tmp/allotd.sock" --cluster bench --once --wait 0 --reconcile-every 1 \
            --reconcile-lag 0 --reconcile-window 40000000 \
            --reconcile-from $(($(date +%s) - 400 * 86400)) 2>agent.log
        grep "reconcile: windows=" agent.log
        grep -q "settled=$n already=0 unknown=0" agent.log || { tail -n 5 agent.log; exit 1; }
        echo "allotd cpu (utime+stime): $(allotd_cpu)"
        stop_allotd
    fi
done
