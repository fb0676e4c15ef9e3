#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2710-scrub.t - `allot db scrub-old-jobs [WEEKS]` (flux-accounting's scrub-old-jobs): jobs
# last updated more than WEEKS weeks ago (default 26) lose their records, held jobs and newer
# ones stay, the ledger and so every balance is unchanged, and `allot db check` does not report
# the scrubbed jobs' ledger entries as orphans -- but still reports a newer orphan; the
# Slurm array ids of a scrubbed job id go with it (a job id Slurm reuses must not inherit
# them).  Old jobs are made by running allotd 30 weeks in the past under faketime.
test_description='allot db scrub-old-jobs'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
REAL_ALLOTD=$ALLOTD_BIN
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }
# The test reads and corrupts the SQLite file directly, so it runs on SQLite only; the scrub
# verb (src/libstore/store_usage.c) is the same portable SQL on PostgreSQL.
test "$ALLOT_TEST_BACKEND" = pg && { skip_all="reads the SQLite file directly"; test_done; }
FAKELIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
test -n "$FAKELIB" || { skip_all="libfaketime not installed"; test_done; }

A() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
DB() { "$ALLOT_BIN" --config "$ALLOTD_CONF" "$@"; }
jobs_in_db() { sqlite3 "$ALLOTD_DIR/allot.db" "SELECT job_id || ':' || status FROM jobs ORDER BY job_id" | paste -sd" "; }

# start_allotd [OFFSET]: allotd on the test's database, its clock OFFSET in the past.
# libfaketime is preloaded and the wrapper execs allotd, so ALLOTD_PID is allotd itself and
# allotd_stop reaches it (the faketime program would stay in between and orphan allotd).
start_allotd() {
	if [ -n "$1" ]; then
		printf '#!/bin/sh\nexec env LD_PRELOAD="%s" FAKETIME="%s" "%s" "$@"\n' \
			"$FAKELIB" "$1" "$REAL_ALLOTD" >allotd-past &&
			chmod +x allotd-past && ALLOTD_BIN=$PWD/allotd-past
	else
		ALLOTD_BIN=$REAL_ALLOTD
	fi
	allotd_start AuthType=none TestMode=local
}

test_expect_success 'thirty weeks ago: two jobs settled, one still held' '
	start_allotd -210d &&
	A cluster add c1 &&
	A account add chem &&
	A user add alice &&
	A assoc add cluster=c1 account=chem user=alice &&
	A partition add p cluster=c1 resource=cpu &&
	A alloc add chem resource=cpu su=100h start=2020-01-01 end=2100-01-01 &&
	for j in 1 2 3; do
		A job hold jobid=$j user=alice account=chem partition=p timelimit=60 tres=cpu=1 || return 1
	done &&
	A job settle jobid=1 elapsed=90s state=COMPLETED &&
	A job settle jobid=2 elapsed=600s state=COMPLETED &&
	allotd_stop
'
test_expect_success 'now: one more job settled; the balance before the scrub' '
	start_allotd &&
	A job hold jobid=4 user=alice account=chem partition=p timelimit=60 tres=cpu=1 &&
	A job settle jobid=4 elapsed=120s state=COMPLETED &&
	A -P -n balance >balance.before &&
	test -s balance.before &&
	allotd_stop &&
	test "$(jobs_in_db)" = "1:settled 2:settled 3:held 4:settled" &&
	DB db check
'
test_expect_success 'bad WEEKS is refused and changes nothing' '
	test_must_fail DB db scrub-old-jobs x 2>err &&
	grep "WEEKS" err &&
	test_must_fail DB db scrub-old-jobs -1 &&
	test_must_fail DB db scrub-old-jobs 1 2 &&
	test "$(jobs_in_db)" = "1:settled 2:settled 3:held 4:settled"
'
test_expect_success 'default horizon (26 weeks): the two old settled jobs go, held and new stay' '
	sqlite3 "$ALLOTD_DIR/allot.db" "INSERT INTO job_slurm_ids (cluster, job_id, array_job_id,
		array_task_id, het_job_id, het_job_offset) VALUES (\"c1\", 1, 1, 5, 0, -1),
		(\"c1\", 3, 1, 7, 0, -1)" &&
	DB -P -n db scrub-old-jobs >out &&
	test "$(cut -d"|" -f1 out)" = 2 &&
	test "$(jobs_in_db)" = "3:held 4:settled" &&
	test "$(sqlite3 "$ALLOTD_DIR/allot.db" "SELECT job_id FROM job_slurm_ids")" = 3 &&
	DB --json db scrub-old-jobs 26 >out.json &&
	test "$(json_get deleted <out.json)" = 0
'
test_expect_success 'db check: the scrubbed jobs'"'"' ledger entries are not orphans' '
	DB db check >c &&
	grep "^0 problems found" c
'
test_expect_success 'balances are unchanged (the ledger stays)' '
	start_allotd &&
	A -P -n balance >balance.after &&
	allotd_stop &&
	test_cmp balance.before balance.after
'
test_expect_success 'a ledger entry newer than the horizon without its job is still an orphan' '
	sqlite3 "$ALLOTD_DIR/allot.db" ".backup orphan.db" &&
	sqlite3 orphan.db "DELETE FROM jobs WHERE job_id = 4" &&
	sed "s|^StorageLoc=.*|StorageLoc=$PWD/orphan.db|" "$ALLOTD_CONF" >orphan.conf &&
	test_expect_code 5 "$ALLOT_BIN" --config orphan.conf db check >bad &&
	grep "^problem: ledger entry .* unknown job c1/4 " bad
'
# "Older than 0 weeks" is updated_s < now in whole seconds: job 4, settled moments ago,
# qualifies only once its second has passed.
test_expect_success 'scrub-old-jobs 0 takes every job not held; check still passes' '
	sleep 1.1 &&
	DB -P -n db scrub-old-jobs 0 >out &&
	test "$(cut -d"|" -f1 out)" = 1 &&
	test "$(jobs_in_db)" = "3:held" &&
	DB db check
'
test_done
