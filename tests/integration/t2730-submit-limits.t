#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2730-submit-limits.t - admission's submit-time limits, each counted in its own group
# (Slurm's resource limits): an account's GrpSubmitJobs counts its whole subtree, a QOS's only the jobs
# in that QOS; a QOS MaxWall pends unless DenyOnLimit, the association's is refused; the
# QOS record's limit_factor scales association GrpTRES; aliases are stored as Slurm names.
test_description='submit limits by group, MaxWall deny or pend, LimitFactor, aliases'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# admit QOS TIME_LIMIT_S [ACCOUNT]
admit() {
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"${3:-chem}\",\"partition\":\"p\",\"qos\":\"$1\",\"time_limit_s\":$2,\"tres\":\"cpu=1\"}"
}
# hold JOB_ID ACCOUNT USER QOS
hold() {
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$1,\"run\":1,\"user\":\"$3\",\"account\":\"$2\",\"partition\":\"p\",\"qos\":\"$4\",\"time_limit_s\":60,\"billing\":1}"
}
lim() {
	api PUT /v1/limits "{\"scope\":\"$1\",\"owner\":\"$2\",\"name\":\"$3\",\"value\":\"$4\"}"
}

test_expect_success 'a bank: sci with children chem and chem2' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"sci\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\",\"parent\":\"sci\"}" &&
	api POST /v1/accounts "{\"name\":\"chem2\",\"parent\":\"sci\"}" &&
	api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/users "{\"name\":\"bob\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem2\",\"user\":\"bob\"}" &&
	api POST /v1/qos "{\"name\":\"normal\"}" &&
	api POST /v1/qos "{\"name\":\"q3\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"sci\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}"
'
test_expect_success 'GrpSubmitJobs on an account counts its children' '
	lim account sci GrpSubmitJobs 3 &&
	hold 1 chem2 bob normal && hold 2 chem2 bob normal && hold 3 chem alice normal &&
	test_expect_code 1 admit normal 600 >out &&
	test "$(api_status)" = 403 &&
	json_get message <out >msg && cat msg &&
	grep -q "GrpSubmitJobs=3 from account association sci" msg &&
	grep -q "wait until a job ends" msg
'
test_expect_success 'a QOS GrpSubmitJobs counts only the jobs in that QOS' '
	lim account sci GrpSubmitJobs "" &&
	hold 4 chem alice normal &&
	lim qos q3 GrpSubmitJobs 2 &&
	admit q3 600 >out &&
	test "$(json_get admitted <out)" = true &&
	hold 5 chem alice q3 && hold 6 chem2 bob q3 &&
	test_expect_code 1 admit q3 600 >out &&
	test "$(api_status)" = 403 &&
	grep -q "GrpSubmitJobs=2 from job QOS q3" out
'
test_expect_success 'a QOS MaxSubmitJobsPerUser counts the user'"'"'s jobs in that QOS' '
	lim qos q3 GrpSubmitJobs "" &&
	lim qos normal MaxSubmitJobsPerUser 2 &&
	admit q3 600 >out && test "$(json_get admitted <out)" = true &&
	test_expect_code 1 admit normal 600 >out &&
	grep -q "MaxSubmitJobs=2 from job QOS normal" out &&
	lim qos normal MaxSubmitJobsPerUser ""
'
test_expect_success 'QOS MaxWall without DenyOnLimit: admitted, pending reason' '
	lim qos q3 MaxWall 60 &&
	admit q3 5400 >out &&
	test "$(json_get admitted <out)" = true &&
	json_get pending_reason <out >msg && cat msg &&
	grep -q "MaxWallDurationPerJob=60 from job QOS q3: job asks 90 min; lower --time to at most 60 min" msg
'
test_expect_success 'QOS MaxWall with DenyOnLimit, and an association MaxWall: refused' '
	api PATCH /v1/qos/q3 "{\"flags\":\"DenyOnLimit\"}" &&
	test_expect_code 1 admit q3 5400 >out &&
	test "$(api_status)" = 403 &&
	api PATCH /v1/qos/q3 "{\"flags\":\"\"}" &&
	lim qos q3 MaxWall "" &&
	lim assoc c1:chem:alice: MaxWall 60 &&
	test_expect_code 1 admit q3 5400 >out &&
	test "$(api_status)" = 403 &&
	grep -q "MaxWallDurationPerJob=60 from user association" out &&
	lim assoc c1:chem:alice: MaxWall ""
'
test_expect_success 'LimitFactor comes from the QOS record and scales association GrpTRES' '
	lim assoc c1:chem:alice: GrpTRES cpu=30 &&
	api PATCH /v1/qos/q3 "{\"limit_factor\":\"2\"}" &&
	api GET "/v1/limits/effective?cluster=c1&user=alice&account=chem&qos=q3" >out &&
	python3 -c "
import json
rows = {r[\"name\"]: r[\"value\"] for r in json.load(open(\"out\"))[\"items\"]}
assert rows[\"GrpTRES\"] == \"cpu=60\", rows
assert rows[\"LimitFactor\"] == \"2\", rows
" &&
	test_expect_code 1 lim qos q3 LimitFactor 3 >out &&
	test "$(api_status)" = 400 &&
	grep -q limit_factor out
'
test_expect_success 'aliases are stored under the Slurm name: a later set replaces' '
	lim assoc c1:chem:alice: MaxSubmitJobs 50 &&
	lim assoc c1:chem:alice: max_active_jobs 7 &&
	lim assoc c1:chem:alice: max_nodes 4 &&
	lim assoc c1:chem:alice: max_cores 8 &&
	api GET "/v1/limits?scope=assoc&owner=c1:chem:alice:" >out &&
	python3 -c "
import json
rows = [(r[\"name\"], r[\"value\"]) for r in json.load(open(\"out\"))[\"items\"]]
assert sorted(rows) == [(\"GrpTRES\", \"cpu=8\"), (\"MaxSubmitJobs\", \"7\")], rows
"
'
test_expect_success 'stop' 'allotd_stop'
test_done
