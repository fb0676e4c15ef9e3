#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# share_bench.sh [BUILD_DIR] - fair-share answers end to end through allotd, as a site asks
# for them: USERS users (default 10,000) in BANKS accounts (100) brought in as a `sacctmgr
# dump` with `allot import slurm`, JOBS finished jobs (100,000) of theirs with `allot import
# sacct` (tests/lib/sacct_gen.py, jobs over the past year), then REPEATS (5) timed runs of
# `allot --json share algo=flux`, `allot share -P` (Fair Tree) and `allot tree`, each the
# documented command over allotd's Unix socket with MUNGE, wall time per run.  The same run
# then times flux-accounting's `update-fshare` when FLUX_UPDATE_FSHARE names a built one
# (it is not part of this repository; a site builds it from flux-accounting's own source
# tree, and the bench only runs it), so both figures come from one host at one time.
# Host conditions (fdatasync, HTTP floor, CPU share) are printed first.  allotd and munged
# run in a temporary directory and are stopped at the end.  Prints numbers, asserts nothing.
#   USERS=10000 BANKS=100 JOBS=100000 bash bench/share_bench.sh build-rel
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
USERS=${USERS:-10000}
BANKS=${BANKS:-100}
JOBS=${JOBS:-100000}
REPEATS=${REPEATS:-5}
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/03-munged.sh"
tmp=$(mktemp -d /tmp/allot-sharebench-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
pid=
trap '[ -z "$pid" ] || { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; munged_stop; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
munged_start "$tmp/munge" || exit 1
# --timeout: the CLI gives up after 5 s by default; the bench measures whatever it takes.
allot() { "$ALLOT_BUILD_DIR/src/cli/allot" --timeout 600 --url "unix:$tmp/allotd.sock" "$@"; }

cat >allot.conf <<CONF
StorageLoc=$tmp/bank.sqlite
ListenAddr=127.0.0.1:$(find_free_port)
ListenSocket=$tmp/allotd.sock
MungeSocket=$MUNGE_SOCKET
SuperUsers=root
LogFile=$tmp/allotd.log
LogLevel=warn
FairShareAlgorithm=fair_tree
CONF
"$ALLOT_BUILD_DIR/src/allotd/allotd" --config allot.conf --foreground >stderr 2>&1 &
pid=$!
wait_for 20 test -S "$tmp/allotd.sock" || { cat stderr; exit 1; }
wait_for 20 allot whoami >/dev/null || { cat stderr; exit 1; }

# The bank: user i in account a(i mod BANKS), as sacct_gen.py assigns them.
{
    echo "Cluster - 'bench':Fairshare=1"
    echo "Parent - 'root'"
    echo "User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1"
    for b in $(seq 0 $((BANKS - 1))); do echo "Account - 'a$b':Fairshare=1"; done
    for b in $(seq 0 $((BANKS - 1))); do
        echo "Parent - 'a$b'"
        for u in $(seq "$b" "$BANKS" $((USERS - 1))); do
            echo "User - 'u$u':DefaultAccount='a$b':Fairshare=1"
        done
    done
} >dump.txt
TIMEFORMAT='wall %R s'
echo "## allot import slurm: $USERS users in $BANKS accounts"
{ time allot import slurm file=dump.txt >import.out; } 2>&1 || { cat import.out; exit 1; }
allot partition add batch cluster=bench resource=cpu billing=CPU=1.0,Mem=0.25G >/dev/null &&
    allot alloc add root resource=cpu su=1000000000h start=2020-01-01 end=2100-01-01 >/dev/null ||
    exit 1
python3 "$src/tests/lib/sacct_gen.py" "$JOBS" --cluster bench --accounts "$BANKS" \
    --users "$USERS" >jobs.txt || exit 1
echo "## allot import sacct: $JOBS jobs"
{ time allot import sacct jobs.txt cluster=bench >/dev/null; } 2>&1 || exit 1
echo "# stored: $(sqlite3 bank.sqlite "SELECT count(*) FROM jobs WHERE status = 'settled'") settled jobs, $(sqlite3 bank.sqlite "SELECT count(*) FROM assocs") associations"

# time_runs LABEL CMD...: REPEATS runs, each one's wall time, then min and median.
time_runs() {
    local label=$1 i t0 t1 out=()
    shift
    for i in $(seq "$REPEATS"); do
        t0=$(date +%s%N)
        "$@" >/dev/null || return 1
        t1=$(date +%s%N)
        out+=($(((t1 - t0) / 1000)))
    done
    printf '%s\n' "${out[@]}" | sort -n | awk -v l="$label" -v n="$REPEATS" '
        {v[NR] = $1} END {printf "end to end  %-34s min %8.1f ms  median %8.1f ms  (%d runs)\n",
            l, v[1] / 1000, v[int((n + 1) / 2)] / 1000, n}'
}
echo "## end to end through allotd ($USERS users, $BANKS accounts, $JOBS stored jobs)"
time_runs "allot --json share algo=flux" allot --json share algo=flux
time_runs "allot -P share (fair_tree)" allot -P share
time_runs "allot tree" allot tree
if [ -n "${FLUX_UPDATE_FSHARE:-}" ]; then
    echo "## flux-accounting update-fshare, same host, same run: $FLUX_UPDATE_FSHARE ${FLUX_ARGS:-}"
    time_runs "update-fshare" $FLUX_UPDATE_FSHARE ${FLUX_ARGS:-}
else
    echo "# flux-accounting update-fshare: not run (set FLUX_UPDATE_FSHARE to a built one)"
fi
