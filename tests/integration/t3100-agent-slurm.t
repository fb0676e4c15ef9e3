#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3100-agent-slurm.t - allot-agent on a real Slurm with slurmdbd: the boundary's commands
# (RawUsage reset, GrpTRESMins limit, fairshare) are applied with sacctmgr -i and confirmed
# by reading them back; a second pass finds them equal and does not write; a command for an
# account Slurm does not have is reported failed with the error text.
test_description='allot-agent applies policy commands on a real Slurm'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

state_of() { api GET /v1/commands/$1 | json_get state; }

test_expect_success 'Slurm cluster with account chem; allotd with a monthly policy' '
	slurm_start &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"ghost\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	api POST /v1/policies "{\"alloc\":$(json_get id <out),\"cluster\":\"$SLURM_CLUSTER\",\"period\":\"month\",\"base_sumin\":1000,\"fairshare\":100}" &&
	api POST /v1/allocations "{\"account\":\"ghost\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	api POST /v1/policies "{\"alloc\":$(json_get id <out),\"cluster\":\"$SLURM_CLUSTER\",\"period\":\"month\",\"base_sumin\":10}" &&
	api POST /v1/policies/tick "{}" >out && test "$(json_get rolled <out)" = 2
'
test_expect_success 'agent applies reset, limit and fairshare, confirmed by read-back' '
	ALLOT_TEST_USER=slurm "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" --once --wait 0 2>agent.log;
	cat agent.log &&
	api GET "/v1/commands?policy=1" >cmds &&
	python3 -c "import json; c=json.load(open(\"cmds\"))[\"commands\"]; assert len(c)==3 and all(x[\"state\"]==\"confirmed\" for x in c), c" &&
	sacctmgr -P -n show assoc where account=chem cluster=$SLURM_CLUSTER format=user,grptresmins,fairshare >live &&
	grep -x "|billing=1200|100" live
'
test_expect_success 'a command for an account Slurm lacks is reported failed with the error text' '
	api GET "/v1/commands?policy=2&state=failed" >cmds &&
	python3 -c "import json; c=json.load(open(\"cmds\"))[\"commands\"]; assert c and all(x[\"result\"] for x in c), c"
'
test_expect_success 'a forced reset is applied again; an equal limit is not rewritten' '
	api POST /v1/policies/1/force-reset "{}" >out && id=$(json_get id <out) &&
	ALLOT_TEST_USER=slurm "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" --once --wait 0 2>agent2.log &&
	test "$(state_of $id)" = confirmed
'
test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
