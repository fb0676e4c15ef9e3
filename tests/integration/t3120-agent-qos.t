#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3120-agent-qos.t - threshold actions reach a real Slurm (doc/design.md §5): use over 100% of a
# monthly policy downscales account chem to QOS slow; allot-agent applies it with sacctmgr -i
# and confirms it by reading qos back; a policy whose slow QOS does not exist in Slurm gets
# its command reported failed with sacctmgr's own error text ("confirmed" is never
# optimistic; the multi-line text arrives as one line); when usage drops (a refund), the
# normal QOS is restored.
test_description='QOS downscale applied on a real Slurm; a bad QOS fails with its text'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

agent() {
	ALLOT_TEST_USER=slurm run_bounded 120 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" \
		--once --wait 0 --reconcile-every 0
}
settle() { # JOB ACCOUNT CHARGE_SUMIN
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$1,\"elapsed_s\":60,\"state\":\"COMPLETED\",\"source\":\"epilog\",\"start\":$(($(date +%s) - 60)),\"user\":\"root\",\"account\":\"$2\",\"partition\":\"debug\",\"billing\":$3}"
}
cmd_of() { # POLICY KIND: the newest command of that kind as "state|result"
	api GET "/v1/commands?policy=$1" | python3 -c 'import json,sys
c=[x for x in json.load(sys.stdin)["commands"] if x["kind"]==sys.argv[1]]
print(c[-1]["state"]+"|"+c[-1]["result"] if c else "none")' "$2"
}
live_qos() { sacctmgr -P -n show assoc where account=$1 cluster=$SLURM_CLUSTER format=user,qos | sed -n "s/^|//p"; }

test_expect_success 'Slurm with QOS slow; allotd with chem (slow) and phys (nosuchqos)' '
	slurm_start &&
	sacctmgr -i add qos slow >/dev/null &&
	sacctmgr -i add account chem,phys cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start AuthType=none TestMode=local Operators=slurm PolicyTickInterval=3600 &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"debug\",\"resource\":\"cpu\"}" &&
	for a in chem phys; do
		api POST /v1/allocations "{\"account\":\"$a\",\"cluster\":\"$SLURM_CLUSTER\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out || return 1
		echo $(json_get id <out) >alloc_$a
	done &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_chem),\"cluster\":\"$SLURM_CLUSTER\",\"period\":\"month\",\"base_sumin\":100,\"reset_raw_usage\":false,\"slow_qos\":\"slow\",\"normal_qos\":\"normal\"}" &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_phys),\"cluster\":\"$SLURM_CLUSTER\",\"period\":\"month\",\"base_sumin\":100,\"reset_raw_usage\":false,\"slow_qos\":\"nosuchqos\",\"normal_qos\":\"normal\"}" &&
	api POST /v1/policies/tick "{}" &&
	agent 2>agent0.log; cat agent0.log &&
	test "$(cmd_of 1 set_limit | cut -d"|" -f1)" = confirmed
'
test_expect_success 'usage at 110%: downscale applied and confirmed by read-back' '
	settle 1 chem 110 && settle 2 phys 110 &&
	test "$(cmd_of 1 set_qos | cut -d"|" -f1)" = pending &&
	agent 2>agent1.log; cat agent1.log &&
	cmd_of 1 set_qos >st && cat st &&
	test "$(cut -d"|" -f1 <st)" = confirmed && grep -q "qos=slow" st &&
	test "$(live_qos chem)" = slow
'
test_expect_success 'a QOS Slurm does not have: failed, with sacctmgr error text' '
	cmd_of 2 set_qos >st && cat st &&
	test "$(cut -d"|" -f1 <st)" = failed &&
	grep -q "bad qos .nosuchqos." st &&
	test "$(live_qos phys)" != nosuchqos
'
test_expect_success 'usage drops below 100% (refund): the normal QOS is restored' '
	api POST /v1/allocations/$(cat alloc_chem)/credit "{\"kind\":\"refund\",\"amount_sumin\":50}" &&
	api POST /v1/policies/1/evaluate "{}" >out && cat out &&
	agent 2>agent2.log; cat agent2.log &&
	test "$(live_qos chem)" = normal
'
test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
