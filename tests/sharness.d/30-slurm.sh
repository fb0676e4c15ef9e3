# SPDX-License-Identifier: GPL-3.0-or-later
# 30-slurm.sh - a real single-node Slurm cluster per test, on loopback: private munged,
# MariaDB, slurmdbd, slurmctld and slurmd, all under one directory of the test, all
# started as root without systemd (works in a container: proctrack/linuxproc, task/none).
#
#   slurm_start [--no-dbd] [--conf-extra FILE]... [--plugin-dir DIR]... [--dir DIR]
#       Bring the cluster up and wait (bounded) until the node is idle.  Exports SLURM_CONF
#       (every client command needs it), SLURM_DIR, SLURM_CLUSTER, SLURM_NODE, the ports
#       SLURMCTLD_PORT SLURMD_PORT SLURMDBD_PORT, MUNGE_SOCKET, and SLURM_DEFAULT_PLUGIN_DIR.
#       --conf-extra FILE: slurm.conf lines appended; a Key=Value line replaces the harness's
#         own line for that key (NodeName/PartitionName lines are added, not replaced).
#       --plugin-dir DIR: put DIR before Slurm's own plugin directory in PluginDir.
#       --no-dbd: no MariaDB/slurmdbd, accounting_storage/none (sacct will not work).
#       --dir DIR: where the cluster lives (default: $PWD/slurm, the test's trash dir).
#       Environment: SLURM_CLUSTER (test), SLURM_NODE_CPUS (2), SLURM_NODE_MEM_MB (4000),
#         ALLOT_SLURM_PREFIX (another Slurm than the installed one, see below) and
#         ALLOT_SLURM_BUILD_DIR (allot's plugins and agent built for it; default the build).
#   slurm_stop       cancel jobs, stop every daemon and job process this cluster started.
#                    Also runs on any exit of the test script (EXIT trap), and a watchdog
#                    stops the cluster if the test shell dies without running its traps.
#   slurm_dump_logs  print every daemon log to stderr (done automatically on failure).
#   slurm_allot_plugins_or_skip  $plugins = $ALLOT_SLURM_PLUGINS, or skip the script.
#   slurm_start_allot [MAXTIME]  slurm_start with both allot plugins from $plugins and a
#                    partition "bank" (TRESBillingWeights=CPU=1.0,Mem=0.5G, MaxTime MAXTIME
#                    minutes (60), DefaultTime 5), where Slurm's account chem has root.
#   allot_bank_chem SUMIN  allotd's copy of that (allotd already started): the cluster,
#                    chem with root, partition bank at the same weights, an allocation of
#                    SUMIN SU-minutes (its reply in ./alloc); then waits until job_submit/allot
#                    has loaded the partitions.
#   slurm_wait_job JOBID STATE_REGEX [SECONDS]  wait until squeue/sacct shows the job in a
#                    matching state (sacct when the job has left squeue).
#   slurm_batch SCRIPT OUT [SBATCH OPTION...]  submit SCRIPT (made executable) with its
#                    output in OUT, wait (5 min at most) until it COMPLETED or FAILED, and
#                    print OUT.
#   slurm_gated FILE  a --wrap script that runs until FILE exists (at most 2 minutes, then
#                    exit 1): a job the test ends when its checks are done (touch FILE),
#                    where a fixed sleep would race them on a slow machine.
#
# Design: daemons run in the foreground (-D) as background children so their pids are
# known exactly, with stdio on files (a test runner waits on inherited pipes).  Each
# daemon carries ALLOT_SLURM_TAG=<dir> in its environment, which slurmstepd inherits; job
# processes carry SLURM_CONF=<this conf> and SLURM_JOB_ID.  slurm_stop kills exactly the
# processes with those marks, never by name, so clusters of concurrent tests coexist.
# Unix socket paths are limited to 108 bytes and slurm.conf paths cannot hold spaces, so
# when the test directory is long or has a space (sharness' "trash directory.tNNNN") the
# cluster lives in a short /tmp directory linked from the test directory.

# Which Slurm: the installed one, or the one under $ALLOT_SLURM_PREFIX (.ci/slurm-build.sh's
# prefix: sbin/ daemons, bin/ commands, lib/slurm/ plugins), whose commands then come first
# in PATH for the tests and for the allot programs they start.  $ALLOT_SLURM_BUILD_DIR is
# the allot build for that Slurm (default: this build): ALLOT_SLURM_PLUGINS, its plugins/,
# and SLURM_AGENT, its allot-agent (linked with that Slurm's libslurm).
if [ -n "${ALLOT_SLURM_PREFIX:-}" ]; then
    SLURM_SBIN=$ALLOT_SLURM_PREFIX/sbin
    PATH=$ALLOT_SLURM_PREFIX/bin:$PATH
    export PATH
fi
SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
ALLOT_SLURM_BUILD_DIR=${ALLOT_SLURM_BUILD_DIR:-$ALLOT_BUILD_DIR}
ALLOT_SLURM_PLUGINS=$ALLOT_SLURM_BUILD_DIR/plugins
SLURM_AGENT=$ALLOT_SLURM_BUILD_DIR/src/agent/allot-agent

# slurm_default_plugin_dir_: Slurm's own plugin directory, found from a stock plugin.
slurm_default_plugin_dir_() {
    local f
    if [ -n "${ALLOT_SLURM_PREFIX:-}" ]; then
        f=$ALLOT_SLURM_PREFIX/lib/slurm
        [ -f "$f/auth_munge.so" ] && echo "$f" && return 0
        echo "slurm: no auth_munge.so in $f (ALLOT_SLURM_PREFIX)" >&2
        return 1
    fi
    for f in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/*/slurm-wlm /usr/lib/slurm \
        /usr/lib64/slurm /usr/local/lib/slurm; do
        if [ -f "$f/auth_munge.so" ]; then
            echo "$f"
            return 0
        fi
    done
    echo "slurm: cannot find Slurm's plugin directory (auth_munge.so)" >&2
    return 1
}

# slurm_port_open_ PORT: something accepts TCP connections on 127.0.0.1:PORT.
slurm_port_open_() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# slurm_daemon_ NAME CMD...: start a daemon in the foreground as a background child.
slurm_daemon_() {
    local name=$1
    shift
    ALLOT_SLURM_TAG=$SLURM_DIR "$@" </dev/null >>"$SLURM_DIR/log/$name.out" 2>&1 &
    echo $! >"$SLURM_DIR/run/$name.pid"
}

slurm_daemon_alive_() {
    local pidf=$SLURM_DIR/run/$1.pid
    [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null
}

# slurm_fail_ MSG: report a bring-up failure with the logs, stop what runs, return 1.
slurm_fail_() {
    echo "slurm_start: $*" >&2
    if { true >&5; } 2>/dev/null; then echo "# slurm_start: $*" >&5; fi
    SLURM_DUMP_LOGS=yes slurm_stop
    return 1
}

# slurm_merge_conf_ BASE EXTRA: drop BASE lines whose key EXTRA sets, then append EXTRA.
slurm_merge_conf_() {
    local base=$1 extra=$2 key
    [ -r "$extra" ] || {
        echo "slurm_start: cannot read --conf-extra file $extra" >&2
        return 1
    }
    while IFS= read -r key; do
        case "${key,,}" in
        nodename | partitionname | nodeset | downnodes | frontendname | include) continue ;;
        esac
        grep -v -i -E "^${key}=" "$base" >"$base.tmp" || true
        mv "$base.tmp" "$base"
    done < <(sed -n -E 's/^[[:space:]]*([A-Za-z]+)=.*/\1/p' "$extra")
    {
        echo "# from $extra"
        cat "$extra"
    } >>"$base"
}

slurm_write_conf_() {
    local dbd=$1 plugindir=$2 conf=$SLURM_CONF
    cat >"$conf" <<EOF
# slurm.conf written by tests/sharness.d/30-slurm.sh
ClusterName=$SLURM_CLUSTER
SlurmctldHost=$SLURM_NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
PluginDir=$plugindir
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pidfile
SlurmdPidFile=$SLURM_DIR/run/slurmd.pidfile
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/linux
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=300
InactiveLimit=0
EOF
    if [ "$dbd" = yes ]; then
        cat >>"$conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$SLURMDBD_PORT
# Clients authenticate to slurmdbd with this munge socket, not with AuthInfo's.
AccountingStoragePass=socket=$MUNGE_SOCKET
AccountingStorageEnforce=associations,limits,qos,safe
PriorityType=priority/multifactor
EOF
    else
        cat >>"$conf" <<EOF
AccountingStorageType=accounting_storage/none
PriorityType=priority/basic
EOF
    fi
    cat >>"$conf" <<EOF
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=$SLURM_NODE_CPUS RealMemory=$SLURM_NODE_MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE DefMemPerCPU=100 State=UP
EOF
}

slurm_write_dbd_conf_() {
    local f
    f=$(dirname "$SLURM_CONF")/slurmdbd.conf
    (
        umask 077
        cat >"$f" <<EOF
# slurmdbd.conf written by tests/sharness.d/30-slurm.sh (slurmdbd reads it from the
# directory of \$SLURM_CONF; it must be mode 0600)
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdAddr=127.0.0.1
DbdHost=$SLURM_NODE
DbdPort=$SLURMDBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$SLURM_DIR/log/slurmdbd.log
PidFile=$SLURM_DIR/run/slurmdbd.pidfile
PluginDir=$SLURM_DEFAULT_PLUGIN_DIR
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MARIADB_PORT
StorageUser=slurm
StoragePass=$SLURM_DB_PASS
StorageLoc=slurm_acct_db
EOF
    )
}

# slurm_setup_dir_ DIR: create the cluster's directory (see the header on /tmp).
slurm_setup_dir_() {
    local want=$1 real
    case "$want" in
    *[[:space:]]*) real= ;;
    *) [ ${#want} -le 60 ] && real=$want ;;
    esac
    if [ -z "$real" ]; then
        real=$(mktemp -d /tmp/allot-slurm.XXXXXX) || return 1
        rm -rf "$want" && ln -s "$real" "$want" || return 1
        SLURM_TMP_DIR=$real
    else
        SLURM_TMP_DIR=
        mkdir -p "$real" || return 1
    fi
    chmod 0755 "$real" &&
        mkdir -p "$real/etc" "$real/log" "$real/run" "$real/state" "$real/spool" || return 1
    SLURM_DIR=$real
}

# slurm_allot_plugins_or_skip: $plugins = the plugins for this Slurm ($ALLOT_SLURM_PLUGINS);
# skip the whole script when job_submit_allot.so, prep_allot.so or allotd are not built.
slurm_allot_plugins_or_skip() {
    plugins=$ALLOT_SLURM_PLUGINS
    if ! test -f "$plugins/job_submit_allot.so" || ! test -f "$plugins/prep_allot.so"; then
        skip_all="plugins not built in $plugins"
        test_done
    fi
    test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
}

slurm_start_allot() {
    cat >extra.conf <<EOF || return 1
JobSubmitPlugins=allot
PrEpPlugins=prep/script,prep/allot
PartitionName=bank Nodes=ALL MaxTime=${1:-60} DefaultTime=5 DefMemPerCPU=1024 TRESBillingWeights=CPU=1.0,Mem=0.5G State=UP
EOF
    slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
        sacctmgr -i add account chem cluster="$SLURM_CLUSTER" >/dev/null &&
        sacctmgr -i add user root account=chem cluster="$SLURM_CLUSTER" >/dev/null
}

allot_bank_chem() {
    api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
        api POST /v1/accounts "{\"name\":\"chem\"}" &&
        api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
        api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
        api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0,Mem=0.5G\"}" &&
        api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":$1}" >alloc &&
        sleep 1.2 &&
        wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
}

slurm_start() {
    local dbd=yes extra=() plugindirs=() dir=$PWD/slurm t0 e plugindir
    while [ $# -gt 0 ]; do
        case "$1" in
        --no-dbd) dbd=no ;;
        --conf-extra) extra+=("${2:?--conf-extra needs a file}") && shift ;;
        --plugin-dir) plugindirs+=("${2:?--plugin-dir needs a directory}") && shift ;;
        --dir) dir=${2:?--dir needs a directory} && shift ;;
        *)
            echo "slurm_start: unknown option $1" >&2
            return 1
            ;;
        esac
        shift
    done
    if [ -n "$SLURM_DIR" ] && slurm_daemon_alive_ slurmctld; then
        echo "slurm_start: a cluster already runs in $SLURM_DIR" >&2
        return 1
    fi
    t0=$(date +%s%N)
    SLURM_CLUSTER=${SLURM_CLUSTER:-test}
    SLURM_NODE=$(hostname -s) || return 1
    SLURM_NODE_CPUS=${SLURM_NODE_CPUS:-2}
    SLURM_NODE_MEM_MB=${SLURM_NODE_MEM_MB:-4000}
    SLURM_DEFAULT_PLUGIN_DIR=$(slurm_default_plugin_dir_) || return 1
    slurm_setup_dir_ "$dir" || return 1
    SLURM_CONF=$SLURM_DIR/etc/slurm.conf
    export SLURM_CONF SLURM_DIR SLURM_CLUSTER SLURM_NODE SLURM_DEFAULT_PLUGIN_DIR
    slurm_install_exit_hook_
    slurm_watchdog_start_

    # Ports are probed one after another; each daemon binds its own before the next probe
    # could hand the same number out again only if a concurrent test races us, which the
    # bounded waits below then report.
    SLURMCTLD_PORT=$(find_free_port) && SLURMD_PORT=$(find_free_port) &&
        SLURMDBD_PORT=$(find_free_port) || return 1
    while [ "$SLURMD_PORT" = "$SLURMCTLD_PORT" ]; do SLURMD_PORT=$(find_free_port); done
    while [ "$SLURMDBD_PORT" = "$SLURMCTLD_PORT" ] || [ "$SLURMDBD_PORT" = "$SLURMD_PORT" ]; do
        SLURMDBD_PORT=$(find_free_port)
    done
    export SLURMCTLD_PORT SLURMD_PORT SLURMDBD_PORT

    munged_start "$SLURM_DIR/munge" || slurm_fail_ "munged did not start" || return 1
    SLURM_STARTED_MUNGED=yes

    plugindir=$SLURM_DEFAULT_PLUGIN_DIR
    for e in "${plugindirs[@]}"; do plugindir=$e:$plugindir; done
    slurm_write_conf_ "$dbd" "$plugindir" || return 1
    for e in "${extra[@]}"; do slurm_merge_conf_ "$SLURM_CONF" "$e" || return 1; done

    if [ "$dbd" = yes ]; then
        mariadb_start "$SLURM_DIR/mysql" || slurm_fail_ "MariaDB did not start" || return 1
        SLURM_DB_PASS=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
        mariadb_sql "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$SLURM_DB_PASS';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
            slurm_fail_ "cannot create the slurm database user" || return 1
        slurm_write_dbd_conf_ || return 1
        slurm_daemon_ slurmdbd "$SLURM_SBIN/slurmdbd" -D
        # slurmdbd creates its tables before it listens.
        wait_for 120 slurm_dbd_up_ || slurm_fail_ "slurmdbd did not listen on $SLURMDBD_PORT" ||
            return 1
        wait_for 60 sacctmgr -i add cluster "$SLURM_CLUSTER" ||
            slurm_fail_ "sacctmgr add cluster failed" || return 1
    fi

    slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D -i
    wait_for 90 slurm_ctld_up_ || slurm_fail_ "slurmctld did not answer" || return 1
    slurm_daemon_ slurmd "$SLURM_SBIN/slurmd" -D -N "$SLURM_NODE"
    wait_for 90 slurm_node_idle_ || slurm_fail_ "node $SLURM_NODE did not become idle" ||
        return 1
    SLURM_START_MS=$((($(date +%s%N) - t0) / 1000000))
    export SLURM_START_MS
    echo "slurm_start: cluster $SLURM_CLUSTER up in ${SLURM_START_MS} ms ($SLURM_DIR)"
}

slurm_dbd_up_() {
    slurm_daemon_alive_ slurmdbd && slurm_port_open_ "$SLURMDBD_PORT"
}

slurm_ctld_up_() {
    slurm_daemon_alive_ slurmctld && scontrol ping 2>/dev/null | grep -q UP
}

slurm_node_idle_() {
    slurm_daemon_alive_ slurmd &&
        [ "$(sinfo -h -n "$SLURM_NODE" -o %T 2>/dev/null)" = idle ]
}

# slurm_job_state JOBID: print the job's state from slurmctld (which keeps finished jobs for
# MinJobAge), else from sacct (its first word: "CANCELLED by 0" gives CANCELLED).
slurm_job_state() {
    local s
    s=$(squeue -h -t all -j "$1" -o %T 2>/dev/null)
    if [ -z "$s" ]; then
        s=$(sacct -n -X -P -j "$1" -o State 2>/dev/null | head -n 1)
        s=${s%% *}
    fi
    [ -n "$s" ] && echo "$s"
}

slurm_gated() {
    printf 'for i in $(seq 600); do [ -e "%s" ] && exit 0; sleep 0.2; done; exit 1' "$1"
}

slurm_wait_job() {
    local job=$1 re=$2 limit=${3:-60}
    wait_for "$limit" slurm_job_state_matches_ "$job" "$re"
}

slurm_batch() {
    local script=$1 out=$2 job
    shift 2
    chmod +x "$script" &&
        job=$(sbatch --parsable -o "$out" "$@" "$script") &&
        slurm_wait_job "$job" "COMPLETED|FAILED" 300 &&
        cat "$out"
}

slurm_job_state_matches_() {
    local s
    s=$(slurm_job_state "$1") && [[ $s =~ ^($2)$ ]]
}

slurm_dump_logs() {
    local f
    [ -n "$SLURM_DIR" ] && [ -d "$SLURM_DIR" ] || return 0
    for f in "$SLURM_DIR"/log/* "$SLURM_DIR"/mysql/error.log "$SLURM_DIR"/munge/munged.log; do
        [ -s "$f" ] || continue
        echo "===== $f (last 200 lines) =====" >&2
        tail -n 200 "$f" >&2
        # Also into the TAP stream (sharness' fd 5) as comments: a run without -v (ctest's)
        # hides stderr, and the cluster's directory is gone once the test ends.
        if { true >&5; } 2>/dev/null; then
            { echo "===== $f (last 60 lines) ====="; tail -n 60 "$f"; } | sed 's/^/# /' >&5
        fi
    done
}

# slurm_tagged_pids_: pids of this cluster's daemons, slurmstepds and job processes.
slurm_tagged_pids_() {
    local p env
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" != "$$" ] && [ "${p#/proc/}" != "$BASHPID" ] || continue
        env=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
        if grep -qxF "ALLOT_SLURM_TAG=$SLURM_DIR" <<<"$env" ||
            { grep -qxF "SLURM_CONF=$SLURM_CONF" <<<"$env" && grep -q '^SLURM_JOB_ID=' <<<"$env"; }; then
            echo "${p#/proc/}"
        fi
    done
}

# slurm_kill_ NAME: TERM the daemon, wait up to 15 s, then KILL.
slurm_kill_() {
    local pidf=$SLURM_DIR/run/$1.pid pid
    [ -f "$pidf" ] || return 0
    pid=$(cat "$pidf")
    if kill "$pid" 2>/dev/null; then
        wait_for 15 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    rm -f "$pidf"
}

slurm_stop() {
    local pids
    [ -n "$SLURM_DIR" ] || return 0
    # The logs of a cluster that saw a failed test go into the output before they go: a
    # test's last step is usually this stop, and its EXIT hook then finds no cluster.
    if [ -n "${SLURM_DUMP_LOGS:-}" ] || [ "${test_failure:-0}" != 0 ]; then
        slurm_dump_logs
    fi
    slurm_watchdog_stop_
    if slurm_daemon_alive_ slurmctld; then
        # Jobs first, so slurmd can still end their steps cleanly.
        timeout 10 scancel -u root >/dev/null 2>&1
        wait_for 10 sh -c '[ -z "$(squeue -h -o %i 2>/dev/null)" ]' >/dev/null 2>&1
    fi
    slurm_kill_ slurmd
    slurm_kill_ slurmctld
    slurm_kill_ slurmdbd
    pids=$(slurm_tagged_pids_)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086 # one pid per word
        kill -9 $pids 2>/dev/null
    fi
    mariadb_stop
    if [ "$SLURM_STARTED_MUNGED" = yes ]; then
        munged_stop
        SLURM_STARTED_MUNGED=
    fi
    # A /tmp directory of ours goes when the test passed so far; it stays for a post
    # mortem (and is named in the output) when something failed.
    if [ -n "$SLURM_TMP_DIR" ]; then
        if [ "${test_failure:-0}" = 0 ] && [ -z "$SLURM_KEEP" ]; then
            rm -rf "$SLURM_TMP_DIR"
        else
            echo "slurm_stop: cluster files kept in $SLURM_TMP_DIR" >&2
        fi
    fi
    SLURM_DIR=
}

# The EXIT hook stops the cluster however the script ends, dumping the logs when a test
# failed, then runs the trap that was there before (sharness' die) with the same status.
slurm_install_exit_hook_() {
    [ -z "$SLURM_EXIT_HOOKED" ] || return 0
    SLURM_PREV_EXIT_TRAP=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
    trap 'slurm_exit_hook_' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    SLURM_EXIT_HOOKED=yes
}

slurm_exit_hook_() {
    local rc=$?
    if [ -n "$SLURM_DIR" ]; then
        if [ "$rc" != 0 ]; then SLURM_DUMP_LOGS=yes slurm_stop; else slurm_stop; fi
    fi
    if [ -n "$SLURM_PREV_EXIT_TRAP" ]; then
        (exit "$rc")
        eval "$SLURM_PREV_EXIT_TRAP"
    fi
    exit "$rc"
}

# A watchdog subshell stops the cluster if the test shell vanishes (SIGKILL, timeout -s
# KILL) without running its EXIT trap.  It only ever kills processes of this cluster.
slurm_watchdog_start_() {
    local parent=$$
    (
        trap - EXIT TERM INT
        while kill -0 "$parent" 2>/dev/null; do sleep 1; done
        # This subshell forked before MariaDB and munged started: take their pids
        # from their pid files.
        MARIADB_PID=$(cat "$SLURM_DIR/mysql/mysqld.pid" 2>/dev/null)
        MUNGE_DIR=$SLURM_DIR/munge
        SLURM_STARTED_MUNGED=yes
        slurm_stop
    ) </dev/null >/dev/null 2>&1 &
    SLURM_WATCHDOG_PID=$!
}

slurm_watchdog_stop_() {
    [ -n "$SLURM_WATCHDOG_PID" ] || return 0
    [ "$BASHPID" = "$$" ] || return 0 # the watchdog itself is stopping the cluster
    kill "$SLURM_WATCHDOG_PID" 2>/dev/null
    wait "$SLURM_WATCHDOG_PID" 2>/dev/null
    SLURM_WATCHDOG_PID=
}
