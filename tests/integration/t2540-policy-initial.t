#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2540-policy-initial.t - a policy added to an allocation that was already granted SU: the
# base it credits each period would come on top of the grant (10h granted + base 10h = 20h
# in the first period), so `policy add` refuses unless initial=add (keep the grant beside
# the first base) or initial=expire (its free balance expires in the add's transaction)
# says which.  And `alloc add su=0h` (or su=0, amount_sumin 0) makes an empty allocation,
# as leaving su= out does.
test_description='policy add on a granted allocation; alloc add su=0'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
granted() { allot --json alloc show "$1" >g.json && json_get granted_sumin <g.json; }
available() { allot --json alloc show "$1" >g.json && json_get available_sumin <g.json; }

test_expect_success 'allotd, three accounts on cluster c1' '
	allotd_start AuthType=none TestMode=local TimeZone=UTC &&
	allot cluster add c1 &&
	allot account add chem && allot account add phys && allot account add bio
'
test_expect_success 'alloc add su=0h, su=0 and amount_sumin 0 make empty allocations' '
	allot -P -n alloc add chem resource=cpu cluster=c1 su=0h start=2030-01-01 \
		end=2031-01-01 >out && cat out &&
	cut -d"|" -f1 out >alloc_chem &&
	test "$(granted $(cat alloc_chem))" = 0 &&
	allot -P -n alloc add chem resource=gpu cluster=c1 su=0 start=2030-01-01 \
		end=2031-01-01 >out && cat out &&
	test "$(granted $(cut -d"|" -f1 out))" = 0 &&
	api POST /v1/allocations "{\"account\":\"bio\",\"start\":\"2040-01-01\",\"end\":\"2041-01-01\",\"amount_sumin\":0}" >out &&
	test "$(json_get granted_sumin <out)" = 0 &&
	api POST /v1/allocations "{\"account\":\"bio\",\"start\":\"2041-01-01\",\"end\":\"2042-01-01\",\"su\":\"0h\"}" >out &&
	test "$(json_get granted_sumin <out)" = 0 &&
	allot ledger alloc=$(cat alloc_chem) >l && ! grep "initial grant" l
'
test_expect_success 'a negative amount is still refused' '
	test_must_fail allot alloc add bio resource=gpu su=-1h start=2030-01-01 end=2031-01-01 2>err &&
	cat err && grep "su: " err &&
	api_bad 400 amount_sumin POST /v1/allocations "{\"account\":\"bio\",\"resource\":\"gpu\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\",\"amount_sumin\":-60}"
'
test_expect_success 'policy add on an allocation granted 10h is refused, naming initial=' '
	allot -P -n alloc add phys resource=cpu cluster=c1 su=10h start=2030-01-01 \
		end=2031-01-01 >out &&
	cut -d"|" -f1 out >alloc_phys &&
	test_expect_code 2 allot policy add alloc=$(cat alloc_phys) cluster=c1 period=month \
		base=10h 2>err && cat err &&
	grep "^allot: error: initial: allocation $(cat alloc_phys) was already granted 10h SU" err &&
	grep "initial=add" err && grep "initial=expire" err &&
	test "$(allot -P -n policy show | wc -l)" = 0 &&
	test "$(granted $(cat alloc_phys))" = 600
'
test_expect_success 'initial= takes add or expire only' '
	test_expect_code 2 allot policy add alloc=$(cat alloc_phys) cluster=c1 period=month \
		base=10h initial=keep 2>err && cat err &&
	grep "initial: .keep. is not add or expire" err &&
	test "$(allot -P -n policy show | wc -l)" = 0
'
test_expect_success 'initial=add keeps the grant beside the first period base: 20h' '
	allot --json policy add alloc=$(cat alloc_phys) cluster=c1 period=month base=10h \
		initial=add >out &&
	json_get id <out >pol_phys &&
	allot -P policy evaluate $(cat pol_phys) now=2030-07-15 >out && cat out &&
	test "$(granted $(cat alloc_phys))" = 1200
'
test_expect_success 'initial=expire lets the free balance expire: the first period holds its base' '
	allot -P -n alloc add bio resource=cpu cluster=c1 su=10h start=2030-01-01 \
		end=2031-01-01 >out &&
	cut -d"|" -f1 out >alloc_bio &&
	allot --json policy add alloc=$(cat alloc_bio) cluster=c1 period=month base=10h \
		initial=expire >out &&
	json_get id <out >pol_bio &&
	test "$(granted $(cat alloc_bio))" = 0 &&
	allot --json ledger alloc=$(cat alloc_bio) >l &&
	python3 -c "import json; e=[x for x in json.load(open(\"l\"))[\"items\"] if x[\"kind\"]==\"expiry\"]; assert len(e)==1 and e[0][\"amount_sumin\"]==600, e; assert \"initial=expire\" in e[0][\"comment\"], e; assert e[0][\"actor\"]==\"root\", e" &&
	allot -P policy evaluate $(cat pol_bio) now=2030-07-15 >out &&
	test "$(granted $(cat alloc_bio))" = 600 &&
	test "$(available $(cat alloc_bio))" = 600
'
test_expect_success 'an allocation with no grant needs no initial=' '
	allot --json policy add alloc=$(cat alloc_chem) cluster=c1 period=month base=10h >out &&
	json_get id <out
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
