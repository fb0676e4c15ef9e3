#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t5000-allotd-valgrind.t - allotd under valgrind (memcheck, full leak check): every route
# family of the bank API is driven, successes and errors (malformed JSON, unknown fields,
# unknown objects, 404/405, oversized body) and authentication failures (no credential,
# forged, replayed, a plain user on an admin route), then SIGTERM; the test fails on any
# memcheck error or definite/indirect leak (valgrind exits 99).  The CLI runs under valgrind
# too.  Skipped in sanitizer builds (valgrind and ASan do not mix) and without valgrind.
test_description='allotd and allot under valgrind'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
command -v valgrind >/dev/null || { skip_all="valgrind not installed"; test_done; }
if grep -q '^ALLOT_SANITIZE:BOOL=ON' "$ALLOT_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
	skip_all="sanitizer build (valgrind cannot run ASan binaries)"
	test_done
fi
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot

VG_DIR=$PWD/valgrind
mkdir -p "$VG_DIR"
VG_OPTS="--leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --num-callers=30 --track-origins=yes"

# allotd_start runs $ALLOTD_BIN: point it at a wrapper that execs valgrind, so the pid the
# helpers track is valgrind's (same process) and SIGTERM reaches allotd.
REAL_ALLOTD=$ALLOTD_BIN
ALLOTD_BIN=$VG_DIR/allotd-vg
cat >"$ALLOTD_BIN" <<EOF
#!/bin/sh
exec valgrind $VG_OPTS "--log-file=$VG_DIR/allotd.%p.log" "$REAL_ALLOTD" "\$@"
EOF
chmod +x "$ALLOTD_BIN"
# Under valgrind allotd takes tens of times longer to answer its first /healthz and, with
# the leak check, to exit: 20 s was too little with four tests at a time on a slow host.
ALLOTD_WAIT=120

# vg_clean LOG: no errors and no definite/indirect leaks in one valgrind log.
vg_clean() {
	grep -q "ERROR SUMMARY: 0 errors" "$1" || { cat "$1" >&2; return 1; }
}

# api_any: a call whose status does not matter here (the route ran; valgrind judges it).
api_any() { api "$@" >out; return 0; }

# Super-user calls (root, munge) use api; these expect one failing status.
api_fails() {
	local want=$1; shift
	test_expect_code 1 api "$@" >out || return 1
	test "$(api_status)" = "$want" || { echo "want $want, got $(api_status): $(cat out)" >&2; return 1; }
}

test_expect_success 'start munged and allotd under valgrind' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start Operators=root
'
test_expect_success 'public routes: healthz, metrics' '
	API_NOAUTH=1 api GET /healthz >out &&
	API_NOAUTH=1 api GET /metrics >out &&
	grep allot_requests_total out
'
test_expect_success 'auth failures: none, forged, replayed, plain user on admin routes' '
	API_NOAUTH=1 api_fails 401 GET /v1/accounts &&
	API_CRED="MUNGE:$(head -c 96 /dev/urandom | base64 -w0):" api_fails 401 GET /v1/accounts &&
	cred=$(munge -s allot --socket="$MUNGE_SOCKET") &&
	API_CRED=$cred api GET /v1/whoami >out &&
	API_CRED=$cred api_fails 401 GET /v1/whoami &&
	API_RUNAS=nobody api GET /v1/whoami >out &&
	API_RUNAS=nobody api_fails 403 POST /v1/clusters "{\"name\":\"x\"}" &&
	API_RUNAS=nobody api_fails 403 GET /v1/check &&
	API_AS=nobody api GET /v1/whoami >out
'
test_expect_success 'reference data: clusters, accounts, users, assocs, partitions' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/clusters "{\"name\":\"gone\"}" &&
	api DELETE /v1/clusters/gone &&
	api GET /v1/clusters >out &&
	api POST /v1/accounts "{\"name\":\"science\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\",\"parent\":\"science\",\"shares\":10}" &&
	api POST /v1/accounts "{\"name\":\"tmp\"}" &&
	api PATCH /v1/accounts/tmp "{\"description\":\"temporary\"}" &&
	api GET /v1/accounts/tmp >out &&
	api DELETE /v1/accounts/tmp &&
	api GET /v1/accounts >out &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/users "{\"name\":\"bob\"}" &&
	api GET /v1/users/alice >out &&
	api GET /v1/users >out &&
	api DELETE /v1/users/bob &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api GET "/v1/assocs?user=alice" >out &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0,Mem=0.25G\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"old\",\"resource\":\"cpu\"}" &&
	api GET /v1/partitions/c1/std >out &&
	api GET /v1/partitions >out &&
	api DELETE /v1/partitions/c1/old
'
test_expect_success 'reference data errors' '
	api_fails 409 POST /v1/accounts "{\"name\":\"chem\"}" &&
	api_fails 404 GET /v1/accounts/nosuch &&
	api_fails 400 POST /v1/accounts "{\"name\":\"x\",\"bogus\":1}" &&
	api_fails 400 POST /v1/accounts "{\"name\":" &&
	api_fails 400 POST /v1/accounts "[1,2,3]" &&
	api_fails 400 POST /v1/users "{\"name\":\"bad name!\"}" &&
	api_fails 409 PATCH /v1/accounts/science "{\"parent\":\"chem\"}" &&
	api_fails 404 DELETE /v1/clusters/nosuch &&
	api_fails 404 GET /v1/nosuch &&
	api_fails 405 PUT /v1/accounts "{}" &&
	python3 -c "print(\"{\\\"name\\\":\\\"\" + \"a\"*70000 + \"\\\"}\")" >big &&
	api_fails 413 POST /v1/accounts "$(cat big)"
'
test_expect_success 'sync drifts: put twice, read, metrics, refusals' '
	api PUT /v1/sync/c1 "{\"mode\":\"report\",\"drifts\":[{\"kind\":\"partition\",\"object\":\"std\",\"field\":\"billing_weights\",\"slurm\":\"CPU=4.0\",\"allot\":\"CPU=1.0\",\"status\":\"reported\"},{\"kind\":\"user\",\"object\":\"carol\",\"field\":\"exists\",\"slurm\":\"default_account=chem\",\"status\":\"reported\"}]}" &&
	api PUT /v1/sync/c1 "{\"mode\":\"follow\",\"resolved\":1,\"drifts\":[{\"kind\":\"partition\",\"object\":\"std\",\"field\":\"billing_weights\",\"slurm\":\"CPU=4.0\",\"allot\":\"CPU=1.0\",\"status\":\"failed\",\"note\":\"403\"}]}" &&
	api GET /v1/sync >out && test "$(json_get items.0.status <out)" = failed &&
	API_NOAUTH=1 api GET /metrics >out && grep "allot_sync_drifts{cluster=\"c1\",kind=\"partition\"} 1" out &&
	api_fails 400 PUT /v1/sync/c1 "{\"mode\":\"report\",\"drifts\":[{\"kind\":\"node\",\"object\":\"n\",\"field\":\"f\",\"status\":\"reported\"}]}" &&
	api_fails 400 PUT /v1/sync/c1 "{\"mode\":\"report\",\"drifts\":[7]}" &&
	api_fails 404 PUT /v1/sync/nosuch "{\"mode\":\"report\",\"drifts\":[]}"
'
test_expect_success 'allocations, credit, balances, ledger' '
	api POST /v1/allocations "{\"account\":\"science\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" >out &&
	json_get id <out >alloc_id &&
	api POST /v1/allocations/$(cat alloc_id)/credit "{\"amount_sumin\":60,\"idempotency_key\":\"k1\"}" &&
	api POST /v1/allocations/$(cat alloc_id)/credit "{\"amount_sumin\":60,\"idempotency_key\":\"k1\"}" &&
	api GET /v1/allocations/$(cat alloc_id) >out &&
	api GET /v1/allocations >out &&
	api GET "/v1/balances?account=science" >out &&
	api GET "/v1/ledger?alloc=$(cat alloc_id)" >out &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2021-01-01\"}" >out &&
	api DELETE /v1/allocations/$(json_get id <out) &&
	api_fails 409 POST /v1/allocations "{\"account\":\"science\",\"start\":\"2020-06-01\",\"end\":\"2021-01-01\"}" &&
	api_fails 400 POST /v1/allocations "{\"account\":\"science\",\"start\":\"yesterday\",\"end\":\"2021-01-01\"}" &&
	api_fails 400 POST /v1/allocations/$(cat alloc_id)/credit "{\"amount_sumin\":-5}" &&
	api_fails 404 GET /v1/allocations/999999
'
test_expect_success 'jobs: admit, hold, settle, release, refusal, listings' '
	api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":3600,\"tres\":\"cpu=2,mem=1G\"}" >out &&
	api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"tres\":\"cpu=2\"}" &&
	api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"tres\":\"cpu=2\"}" &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":1,\"elapsed_s\":100,\"state\":\"COMPLETED\",\"source\":\"epilog\"}" &&
	api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":2,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"billing\":1}" &&
	api POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":2}" &&
	api_fails 402 POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":3,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":360000,\"billing\":64}" &&
	api_fails 402 POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":360000,\"tres\":\"cpu=64\"}" &&
	api_fails 400 POST /v1/jobs/hold "{\"cluster\":\"c1\"}" &&
	api_fails 404 POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":77}" &&
	api GET "/v1/jobs?cluster=c1" >out &&
	api GET /v1/jobs/c1/1 >out &&
	api GET /v1/failures >out &&
	api GET /v1/reports/usage >out &&
	api GET "/v1/reports/usage?group=resource&period=alloc" >out &&
	api GET "/v1/reports/usage?group=user&period=quarter&start=2020-01-01" >out &&
	api_fails 400 GET "/v1/reports/usage?group=qos" &&
	api_fails 400 GET "/v1/reports/usage?period=week" &&
	api GET /v1/check >out &&
	test "$(json_get ok <out)" = true
'
test_expect_success 'fair-share views: share, tree, usage, priority' '
	api GET /v1/share >out &&
	api GET /v1/tree >out &&
	api GET /v1/usage >out &&
	api_any POST /v1/usage/clear "{\"cluster\":\"c1\",\"account\":\"chem\"}" &&
	api_any GET /v1/priority/c1/1
'
test_expect_success 'policies, evaluations, commands, agents, steps' '
	api POST /v1/policies "{\"alloc\":$(cat alloc_id),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":100,\"initial\":\"add\"}" >out &&
	json_get id <out >pol_id &&
	api GET /v1/policies >out &&
	api GET /v1/policies/$(cat pol_id) >out &&
	api POST /v1/policies/$(cat pol_id)/dry-run "{\"now\":\"2030-02-01\"}" >out &&
	api_any POST /v1/policies/$(cat pol_id)/evaluate "{\"now\":\"2030-02-01\"}" &&
	api_any POST /v1/policies/tick "{\"now\":\"2030-03-01\"}" &&
	api_any POST /v1/policies/$(cat pol_id)/force-reset "{}" &&
	api GET /v1/evaluations >out &&
	api POST /v1/agents/c1/poll "{\"max\":10,\"lease_s\":30}" >out &&
	api GET /v1/commands >out &&
	api GET /v1/agents/c1 >out &&
	api_fails 404 GET /v1/commands/999999 &&
	api_fails 404 GET /v1/policies/999999 &&
	api_any POST /v1/agents/c1/reconcile "{}" &&
	api GET /v1/steps >out &&
	api_any POST /v1/steps "{}"
'
test_expect_success 'the CLI under valgrind: whoami, balance, error' '
	valgrind $VG_OPTS --log-file="$VG_DIR/allot.%p.log" "$ALLOT_BIN" --url "$ALLOTD_URL" whoami &&
	valgrind $VG_OPTS --log-file="$VG_DIR/allot.%p.log" "$ALLOT_BIN" --url "$ALLOTD_URL" -P balance >out &&
	test_expect_code 3 valgrind $VG_OPTS --log-file="$VG_DIR/allot.%p.log" "$ALLOT_BIN" --url "$ALLOTD_URL" account show nosuch &&
	for f in "$VG_DIR"/allot.*.log; do vg_clean "$f" || return 1; done
'
test_expect_success 'SIGTERM: allotd exits 0 with no valgrind error or leak' '
	allotd_stop &&
	test "$ALLOTD_EXIT" = 0 &&
	for f in "$VG_DIR"/allotd.*.log; do vg_clean "$f" || return 1; done
'
test_expect_success 'cleanup' 'munged_stop'
test_done
