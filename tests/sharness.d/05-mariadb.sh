# SPDX-License-Identifier: GPL-3.0-or-later
# 05-mariadb.sh - a private MariaDB server per test, for slurmdbd: own datadir, socket,
# pid file and error log under a directory the test gives, listening on 127.0.0.1 and a
# free port only.  Nothing touches the system MariaDB (/var/lib/mysql, /run/mysqld).
#
# mariadb_start DIR   copy the mariadb-install-db template into DIR/data (mariadb_template_),
#                     start mariadbd, wait (bounded) until it answers; exports MARIADB_DIR,
#                     MARIADB_PORT, MARIADB_SOCKET, MARIADB_PID.  Runs as root
#                     (--user=root): the test dir is root's.
# mariadb_sql SQL...  run SQL as the server's root user over the private socket.
# mariadb_stop        stop the server started by mariadb_start (TERM, bounded wait, KILL).
#
# The server is tuned for tests, not durability (small redo log and buffer pool, no
# doublewrite, lazy log flush): the data lives only as long as the test.

MARIADB_SERVER=${MARIADB_SERVER:-/usr/sbin/mariadbd}

# Options shared by mariadb-install-db and the server, so both agree on the redo log size.
mariadb_common_opts_() {
    echo "--no-defaults --user=root --innodb-log-file-size=4M --innodb-buffer-pool-size=32M"
}

# mariadb_template_: print a data directory that mariadb-install-db made for this server
# version, once per machine.  Each server copies it (cp -a) instead of running the install
# (over a second of CPU per Slurm test).  make_once makes it safely beside other tests.
# ALLOT_MARIADB_TEMPLATE_DIR moves it.
mariadb_template_() {
    local base=${ALLOT_MARIADB_TEMPLATE_DIR:-/tmp/allot-mariadb-template} version
    version=$("$MARIADB_SERVER" --version 2>/dev/null | awk '{print $3}')
    [ -n "$version" ] || { echo "mariadb_start: cannot run $MARIADB_SERVER" >&2; return 1; }
    mkdir -p "$base" && make_once "$base/$version" mysql mariadb_install_
}

# mariadb_install_ TMP: a fresh MariaDB data directory in TMP/data (for make_once).
mariadb_install_() {
    # shellcheck disable=SC2046 # word splitting of the option list is intended
    mariadb-install-db $(mariadb_common_opts_) --datadir="$1/data" --skip-test-db \
        --auth-root-authentication-method=socket >"$1/install.log" 2>&1 && return 0
    echo "mariadb_start: mariadb-install-db failed:" >&2
    cat "$1/install.log" >&2
    return 1
}

mariadb_start() {
    local dir=${1:?mariadb_start: directory required} port pid
    mkdir -p "$dir" || return 1
    if [ ! -d "$dir/data/mysql" ]; then
        local template
        template=$(mariadb_template_) || return 1
        cp -a "$template" "$dir/data" || return 1
    fi
    port=$(find_free_port) || return 1
    # shellcheck disable=SC2046
    "$MARIADB_SERVER" $(mariadb_common_opts_) --datadir="$dir/data" \
        --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" \
        --bind-address=127.0.0.1 --port="$port" --skip-name-resolve \
        --log-error="$dir/error.log" --skip-log-bin --innodb-doublewrite=0 \
        --innodb-flush-log-at-trx-commit=0 </dev/null >>"$dir/mariadbd.out" 2>&1 &
    pid=$!
    MARIADB_DIR=$dir
    MARIADB_PORT=$port
    MARIADB_SOCKET=$dir/mysqld.sock
    MARIADB_PID=$pid
    export MARIADB_DIR MARIADB_PORT MARIADB_SOCKET MARIADB_PID
    if ! wait_for 90 mariadb_alive_; then
        echo "mariadb_start: server on port $port did not answer within 90 s" >&2
        tail -n 30 "$dir/error.log" >&2 2>/dev/null
        mariadb_stop
        return 1
    fi
}

# mariadb_alive_: the server process lives and answers on its socket.
mariadb_alive_() {
    kill -0 "$MARIADB_PID" 2>/dev/null &&
        mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot -e 'SELECT 1' >/dev/null 2>&1
}

mariadb_sql() {
    mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot -e "$*"
}

mariadb_stop() {
    [ -n "$MARIADB_PID" ] || return 0
    local pid=$MARIADB_PID
    kill "$pid" 2>/dev/null
    if ! wait_for 30 pid_gone "$pid"; then
        echo "mariadb_stop: server $pid ignored TERM for 30 s, killing it" >&2
        kill -9 "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    MARIADB_PID=
    return 0
}
