# SPDX-License-Identifier: GPL-3.0-or-later
# 20-postgres.sh - a private PostgreSQL 15 server per test: its own data directory, socket
# directory and log under the test's directory, listening only on 127.0.0.1 at a free port,
# fsync on (durability is what the tests check).  The server runs as the postgres user, so
# the directory is made reachable by it.
#
# pg_start [DIR]     copy the initdb template into DIR/data (pg_template_) and start; create
#                    database "allot"; export ALLOT_TEST_PG (libpq conninfo of that
#                    database), PG_PORT, PG_DIR.
# pg_stop [-m MODE]  stop (fast by default; "-m immediate" is a crash: no checkpoint).
# pg_restart [-m MODE]  stop then start on the same port and data.
# pg_psql SQL...     run SQL in the test database (psql -tA, stops on error).
# pg_standby_start DIR NAME  a streaming standby of the server pg_start started last, in
#                    DIR/data (pg_basebackup -R), application_name NAME; then PG_DIR,
#                    PG_PORT and ALLOT_TEST_PG name the standby (save the primary's first).
# allot_storage_conf FILE  append the storage lines of allot.conf for ALLOT_TEST_BACKEND
#                    (sqlite: a file in the test dir; pg: ALLOT_TEST_PG, starting the
#                    server when needed).  For allotd_start to call (tests/sharness.d/10-*).

: "${PG_BINDIR:=/usr/lib/postgresql/15/bin}"

pg_as() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Make every directory from / down to DIR traversable by the postgres user.
pg_open_path() {
    local d=$1
    while [ -n "$d" ] && [ "$d" != / ]; do
        chmod o+x "$d" 2>/dev/null
        d=$(dirname "$d")
    done
}

# pg_template_: print a data directory that initdb made for this PG_BINDIR, once per machine.
# Each server copies it (cp -a: a tenth of a second) instead of running initdb (about two
# seconds of CPU; the suite starts some eighty servers).  make_once makes it safely beside
# other tests.  ALLOT_PG_TEMPLATE_DIR moves it.
pg_template_() {
    local base=${ALLOT_PG_TEMPLATE_DIR:-/tmp/allot-pg-template}
    mkdir -p "$base" && pg_open_path "$base" &&
        make_once "$base/$(basename "$(dirname "$PG_BINDIR")")" PG_VERSION pg_initdb_
}

# pg_initdb_ TMP: a fresh PostgreSQL cluster in TMP/data, owned by postgres (for make_once).
pg_initdb_() {
    [ "$(id -u)" -ne 0 ] || chown postgres: "$1" || return 1
    pg_as "$PG_BINDIR/initdb" -D "$1/data" -U postgres -A trust -E UTF8 --no-locale \
        >"$1/initdb.log" 2>&1 && return 0
    cat "$1/initdb.log" >&2
    return 1
}

pg_start() {
    local dir=${1:-$PWD/pg}
    mkdir -p "$dir" || return 1
    PG_DIR=$(cd "$dir" && pwd)
    pg_open_path "$PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PG_DIR"
    if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
        local template
        template=$(pg_template_) || return 1
        cp -a "$template" "$PG_DIR/data" || return 1
        cat >>"$PG_DIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG_DIR'
fsync = on
synchronous_commit = on
max_connections = 200
shared_buffers = 64MB
logging_collector = off
EOF
    fi
    [ -n "${PG_PORT:-}" ] || PG_PORT=$(find_free_port) || return 1
    pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
        -o "-p $PG_PORT" start >/dev/null || { tail -n 20 "$PG_DIR/server.log"; return 1; }
    wait_for 30 "$PG_BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || return 1
    if ! "$PG_BINDIR/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'allot'" | grep -q 1; then
        "$PG_BINDIR/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres allot || return 1
    fi
    ALLOT_TEST_PG="host=127.0.0.1 port=$PG_PORT user=postgres dbname=allot"
    export ALLOT_TEST_PG PG_PORT PG_DIR
}

pg_stop() {
    [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] || return 0
    local mode=fast
    [ "${1:-}" = -m ] && mode=$2
    pg_as "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m "$mode" -w -t 30 stop >/dev/null
}

pg_restart() {
    pg_stop "$@" && pg_start "$PG_DIR"
}

pg_standby_start() {
    local dir=$1 name=$2 primary=$PG_PORT
    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd)
    pg_open_path "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$dir" || return 1
    pg_as "$PG_BINDIR/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir/data" \
        -R -X stream -c fast >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log"; return 1; }
    # The copy has the primary's settings: its own socket directory; and a primary_conninfo
    # naming it NAME, which synchronous_standby_names refers to, after the one -R wrote in
    # postgresql.auto.conf (the last line wins).
    echo "unix_socket_directories = '$dir'" >>"$dir/data/postgresql.conf" &&
        echo "primary_conninfo = 'host=127.0.0.1 port=$primary user=postgres" \
            "application_name=$name'" >>"$dir/data/postgresql.auto.conf" || return 1
    PG_PORT=$(find_free_port) || return 1
    pg_start "$dir"
}

pg_psql() {
    "$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -tA "$ALLOT_TEST_PG" -c "$*"
}

allot_storage_conf() {
    local conf=$1
    case "${ALLOT_TEST_BACKEND:-sqlite}" in
    pg)
        [ -n "${ALLOT_TEST_PG:-}" ] || pg_start "$PWD/pg" || return 1
        printf 'StorageType=pg\nStorageLoc=%s\n' "$ALLOT_TEST_PG" >>"$conf"
        ;;
    *)
        printf 'StorageType=sqlite\nStorageLoc=%s\n' "$PWD/bank.db" >>"$conf"
        ;;
    esac
}

# pg_allotd_start NAME [CONF LINE...]: one of several allotd on the test's PostgreSQL
# (started by pg_start).  Own directory $PWD/NAME, free port, AuthType=none (test build,
# loopback), group commit as configured.  Sets PGA_URL_<NAME>, PGA_PID_<NAME>.  Unlike
# allotd_start (10-allotd.sh, one instance per test) it keeps no global state, so several run
# at once.  pg_allotd_kill9 NAME / pg_allotd_stop NAME end one.  PGA_ALLOTD, when set, is
# the program run instead of this build's allotd (t5010: a valgrind wrapper).  Start and
# stop wait up to $ALLOTD_WAIT s, as allotd_start does.
pg_allotd_start() {
    local name=$1; shift
    local dir=$PWD/$name port
    mkdir -p "$dir" || return 1
    port=$(find_free_port) || return 1
    {
        echo "StorageType=pg"
        echo "StorageLoc=$ALLOT_TEST_PG"
        echo "ListenAddr=127.0.0.1:$port"
        echo "ListenSocket=$dir/allotd.sock"
        echo "LogFile=$dir/allotd.log"
        echo "PidFile=$dir/allotd.pid"
        echo "SuperUsers=root"
        echo "AuthType=none"
        echo "TestMode=local"
        local line
        for line in "$@"; do echo "$line"; done
    } >"$dir/allot.conf"
    "${PGA_ALLOTD:-$ALLOT_BUILD_DIR/src/allotd/allotd}" --config "$dir/allot.conf" --foreground \
        </dev/null >>"$dir/stderr" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/mypid"
    echo "http://127.0.0.1:$port" >"$dir/url"
    eval "PGA_URL_$name=http://127.0.0.1:$port PGA_PID_$name=$pid"
    if ! wait_for "$ALLOTD_WAIT" curl -sf --max-time 2 "http://127.0.0.1:$port/healthz"; then
        echo "pg_allotd_start: $name did not answer /healthz" >&2
        cat "$dir/stderr" >&2
        tail -n 30 "$dir/allotd.log" >&2
        return 1
    fi
}

pg_allotd_kill9() {
    local dir=$PWD/$1
    [ -f "$dir/mypid" ] || return 0
    kill -9 "$(cat "$dir/mypid")" 2>/dev/null
    wait "$(cat "$dir/mypid")" 2>/dev/null
    rm -f "$dir/mypid"
    return 0
}

pg_allotd_stop() {
    local dir=$PWD/$1 pid
    [ -f "$dir/mypid" ] || return 0
    pid=$(cat "$dir/mypid")
    kill -TERM "$pid" 2>/dev/null
    wait_for "$ALLOTD_WAIT" pid_gone "$pid" || kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$dir/mypid"
    return 0
}

# pga NAME METHOD PATH [BODY]: call instance NAME as root; prints the body, returns 0 on 2xx.
pga() {
    local url code
    url=$(cat "$PWD/$1/url")
    local -a args=(-s --max-time 30 -o "$PWD/$1/reply" -w '%{http_code}' -X "$2"
        -H 'X-Allot-User: root')
    [ $# -lt 4 ] || args+=(-H 'Content-Type: application/json' --data-binary "$4")
    code=$(curl "${args[@]}" "$url$3")
    cat "$PWD/$1/reply"
    case "$code" in 2*) return 0 ;; *) return 1 ;; esac
}
