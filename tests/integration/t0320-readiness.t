#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t0320-readiness.t - liveness and readiness (doc/allotd.md "Liveness and readiness"), and a
# bank allotd cannot write while it runs (doc/allotd.md "Storage faults").  The bank's WAL
# made immutable: every write fails, /healthz (the process lives and reads) stays 200 while
# /readyz (a write can commit now) answers 503, also once its cached answer has aged, and
# both are 200 again, with no restart, when the file can be written.  The shared-memory
# index (-shm) made immutable: allotd, which maps it, must not die of SIGBUS; its writes
# answer 503 meanwhile and succeed again afterwards.  Needs root (chattr).
test_description='liveness vs readiness; a bank that stops taking writes'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test "$(id -u)" = 0 || { skip_all="needs root (chattr)"; test_done; }
test "${ALLOT_TEST_BACKEND:-sqlite}" = sqlite || { skip_all="SQLite's files"; test_done; }

: >probe && chattr +i probe 2>/dev/null && chattr -i probe && test_set_prereq CHATTR
BANK=$PWD/allotd/allot.db
prev_exit_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
trap 'rc=$?; chattr -i "$BANK-wal" "$BANK-shm" 2>/dev/null; (exit $rc); eval "$prev_exit_trap"' EXIT

# status PATH: the HTTP status of an unauthenticated GET (no credential is needed).
status() { curl -s --max-time 20 -o body -w "%{http_code}" "$ALLOTD_URL$1"; }
# write N: one account creation; prints its HTTP status.
write() {
	curl -s --max-time 20 -o wbody -w "%{http_code}" -H "X-Allot-User: root" \
		-H "Content-Type: application/json" --data-binary "{\"name\":\"$1\"}" \
		"$ALLOTD_URL/v1/accounts"
}

test_expect_success 'allotd and a bank: live and ready' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	test "$(status /healthz)" = 200 &&
	test "$(status /readyz)" = 200 &&
	test "$(json_get status <body)" = ready
'
test_expect_success CHATTR 'WAL immutable: writes 503, /healthz 200, /readyz 503' '
	chattr +i "$BANK-wal" &&
	test "$(write w1)" = 503 &&
	test "$(json_get error.code <wbody)" = EUNAVAIL &&
	test "$(status /healthz)" = 200 &&
	test "$(status /readyz)" = 503 &&
	cat body && test "$(json_get error.code <body)" = EUNAVAIL
'
test_expect_success CHATTR 'the cached answer aged: /readyz probes a write, still 503' '
	sleep 1.2 &&
	test "$(status /readyz)" = 503 &&
	test "$(status /healthz)" = 200
'
test_expect_success CHATTR 'storage back: ready again and writes commit, no restart' '
	chattr -i "$BANK-wal" &&
	wait_for 10 sh -c "test \"\$(curl -s -o /dev/null -w %{http_code} $ALLOTD_URL/readyz)\" = 200" &&
	test "$(write w2)" = 201 &&
	kill -0 "$ALLOTD_PID" &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success CHATTR 'shared-memory index immutable: no SIGBUS, 503, then recovery' '
	chattr +i "$BANK-shm" &&
	# written back, its pages are write-protected again: the next store faults
	sync "$BANK-shm" &&
	got=$(write s1) &&
	echo "write with -shm immutable: $got $(cat wbody)" &&
	kill -0 "$ALLOTD_PID" &&
	test "$got" = 503 &&
	test "$(status /healthz)" = 200 &&
	test "$(status /readyz)" = 503 &&
	chattr -i "$BANK-shm" &&
	wait_for 10 sh -c "test \"\$(curl -s -o /dev/null -w %{http_code} $ALLOTD_URL/readyz)\" = 200" &&
	test "$(write s2)" = 201 &&
	kill -0 "$ALLOTD_PID" &&
	! grep -i "sigbus" allotd/stderr &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true &&
	allotd_stop
'
test_done
