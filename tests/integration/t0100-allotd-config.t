#!/bin/bash
# t0100-allotd-config.t - allot.conf errors stop allotd with file:line:key and a reason;
# --check-config; SIGHUP reloads reloadable keys, reports the others, survives a bad file;
# SIGTERM stops cleanly and removes the Unix socket.
test_description='allotd configuration and signals'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

check_conf() {
	printf '%s\n' "$@" >bad.conf &&
	test_expect_code 2 "$ALLOTD_BIN" --config bad.conf --check-config 2>err
}

test_expect_success 'unknown key names file, line and key' '
	check_conf "Threads=2" "Bogus=1" &&
	grep "bad.conf:2: Bogus: unknown key" err
'
test_expect_success 'repeated key (case-insensitive) names both lines' '
	check_conf "Threads=2" "# c" "threads=3" &&
	grep "bad.conf:3: Threads: repeated key (first set on line 1)" err
'
test_expect_success 'bad values say why' '
	check_conf "Threads=257" && grep "Threads: 257 is out of range \[0, 256\]" err &&
	check_conf "StorageType=mysql" && grep "StorageType: .mysql. is not one of sqlite|pg" err &&
	check_conf "ListenAddr=127.0.0.1:99999" && grep "ListenAddr: port" err &&
	check_conf "SuperUsers=root,,x" && grep "SuperUsers: empty entry" err &&
	check_conf "AuthType=none" && grep "AuthType: .none. requires TestMode=local" err
'
test_expect_success 'missing file is an error' '
	test_expect_code 2 "$ALLOTD_BIN" --config nonexistent.conf 2>err &&
	grep "nonexistent.conf: cannot open" err
'
test_expect_success 'a valid file passes --check-config' '
	printf "StorageLoc=%s\nThreads=2\n" "$PWD/x.db" >good.conf &&
	"$ALLOTD_BIN" --config good.conf --check-config >out &&
	grep "configuration OK" out
'
test_expect_success 'etc/allot.conf.example is valid' '
	"$ALLOTD_BIN" --config "$ALLOT_SRC_DIR/etc/allot.conf.example" --check-config
'
test_expect_success 'doc/allotd.md lists exactly the keys of the conf table' '
	"$ALLOTD_BIN" --config-table | grep "^| " >table &&
	grep "^| " "$ALLOT_SRC_DIR/doc/allotd.md" | grep -v "^| metric\|^| .allot_" >doc_table &&
	test_cmp table doc_table
'
test_expect_success 'doc/openapi.yaml describes every route of routes.c and no other' '
	python3 - "$ALLOT_SRC_DIR" <<-\PY
	import re, sys, yaml
	src = sys.argv[1]
	code = open(src + "/src/allotd/routes.c").read()
	routes = set(re.findall(r"\{\"(GET|POST|PATCH|PUT|DELETE)\", \"(/[^\"]*)\"", code))
	api = yaml.safe_load(open(src + "/doc/openapi.yaml"))
	doc = set()
	for path, ops in api["paths"].items():
	    for m in ops:
	        if m in ("get", "post", "patch", "put", "delete"):
	            doc.add((m.upper(), re.sub(r"\{[^}]*\}", "{}", path)))
	assert routes == doc, ("only in code", routes - doc, "only in doc", doc - routes)
	PY
'
test_expect_success 'allotd starts (AuthType=none, test mode) and warns loudly' '
	allotd_start AuthType=none TestMode=local Admins=bob &&
	grep "AUTHENTICATION DISABLED" "$ALLOTD_LOG" &&
	API_USER=alice api GET /v1/whoami >out &&
	test "$(json_get role <out)" = user
'
test_expect_success 'SIGHUP applies reloadable keys and reports the others' '
	sed -i -e "s/^Admins=bob/Admins=alice/" -e "s/^Threads=4/Threads=3/" "$ALLOTD_CONF" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "configuration reloaded" "$ALLOTD_LOG" &&
	API_USER=alice api GET /v1/whoami >out &&
	test "$(json_get role <out)" = admin &&
	grep "needs a restart.*key=Threads" "$ALLOTD_LOG"
'
# The workers open their read connections on first use, here after the reload: the storage
# settings they open it with must outlive the configuration the reload replaced (ASan run).
test_expect_success 'after SIGHUP, workers still open their read connections' '
	for i in 1 2 3 4 5 6 7 8; do
		api GET /v1/accounts >accounts.json && grep -q "\"root\"" accounts.json || return 1
	done
'
test_expect_success 'SIGHUP with a broken file keeps the running configuration' '
	echo "Bogus=1" >>"$ALLOTD_CONF" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "reload failed" "$ALLOTD_LOG" &&
	API_USER=alice api GET /v1/whoami >out &&
	test "$(json_get role <out)" = admin
'
test_expect_success 'SIGTERM stops cleanly and removes the socket' '
	test -S "$ALLOTD_SOCKET" &&
	allotd_stop &&
	test "$ALLOTD_EXIT" = 0 &&
	! test -e "$ALLOTD_SOCKET" &&
	grep "allotd stopped" "$ALLOTD_LOG"
'
test_expect_success 'a second allotd on a busy port fails with a clear message' '
	printf "StorageLoc=%s\nListenAddr=127.0.0.1:%s\n" "$PWD/y.db" "$(find_free_port)" >busy.conf &&
	port=$(sed -n "s/^ListenAddr=127.0.0.1://p" busy.conf) &&
	{ python3 -c "import socket,time,sys
s=socket.socket(); s.bind((\"127.0.0.1\",int(sys.argv[1]))); s.listen(1)
open(\"listening\",\"w\").close(); time.sleep(30)" $port </dev/null >/dev/null 2>&1 & } &&
	echo $! >holder.pid &&
	wait_for 20 test -f listening &&
	# In the foreground and under timeout: an allotd that wrongly started would otherwise
	# outlive the test (exit 124, not 1, then).
	test_expect_code 1 timeout 20 "$ALLOTD_BIN" --config busy.conf --foreground 2>err &&
	grep "ListenAddr 127.0.0.1:$port: Address already in use" err
'
test_expect_success 'cleanup' '
	allotd_stop &&
	kill $(cat holder.pid)
'
test_done
