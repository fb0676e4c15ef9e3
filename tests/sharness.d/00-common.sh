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

# find_free_port: print a TCP port on 127.0.0.1 nobody listens on.  Ports are probed with
# bash's /dev/tcp; a random start spreads concurrent tests apart.  Bounded: 200 probes.
find_free_port() {
    local port tries=0
    port=$(( 20000 + (RANDOM * 7 + $$) % 30000 ))
    while [ $tries -lt 200 ]; do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            if ! ss -ltnH 2>/dev/null | awk '{print $4}' | grep -q ":$port\$"; then
                echo "$port"
                return 0
            fi
        fi
        port=$(( port + 1 )); tries=$(( tries + 1 ))
        [ $port -lt 60000 ] || port=20000
    done
    echo "find_free_port: no free port after 200 probes" >&2
    return 1
}

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds; fail after SECONDS.
wait_for() {
    local limit=$1; shift
    local end=$(( $(date +%s%N) + limit * 1000000000 ))
    while ! "$@" >/dev/null 2>&1; do
        if [ "$(date +%s%N)" -ge "$end" ]; then
            echo "wait_for: timed out after ${limit}s: $*" >&2
            return 1
        fi
        sleep 0.1
    done
}

# run_bounded SECONDS CMD...: run CMD with a hard time limit (kills it afterwards).
run_bounded() {
    local limit=$1; shift
    timeout -k 5 "$limit" "$@"
}
