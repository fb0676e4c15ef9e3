#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# import_sacct_bench.sh [BUILD_DIR] - `allot import sacct` of a year of a busy cluster: JOBS
# finished jobs (default 1,000,000) in a `sacct -P` file made by tests/lib/sacct_gen.py
# (500 users in 50 accounts), imported through the documented command into allotd on
# SQLite (durable, its defaults) over its Unix socket with MUNGE, as a site runs it.  Prints
# the command's own summary and its wall time, then the same file again (nothing to do:
# the idempotent rerun), then, with BACKFILL=1 on a fresh bank, the import with
# backfill=yes.  allotd and munged run in a temporary directory and are stopped at the end.
#   JOBS=1000000 bash bench/import_sacct_bench.sh build       (BACKFILL=1 adds the backfill run)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
JOBS=${JOBS:-1000000}
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

echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $(git -C "$src" rev-parse --short HEAD) jobs=$JOBS"
t0=$(date +%s.%N)
python3 "$src/tests/lib/sacct_gen.py" "$JOBS" --cluster bench >year.txt || exit 1
t1=$(date +%s.%N)
echo "generated $(wc -l <year.txt) lines, $(du -m year.txt | cut -f1) MB in $(echo "$t1 - $t0" | bc) s"
TIMEFORMAT='wall %R s (allot: user %U s, sys %S s)'
start_allotd
echo "## allot import sacct year.txt cluster=bench"
time allot import sacct year.txt cluster=bench || exit 1
echo "## again (idempotent: nothing new)"
time allot import sacct year.txt cluster=bench || exit 1
echo "allotd cpu (utime+stime): $(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f s", ($14 + $15) / hz}' /proc/$pid/stat)"
stop_allotd
if [ -n "${BACKFILL:-}" ]; then
    start_allotd
    echo "## allot import sacct year.txt cluster=bench backfill=yes (fresh bank)"
    time allot import sacct year.txt cluster=bench backfill=yes || exit 1
    "$ALLOT_BUILD_DIR/src/cli/allot" --config allot.conf db check && echo "allot db check: ok"
    stop_allotd
fi
