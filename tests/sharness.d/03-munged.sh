# SPDX-License-Identifier: GPL-3.0-or-later
# 03-munged.sh - a private munged per test: own key, socket, pid file and log under the
# test's directory, so tests never depend on (or disturb) a system munged.
#
# munged_start [DIR]: start munged; exports MUNGE_SOCKET (for allot clients and daemons)
# and ALLOT_MUNGE_SOCKET.  munged_stop: stop it.  Runs as root with --force because the
# test directory is not owned by the munge user.

munged_start() {
    local dir=${1:-$PWD/munge}
    mkdir -p "$dir" && chmod 0700 "$dir" || return 1
    MUNGE_DIR=$dir
    if [ ! -f "$dir/munge.key" ]; then
        dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none || return 1
        chmod 0600 "$dir/munge.key"
    fi
    /usr/sbin/munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munged.seed" --num-threads=4 || return 1
    MUNGE_SOCKET=$dir/munge.socket
    ALLOT_MUNGE_SOCKET=$MUNGE_SOCKET
    export MUNGE_SOCKET ALLOT_MUNGE_SOCKET MUNGE_DIR
    wait_for 10 test -S "$MUNGE_SOCKET"
}

munged_stop() {
    [ -n "$MUNGE_DIR" ] && [ -f "$MUNGE_DIR/munged.pid" ] || return 0
    local pid
    pid=$(cat "$MUNGE_DIR/munged.pid")
    kill "$pid" 2>/dev/null
    wait_for 10 pid_gone "$pid"
}
