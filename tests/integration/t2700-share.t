#!/bin/bash
# t2700-share.t - fair-share, usage and priority through a real allotd and the allot CLI:
# the flux-accounting reference tree (`flux account view-bank -t` with no usage), its
# 2-node x 2000 s usage example (RawUsage 16000 under UsageSource=billing, no decay),
# hand-computed classic and Fair Tree values, usage reports, usage clear, priority.
test_description='allot share, tree, usage, priority'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup

test_expect_success 'start munged and allotd (flux tree, billing usage, no decay)' '
	munged_start "$PWD/munge" &&
	allotd_start FairShareAlgorithm=flux UsageSource=billing PriorityDecayHalfLife=0 \
		PriorityWeightFairshare=10000 PriorityWeightAge=0
'
test_expect_success 'the reference bank tree' '
	allot cluster add c1 &&
	for a in bank_A bank_B bank_C; do allot account add $a || return 1; done &&
	allot account add bank_C_a parent=bank_C &&
	allot account add bank_C_b parent=bank_C &&
	for u in 1 2 3 4 5 6; do allot user add user_$u || return 1; done &&
	allot assoc add cluster=c1 account=bank_A user=user_1 &&
	allot assoc add cluster=c1 account=bank_B user=user_2 &&
	allot assoc add cluster=c1 account=bank_B user=user_3 &&
	allot assoc add cluster=c1 account=bank_C_a user=user_4 &&
	allot assoc add cluster=c1 account=bank_C_b user=user_5 &&
	allot assoc add cluster=c1 account=bank_C_b user=user_6 &&
	allot partition add batch cluster=c1 resource=cpu &&
	allot alloc add root resource=cpu su=1000000h start=2020-01-01 end=2030-01-01 >/dev/null
'
test_expect_success 'allot tree with no usage is view-bank -t of the reference' '
	allot tree >tree &&
	cat >expect <<-\EOT &&
	Account                         Username           RawShares            RawUsage           Fairshare
	root                                                       1                 0.0
	 bank_A                                                    1                 0.0
	  bank_A                          user_1                   1                 0.0                 0.5
	 bank_B                                                    1                 0.0
	  bank_B                          user_2                   1                 0.0                 0.5
	  bank_B                          user_3                   1                 0.0                 0.5
	 bank_C                                                    1                 0.0
	  bank_C_a                                                 1                 0.0
	   bank_C_a                       user_4                   1                 0.0                 0.5
	  bank_C_b                                                 1                 0.0
	   bank_C_b                       user_5                   1                 0.0                 0.5
	   bank_C_b                       user_6                   1                 0.0                 0.5
	EOT
	# Layout and every column up to RawUsage as in the guide.  The guide prints Fairshare
	# 0.5 everywhere (flux'"'"'s database default before update-fshare, doc/fairshare.md);
	# the computed weighted tree gives 1.0 to user_1..3 and 0.5 to user_4..6.
	w=$(( $(head -1 expect | grep -bo RawUsage | cut -d: -f1) + 8 )) &&
	cut -c1-$w expect >expect.cols && cut -c1-$w tree >tree.cols &&
	test_cmp expect.cols tree.cols &&
	grep -E "user_[123] +1 +0.0 +1.0$" tree | wc -l | grep -qx 3 &&
	grep -E "user_[456] +1 +0.0 +0.5$" tree | wc -l | grep -qx 3
'
settle() { # JOB USER ACCOUNT BILLING ELAPSED END
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,\"user\":\"$2\",\"account\":\"$3\",\"partition\":\"batch\",\"billing\":$4,\"elapsed_s\":$5,\"start\":$(($6 - $5)),\"end\":$6,\"state\":\"COMPLETED\"}" >/dev/null
}
test_expect_success 'the reference usage example: 2,2,2,1,1 nodes x 2000 s = 16000' '
	end=1605637403 &&
	settle 102 user_2 bank_B 2 2000 $end &&
	settle 103 user_2 bank_B 2 2000 $end &&
	settle 104 user_2 bank_B 2 2000 $end &&
	settle 105 user_2 bank_B 1 2000 $end &&
	settle 106 user_2 bank_B 1 2000 $end &&
	allot --json tree >tree.json &&
	jq -e ".items[] | select(.user == \"user_2\") | .raw_usage == 16000" tree.json &&
	jq -e ".items[] | select(.account == \"bank_B\" and .user == null) | .raw_usage == 16000" tree.json &&
	jq -e ".items[] | select(.account == \"root\") | .raw_usage == 16000" tree.json &&
	allot tree | grep -E "^  bank_B +user_2 +1 +16000.0 +" &&
	allot tree | grep -E "^  bank_B +user_3 +1 +0.0 +"
'
test_expect_success 'flux ranks: user_2 (the only user with usage) is last' '
	jq -r ".items[] | select(.user != null) | \"\(.user) \(.fairshare)\"" tree.json >fs &&
	grep "^user_2 " fs >u2 &&
	test "$(cut -d" " -f2 u2)" = "$(sort -k2 -g fs | head -1 | cut -d" " -f2)"
'
test_expect_success 'classic: FairShare = 2^(-EffectvUsage/NormShares), by hand' '
	allot --json share algo=classic >cl.json &&
	# user_2: NormShares 1/3 * 1/2 = 1/6; EffectvUsage = 16000/16000 = 1 -> 2^-6
	jq -e ".items[] | select(.user == \"user_2\") | (.fairshare - 0.015625 | fabs) < 1e-12" cl.json &&
	# user_3 has no usage but Slurm'"'"'s EffectvUsage = 0 + (1 - 0) * 1/2 = 0.5 -> 2^-3
	jq -e ".items[] | select(.user == \"user_3\") | .fairshare == 0.125" cl.json &&
	allot -P share algo=classic >cl.txt &&
	head -1 cl.txt | grep -q "^Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|" &&
	grep -q "^  bank_B|user_2|1|0.166667|16000|1.000000|1.000000|0.015625|" cl.txt
'
test_expect_success 'Fair Tree: bank_B LevelFS is (1/3)/1; users of other banks rank above user_2' '
	allot --json share algo=fair_tree >ft.json &&
	jq -e ".items[] | select(.account == \"bank_B\" and .user == null) | (.level_fs - 1/3 | fabs) < 1e-12" ft.json &&
	jq -e "([.items[] | select(.user == \"user_2\" or .user == \"user_3\") | .fairshare] | max) < ([.items[] | select(.user == \"user_1\") | .fairshare] | max)" ft.json &&
	jq -e ".items[] | select(.user == \"user_2\") | .fairshare == (2/12)" ft.json
'
test_expect_success 'usage report sums per association' '
	allot -P -n usage account=bank_B >usage &&
	test "$(cut -d"|" -f1-4,7 usage)" = "c1|bank_B|user_2|5|16000" &&
	allot -P -n usage since=2021-01-01 >none &&
	test ! -s none
'
test_expect_success 'usage clear: bank_B usage stops counting; others keep theirs' '
	settle 200 user_5 bank_C_b 1 100 1605637403 &&
	allot usage clear cluster=c1 account=bank_B &&
	allot --json tree >t2.json &&
	jq -e ".items[] | select(.user == \"user_2\") | .raw_usage == 0" t2.json &&
	jq -e ".items[] | select(.user == \"user_5\") | .raw_usage == 100" t2.json &&
	test_must_fail allot usage clear cluster=c1 account=nosuch
'
test_expect_success 'priority of a job: sprio-like breakdown from the fair-share factor' '
	allot --json priority c1/200 >pr.json &&
	jq -e ".formula == \"slurm\" and .user == \"user_5\"" pr.json &&
	fs=$(jq ".fairshare_factor" pr.json) &&
	jq -e "(.fairshare - 10000 * $fs | fabs) < 1e-6" pr.json &&
	allot priority c1/200 >pr.txt && test $(wc -l <pr.txt) = 2 &&
	test_must_fail allot priority c1/999
'
test_expect_success 'a per-partition association is one row; a removed one counts for its account' '
	allot assoc add cluster=c1 account=bank_C_b user=user_6 partition=batch &&
	settle 300 user_6 bank_C_b 1 50 1605637403 &&
	allot --json tree >pp.json &&
	test "$(jq "[.items[] | select(.user == \"user_6\")] | length" pp.json)" = 1 &&
	jq -e ".items[] | select(.user == \"user_6\") | .raw_usage == 50" pp.json &&
	jq -e ".items[] | select(.account == \"bank_C_b\" and .user == null) | .raw_usage == 150" pp.json &&
	allot assoc remove cluster=c1 account=bank_C_b user=user_6 &&
	allot assoc remove cluster=c1 account=bank_C_b user=user_6 partition=batch &&
	allot --json tree >rm.json &&
	test "$(jq "[.items[] | select(.user == \"user_6\")] | length" rm.json)" = 0 &&
	jq -e ".items[] | select(.account == \"bank_C_b\" and .user == null) | .raw_usage == 150" rm.json
'
test_expect_success 'usage clear of one user, and of a parent account for its sub-accounts' '
	settle 400 user_4 bank_C_a 1 30 1605637403 &&
	allot usage clear cluster=c1 account=bank_C_a user=user_4 &&
	now=$(date +%s) &&
	settle 401 user_4 bank_C_a 1 20 $now &&
	allot account add bank_A_x parent=bank_A &&
	allot assoc add cluster=c1 account=bank_A_x user=user_1 &&
	settle 402 user_1 bank_A_x 1 40 1605637403 &&
	allot --json tree >c1.json &&
	jq -e ".items[] | select(.account == \"bank_C_a\" and .user == \"user_4\") | .raw_usage == 20" c1.json &&
	jq -e ".items[] | select(.account == \"bank_A_x\" and .user == \"user_1\") | .raw_usage == 40" c1.json &&
	allot usage clear cluster=c1 account=bank_A &&
	allot --json tree >c2.json &&
	jq -e ".items[] | select(.account == \"bank_A_x\" and .user == \"user_1\") | .raw_usage == 0" c2.json &&
	jq -e ".items[] | select(.account == \"bank_C_a\" and .user == \"user_4\") | .raw_usage == 20" c2.json
'
# A row the API would refuse today (an end far ahead, an elapsed of 2^63 s) may still be in
# the books: written by an older allotd or by hand.  The replies must stay JSON numbers.
db_exec() {
	if [ "$ALLOT_TEST_BACKEND" = pg ]; then pg_psql "$1"
	else sqlite3 "$ALLOTD_DIR/allot.db" "$1"; fi
}
# Every value of every row is a finite number, except the names (strings, never null).
finite_rows() {
	jq -e "[.items[] | to_entries[] | select(if .key == \"account\" or .key == \"user\"
		then (.value | type) != \"string\" else (.value | type) != \"number\" end)] |
		length == 0" "$1" >/dev/null
}
test_expect_success 'a huge stored elapsed: every algorithm answers finite numbers' '
	db_exec "UPDATE jobs SET elapsed_s = 9223372036854775807 WHERE job_id = 200" &&
	for a in classic fair_tree flux; do
		api GET "/v1/share?algo=$a" >huge.$a.json && finite_rows huge.$a.json || return 1
	done &&
	api GET /v1/tree >huge.tree.json && finite_rows huge.tree.json &&
	jq -e ".items[] | select(.user == \"user_5\") | .raw_usage > 9e18" huge.tree.json
'
test_expect_success 'level_fs of an association with no usage: one number in share and tree' '
	ft=$(jq ".items[] | select(.user == \"user_3\") | .level_fs" huge.fair_tree.json) &&
	fl=$(jq ".items[] | select(.user == \"user_3\") | .level_fs" huge.tree.json) &&
	test "$ft" = "$fl" &&
	jq -e ".items[] | select(.user == \"user_3\") | .level_fs == 18446744073709551616" huge.tree.json &&
	jq -e ".items[] | select(.account == \"root\") | has(\"level_fs\") | not" huge.tree.json
'
test_expect_success 'an end stored far in the future, with decay: replies stay finite' '
	allotd_stop &&
	allotd_start FairShareAlgorithm=flux UsageSource=billing PriorityDecayHalfLife=604800 &&
	db_exec "UPDATE jobs SET elapsed_s = 100, end_s = 9223372036854775807 WHERE job_id = 200" &&
	for a in classic fair_tree flux; do
		api GET "/v1/share?algo=$a" >fut.$a.json && finite_rows fut.$a.json || return 1
	done &&
	api GET /v1/tree >fut.tree.json && finite_rows fut.tree.json &&
	# counted as ending now: its 100 billing-seconds, undecayed
	jq -e ".items[] | select(.user == \"user_5\") | (.raw_usage - 100 | fabs) < 1e-9" fut.tree.json
'
test_expect_success 'stop allotd and munged' '
	allotd_stop &&
	munged_stop
'
test_done
