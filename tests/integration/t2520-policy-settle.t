#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2520-policy-settle.t - thresholds are evaluated on each settle (doc/design.md §5.5), not only on
# the clock: with PolicyTickInterval=3600 (the clock passes once at start, then sleeps), a
# settle that takes use over 100% enqueues the downscale to the slow QOS at once, one over
# 120% the pause, in the same transaction as the debit; an unknown PolicyTickInterval value
# is refused at startup with the key named.  The settle to 110% is of a held run, which on
# PostgreSQL the batch statement commits by itself: the writer must still run its
# threshold check (writer.c needs_tx).  A top-up by hand (`allot credit`) raises the period's
# total: it pushes the new limit and lifts the pause and the slow QOS in its own transaction;
# one made after midnight before the clock ran the boundary is the new period's.
test_description='policy evaluation on settle, PolicyTickInterval'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

settle() { # JOB CHARGE_SUMIN: a post-paid run that started a minute ago
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,\"elapsed_s\":60,\"state\":\"COMPLETED\",\"source\":\"epilog\",\"start\":$(($(date +%s) - 60)),\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"billing\":$2}"
}
nkind() { api GET "/v1/commands?policy=1" |
	python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for c in json.load(sys.stdin)["commands"] if c["kind"]==k))' "$1"; }

test_expect_success 'a bad PolicyTickInterval stops startup naming the key' '
	mkdir bad && printf "StorageLoc=%s\nPolicyTickInterval=0\n" "$PWD/bad/x.db" >bad/allot.conf &&
	test_must_fail "$ALLOTD_BIN" --config bad/allot.conf --foreground 2>err &&
	grep PolicyTickInterval err
'
test_expect_success 'allotd with a slow clock; monthly policy on a current allocation' '
	allotd_start AuthType=none TestMode=local Operators=slurm PolicyTickInterval=3600 &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	api POST /v1/policies "{\"alloc\":$(json_get id <out),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":100,\"carryover\":false,\"slow_qos\":\"slow\",\"normal_qos\":\"normal\"}" &&
	api POST /v1/policies/1/evaluate "{}" >out &&
	test "$(json_get boundary.rolled <out)" = true &&
	test "$(nkind set_qos)" = 0
'
test_expect_success 'a settle to 90% notifies only; a held run pays at most its hold; 110% downscales at once' '
	settle 1 90 >out && test "$(json_get job.charge_sumin <out)" = 90 &&
	test "$(nkind set_qos)" = 0 &&
	api GET "/v1/evaluations?policy=1" >ev &&
	test "$(json_get evaluations.0.actions <ev)" = notify &&
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":2,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":30,\"billing\":20}" >out &&
	test "$(json_get held <out)" = true &&
	settle 2 20 >out && test "$(json_get job.charge_sumin <out)" = 10 &&
	settle 4 10 >out && test "$(json_get job.charge_sumin <out)" = 10 &&
	test "$(nkind set_qos)" = 1 &&
	api GET "/v1/commands?policy=1" >cmds && grep -q "qos=slow" cmds &&
	test "$(nkind set_grpjobs)" = 0
'
test_expect_success 'over (1 + grace) x 100% pauses (GrpJobs=0); a replayed settle adds nothing' '
	settle 3 20 && test "$(nkind set_grpjobs)" = 1 &&
	settle 3 20 >out && test "$(json_get replay <out)" = true &&
	test "$(nkind set_grpjobs)" = 1 && test "$(nkind set_qos)" = 1 &&
	grep -q "by=settle" "$ALLOTD_LOG"
'
test_expect_success 'a top-up by hand (allot credit) lifts the pause and the slow QOS at once' '
	api GET /v1/policies/1 >pol && test "$(json_get period_total_sumin <pol)" = 100 &&
	allot credit $(json_get alloc <pol) su=50m comment="committee top-up" &&
	api GET /v1/policies/1 >pol && test "$(json_get period_total_sumin <pol)" = 150 &&
	test "$(json_get flags <pol)" = 1 &&
	test "$(nkind set_limit)" = 2 && test "$(nkind set_qos)" = 2 && test "$(nkind set_grpjobs)" = 2 &&
	api GET "/v1/commands?policy=1" >cmds &&
	grep -q "GrpTRESMins=billing=180" cmds && grep -q "qos=normal" cmds && grep -q "GrpJobs=-1" cmds &&
	grep -q "actions=\"downscale-clear,pause-clear\".*by=credit" "$ALLOTD_LOG"
'
test_expect_success 'a top-up made after midnight, before the clock ran the boundary, is the new period'"'"'s' '
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	json_get id <out >alloc_p &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_p),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":100,\"carryover\":false}" >out &&
	json_get id <out >pol_p &&
	last_month=$(date -u -d "$(date -u +%Y-%m-01) - 1 day" +%Y-%m-%dT12:00:00Z) &&
	api POST /v1/policies/$(cat pol_p)/evaluate "{\"now\":\"$last_month\"}" &&
	allot credit $(cat alloc_p) su=50m comment="committee top-up" &&
	api GET /v1/policies/$(cat pol_p) >pol && cat pol &&
	test "$(json_get current_period <pol)" = "$(date -u +%Y-%m)" &&
	test "$(json_get period_total_sumin <pol)" = 150 &&
	grep -q "policy=$(cat pol_p) from=\"${last_month%-*}\" .*by=credit" "$ALLOTD_LOG"
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
