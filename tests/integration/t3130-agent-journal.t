#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3130-agent-journal.t - allot-agent --journal: a RawUsage reset applied, and recorded in
# the journal, whose result never reached allotd (allotd killed after the read-back) is not
# applied again when the command comes back after its lease: the journal's result is
# posted instead, so sacctmgr ran once.  Without the journal, it runs again (the reason the
# journal exists: a second reset erases the usage accrued in between).  Fake sacctmgr and
# sshare (the agent's ALLOT_SACCTMGR / ALLOT_SSHARE), a real allotd on SQLite.
test_description='allot-agent --journal: an applied command is never applied again'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

export ALLOT_TEST_USER=slurm ALLOT_SACCTMGR=$PWD/sacctmgr ALLOT_SSHARE=$PWD/sshare \
	ALLOT_SACCT=$PWD/sacct
agent() {
	run_bounded 60 "$AGENT" --url "$ALLOTD_URL" --cluster c1 --once --wait 0 "$@"
}
# agent_lose_result [ARGS...]: run the agent with a file "kill" present, so that the fake
# sshare kills allotd -9 after the read-back, and stop the agent (-9) once it has logged
# the result it cannot post (it would retry for a minute).
agent_lose_result() {
	: >kill || return 1
	"$AGENT" --url "$ALLOTD_URL" --cluster c1 --once --wait 0 "$@" 2>lost.log &
	local pid=$! # the agent's own: a "&" ending an && list would give a subshell's
	wait_for 20 grep -q "not posted" lost.log
	local rc=$?
	kill -9 $pid
	wait $pid
	cat lost.log
	return $rc
}
state_of() { api GET /v1/commands/$1 | json_get state; }
resets() { grep -c "RawUsage=0" sacctmgr.calls; }
# The lease of a sent command runs out (allotd hands it out again 300 s after it was sent).
expire_lease() {
	sqlite3 "$ALLOTD_DIR/allot.db" "UPDATE commands SET sent_s = sent_s - 400 WHERE id = $1"
}

test_expect_success 'allotd with a policy; fake sacctmgr and sshare; the policy commands applied' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	api POST /v1/policies "{\"alloc\":$(json_get id <out),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000}" >out &&
	json_get id <out >policy &&
	api POST /v1/policies/tick "{}" >out && test "$(json_get rolled <out)" = 1 &&
	printf "#!/bin/sh\necho \"\$*\" >>\"%s/sacctmgr.calls\"\n" "$PWD" >sacctmgr &&
	# sshare: RawUsage 0 after the reset; with a file "kill" present, first kill -9 allotd
	# (the read-back succeeds, the result cannot be posted).
	printf "#!/bin/sh\nif [ -e \"%s/kill\" ]; then rm -f \"%s/kill\"; kill -9 \$(cat \"%s/allotd.pid\"); fi\necho \"chem||0\"\n" "$PWD" "$PWD" "$ALLOTD_DIR" >sshare &&
	printf "#!/bin/sh\nexit 0\n" >sacct &&
	chmod +x sacctmgr sshare sacct &&
	agent 2>agent0.log; cat agent0.log &&
	test "$(resets)" = 1 &&
	: >sacctmgr.calls
'
test_expect_success 'a reset applied and journaled, its result lost with allotd' '
	api POST /v1/policies/$(cat policy)/force-reset "{}" >out && json_get id <out >cmd &&
	agent_lose_result --journal "$PWD/journal" &&
	! kill -0 $ALLOTD_PID 2>/dev/null &&
	test "$(resets)" = 1 &&
	grep "^A $(cat cmd) 1 " journal
'
test_expect_success 'allotd back, the lease out: the journal answers, sacctmgr does not run' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	test "$(state_of $(cat cmd))" = sent &&
	expire_lease $(cat cmd) &&
	agent --journal "$PWD/journal" 2>agent2.log; cat agent2.log &&
	grep "was applied before; posting its result again" agent2.log &&
	test "$(resets)" = 1 &&
	test "$(state_of $(cat cmd))" = confirmed &&
	api GET /v1/commands/$(cat cmd) | json_get result | grep "verified RawUsage=0" &&
	grep "^K $(cat cmd)\$" journal
'
# force-reset is idempotent within a second (its key names the second): a new second, a
# new command.
test_expect_success 'without the journal the same loss means a second reset' '
	sleep 1.1 &&
	api POST /v1/policies/$(cat policy)/force-reset "{}" >out && json_get id <out >cmd2 &&
	test "$(cat cmd2)" != "$(cat cmd)" &&
	agent_lose_result &&
	test "$(resets)" = 2 &&
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	expire_lease $(cat cmd2) &&
	agent 2>agent4.log; cat agent4.log &&
	test "$(resets)" = 3 &&
	test "$(state_of $(cat cmd2))" = confirmed
'
test_expect_success 'stop' 'allotd_stop'
test_done
