#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3140-agent-stop.t - allot-agent on SIGTERM (doc/agent.md): the command being applied is
# finished and its result posted, the rest of the batch is left for its lease and nothing new
# starts (no reconciliation pass); a result that cannot be posted is tried once and the agent
# exits instead of retrying.  The agent runs as
# a daemon (no --once); the fake sacctmgr or sshare (ALLOT_SACCTMGR / ALLOT_SSHARE) signals
# it, their parent, at the chosen moment.  A real allotd on SQLite.
test_description='allot-agent: SIGTERM mid-command and mid-post'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

export ALLOT_TEST_USER=slurm ALLOT_SACCTMGR=$PWD/sacctmgr ALLOT_SSHARE=$PWD/sshare \
	ALLOT_SACCT=$PWD/sacct
# The agent as a daemon: without the signal it would poll for ever, so a run that ends
# inside the bound ended because of the signal.
agent_daemon() {
	run_bounded 30 "$AGENT" --url "$ALLOTD_URL" --cluster c1 --wait 0 "$@"
}
state_of() { api GET /v1/commands/$1 | json_get state; }
resets() { grep -c "RawUsage=0" sacctmgr.calls; }
force_reset() { api POST /v1/policies/$1/force-reset "{}" | json_get id; }

test_expect_success 'allotd with two policies; fake sacctmgr, sshare and sacct' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	for a in chem bio; do
		api POST /v1/accounts "{\"name\":\"$a\"}" &&
		api POST /v1/allocations "{\"account\":\"$a\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
		api POST /v1/policies "{\"alloc\":$(json_get id <out),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000}" >out &&
		json_get id <out >policy.$a || return 1
	done &&
	api POST /v1/policies/tick "{}" >out && test "$(json_get rolled <out)" = 2 &&
	# sacctmgr logs its call; with a file "term" present it first sends SIGTERM to the
	# agent (its parent) and lets the write finish.
	printf "#!/bin/sh\necho \"\$*\" >>\"%s/sacctmgr.calls\"\nif [ -e \"%s/term\" ]; then rm -f \"%s/term\"; kill -TERM \$PPID; sleep 0.2; fi\nexit 0\n" \
		"$PWD" "$PWD" "$PWD" >sacctmgr &&
	# sshare (-n -P -A ACCOUNT ...): RawUsage 0 for the account asked; with a file
	# "termkill" present it first kills allotd -9 and sends SIGTERM to the agent, so the
	# read-back succeeds and the result cannot be posted.
	printf "#!/bin/sh\nif [ -e \"%s/termkill\" ]; then rm -f \"%s/termkill\"; kill -9 \$(cat \"%s/allotd.pid\"); kill -TERM \$PPID; fi\necho \"\$4||0\"\n" \
		"$PWD" "$PWD" "$ALLOTD_DIR" >sshare &&
	printf "#!/bin/sh\nexit 0\n" >sacct &&
	chmod +x sacctmgr sshare sacct &&
	run_bounded 60 "$AGENT" --url "$ALLOTD_URL" --cluster c1 --once --wait 0 2>agent0.log;
	cat agent0.log &&
	test "$(resets)" = 2 &&
	: >sacctmgr.calls
'
test_expect_success 'SIGTERM while sacctmgr runs: that command confirmed, the next left sent' '
	force_reset $(cat policy.chem) >cmd.chem &&
	force_reset $(cat policy.bio) >cmd.bio &&
	test "$(state_of $(cat cmd.chem))" = pending &&
	: >term &&
	agent_daemon 2>agent1.log; rc=$?; cat agent1.log &&
	test $rc = 0 &&
	! test -e term &&
	test "$(resets)" = 1 &&
	test "$(state_of $(cat cmd.chem))" = confirmed &&
	api GET /v1/commands/$(cat cmd.chem) | json_get result | grep "verified RawUsage=0" &&
	test "$(state_of $(cat cmd.bio))" = sent &&
	! grep "reset_raw_usage: $(cat cmd.bio)" agent1.log &&
	! grep "reconcile:" agent1.log
'
test_expect_success 'SIGTERM while the result cannot be posted: one try, then the agent exits' '
	sleep 1.1 && # force-reset is idempotent within a second: a new second, a new command
	force_reset $(cat policy.chem) >cmd.chem2 &&
	test "$(cat cmd.chem2)" != "$(cat cmd.chem)" &&
	: >termkill &&
	agent_daemon 2>agent2.log; rc=$?; cat agent2.log &&
	test $rc != 124 && test $rc != 137 &&
	! test -e termkill &&
	! kill -0 $ALLOTD_PID 2>/dev/null &&
	test "$(resets)" = 2 &&
	test "$(grep -c "for command $(cat cmd.chem2) not posted" agent2.log)" = 1 &&
	! grep "reconcile:" agent2.log
'
test_expect_success 'allotd back: the unposted command is still sent, to be handed out again' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	test "$(state_of $(cat cmd.chem2))" = sent
'
test_expect_success 'stop' 'allotd_stop'
test_done
