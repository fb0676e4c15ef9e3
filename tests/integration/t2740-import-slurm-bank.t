#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2740-import-slurm-bank.t - POST /v1/import/slurm and GET /v1/export/slurm against the bank
# alone (both backends; the round trip through a real slurmdbd is t3700): Slurm's spellings
# (Fairshare=parent, QOS deltas, minutes, mem with decimals), each kind of refusal named by
# its line with nothing written, the superuser rule, a body over 64 KiB, and the export's
# exact text.
test_description='import slurm / export slurm against the bank'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

state() {
	allot --json account show && allot --json user show && allot --json assoc show &&
		allot --json qos show && allot --json limits list
}

test_expect_success 'allotd; a dump and its QOS' '
	allotd_start AuthType=none TestMode=local Admins=adm &&
	cat >dump.txt <<-\EOD &&
	# a comment, as sacctmgr writes them
	Cluster - '"'"'c1'"'"':DefaultQOS='"'"'normal'"'"':Fairshare=1:QOS='"'"'high,normal'"'"':GrpJobs=500
	Parent - '"'"'root'"'"'
	User - '"'"'root'"'"':DefaultAccount='"'"'root'"'"':AdminLevel='"'"'Administrator'"'"':Fairshare=1
	Account - '"'"'sci'"'"':Description='"'"'science: all of it'"'"':Organization='"'"'uni'"'"':Fairshare=10:GrpTRES=cpu=64,mem=2187.50G
	Parent - '"'"'sci'"'"'
	Account - '"'"'chem'"'"':Description='"'"'chemistry'"'"':Organization='"'"'uni'"'"':Fairshare=2147483647:MaxWallDurationPerJob=1440:QOS='"'"'normal'"'"'
	Parent - '"'"'chem'"'"'
	User - '"'"'alice'"'"':DefaultAccount='"'"'chem'"'"':Fairshare=3:MaxJobs=4:QOS='"'"'+high'"'"'
	User - '"'"'bob'"'"':DefaultAccount='"'"'chem'"'"':DefaultQOS='"'"'high'"'"':Fairshare=1:GrpTRESMins=cpu=6000:QOS='"'"'high'"'"'
	EOD
	printf "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|MaxWall|MaxTRESPU\n" >qos.txt &&
	printf "normal|0|00:00:00|||cluster|||1.000000|||\n" >>qos.txt &&
	printf "high|100|00:00:00|||cluster|DenyOnLimit||2.000000|cpu=32|2-00:00:00|cpu=8\n" >>qos.txt &&
	state >state.empty
'

test_expect_success 'dry run: the diff, nothing written' '
	allot import slurm file=dump.txt qos=qos.txt --dry-run >dry.out &&
	cat dry.out &&
	grep "^+ qos high: priority=100 flags=.DenyOnLimit. usage_factor_ppm=2000000\$" dry.out &&
	grep "^+ limit qos high: MaxWallDurationPerJob=2880\$" dry.out &&
	grep "^+ limit qos high: MaxTRESPerUser=cpu=8\$" dry.out &&
	grep "^+ cluster c1\$" dry.out &&
	grep "^+ limit account root: GrpJobs=500\$" dry.out &&
	grep "^+ limit account sci: GrpTRES=cpu=64,mem=2240000M\$" dry.out &&
	grep "^+ account chem: parent=sci shares=parent description=.chemistry." dry.out &&
	grep "^+ assoc c1:chem:alice:: shares=3 qos=.high,normal. default_qos=..\$" dry.out &&
	grep "^line 4: user root: AdminLevel=.Administrator. is not kept" dry.out &&
	grep "; 2[0-9] changes (dry run: nothing written)\$" dry.out &&
	state >state.now &&
	test_cmp state.empty state.now
'

test_expect_success 'the import, then no changes' '
	allot import slurm file=dump.txt qos=qos.txt >imp.out &&
	grep "changes written\$" imp.out &&
	allot import slurm file=dump.txt qos=qos.txt >again.out &&
	cat again.out &&
	grep "read 3 accounts, 3 users, 3 associations, 2 QOS, 0 partitions; no changes\$" again.out &&
	allot --json account show chem >chem.json &&
	grep "\"shares\": *2147483647" chem.json &&
	grep "\"qos\": *\"normal\"" chem.json &&
	allot -P -n limits list scope=assoc owner=c1:chem:bob: >bob.limits &&
	grep "^assoc|c1:chem:bob:|GrpTRESMins|cpu=6000\$" bob.limits &&
	allot -P -n user show alice >alice && cat alice && grep "|chem" alice
'

test_expect_success 'the export: the dump back, in load order' '
	allot export slurm cluster=c1 >export.txt &&
	cat export.txt &&
	cat >expect <<-\EOE &&
	Cluster - '"'"'c1'"'"':DefaultQOS='"'"'normal'"'"':Fairshare=1:QOS='"'"'high,normal'"'"':GrpJobs=500
	Parent - '"'"'root'"'"'
	User - '"'"'root'"'"':DefaultAccount='"'"'root'"'"':Fairshare=1
	Account - '"'"'sci'"'"':Description='"'"'science: all of it'"'"':Organization='"'"'uni'"'"':Fairshare=10:GrpTRES=cpu=64,mem=2240000M
	Parent - '"'"'sci'"'"'
	Account - '"'"'chem'"'"':Description='"'"'chemistry'"'"':Organization='"'"'uni'"'"':Fairshare=2147483647:QOS='"'"'normal'"'"':MaxWallDurationPerJob=1440
	Parent - '"'"'chem'"'"'
	User - '"'"'alice'"'"':DefaultAccount='"'"'chem'"'"':Fairshare=3:QOS='"'"'high,normal'"'"':MaxJobs=4
	User - '"'"'bob'"'"':DefaultAccount='"'"'chem'"'"':DefaultQOS='"'"'high'"'"':Fairshare=1:QOS='"'"'high'"'"':GrpTRESMins=cpu=6000
	EOE
	grep -v "^#" export.txt >export.body &&
	test_cmp expect export.body &&
	allot import slurm file=export.txt >reimp.out &&
	grep "; no changes\$" reimp.out
'

# bad LINE-EDIT WANT: the dump edited by sed is refused naming WANT; the bank is unchanged.
bad() {
	sed "$1" dump.txt >bad.txt &&
	state >state.before &&
	test_must_fail allot import slurm file=bad.txt qos=qos.txt 2>err &&
	cat err &&
	grep "$2" err &&
	state >state.after &&
	test_cmp state.before state.after
}

test_expect_success 'refusals name the line; nothing is written' '
	bad "s/GrpTRESMins=cpu=6000/GrpTRESMins=cpu=6000:Fairshare=7/" "line 10: User: option given twice: .Fairshare." &&
	bad "s/Fairshare=3/Fairshare=lots/" "line 9: Fairshare: not a number" &&
	bad "s/MaxJobs=4/MaxJobs=4:Partition=gpu/" "line 9: Partition: .gpu. is not a partition of cluster c1" &&
	bad "s/DefaultAccount=.chem.:DefaultQOS/DefaultAccount='"'"'sci'"'"':DefaultQOS/" "line 10: user bob: default_account: user .bob. has no association with account .sci." &&
	bad "\$ a Parent - '"'"'sci'"'"'\nUser - '"'"'alice'"'"':DefaultAccount='"'"'sci'"'"'" "line 12: DefaultAccount: .sci. here, .chem. on line 9" &&
	bad "s/Parent - .chem./Parent - '"'"'bio'"'"'/" "line 8: Parent .bio. is not an account defined before it" &&
	bad "s/QOS=.+high./QOS='"'"'+high,+low'"'"'/" "line 9: QOS .low. is neither in the bank nor" &&
	bad "s/QOS=.+high./QOS='"'"'+high,low'"'"'/" "line 9: QOS: mixes names and +/- changes" &&
	bad "s/MaxJobs=4/MaxJobs=4:WallClock=3/" "line 9: User: unknown option .WallClock." &&
	bad "s/DefaultQOS=.high.:Fairshare=1/DefaultQOS='"'"'normal'"'"':Fairshare=1/" "line 10: DefaultQOS: .normal. is not in QOS .high." &&
	bad "s/QOS=.+high./QOS='"'"'-normal'"'"'/" "line 9: QOS: .-normal. leaves no QOS" &&
	bad "1i Account - '"'"'x'"'"'" "line 1: Account line before the Cluster line"
'

test_expect_success 'a change made in Slurm: one line of diff, then applied' '
	sed "s/MaxJobs=4/MaxJobs=6/; s/QOS=.+high./QOS='"'"'-normal,+high'"'"'/" dump.txt >dump2.txt &&
	allot import slurm file=dump2.txt qos=qos.txt >d2.out &&
	cat d2.out &&
	test $(grep -c "^[~+-] " d2.out) = 2 &&
	grep "^~ assoc c1:chem:alice:: qos .high,normal. -> .high.\$" d2.out &&
	grep "^~ limit assoc c1:chem:alice:: MaxJobs 4 -> 6\$" d2.out &&
	sed "s/:MaxJobs=4//" dump.txt >dump3.txt &&
	allot import slurm file=dump3.txt qos=qos.txt >d3.out &&
	grep "^- limit assoc c1:chem:alice:: MaxJobs=6\$" d3.out
'

test_expect_success 'partitions from scontrol show partition -o, MAX_TRES from PriorityFlags' '
	# the line as 22.05.8 prints it (src/libslurmtext/test/partition.c), QoS set
	echo "PartitionName=big AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=NO QoS=high DefaultTime=00:05:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=vm PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=2 TotalNodes=1 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED TRES=cpu=2,mem=4000M,node=1,billing=8 TRESBillingWeights=CPU=4.0,Mem=0.25G" >parts.txt &&
	echo "PartitionName=debug QoS=N/A DefaultTime=NONE MaxTime=UNLIMITED State=UP" >>parts.txt &&
	sed "s/^\(User - .bob.:.*\)\$/\1:Partition='"'"'big'"'"'/" dump.txt >pdump.txt &&
	grep "Partition=.big." pdump.txt &&
	state >state.before &&
	test_must_fail allot import slurm file=pdump.txt qos=qos.txt 2>perr &&
	grep "line 10: Partition: .big. is not a partition of cluster c1" perr &&
	sed "2s/MaxTime=UNLIMITED/MaxTime=soon/" parts.txt >badparts.txt &&
	test_must_fail allot import slurm file=pdump.txt qos=qos.txt partitions=badparts.txt 2>perr &&
	cat perr &&
	grep "partition line 2: MaxTime" perr &&
	state >state.after &&
	test_cmp state.before state.after &&
	allot import slurm file=pdump.txt qos=qos.txt partitions=parts.txt priorityflags=MAX_TRES,SMALL_RELATIVE_TO_TIME --dry-run >p.out &&
	cat p.out &&
	grep "^+ partition c1:big: resource=cpu billing_weights=.CPU=4.0,Mem=0.25G. max_tres=1 qos=.high. max_time=1800s default_time=300s\$" p.out &&
	grep "^+ partition c1:debug: resource=cpu billing_weights=.. max_tres=1 qos=.. max_time=none default_time=none\$" p.out &&
	grep "^+ assoc c1:chem:bob:big: " p.out &&
	allot import slurm file=pdump.txt qos=qos.txt partitions=parts.txt priorityflags=MAX_TRES >p2.out &&
	allot -P -n partition show cluster=c1 >parts.bank &&
	cat parts.bank &&
	allot import slurm file=pdump.txt qos=qos.txt partitions=parts.txt priorityflags=MAX_TRES >p3.out &&
	grep "2 QOS, 2 partitions; no changes\$" p3.out &&
	sed "1s/MaxTime=00:30:00/MaxTime=01:00:00/" parts.txt >parts2.txt &&
	allot import slurm file=pdump.txt qos=qos.txt partitions=parts2.txt >p4.out &&
	cat p4.out &&
	test $(grep -c "^[~+-] " p4.out) = 1 &&
	grep "^~ partition c1:big: max_time .1800s. -> .3600s.\$" p4.out
'

test_expect_success 'only a superuser imports; an admin may export' '
	API_USER=adm api POST /v1/import/slurm "{\"dump\":\"\",\"dry_run\":true}" >out ;
	test "$(api_status)" = 403 &&
	API_USER=adm api GET "/v1/export/slurm?cluster=c1" >out &&
	api GET "/v1/export/slurm?cluster=nope" >out ;
	test "$(api_status)" = 404 &&
	api POST /v1/import/slurm "{\"dump\":\"x\",\"extra\":1}" >out ;
	test "$(api_status)" = 400 && grep "extra: unknown field" out
'

test_expect_success 'a dump over 64 KiB is one request (1,000 users)' '
	{ cat dump.txt; for i in $(seq 1000 1999); do
		echo "User - '"'"'u$i'"'"':DefaultAccount='"'"'chem'"'"':Fairshare=1:MaxSubmitJobs=$i"; done; } >big.txt &&
	test $(wc -c <big.txt) -gt 65536 &&
	allot import slurm file=big.txt qos=qos.txt >big.out &&
	tail -1 big.out &&
	grep "read 3 accounts, 1003 users, 1003 associations, 2 QOS, 0 partitions; 3000 changes written\$" big.out &&
	allot import slurm file=big.txt qos=qos.txt | grep "; no changes\$"
'

test_expect_success 'stop' '
	allotd_stop
'
test_done
