#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# demo/run.sh - allot's main job on the embedded default: build, start allotd on an SQLite
# file with an example site, and walk through the CLI an operator and a user would use.
#
#   bash demo/run.sh         install packages (as root), build, start allotd, run the tour
#   bash demo/run.sh stop    stop the demo's allotd
#   bash demo/run.sh tour    the tour alone, with the `allot` on PATH (an installed one)
#                            and the allotd $ALLOT_URL names (default: the installed
#                            allotd's socket); the Debian packages' test runs it
#
# State lives in demo/state/: allot.conf, bank.sqlite, allotd.sock, allotd.log.  allotd
# authenticates with MUNGE (the system munged, started here if it is not running); root is
# the superuser.  Re-running starts from a fresh bank.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
state=$top/demo/state
bin=$top/${ALLOT_DEMO_BUILD:-build}/src

stop() {
    local pid
    pid=$(cat "$state/allotd.pid" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
}
if [ "${1:-}" = stop ]; then stop; echo "demo allotd stopped"; exit 0; fi

allot=$bin/cli/allot
run() { printf '\n$ allot %s\n' "$*"; "$allot" "$@"; }
try() { printf '\n$ allot %s\n' "$*"; "$allot" "$@" || echo "(exit status $?)"; }

# 4. The tour: what an operator and a user would type.
tour() {
echo "== An operator sets up a site"
run cluster add demo
run account add science description="School of Science"
run account add chem parent=science fairshare=100
run account add chem-ml parent=chem
run user add alice
run assoc add cluster=demo account=chem user=alice
run assoc add cluster=demo account=chem-ml user=alice
run user modify alice defaultaccount=chem
run partition add cpu cluster=demo resource=cpu billing=CPU=1.0,Mem=0.25G
run partition add gpu cluster=demo resource=gpu billing=CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0 maxtres=yes
# This year and the next, whenever the demo runs (a fixed window would end one day).
run alloc add chem resource=cpu su=1000h start=$(date -u +%Y)-01-01 \
    end=$(($(date -u +%Y) + 2))-01-01 category=startup
run account show
run balance

echo
echo "== Slurm's plugins drive a job (these are the verbs job_submit and PrEp call)"
run job admit cluster=demo user=alice account=chem-ml partition=cpu timelimit=4:00:00 tres=cpu=8,mem=16G,node=1
# The job started two hours ago (Slurm's start time); it ends 1:30:55 later.
run job hold jobid=101 cluster=demo user=alice account=chem-ml partition=cpu timelimit=4:00:00 \
    tres=cpu=8,mem=16G,node=1 start=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)
run balance
run job settle jobid=101 cluster=demo elapsed=1:30:55 state=COMPLETED
run job show demo:101
run ledger chem

echo
echo "== A job the allocation cannot pay for is refused with the numbers"
try job admit cluster=demo user=alice account=chem partition=cpu timelimit=7-00:00:00 tres=cpu=64,node=1
echo
echo "== At job start the hold is the atomic check: a run it cannot cover is refused and recorded"
try job hold jobid=102 cluster=demo user=alice account=chem partition=cpu timelimit=7-00:00:00 tres=cpu=64,node=1
run failures

echo
echo "== The web dashboard: balances and burn-down charts, signed in by a read-only link"
run dashboard
}
if [ "${1:-}" = tour ]; then
    allot=$(command -v allot) || { echo "demo: no allot on PATH" >&2; exit 1; }
    tour
    exit 0
fi

# 1. Packages and build.
bash .ci/deps.sh
cmake -S . -B "${ALLOT_DEMO_BUILD:-build}" >/dev/null
cmake --build "${ALLOT_DEMO_BUILD:-build}" -j"$(nproc)" >/dev/null

# 2. MUNGE: the system daemon with Debian's key.
if ! munge -n </dev/null >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge: /run/munge
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
fi

# 3. allotd on a fresh SQLite bank.
stop
rm -rf "$state" && mkdir -p "$state"
cat >"$state/allot.conf" <<CONF
# The demo bank: SQLite file, Unix socket and loopback TCP, MUNGE auth, root is superuser.
StorageType=sqlite
StorageLoc=$state/bank.sqlite
ListenSocket=$state/allotd.sock
ListenAddr=127.0.0.1:8760
AuthType=munge
SuperUsers=root
Operators=slurm
LogFile=$state/allotd.log
PidFile=$state/allotd.pid
CONF
"$bin/allotd/allotd" --config "$state/allot.conf" --check-config >/dev/null
# allotd stays in the foreground (as under systemd); the demo detaches it with setsid.
setsid "$bin/allotd/allotd" --config "$state/allot.conf" --foreground \
    </dev/null >>"$state/allotd.stderr" 2>&1 &
for _ in $(seq 100); do [ -S "$state/allotd.sock" ] && break; sleep 0.1; done
[ -S "$state/allotd.sock" ] || { cat "$state/allotd.stderr" >&2; exit 1; }

export ALLOT_URL=unix:$state/allotd.sock
tour
echo
echo "allotd is still running (log: $state/allotd.log); stop it with: bash demo/run.sh stop"
