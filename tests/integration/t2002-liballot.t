#!/bin/bash
# t2002-liballot.t - liballot's typed job verbs (admit, hold, settle) through liballot.so
# against a real allotd over its Unix socket, as the Slurm plugins call them: decisions,
# refusals with their message, replays, charges, and errors carrying allotd's code.
test_description='liballot job verbs against allotd'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
PROG=$ALLOT_BUILD_DIR/src/liballot/liballot_jobverbs
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" && test -x "$PROG" || { skip_all="allot or liballot_jobverbs not built"; test_done; }

# allot over the Unix socket (the trash directory's name has a space: keep it quoted).
A() { "$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" "$@"; }

test_expect_success 'set up a bank with the CLI' '
	munged_start "$PWD/munge" &&
	allotd_start &&
	A cluster add c1 &&
	A account add bio &&
	A user add bob &&
	A assoc add cluster=c1 account=bio user=bob &&
	A account add empty &&
	A assoc add cluster=c1 account=empty user=bob &&
	A partition add std cluster=c1 resource=cpu &&
	A alloc add bio resource=cpu su=100h start=2026-01-01 end=2030-01-01
'
test_expect_success 'admit, refuse, hold, replay, settle, not found through liballot.so' '
	"$PROG" "unix:$ALLOTD_SOCKET" c1 bio bob std >out &&
	cat out &&
	grep "^PASSED" out
'
test_expect_success 'the hold for an unknown account recorded no job' '
	test_expect_code 3 A job show c1:4245 &&
	A job show c1:4243 >empty.out &&
	grep -i "refus\|fail" empty.out
'
test_expect_success 'the ledger shows exactly one hold, release and debit' '
	"$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" -P -n ledger bio job=4242 >l &&
	test "$(cut -d"|" -f4,5 l | tr "\n" " ")" = "hold|2h release|2h debit|3m "
'
test_expect_success 'stop allotd and munged' '
	allotd_stop && munged_stop
'
test_done
