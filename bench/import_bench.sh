#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# import_bench.sh [BUILD_DIR] - `allot import slurm` of the 1,000-association dump recorded
# from t3700's test cluster (bench/data/sacctmgr-dump-1000-22.05.8.txt: 65 accounts in three
# levels, 500 users, 1,000 user associations with limits, QOS lists and deltas; its QOS
# beside it), through the documented command against a private allotd (SQLite, durable).
# Per round: a dry run on the empty bank, the import into it (one transaction), the second
# import (no changes), and the export; wall time of each command, best and median of ROUNDS
# (default 5), each round on a new bank: a new SQLite file, or with BACKEND=pg a private
# PostgreSQL (tests/sharness.d/20-postgres.sh) whose schema is dropped between rounds.
#   ROUNDS=5 [BACKEND=pg] bash bench/import_bench.sh build
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
ROUNDS=${ROUNDS:-5}
BACKEND=${BACKEND:-sqlite}
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/20-postgres.sh"
dump=$src/bench/data/sacctmgr-dump-1000-22.05.8.txt
qos=$src/bench/data/sacctmgr-show-qos-22.05.8.txt
tmp=$(mktemp -d /tmp/allot-importbench-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
pid=
trap 'test -n "$pid" && kill $pid 2>/dev/null; wait 2>/dev/null
      [ "$BACKEND" = pg ] && pg_stop -m immediate; rm -rf "$tmp"' EXIT
if [ "$BACKEND" = pg ]; then
    pg_start "$tmp/pg" >/dev/null || exit 1
    storage="StorageType=pg
StorageLoc=$ALLOT_TEST_PG"
fi
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
for r in $(seq 1 "$ROUNDS"); do
    port=$(find_free_port) || exit 1
    url=http://127.0.0.1:$port
    rm -f bank.sqlite*
    if [ "$BACKEND" = pg ]; then
        pg_psql "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null 2>&1 || exit 1
    else
        storage="StorageType=sqlite
StorageLoc=$tmp/bank.sqlite"
    fi
    cat >allot.conf <<CONF
$storage
ListenAddr=127.0.0.1:$port
AuthType=none
TestMode=local
SuperUsers=root
LogFile=$tmp/allotd.log
LogLevel=warn
CONF
    "$ALLOT_BUILD_DIR/src/allotd/allotd" --config allot.conf --foreground >stderr 2>&1 &
    pid=$!
    wait_for 20 curl -sf "$url/healthz" >/dev/null || { cat stderr; exit 1; }
    a() { ALLOT_TEST_USER=root "$ALLOT_BUILD_DIR/src/cli/allot" --url "$url" "$@"; }
    t=$(date +%s%N); a import slurm file="$dump" qos="$qos" --dry-run >dry.out || exit 1; dry=$(ms "$t")
    t=$(date +%s%N); a import slurm file="$dump" qos="$qos" >imp.out || exit 1; imp=$(ms "$t")
    t=$(date +%s%N); a import slurm file="$dump" qos="$qos" >again.out || exit 1; again=$(ms "$t")
    t=$(date +%s%N); a export slurm cluster=test >export.txt || exit 1; exp=$(ms "$t")
    grep -q "; no changes$" again.out || { echo "second import changed something" >&2; exit 1; }
    echo "round $r: dry-run $dry ms, import $imp ms ($(tail -1 imp.out | sed 's/.*; //')), second import $again ms, export $exp ms"
    echo "$dry $imp $again $exp" >>times
    kill $pid && wait $pid 2>/dev/null
    pid=
done
# best and median per column
for c in 1 2 3 4; do
    name=$(echo "dry-run import second-import export" | cut -d' ' -f$c)
    cut -d' ' -f$c times | sort -n | awk -v n="$name" '{v[NR] = $1} END {
        printf "%-14s best %5d ms  median %5d ms  (%d rounds)\n", n, v[1], v[int((NR + 1) / 2)], NR }'
done
