# SPDX-License-Identifier: GPL-3.0-or-later
# 10-allotd.sh - start, stop and call a private allotd per test.
#
# allotd_start [CONF LINE...]  own dir ($PWD/allotd or $ALLOTD_DIR), allot.conf (SQLite file
#                  $ALLOTD_DIR/allot.db, or with ALLOT_TEST_BACKEND=pg the test's PostgreSQL,
#                  free loopback port, Unix socket, log, pid file, SuperUsers=root, the private
#                  munged of 03-munged.sh unless AuthType=none is among the lines), extra
#                  lines appended; bounded wait ($ALLOTD_WAIT s) on /healthz.  Exports
#                  ALLOTD_PORT, ALLOTD_URL, ALLOTD_SOCKET, ALLOTD_PID, ALLOTD_CONF, ALLOTD_LOG.
# allotd_stop      SIGTERM and a bounded wait ($ALLOTD_WAIT s); allotd_kill9: SIGKILL, no
#                  cleanup.  ALLOTD_WAIT (00-common.sh, default 20): raised by tests whose
#                  allotd runs under valgrind, tens of times slower to start and to exit.
# allotd_dump_log  print the daemon log (call on failure).
# api METHOD PATH [BODY]  call the API with curl over TCP; the body goes to stdout, the HTTP
#                  status to $ALLOTD_DIR/status (read it with api_status); returns 0 for 2xx.
#                  Credentials: AuthType=munge: `munge -s allot` as root, or as $API_RUNAS via
#                  runuser; AuthType=none: header X-Allot-User: ${API_USER:-root}.
#                  $API_AS adds X-Allot-As.  $API_NOAUTH=1 sends no credential.
#                  $API_CRED overrides the credential (forged/replayed tests).
# allot_cli_setup  for a test of the allot CLI: skip the whole test unless allotd and allot
#                  are built; ALLOT_BIN, and allot ARGS running it against this test's allotd.

ALLOTD_BIN=${ALLOTD_BIN:-$ALLOT_BUILD_DIR/src/allotd/allotd}
ALLOT_STORM=${ALLOT_STORM:-$ALLOT_BUILD_DIR/src/allotd/allot_storm}

allot_cli_setup() {
    ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
    test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
    test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }
    allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
}

allotd_start() {
    # A test that failed before its allotd_stop leaves its allotd running; the exit hook
    # reaps only the current one, so this one would outlive the script and hang ctest.
    if [ -n "$ALLOTD_PID" ] && kill -0 "$ALLOTD_PID" 2>/dev/null; then
        echo "allotd_start: killing the previous allotd $ALLOTD_PID, never stopped" >&2
        allotd_kill9
    fi
    ALLOTD_DIR=${ALLOTD_DIR:-$PWD/allotd}
    mkdir -p "$ALLOTD_DIR" || return 1
    ALLOTD_PORT=$(find_free_port) || return 1
    ALLOTD_URL=http://127.0.0.1:$ALLOTD_PORT
    ALLOTD_SOCKET=$ALLOTD_DIR/allotd.sock
    ALLOTD_CONF=$ALLOTD_DIR/allot.conf
    ALLOTD_LOG=$ALLOTD_DIR/allotd.log
    ALLOTD_AUTH=munge
    local line
    for line in "$@"; do
        case "$line" in [Aa]uth[Tt]ype=none) ALLOTD_AUTH=none ;; esac
    done
    # ALLOT_TEST_BACKEND=pg: the bank lives in the test's PostgreSQL (20-postgres.sh;
    # started here when none runs yet and stopped when the test ends: by sharness's final
    # cleanup before the trash directory goes, and by the EXIT trap when a test failed, as a
    # server left running would also hold ctest's output pipe open).
    if [ "${ALLOT_TEST_BACKEND:-sqlite}" = pg ] && [ -z "${ALLOT_TEST_PG:-}" ]; then
        pg_start "$PWD/pg" || return 1
        ALLOTD_STARTED_PG=yes
    fi
    allotd_install_exit_hook_
    {
        if [ "${ALLOT_TEST_BACKEND:-sqlite}" = pg ]; then
            echo "StorageType=pg"
            echo "StorageLoc=$ALLOT_TEST_PG"
        else
            echo "StorageLoc=$ALLOTD_DIR/allot.db"
        fi
        echo "ListenAddr=127.0.0.1:$ALLOTD_PORT"
        echo "ListenSocket=$ALLOTD_SOCKET"
        echo "LogFile=$ALLOTD_LOG"
        echo "PidFile=$ALLOTD_DIR/allotd.pid"
        echo "Threads=4"
        [ "$ALLOTD_AUTH" = none ] || echo "MungeSocket=$MUNGE_SOCKET"
        case " $* " in *SuperUsers=*) ;; *) echo "SuperUsers=root" ;; esac
        for line in "$@"; do echo "$line"; done
    } >"$ALLOTD_CONF"
    "$ALLOTD_BIN" --config "$ALLOTD_CONF" --foreground </dev/null >>"$ALLOTD_DIR/stderr" 2>&1 &
    ALLOTD_PID=$!
    export ALLOTD_DIR ALLOTD_PORT ALLOTD_URL ALLOTD_SOCKET ALLOTD_CONF ALLOTD_LOG ALLOTD_PID \
        ALLOTD_AUTH
    if ! wait_for "$ALLOTD_WAIT" allotd_healthy_; then
        echo "allotd_start: allotd did not answer /healthz within $ALLOTD_WAIT s" >&2
        cat "$ALLOTD_DIR/stderr" >&2
        allotd_dump_log
        allotd_kill9
        return 1
    fi
}

allotd_healthy_() {
    kill -0 "$ALLOTD_PID" 2>/dev/null && curl -sf --max-time 2 "$ALLOTD_URL/healthz" >/dev/null
}

allotd_stop() {
    [ -n "$ALLOTD_PID" ] || return 0
    kill -TERM "$ALLOTD_PID" 2>/dev/null
    if ! wait_for "$ALLOTD_WAIT" pid_gone "$ALLOTD_PID"; then
        echo "allotd_stop: allotd $ALLOTD_PID ignored TERM for $ALLOTD_WAIT s, killing it" >&2
        kill -9 "$ALLOTD_PID" 2>/dev/null
    fi
    wait "$ALLOTD_PID" 2>/dev/null
    ALLOTD_EXIT=$?
    ALLOTD_PID=
    return 0
}

allotd_kill9() {
    [ -n "$ALLOTD_PID" ] || return 0
    kill -9 "$ALLOTD_PID" 2>/dev/null
    wait "$ALLOTD_PID" 2>/dev/null
    ALLOTD_PID=
    return 0
}

allotd_dump_log() {
    echo "---- allotd log ($ALLOTD_LOG) ----" >&2
    tail -n 60 "$ALLOTD_LOG" >&2 2>/dev/null
    echo "---- end of allotd log ----" >&2
}

# api_cred_: print a credential for this call.
api_cred_() {
    if [ -n "$API_CRED" ]; then
        echo "$API_CRED"
    elif [ -n "$API_RUNAS" ]; then
        runuser -u "$API_RUNAS" -- munge -s allot --socket="$MUNGE_SOCKET"
    else
        munge -s allot --socket="$MUNGE_SOCKET"
    fi
}

api() {
    local method=$1 path=$2 body=$3
    local -a args=(-s --max-time 30 -o "$ALLOTD_DIR/reply" -D "$ALLOTD_DIR/headers"
        -w '%{http_code}' -X "$method")
    if [ -z "$API_NOAUTH" ]; then
        if [ "$ALLOTD_AUTH" = none ]; then
            args+=(-H "X-Allot-User: ${API_USER:-root}")
        else
            args+=(-H "X-Allot-Auth: MUNGE $(api_cred_)")
        fi
    fi
    [ -z "$API_AS" ] || args+=(-H "X-Allot-As: $API_AS")
    [ $# -lt 3 ] || args+=(-H 'Content-Type: application/json' --data-binary "$body")
    curl "${args[@]}" "$ALLOTD_URL$path" >"$ALLOTD_DIR/status"
    cat "$ALLOTD_DIR/reply"
    case "$(cat "$ALLOTD_DIR/status")" in 2*) return 0 ;; *) return 1 ;; esac
}

api_status() {
    cat "$ALLOTD_DIR/status"
}

# api_header NAME: the value of header NAME in the last api reply (empty when absent).
api_header() {
    tr -d '\r' <"$ALLOTD_DIR/headers" | awk -v n="$1" -F': ' 'tolower($1) == tolower(n) { print $2 }'
}

# api_bad STATUS FIELD METHOD PATH [BODY]: the call (as root) fails with STATUS and, unless
# FIELD is "", its error names FIELD.
api_bad() {
    local status=$1 field=$2
    shift 2
    API_USER=root test_expect_code 1 api "$@" >out &&
        test "$(api_status)" = "$status" &&
        { [ -z "$field" ] || test "$(json_get error.field <out)" = "$field"; }
}

# api_snapshot FILE: accounts, balances, ledger and jobs, to show a refused call changed
# nothing (compare before and after).
api_snapshot() {
    { api GET /v1/accounts; api GET /v1/balances; api GET /v1/ledger; api GET /v1/jobs; } >"$1"
}

# jq_ FILTER: read JSON on stdin (python3 is always there; jq may not be).
json_get() {
    python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if k=="": continue
    v=v[int(k)] if isinstance(v,list) else v[k]
print(json.dumps(v) if isinstance(v,(dict,list)) else ("true" if v is True else "false" if v is False else v))' "$1"
}

# Nothing a test started may outlive it: a daemon left running holds ctest's output pipe and
# hangs the run until ctest's timeout.  The hook runs at the script's end whatever happened
# (sharness' cleanup on success, the EXIT trap on failure), kills the current allotd and
# stops a PostgreSQL started here, then runs the EXIT trap that was there before (sharness'
# die, or another harness's hook) with the same status.
allotd_reap_() {
    if [ -n "$ALLOTD_PID" ]; then
        kill -9 "$ALLOTD_PID" 2>/dev/null
        wait "$ALLOTD_PID" 2>/dev/null
        ALLOTD_PID=
    fi
    if [ "$ALLOTD_STARTED_PG" = yes ]; then
        pg_stop
        ALLOTD_STARTED_PG=
    fi
    # A test's private munged too (03-munged.sh): left running, it would hold ctest's
    # output pipe open after a failed test that never reached its munged_stop.
    [ -z "$MUNGE_DIR" ] || munged_stop
    return 0
}

allotd_install_exit_hook_() {
    [ -z "$ALLOTD_EXIT_HOOKED" ] || return 0
    ALLOTD_PREV_EXIT_TRAP=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
    trap 'allotd_exit_hook_' EXIT
    cleanup allotd_reap_
    ALLOTD_EXIT_HOOKED=yes
}

allotd_exit_hook_() {
    local rc=$?
    allotd_reap_
    if [ -n "$ALLOTD_PREV_EXIT_TRAP" ]; then
        (exit "$rc")
        eval "$ALLOTD_PREV_EXIT_TRAP"
    fi
    exit "$rc"
}
