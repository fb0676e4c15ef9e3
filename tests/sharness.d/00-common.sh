# SPDX-License-Identifier: GPL-3.0-or-later
# 00-common.sh - helpers every integration test gets: where the built programs are, a free
# loopback port, a bounded wait.  Sourced by tests/integration/*.t after sharness.sh.
#
# ALLOT_BUILD_DIR is set by ctest (tests/integration/CMakeLists.txt); a test run by hand
# falls back to ./build.

: "${ALLOT_SRC_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${ALLOT_BUILD_DIR:=$ALLOT_SRC_DIR/build}"
: "${ALLOT_TEST_BACKEND:=sqlite}"
export ALLOT_SRC_DIR ALLOT_BUILD_DIR ALLOT_TEST_BACKEND
# How long an allotd may take to start or stop (10-allotd.sh, 20-postgres.sh); here so that a
# script sourcing only some of these files (bench/pg_bench.sh) has it too.  The valgrind
# tests raise it.
: "${ALLOTD_WAIT:=20}"

# The suite runs Debian's programs (.ci/deps.sh installs them), so the system directories
# come first: a version manager's shim ahead of them on a developer's or CI machine's PATH
# (pyenv's python3 is a shell script that forks a dozen times) cost ~0.6 s per call where
# /usr/bin/python3 takes 0.02 s, and the tests call python3 about a thousand times.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH

# find_free_port: print a TCP port on 127.0.0.1 that no socket uses.  Ports are drawn below
# the kernel's ephemeral range (ip_local_port_range starts at 32768 here), because a port in
# that range can be taken at any moment by an outgoing connection (a load generator's, a
# database client's) and then bind() fails even with SO_REUSEADDR.  A random start spreads
# concurrent tests apart.  Bounded: 200 probes.
#
# Tests run two at a time (tests/run.sh), and two of them could both find a port free before
# either binds it, so a port is also claimed: a file $ALLOT_PORT_DIR/PORT holding the pid of
# the claiming test's shell, created only if absent (noclobber).  A claim whose shell has
# exited is stale and is taken over; a live one makes the port not free.
: "${ALLOT_PORT_DIR:=/tmp/allot-test-ports}"
port_claim_() {
    local f=$ALLOT_PORT_DIR/$1 owner
    mkdir -p "$ALLOT_PORT_DIR" 2>/dev/null || return 0   # cannot claim: the probe decides
    if (set -o noclobber; echo $$ >"$f") 2>/dev/null; then return 0; fi
    owner=$(cat "$f" 2>/dev/null)
    case $owner in ''|*[!0-9]*) ;; *) kill -0 "$owner" 2>/dev/null && return 1 ;; esac
    rm -f "$f"
    (set -o noclobber; echo $$ >"$f") 2>/dev/null
}

find_free_port() {
    local port tries=0 low=20000 high=32000
    local eph
    eph=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    if [ -n "$eph" ] && [ "$eph" -le "$high" ]; then high=$(( eph - 1 )); fi
    [ "$high" -gt "$low" ] || { low=1024; }
    port=$(( low + (RANDOM * 7 + $$) % (high - low) ))
    while [ $tries -lt 200 ]; do
        if ! ss -tanH 2>/dev/null | awk '{print $4}' | grep -q ":$port\$" &&
            port_claim_ "$port"; then
            echo "$port"
            return 0
        fi
        port=$(( port + 1 )); tries=$(( tries + 1 ))
        [ $port -lt $high ] || port=$low
    done
    echo "find_free_port: no free port after 200 probes" >&2
    return 1
}

# wait_for SECONDS CMD...: run CMD until it succeeds; fail after SECONDS.  The pause between
# tries starts at 10 ms and doubles up to 100 ms: most waits (a daemon's first answer, its
# exit after a signal) end within milliseconds, and a flat 100 ms cost every test that
# starts and stops daemons a tenth of a second per wait.  Time is bash's clock (no fork),
# its digits only: the decimal mark is the locale's (pg_run.sh runs without LC_ALL=C).
wait_for() {
    local limit=$1; shift
    local now=${EPOCHREALTIME//[!0-9]/} pause=10
    local end=$(( now + limit * 1000000 ))
    while ! "$@" >/dev/null 2>&1; do
        now=${EPOCHREALTIME//[!0-9]/}
        if [ "$now" -ge "$end" ]; then
            echo "wait_for: timed out after ${limit}s: $*" >&2
            return 1
        fi
        sleep "0.$(printf %03d "$pause")"
        [ "$pause" -ge 100 ] || pause=$(( pause * 2 > 100 ? 100 : pause * 2 ))
    done
}

# make_once DIR MARKER MAKER ARGS...: print DIR, first making it when DIR/MARKER is missing.
# MAKER ARGS... TMP must make TMP/data; it runs in a private directory TMP beside DIR and its
# result is renamed to DIR, so a test beside us never sees half of one.  When two make it at
# once, the second rename fails and its copy is dropped.  For per-machine templates that
# servers copy instead of running their slow initialisation each time.
make_once() {
    local t=$1 marker=$2 tmp
    shift 2
    if [ ! -e "$t/$marker" ]; then
        tmp=$(mktemp -d "$t.XXXXXX") || return 1
        if ! "$@" "$tmp"; then
            rm -rf "$tmp"
            return 1
        fi
        mv -T "$tmp/data" "$t" 2>/dev/null
        rm -rf "$tmp"
    fi
    [ -e "$t/$marker" ] && echo "$t"
}

# pid_gone PID: true when no process PID exists (for wait_for; no shell forked per try).
pid_gone() {
    ! kill -0 "$1" 2>/dev/null
}

# run_bounded SECONDS CMD...: run CMD with a hard time limit (kills it afterwards).
run_bounded() {
    local limit=$1; shift
    timeout -k 5 "$limit" "$@"
}
