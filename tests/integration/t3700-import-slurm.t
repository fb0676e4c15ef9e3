#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3700-import-slurm.t - `allot import slurm` of a real `sacctmgr dump`, and the round trip
# sacctmgr dump -> allot import -> allot export slurm -> sacctmgr load into a second,
# empty cluster of the same slurmdbd, whose `sacctmgr show assoc -P` must equal the first's
# (the cluster name aside).
#
# The test cluster is populated with one `sacctmgr load` of a generated file (fast; a
# thousand `sacctmgr add` calls would take minutes): 65 accounts in three levels under
# root, 500 users with two associations each (1,000 user associations), limits of every
# kind the dump writes (GrpTRES, GrpTRESMins, GrpJobs, GrpSubmitJobs, GrpWall, MaxJobs,
# MaxSubmitJobs, MaxWallDurationPerJob, MaxTRESPerJob, MaxTRESMinsPerJob, MaxTRESPerNode),
# Fairshare=parent, QOS lists, QOS deltas ('+low') and default QOS.  Bad input is refused
# with its line and leaves the bank as it was; a dry run prints the diff and writes
# nothing; a second import says "no changes"; live=yes reads the same from the cluster
# itself, with its partitions.
test_description='allot import slurm / export slurm round trip on a real slurmdbd'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }
command -v slurmctld >/dev/null || command -v /usr/sbin/slurmctld >/dev/null ||
	{ skip_all="Slurm not installed"; test_done; }

allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

gen_load() {
	awk -v c="$1" 'BEGIN {
		printf "Cluster - '\''%s'\'':Fairshare=1:QOS='\''normal,high,low,long'\'':DefaultQOS='\''normal'\''\n", c
		print "Parent - '\''root'\''"
		for (i = 1; i <= 5; i++)
			printf "Account - '\''d%d'\'':Description='\''Division %d of Science'\'':Organization='\''Org%d'\'':Fairshare=%d:GrpTRES=cpu=%d,mem=%dG:GrpJobs=%d\n", i, i, i % 3, 10 * i, 100 * i, 64 * i, 50 * i
		for (i = 1; i <= 5; i++) {
			printf "Parent - '\''d%d'\''\n", i
			for (j = 1; j <= 3; j++)
				printf "Account - '\''d%dg%d'\'':Description='\''group %d.%d'\'':Organization='\''org%d'\'':Fairshare=%s:GrpTRESMins=cpu=%d:MaxWallDurationPerJob=%d:QOS='\''normal,%s'\''\n", i, j, i, j, i, (j == 3 ? "parent" : j * 5), 100000 * j, 60 * 24 * j, (j == 1 ? "high" : "low")
		}
		for (i = 1; i <= 5; i++)
			for (j = 1; j <= 3; j++) {
				printf "Parent - '\''d%dg%d'\''\n", i, j
				for (k = 1; k <= 3; k++)
					printf "Account - '\''d%dg%dp%d'\'':Description='\''project %d'\'':Organization='\''org%d'\'':Fairshare=%d:GrpSubmitJobs=%d:MaxJobs=%d\n", i, j, k, k, i, k, 200 + k, 20 + k
			}
		# user u (1..500) is in projects (u-1)%45 and (u+7)%45
		n = 0
		for (i = 1; i <= 5; i++) for (j = 1; j <= 3; j++) for (k = 1; k <= 3; k++) proj[n++] = "d" i "g" j "p" k
		for (p = 0; p < 45; p++) {
			printf "Parent - '\''%s'\''\n", proj[p]
			for (u = 1; u <= 500; u++) {
				a = (u - 1) % 45; b = (u + 7) % 45
				if (a != p && b != p) continue
				def = proj[a]
				line = sprintf("User - '\''u%03d'\'':DefaultAccount='\''%s'\'':Fairshare=%d", u, def, 1 + u % 7)
				if (u % 2 == 0) line = line sprintf(":MaxJobs=%d:MaxSubmitJobs=%d", 1 + u % 9, 10 + u % 13)
				if (u % 3 == 0) line = line sprintf(":GrpTRES=cpu=%d,node=%d", 4 + u % 16, 1 + u % 3)
				if (u % 5 == 0) line = line sprintf(":MaxWallDurationPerJob=%d:MaxTRESPerJob=cpu=%d", 30 * (1 + u % 48), 2 + u % 6)
				if (u % 7 == 0) line = line sprintf(":GrpTRESMins=cpu=%d,mem=%dM:GrpWall=%d", 1000 * u, 5000 * u, 600 + u)
				if (u % 11 == 0) line = line sprintf(":MaxTRESMinsPerJob=cpu=%d:GrpJobs=%d:MaxTRESPerNode=cpu=2", 600 + u, 3 + u % 4)
				if (u % 4 == 1) line = line ":QOS='\''normal,long'\'':DefaultQOS='\''long'\''"
				else if (u % 13 == 0) line = line ":QOS='\''+low'\''"
				print line
			}
		}
	}'
}

# bank_state: everything the import writes, as the API lists it (for "nothing changed").
bank_state() {
	allot --json account show &&
	allot --json user show &&
	allot --json assoc show &&
	allot --json qos show &&
	allot --json limits list
}

# assoc_rows CLUSTER: `sacctmgr show assoc -P` of one cluster, the cluster name taken out,
# sorted (both clusters' rows come in their own id order).
assoc_rows() {
	sacctmgr -P -n show assoc cluster="$1" |
		sed "s/^$1|/CLUSTER|/" | LC_ALL=C sort
}

test_expect_success 'a test cluster with 65 accounts, 500 users, 1,000 associations' '
	slurm_start &&
	sacctmgr -i add qos high,low,long >/dev/null &&
	sacctmgr -i modify qos where name=high set priority=100 MaxWall=2-00:00:00 >/dev/null &&
	gen_load "$SLURM_CLUSTER" >load.txt &&
	sacctmgr -i load file=load.txt clean >load.out 2>&1 &&
	sacctmgr -i dump "$SLURM_CLUSTER" file="$PWD/dump.txt" >dump.out 2>&1 &&
	sacctmgr -P show qos >qos.txt &&
	assoc_rows "$SLURM_CLUSTER" >assoc.first &&
	test $(grep -c "|u[0-9]*|" assoc.first) = 1000 &&
	test $(grep -c "^Account - " dump.txt) = 65 &&
	test $(wc -l <dump.txt) -gt 1100
'

test_expect_success 'allotd' '
	allotd_start
'

test_expect_success 'a bad line is refused with its number and reason; the bank is unchanged' '
	bank_state >state.before &&
	# a User line deep in the file: hundreds of records are written before it in the same
	# transaction, and must all be rolled back.
	n=$(awk "NR >= 700 && /^User - / { print NR; exit }" dump.txt) &&
	sed "${n}s/\$/:GrpJobsAccrue=lots/" dump.txt >bad1.txt &&
	test_must_fail allot import slurm file=bad1.txt qos=qos.txt 2>err1 &&
	cat err1 &&
	grep "line $n: GrpJobsAccrue" err1 &&
	sed "300s/^User - /Usr - /" dump.txt >bad2.txt &&
	test_must_fail allot import slurm file=bad2.txt qos=qos.txt 2>err2 &&
	cat err2 &&
	grep "line 300: .*not Cluster, Parent, Account or User" err2 &&
	test_must_fail allot import slurm file=dump.txt 2>err3 &&
	cat err3 &&
	grep "line 13: QOS .normal. is neither in the bank nor in the QOS list" err3 &&
	bank_state >state.after &&
	test_cmp state.before state.after
'

test_expect_success '--dry-run prints the diff and writes nothing' '
	allot import slurm file=dump.txt qos=qos.txt --dry-run >dry.out &&
	head -5 dry.out &&
	tail -3 dry.out &&
	grep "^+ cluster $SLURM_CLUSTER\$" dry.out &&
	grep "^+ account d1: parent=root shares=10 description=.division 1 of science." dry.out &&
	grep "^+ assoc $SLURM_CLUSTER:d1g1p1:u001:: shares=2 qos=.long,normal. default_qos=.long." dry.out &&
	grep "^+ limit account d1g3: GrpTRESMins=cpu=300000$" dry.out &&
	grep "^~ account root: qos .. -> .high,long,low,normal. default_qos .. -> .normal.$" dry.out &&
	grep "line 15: user root: AdminLevel=.Administrator. is not kept" dry.out &&
	grep "(dry run: nothing written)" dry.out &&
	bank_state >state.after &&
	test_cmp state.before state.after
'

test_expect_success 'the import writes the diff it printed; a second import: no changes' '
	t0=$(date +%s%N) &&
	allot import slurm file=dump.txt qos=qos.txt >imp.out &&
	echo "import: $((($(date +%s%N) - t0) / 1000000)) ms" &&
	tail -2 imp.out &&
	grep -v "^line \|^import slurm\|changes written\$" imp.out >imp.changes &&
	grep -v "^line \|^import slurm\|(dry run" dry.out >dry.changes &&
	test_cmp dry.changes imp.changes &&
	test $(grep -c "^+ assoc " imp.out) = 1001 &&
	test $(grep -c "^+ account " imp.out) = 65 &&
	allot import slurm file=dump.txt qos=qos.txt >again.out &&
	cat again.out &&
	grep "; no changes\$" again.out &&
	! grep "^[+~-] " again.out
'

test_expect_success 'the bank holds the limits in its own terms' '
	allot -P -n limits list scope=account owner=d1 >d1.limits &&
	cat d1.limits &&
	grep "GrpTRES|cpu=100,mem=64G\|GrpTRES|cpu=100,mem=65536" d1.limits &&
	allot -P -n limits list scope=assoc owner=$SLURM_CLUSTER:d1g1p1:u091: >u091.limits &&
	cat u091.limits &&
	grep "GrpWall|691" u091.limits &&
	allot --json assoc show cluster=$SLURM_CLUSTER account=d1g1p1 user=u091 >u091.json &&
	grep "\"qos\": *\"high,low,normal\"" u091.json
'

test_expect_success 'export -> sacctmgr load into an empty cluster: the same associations' '
	allot export slurm cluster=$SLURM_CLUSTER file="$PWD/export.txt" &&
	head -3 export.txt &&
	sacctmgr -i load file="$PWD/export.txt" cluster=copy >load2.out 2>&1 ||
		{ cat load2.out; false; } &&
	assoc_rows copy >assoc.copy &&
	test $(wc -l <assoc.copy) = $(wc -l <assoc.first) &&
	test_cmp assoc.first assoc.copy
'

test_expect_success 'a changed limit in the dump is a one-line diff' '
	sed "s/^\(User - .u004.:.*\):MaxJobs=5:/\1:MaxJobs=6:/" dump.txt >dump2.txt &&
	! test_cmp dump.txt dump2.txt >/dev/null &&
	allot import slurm file=dump2.txt qos=qos.txt --dry-run >d2.out &&
	cat d2.out &&
	test $(grep -c "^[+~-] " d2.out) = $(grep -c "^User - .u004." dump.txt) &&
	grep "^~ limit assoc $SLURM_CLUSTER:d1g2p1:u004:: MaxJobs 5 -> 6" d2.out
'

test_expect_success 'live=yes on the cluster: sacctmgr and scontrol run by the command' '
	allot import slurm file=dump.txt qos=qos.txt >back.out &&
	allot import slurm live=yes cluster=$SLURM_CLUSTER --dry-run >live.out &&
	cat live.out &&
	grep "^+ partition $SLURM_CLUSTER:debug: resource=cpu billing_weights=.. max_tres=0 qos=.. max_time=none default_time=none\$" live.out &&
	test $(grep -c "^[~+-] " live.out) = 1 &&
	allot import slurm live=yes cluster=$SLURM_CLUSTER >live2.out &&
	allot import slurm live=yes cluster=$SLURM_CLUSTER >live3.out &&
	cat live3.out &&
	grep "1 partitions; no changes\$" live3.out
'

test_expect_success 'stop' '
	allotd_stop &&
	slurm_stop
'
test_done
