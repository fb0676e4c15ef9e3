#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t4120-pg-failover.t - PostgreSQL failover under load (doc/postgresql.md "High
# availability"): a primary and a synchronous streaming standby on loopback, two allotd on a
# libpq multi-host conninfo with target_session_attrs=read-write, eight clients holding and
# settling jobs with idempotent retries.  The primary's postmaster is killed with -9, the
# standby promoted; the same allotd processes reconnect to it.  Then every acknowledged hold
# and settle is on the new primary with the acknowledged amount, no job is held or charged
# twice, the allocation's use is the sum of the acknowledged charges, `allot db check` passes
# there, and each client's outage (its first failed request to its first success after the
# promotion) is printed.  Label pgha: `ctest -L pgha` runs it alone.
test_description='PostgreSQL failover: synchronous standby promoted under hold+settle load'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
CLIENTS=4          # per allotd
FO_DEADLINE_S=60   # no client retries past this many seconds after its start

# Nothing may outlive the test, whatever fails: the clients, both allotd, the standby (the
# new primary), and what is left of the killed primary (its processes, listed in
# pg1/killed before the kill, and its shared memory segment).  Run by test_done (sharness's cleanup, in the test's directory,
# before it is removed) and, when the script ends otherwise, by the EXIT trap, chained
# ahead of sharness's own.
FO_DIR=$PWD
fo_reap_() {
	local p shmid
	cd "$FO_DIR" 2>/dev/null || return 0
	for p in $FO_CLIENTS; do kill "$p" 2>/dev/null; done
	pg_allotd_kill9 A
	pg_allotd_kill9 B
	[ -z "${P2_DIR:-}" ] || PG_DIR=$P2_DIR pg_stop -m immediate
	[ -z "${P1_DIR:-}" ] || {
		if [ -f "$P1_DIR/killed" ]; then
			for p in $(cat "$P1_DIR/killed"); do
				[ "$(cat "/proc/$p/comm" 2>/dev/null)" = postgres ] && kill -9 "$p"
			done
			shmid=$(sed -n 7p "$P1_DIR/data/postmaster.pid" 2>/dev/null | awk '{print $2}')
			[ -z "$shmid" ] || ipcrm -m "$shmid" 2>/dev/null
			rm -f "$P1_DIR/data/postmaster.pid" "$P1_DIR/killed"
		else
			PG_DIR=$P1_DIR pg_stop -m immediate
		fi
	}
	return 0
}
fo_prev_exit_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
trap 'rc=$?; fo_reap_; (exit $rc); eval "$fo_prev_exit_trap"' EXIT
cleanup fo_reap_

# standby_is_sync: the primary (ALLOT_TEST_PG) waits for standby1 at every commit.
standby_is_sync() {
	test "$(pg_psql "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")" = sync
}

test_expect_success 'a primary and a synchronous streaming standby' '
	pg_start "$PWD/pg1" &&
	P1_DIR=$PG_DIR && P1=$PG_PORT &&
	pg_standby_start "$PWD/pg2" standby1 &&
	P2_DIR=$PG_DIR && P2=$PG_PORT &&
	PG_DIR=$P1_DIR PG_PORT=$P1 &&
	ALLOT_TEST_PG="host=127.0.0.1 port=$P1 user=postgres dbname=allot" &&
	pg_psql "ALTER SYSTEM SET synchronous_standby_names = '\''standby1'\''" &&
	pg_psql "SELECT pg_reload_conf()" &&
	wait_for 30 standby_is_sync &&
	test "$(pg_psql "SHOW synchronous_commit")" = on &&
	test "$("$PG_BINDIR/psql" -X -tA -h 127.0.0.1 -p "$P2" -U postgres -d allot -c "SELECT pg_is_in_recovery()")" = t
'

test_expect_success 'two allotd on the multi-host conninfo' '
	ALLOT_TEST_PG="host=127.0.0.1,127.0.0.1 port=$P1,$P2 user=postgres dbname=allot target_session_attrs=read-write" &&
	pg_allotd_start A &&
	pg_allotd_start B &&
	PID_A=$(cat A/mypid) && PID_B=$(cat B/mypid) &&
	pga A POST /v1/clusters "{\"name\":\"c1\"}" &&
	pga A POST /v1/accounts "{\"name\":\"acct1\",\"parent\":\"root\"}" &&
	pga A POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct1\",\"user\":\"root\"}" &&
	pga A POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"batch\",\"resource\":\"cpu\"}" &&
	pga B POST /v1/allocations "{\"account\":\"acct1\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000000}"
'

# fo_client INST W FIRST: jobs FIRST, FIRST+1, ... through allotd INST until the file "stop"
# exists; each job's hold, then its settle, is retried with the same cluster, job and run
# until acknowledged (both are idempotent per run).  Every attempt is a line
# "start_us end_us op job http_code [replay]" in tries.INST.W ("replay": a 200 that found
# the operation already done, i.e. an earlier attempt that got an error had committed);
# every acknowledged one a line
# "op job amount" (hold_sumin or charge_sumin of the reply) in acks.INST.W.  The elapsed
# time, so the charge, varies with the job.  Bounded by FO_DEADLINE_S.
fo_client() {
	local inst=$1 w=$2 j=$3 url op body code t0 t1 amount replay reply=$PWD/reply.$1.$2
	local deadline=$(( ${EPOCHREALTIME//[!0-9]/} + FO_DEADLINE_S * 1000000 ))
	url=$(cat "$inst/url")
	while [ ! -e stop ]; do
		for op in hold settle; do
			if [ $op = hold ]; then
				body="{\"cluster\":\"c1\",\"job_id\":$j,\"run\":0,\"user\":\"root\",\"account\":\"acct1\",\"partition\":\"batch\",\"start\":$(( ${EPOCHREALTIME%[!0-9]*} - 600 )),\"time_limit_s\":600,\"alloc_tres\":\"cpu=1\",\"billing\":1}"
			else
				body="{\"cluster\":\"c1\",\"job_id\":$j,\"run\":0,\"elapsed_s\":$(( 60 * (j % 7 + 1) )),\"state\":\"COMPLETED\"}"
			fi
			while :; do
				t0=${EPOCHREALTIME//[!0-9]/}
				code=$(curl -s -o "$reply" -w "%{http_code}" --max-time 10 \
					-H "X-Allot-User: root" -H "Content-Type: application/json" \
					--data-binary "$body" "$url/v1/jobs/$op")
				t1=${EPOCHREALTIME//[!0-9]/}
				replay=
				[ "$code" != 200 ] || ! grep -q "\"replay\":true" "$reply" || replay=replay
				echo "$t0 $t1 $op $j $code $replay" >>"tries.$inst.$w"
				[ "$code" = 200 ] && break
				if [ "$t1" -ge "$deadline" ]; then
					echo "client $inst.$w: job $j $op not acknowledged in ${FO_DEADLINE_S}s" >&2
					return 1
				fi
				sleep 0.02
			done
			if [ $op = hold ]; then
				amount=$(grep -o "\"hold_sumin\":[0-9]*" "$reply" | head -n 1)
			else
				amount=$(grep -o "\"charge_sumin\":[0-9]*" "$reply" | head -n 1)
			fi
			echo "$op $j ${amount#*:}" >>"acks.$inst.$w"
		done
		j=$(( j + 1 ))
	done
}

# settles_at_least N: every client has N acknowledged settles.
settles_at_least() {
	local f
	for f in $(fo_ack_files); do
		[ "$(grep -c "^settle " "$f" 2>/dev/null)" -ge "$1" ] || return 1
	done
}
fo_ack_files() {
	local i w
	for i in A B; do for w in $(seq $CLIENTS); do echo "acks.$i.$w"; done; done
}

# failed_since T: some client has had a request fail that ended after T (microseconds).
failed_since() {
	cat tries.* | awk -v t="$1" '$2 >= t && $5 != 200 { f = 1 } END { exit !f }'
}

# all_ok_since T: every client has had a request succeed that started after T.
all_ok_since() {
	local f
	for f in tries.*; do
		awk -v t="$1" '$1 >= t && $5 == 200 { f = 1 } END { exit !f }' "$f" || return 1
	done
}

# standby_passed_over: an allotd's 503 said why each server was passed over, the standby
# (still in recovery) too, not only the first host's refusal.
standby_passed_over() {
	grep "port $P1 failed: Connection refused; .*port $P2 failed: session is read-only" \
		A/allotd.log B/allotd.log
}

# watch_up INST: allotd INST's partition watch listens (on the new primary, after failover).
watch_up() {
	pga "$1" GET /metrics >"metrics.$1" && grep -qx "allot_partition_watch_up 1" "metrics.$1"
}

test_expect_success 'under load: kill -9 the primary, promote the standby, allotd reconnects' '
	rm -f stop tries.* acks.* &&
	FO_CLIENTS= &&
	for w in $(seq $CLIENTS); do
		fo_client A $w $(( 1000000 + w * 10000 )) & FO_CLIENTS="$FO_CLIENTS $!"
		fo_client B $w $(( 2000000 + w * 10000 )) & FO_CLIENTS="$FO_CLIENTS $!"
	done &&
	wait_for 30 settles_at_least 3 &&
	pm=$(head -n 1 "$P1_DIR/data/postmaster.pid") &&
	{ echo "$pm" && pgrep -P "$pm"; } >"$P1_DIR/killed" &&
	T_KILL=${EPOCHREALTIME//[!0-9]/} &&
	kill -9 "$pm" &&
	wait_for 20 failed_since "$T_KILL" &&
	test_must_fail pga A GET /readyz >ready.A && cat ready.A && echo &&
	test_must_fail pga B GET /healthz >live.B &&
	wait_for 10 standby_passed_over &&
	T_PROMOTE=${EPOCHREALTIME//[!0-9]/} &&
	pg_as "$PG_BINDIR/pg_ctl" -D "$P2_DIR/data" -w -t 30 promote >/dev/null &&
	T_PROMOTED=${EPOCHREALTIME//[!0-9]/} &&
	wait_for 30 all_ok_since "$T_PROMOTED" &&
	wait_for 30 settles_at_least 12 &&
	pga A GET /readyz && pga B GET /readyz &&
	wait_for 20 watch_up A && wait_for 20 watch_up B &&
	touch stop &&
	ok=0 && for p in $FO_CLIENTS; do wait "$p" || ok=1; done &&
	test $ok = 0 &&
	echo "promote took $(( (T_PROMOTED - T_PROMOTE) / 1000 )) ms, $(( (T_PROMOTE - T_KILL) / 1000 )) ms after the kill" &&
	test "$(cat A/mypid)" = "$PID_A" && kill -0 "$PID_A" &&
	test "$(cat B/mypid)" = "$PID_B" && kill -0 "$PID_B"
'

# psql on the new primary alone (the old one's port is refused anyway).
p2() {
	"$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -tA -h 127.0.0.1 -p "$P2" -U postgres -d allot -c "$*"
}

test_expect_success 'the old primary is gone; the new one is not in recovery' '
	for p in $FO_CLIENTS; do kill "$p" 2>/dev/null; done; # left running only by a failure above
	test_must_fail "$PG_BINDIR/pg_isready" -q -h 127.0.0.1 -p "$P1" &&
	test "$(p2 "SELECT pg_is_in_recovery()")" = f
'

test_expect_success 'every failed request during the outage was a 503' '
	cat tries.* | awk "\$5 != 200 { print \$5 }" | sort | uniq -c >codes &&
	cat codes &&
	test -s codes &&
	! grep -v " 503$" codes &&
	echo "acknowledged as replays (an earlier attempt that got 503 had committed): $(cat tries.* | grep -c " replay$")"
'

test_expect_success 'every acknowledged hold and settle is on the new primary, amounts equal' '
	cat acks.* | sort -k2,2n -k1,1 >acked &&
	test -s acked &&
	echo "$(grep -c ^hold acked) holds, $(grep -c ^settle acked) settles acknowledged" &&
	! awk "NF != 3 || \$3 !~ /^[0-9]+\$/" acked | grep . &&
	p2 "SELECT '\''hold '\'' || job_id || '\'' '\'' || hold_sumin FROM jobs WHERE cluster = '\''c1'\'' AND run = 0 UNION ALL SELECT '\''settle '\'' || job_id || '\'' '\'' || charge_sumin FROM jobs WHERE cluster = '\''c1'\'' AND run = 0 AND status = '\''settled'\''" |
		sort -k2,2n -k1,1 >stored &&
	test_cmp acked stored
'

test_expect_success 'no double charge: one hold and one debit per run, use = sum of charges' '
	test "$(p2 "SELECT COUNT(*) FROM (SELECT 1 FROM ledger WHERE kind IN ('\''hold'\'', '\''debit'\'', '\''release'\'') GROUP BY kind, cluster, job_id, run HAVING COUNT(*) > 1) d")" = 0 &&
	test "$(p2 "SELECT COUNT(*) FROM ledger WHERE kind = '\''debit'\''")" = "$(grep -c ^settle acked)" &&
	test "$(p2 "SELECT COUNT(*) FROM ledger l JOIN jobs j USING (cluster, job_id, run) WHERE l.kind = '\''debit'\'' AND l.amount_sumin <> j.charge_sumin")" = 0 &&
	sum=$(awk "\$1 == \"settle\" { s += \$3 } END { print s + 0 }" acked) &&
	test "$sum" -gt 0 &&
	test "$(p2 "SELECT used_sumin || '\'' '\'' || held_sumin FROM alloc_balance WHERE alloc_id = 1")" = "$sum 0"
'

test_expect_success 'allot db check passes on the new primary; /v1/check through both allotd' '
	printf "StorageType=pg\nStorageLoc=host=127.0.0.1 port=%s user=postgres dbname=allot\n" \
		"$P2" >check.conf &&
	"$ALLOT_BIN" --config check.conf db check &&
	pga A GET /v1/check >check.A && pga B GET /v1/check >check.B
'

# spread COL: "min=.. median=.. max=.." of column COL of stdin (integers).
spread() {
	sort -k"$1,$1"n | awk -v c="$1" '{ v[NR] = $c } END {
		printf "min=%d median=%d max=%d", v[1],
			(NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'
}

# Per client: from the start of its first failed request to the end of its first success
# after that, and (third column) from the end of the promotion to that success, in ms.  A
# client may see no failure at all when the outage is short (it sent nothing while no server
# took writes, or its request waited out the reconnect): its outage is then the duration of
# its first request that ended after the promotion began, marked "nofail".
test_expect_success 'the outage each client saw' '
	for f in tries.*; do
		awk -v c="${f#tries.}" -v p="$T_PROMOTE" -v q="$T_PROMOTED" "
			\$5 != 200 && !f { f = \$1 }
			\$5 == 200 && f && !s { s = \$2 }
			\$2 >= p && !w { w = \$2 - \$1 }
			END { if (f && s) printf \"%s %d %d\\n\", c, (s - f) / 1000, (s - q) / 1000
			      else print c, int(w / 1000), 0, \"nofail\" }" "$f"
	done >outage &&
	cat outage &&
	{
		printf "outage_ms clients=%d nofail=%d %s; after the promotion %s;" \
			"$(wc -l <outage)" "$(grep -c nofail outage)" \
			"$(spread 2 <outage)" "$(spread 3 <outage)" &&
		printf " kill to promote %d ms (pg_ctl promote %d ms); replays %d\n" \
			$(( (T_PROMOTE - T_KILL) / 1000 )) $(( (T_PROMOTED - T_PROMOTE) / 1000 )) \
			"$(cat tries.* | grep -c " replay$")"
	} | tee outage.summary
'

# Under ASan (tests/run.sh --sanitize) a leak or sanitizer finding makes allotd's exit status
# non-zero: the reconnect paths are checked at shutdown too.
test_expect_success 'both allotd stop cleanly after the failover' '
	for i in A B; do
		pid=$(cat $i/mypid) &&
		kill -TERM "$pid" &&
		wait_for 20 pid_gone "$pid" &&
		{ wait "$pid"; rc=$?; } &&
		rm -f $i/mypid &&
		echo "allotd $i exited with $rc" &&
		test "$rc" = 0 &&
		! grep -E "Sanitizer|runtime error" $i/stderr || return 1
	done
'

# Into the TAP stream, for `ctest -L pgha -V` (bench/results/postgresql.md).
[ ! -f outage.summary ] || sed "s/^/# /" outage outage.summary
test_done
