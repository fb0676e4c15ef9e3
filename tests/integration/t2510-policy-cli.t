#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2510-policy-cli.t - the CLI of periodic policies (doc/design.md §5, §8.4): allot policy add (ratios
# typed as decimals reach allotd as ppm), show, status (periods, waiting commands, agent),
# dry-run (changes nothing), evaluate, force-reset; allot command list|show (pending since
# when, attempts, result); allot agent status (last seen, backlog, reconcile marker); bad
# input refused with a message naming the key.  Command ids are read from the list (on
# PostgreSQL a rolled-back dry-run still consumes sequence numbers).
test_description='allot policy, allot command, allot agent'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

test_expect_success 'allotd with a 2030 allocation' '
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	allot cluster add c1 &&
	allot account add chem &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc
'
test_expect_success 'policy add: decimals become ppm, SU become SU-minutes' '
	allot --json policy add alloc=$(cat alloc) cluster=c1 period=month base=1000h grace=0.25 \
		carryover_factor=0.5 notify=0.9 slow_qos=slow normal_qos=normal fairshare=10 >out &&
	test "$(json_get grace_ppm <out)" = 250000 &&
	test "$(json_get notify_ppm <out)" = 900000 &&
	test "$(json_get base_sumin <out)" = 60000 &&
	test "$(json_get id <out)" = 1
'
test_expect_success 'policy add refuses bad input naming the key' '
	test_must_fail allot policy add alloc=$(cat alloc) cluster=c1 period=month base=1h grace=x 2>err &&
	grep "grace" err &&
	test_must_fail allot policy add alloc=$(cat alloc) cluster=c1 period=week base=1h 2>err &&
	grep -i "period" err &&
	test_must_fail allot policy add alloc=$(cat alloc) cluster=c1 period=month base=1h colour=red 2>err &&
	grep "colour" err &&
	test_must_fail allot policy frobnicate 2>err && grep "unknown verb" err
'
test_expect_success 'policy add refuses a carryover factor above 1 and a cluster the allocation does not pay on' '
	api POST /v1/allocations "{\"account\":\"chem\",\"resource\":\"gpu\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc_g &&
	test_must_fail allot policy add alloc=$(cat alloc_g) cluster=c1 period=month base=1h carryover_factor=50 2>err &&
	cat err && grep "carryover_factor" err && grep "above 1" err &&
	allot cluster add c2 &&
	test_must_fail allot policy add alloc=$(cat alloc_g) cluster=c2 period=month base=1h 2>err &&
	cat err && grep "cluster" err && grep "c1" err &&
	test "$(allot -P -n policy show | wc -l)" = 1
'
test_expect_success 'policy show lists it' '
	allot -P -n policy show >out && cat out &&
	grep "^1|$(cat alloc)|chem|c1|month|" out
'
test_expect_success 'dry-run at a boundary shows the credit and changes nothing' '
	allot -P policy dry-run 1 now=2030-07-15 >out && cat out &&
	grep "|yes|2030-07|" out &&
	allot -P -n policy status >st && grep "^1|chem|c1||" st
'
test_expect_success 'evaluate opens the period; status shows periods and waiting commands' '
	allot -P policy evaluate 1 now=2030-07-15 >out && cat out &&
	allot policy status 1 >st && cat st &&
	grep "2030-07" st && grep "periods:" st && grep "waiting commands:" st &&
	grep "reset_raw_usage" st && grep "set_limit" st
'
test_expect_success 'command list: pending since when; show one' '
	allot -P command list state=pending >out && cat out &&
	test "$(grep -c "|pending|0|" out)" = 3 &&
	grep "|reset_raw_usage|" out | cut -d"|" -f1 >rid &&
	allot -P -n command show $(cat rid) >one &&
	grep "^$(cat rid)|c1|reset_raw_usage|chem|RawUsage=0|1|2030-07|pending|0|" one
'
test_expect_success 'agent status: never seen, backlog 3; after a poll and results' '
	allot -P -n agent status >out && cat out &&
	grep "^c1||3|" out &&
	API_USER=slurm api POST /v1/agents/c1/poll "{\"max\":1}" >/dev/null &&
	API_USER=slurm api POST /v1/commands/$(cat rid)/result "{\"state\":\"failed\",\"result\":\" Unknown option: x\"}" &&
	allot -P -n command show $(cat rid) >one && cat one &&
	grep "|failed|1|" one && grep "Unknown option: x" one &&
	allot -P -n agent status c1 >out && cat out && grep "^c1|20[0-9-]*T[0-9:]*Z|2|" out
'
test_expect_success 'force-reset queues one more reset' '
	allot -P -n policy force-reset 1 now=2030-07-20 >out && cat out && grep "|reset_raw_usage|chem|" out &&
	test "$(allot -P -n command list policy=1 | grep -c reset_raw_usage)" = 2
'
test_expect_success 'help texts' '
	allot policy --help >h && grep "force-reset" h &&
	allot command --help >h && grep "pending" h &&
	allot agent --help >h && grep "ReconciledUntil" h
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
