#!/bin/bash
# t2000-cli.t - the allot CLI against a real allotd (private munged, SQLite): a full operator
# session (clusters, accounts, users, associations, partitions, allocations, balance, job
# admit/hold/settle, ledger, failures, credit), the three output forms (-P and --json are
# parsed here), both transports (TCP and the Unix socket), and the exit statuses of errors.
test_description='allot CLI operator session'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup

id -u allot_alice >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin allot_alice
command -v python3 >/dev/null && test_set_prereq PYTHON3

test_expect_success 'start munged and allotd' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start
'
test_expect_success 'whoami over TCP and over the Unix socket' '
	allot -P -n whoami >out &&
	test "$(cut -d"|" -f1,3 out)" = "root|superuser" &&
	"$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" -P -n whoami >out2 &&
	test_cmp out out2 &&
	ALLOT_URL="unix:$ALLOTD_SOCKET" "$ALLOT_BIN" -P -n whoami >out3 &&
	test_cmp out out3
'
test_expect_success 'cluster, accounts, user, association, partition' '
	allot cluster add darwin &&
	allot account add science &&
	allot account add chem parent=science fairshare=100 "description=Chemistry dept" &&
	allot user add alice uid=1001 &&
	allot user add allot_alice &&
	allot assoc add cluster=darwin account=chem user=alice &&
	allot assoc add cluster=darwin account=chem user=allot_alice &&
	allot partition add standard cluster=darwin resource=cpu &&
	allot partition add gpu cluster=darwin resource=gpu \
		billing=CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0 maxtres=yes maxtime=7-00:00:00
'
test_expect_success 'show prints tables; -P is |-separated with a header; -n drops it' '
	allot account show >table &&
	grep "^Account  *Parent  *Shares" table &&
	grep "^chem  *science  *100 " table &&
	allot -P account show chem >p &&
	printf "Account|Parent|Shares|Organization|Description|Coordinators\nchem|science|100||Chemistry dept|\n" >expect &&
	test_cmp expect p &&
	allot -P -n assoc show account=chem >assocs &&
	test $(wc -l <assocs) = 2 &&
	grep "^darwin|chem|alice|" assocs &&
	allot -P -n partition show gpu cluster=darwin >gpu &&
	test "$(cut -d"|" -f1-5,8 gpu)" = "darwin|gpu|gpu|CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0|yes|7-00:00:00"
'
test_expect_success 'assoc show partition= lists that partition'"'"'s associations only' '
	allot assoc add cluster=darwin account=chem user=alice partition=gpu &&
	allot -P -n assoc show account=chem partition=gpu >pa &&
	test $(wc -l <pa) = 1 &&
	grep "^darwin|chem|alice|gpu|" pa &&
	allot -P -n assoc show account=chem >all &&
	test $(wc -l <all) = 3 &&
	allot assoc remove cluster=darwin account=chem user=alice partition=gpu
'
test_expect_success 'alloc add with hour amounts; -P -n prints the new id' '
	allot -P -n alloc add chem resource=cpu su=100h start=2026-01-01 end=2099-01-01 \
		category=research >alloc &&
	id=$(cut -d"|" -f1 alloc) &&
	test "$id" -ge 1 &&
	echo $id >alloc_id &&
	test "$(cut -d"|" -f2,3,8,11 alloc)" = "chem|cpu|100h|100h"
'
test_expect_success 'balance: table, -P and --json agree' '
	allot balance >b &&
	grep "^ *$(cat alloc_id)  *chem  *cpu " b &&
	allot -P balance chem >bp &&
	head -1 bp >hdr &&
	echo "Allocation|Account|Resource|Cluster|Category|Granted|Used|Held|Available|Period" >expect &&
	test_cmp expect hdr &&
	test "$(sed -n 2p bp | cut -d"|" -f2,6-10)" = "chem|100h|0h|0h|100h|2026-01-01..2099-01-01" &&
	allot --json balance account=chem >bj &&
	test "$(json_get items.0.available_sumin <bj)" = 6000 &&
	test "$(json_get items.0.granted_sumin <bj)" = 6000
'
test_expect_success 'job admit within the balance: admitted, cost shown' '
	allot -P -n job admit user=alice account=chem partition=standard timelimit=60 tres=cpu=4 >adm &&
	test "$(cut -d"|" -f1,2,3,4,5 adm)" = "admitted|$(cat alloc_id)|chem|4|4h"
'
test_expect_success 'job admit beyond the balance: exit 1, the reason on stderr, numbers on stdout' '
	test_expect_code 1 allot -P -n job admit user=alice account=chem partition=standard \
		timelimit=6000 tres=cpu=4 >deny 2>err &&
	test "$(cut -d"|" -f1,5 deny)" = "refused|400h" &&
	grep "^allot: error: .*chem.*available 100h" err &&
	allot --json job admit user=alice account=chem partition=standard timelimit=60 tres=cpu=4 >aj &&
	test "$(json_get admitted <aj)" = true &&
	test "$(json_get cost_sumin <aj)" = 240
'
test_expect_success 'job hold takes the maximum cost; balance shows it held' '
	allot -P -n job hold jobid=1001 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=4 start=2026-03-01T10:00:00Z >hold &&
	test "$(cut -d"|" -f1,6 hold)" = "held|4h" &&
	allot -P -n balance chem >b2 &&
	test "$(cut -d"|" -f7-9 b2)" = "0h|4h|96h"
'
test_expect_success 'job hold repeated is a replay, not a second hold' '
	allot --json job hold jobid=1001 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=4 start=2026-03-01T10:00:00Z >h2 &&
	test "$(json_get replay <h2)" = true &&
	allot -P -n balance chem >b3 &&
	test "$(cut -d"|" -f8 b3)" = 4h
'
test_expect_success 'job settle charges the elapsed time and releases the rest' '
	allot -P -n job settle jobid=1001 elapsed=30:00 state=COMPLETED end=2026-03-01T10:30:00Z >st &&
	test "$(cut -d"|" -f1,6,7 st)" = "settled|4h|2h" &&
	allot -P -n balance chem >b4 &&
	test "$(cut -d"|" -f6-9 b4)" = "100h|2h|0h|98h"
'
test_expect_success 'a hold the balance cannot cover: exit 1 and a failure row' '
	test_expect_code 1 allot job hold jobid=1002 user=alice account=chem partition=standard \
		timelimit=2-00:00:00 tres=cpu=4 start=2026-03-02T00:00:00Z >h3 2>err &&
	grep "^allot: error: " err &&
	allot -P -n failures account=chem >f &&
	test $(wc -l <f) = 1 &&
	test "$(cut -d"|" -f3,4,5,7,8,9 f)" = "darwin:1002|alice|chem|hold|192h|98h"
'
test_expect_success 'a hold naming no association is not found: exit 3, no job, no failure' '
	allot account add physics &&
	allot user add bob uid=1002 &&
	nohold() {
		test_expect_code 3 allot job hold jobid=1003 "$@" partition=standard timelimit=60 \
			tres=cpu=1 start=2026-03-02T00:00:00Z 2>err &&
		grep "^allot: error: .*has no association with account" err
	} &&
	nohold user=nobody account=chem && grep "no such user" err &&
	nohold user=alice account=nosuch && grep "no such account" err &&
	nohold user=bob account=chem &&
	nohold user=alice account=physics &&
	test_expect_code 3 allot job show darwin:1003 &&
	allot -P -n failures >f &&
	test $(wc -l <f) = 1 &&
	allot -P -n balance chem >b5 &&
	test "$(cut -d"|" -f6-9 b5)" = "100h|2h|0h|98h" &&
	allot account remove physics &&
	allot user remove bob
'
test_expect_success 'ledger: credit, hold, release, debit of the job, in order' '
	allot -P -n ledger chem >l &&
	test "$(cut -d"|" -f4,5,7 l | tr "\n" " ")" = \
		"credit|100h| hold|4h|darwin:1001 release|4h|darwin:1001 debit|2h|darwin:1001 " &&
	allot -P -n ledger alloc=$(cat alloc_id) job=1001 cluster=darwin >l2 &&
	test $(wc -l <l2) = 3 &&
	allot --json ledger chem >lj &&
	test "$(json_get items.3.kind <lj)" = debit &&
	test "$(json_get items.3.amount_sumin <lj)" = 120
'
test_expect_success 'ledger limit=: a page that is not the last names the next, on stderr' '
	allot -P -n ledger chem limit=2 >p1 2>e1 &&
	test $(wc -l <p1) = 2 &&
	last=$(tail -1 p1 | cut -d"|" -f1) &&
	grep "^allot: note: stopped at limit=2; there are more entries: add after=$last for the next page\$" e1 &&
	allot -P -n ledger chem limit=2 after=$last >p2 2>e2 &&
	test $(wc -l <p2) = 2 &&
	test_must_be_empty e2 &&
	last2=$(tail -1 p2 | cut -d"|" -f1) &&
	allot --json ledger chem limit=2 after=$last >j2 &&
	! grep next_after j2 &&
	allot -P -n ledger chem limit=2 after=$last2 >p3 2>e3 &&
	test_must_be_empty p3 &&
	test_must_be_empty e3 &&
	allot -P -n ledger chem >all 2>e4 &&
	test_must_be_empty e4 &&
	cat p1 p2 >both &&
	test_cmp all both &&
	allot -P -n ledger chem limit=10 >/dev/null 2>e5 &&
	test_must_be_empty e5 &&
	allot --json ledger chem limit=2 >j 2>e6 &&
	test "$(json_get next_after <j)" = "$last" &&
	grep "after=$last for the next page" e6 &&
	allot ledger chem limit=2 >t 2>e7 &&
	! grep "note" t &&
	grep "after=$last" e7
'
test_expect_success 'failures and job show limit=: a full list suggests a larger limit' '
	allot -P -n failures account=chem limit=1 >f1 2>e1 &&
	test $(wc -l <f1) = 1 &&
	grep "^allot: note: stopped at limit=1; there may be more failures: give a larger limit=" e1 &&
	allot -P -n failures account=chem limit=5 >f5 2>e5 &&
	test_cmp f1 f5 &&
	test_must_be_empty e5 &&
	allot -P -n job show account=chem limit=1 >j1 2>e1 &&
	test $(wc -l <j1) = 1 &&
	grep "more jobs: give a larger limit=" e1 &&
	allot -P -n job show account=chem limit=1000 >/dev/null 2>e2 &&
	test_must_be_empty e2
'
test_expect_success 'job show: runs, ledger and failures of one job' '
	allot job show 1001 >js &&
	grep "^Runs:" js && grep "^Ledger:" js &&
	grep "darwin  *1001  *0  *alice  *chem  *standard  *settled" js &&
	allot --json job show darwin:1001 >jj &&
	test "$(json_get runs.0.charge_sumin <jj)" = 120
'
test_expect_success 'credit adds a ledger entry; an adjustment may be negative' '
	allot -P -n credit $(cat alloc_id) su=10h comment=supplement >c &&
	test "$(cut -d"|" -f4,5,7 c)" = "credit|10h|supplement" &&
	allot -P -n credit $(cat alloc_id) su=-1h30m kind=adjustment comment=fix >c2 &&
	test "$(cut -d"|" -f4,5 c2)" = "adjustment|-1h30m" &&
	allot -P -n balance chem >b5 &&
	test "$(cut -d"|" -f6,9 b5)" = "108h30m|106h30m"
'
test_expect_success 'a plain user sees the balance of an account they belong to' '
	runuser -u allot_alice -- "$ALLOT_BIN" --url "$ALLOTD_URL" -P -n whoami >w &&
	test "$(cut -d"|" -f1,3 w)" = "allot_alice|user" &&
	runuser -u allot_alice -- "$ALLOT_BIN" --url "$ALLOTD_URL" -P -n balance >ub &&
	grep "^$(cat alloc_id)|chem|" ub
'
test_expect_success 'a plain user may not add accounts: exit 4' '
	test_expect_code 4 runuser -u allot_alice -- "$ALLOT_BIN" --url "$ALLOTD_URL" \
		account add rogue 2>err &&
	grep "^allot: error: " err
'
test_expect_success 'limits show fills in the only cluster, as job show does' '
	allot -P limits show alice account=chem partition=standard >lim &&
	allot -P limits show alice account=chem partition=standard cluster=darwin >lim2 &&
	test_cmp lim2 lim &&
	allot cluster add other &&
	test_expect_code 2 allot limits show alice account=chem 2>err &&
	grep "cluster: required" err &&
	allot cluster remove other
'
test_expect_success 'job show and job show -P print the Slurm state' '
	allot job show 1001 >js2 &&
	grep "^Cluster .* Status  *State " js2 &&
	grep "settled  *COMPLETED " js2 &&
	allot -P -n job show 1001 >jsp &&
	test "$(head -1 jsp | cut -d"|" -f7,8)" = "settled|COMPLETED"
'
test_expect_success 'a refused hold shows its cost, available and held from the failure' '
	test_expect_code 1 allot -P -n job hold jobid=1003 user=alice account=chem \
		partition=standard timelimit=2-00:00:00 tres=cpu=4 start=2026-03-02T00:00:00Z \
		>h4 2>err &&
	test "$(cut -d"|" -f1,5,8,9 h4)" = "refused|192h|106h30m|0h" &&
	grep "^allot: error: job 1003 run 0: account chem, allocation [0-9]* (cpu of account chem): available 106h30m SU, but this job may cost up to 192h SU" err
'
test_expect_success 'balance user=U lists only accounts U is associated with' '
	allot account add phys &&
	allot alloc add phys resource=cpu su=5h start=2026-01-01 end=2099-01-01 &&
	allot -P -n balance >all &&
	grep "|phys|" all &&
	allot -P -n balance user=alice >ub &&
	grep "|chem|" ub &&
	! grep "|phys|" ub &&
	test_expect_code 3 allot balance user=nosuch
'
test_expect_success 'qos remove refuses a QOS an association or a partition uses: exit 3' '
	allot qos add normal &&
	allot qos add long &&
	allot assoc modify cluster=darwin account=chem user=alice defaultqos=normal &&
	test_expect_code 3 allot qos remove normal 2>err &&
	grep "in use by 1 associations" err &&
	allot assoc modify cluster=darwin account=chem user=alice defaultqos= qos=long,normal &&
	test_expect_code 3 allot qos remove normal &&
	allot assoc modify cluster=darwin account=chem user=alice qos= &&
	allot partition modify gpu cluster=darwin qos=normal &&
	test_expect_code 3 allot qos remove normal 2>err &&
	grep "in use by 0 associations and 1 partitions" err &&
	allot -P -n qos show normal &&
	allot job admit user=alice account=chem partition=standard timelimit=60 tres=cpu=4 \
		qos=normal &&
	allot partition modify gpu cluster=darwin qos= &&
	allot qos remove normal
'
test_expect_success 'unknown QOS flag, unknown QOS, default QOS outside the list: refused' '
	test_expect_code 2 allot qos add bad2 flags=Bogus 2>err &&
	grep "flags: unknown QOS flag .Bogus." err &&
	test_expect_code 3 allot qos show bad2 &&
	allot qos add good2 flags=DenyOnLimit,nodecay &&
	allot -P -n assoc show account=chem user=alice >before &&
	test_expect_code 3 allot assoc modify cluster=darwin account=chem user=alice qos=nosuch \
		2>err &&
	grep "qos .nosuch. does not exist" err &&
	test_expect_code 3 allot assoc modify cluster=darwin account=chem user=alice \
		defaultqos=nosuch 2>err &&
	grep "^allot: error: defaultqos: " err &&
	test_expect_code 2 allot assoc modify cluster=darwin account=chem user=alice qos=long \
		defaultqos=good2 2>err &&
	grep "not in the association.s qos list" err &&
	allot -P -n assoc show account=chem user=alice >after &&
	test_cmp before after &&
	allot assoc modify cluster=darwin account=chem user=alice qos=long,good2 defaultqos=good2
'
test_expect_success 'errors name the key typed, not the API field' '
	test_expect_code 2 allot alloc add chem resource=gpu su=20000000000000h start=2028-01-01 \
		end=2029-01-01 2>err &&
	grep "^allot: error: su: larger than " err &&
	test_expect_code 2 allot job admit user=alice account=chem partition=standard \
		tres=cpu=4 2>err &&
	grep "^allot: error: timelimit: required" err
'
test_expect_success PYTHON3 'a 404 from a server that is not allotd: exit 5, not 3' '
	port=$(find_free_port) &&
	mkdir -p www &&
	{ (cd www && exec python3 -m http.server "$port" --bind 127.0.0.1) </dev/null \
		>/dev/null 2>&1 & } &&
	httpd=$! &&
	test_when_finished "kill $httpd" &&
	wait_for 10 curl -s -o /dev/null "http://127.0.0.1:$port/" &&
	test_expect_code 5 "$ALLOT_BIN" --url "http://127.0.0.1:$port" account show chem 2>err &&
	grep "is not allotd" err
'
test_expect_success 'unknown account: exit 3' '
	test_expect_code 3 allot account show nosuch 2>err &&
	grep "^allot: error: .*nosuch" err &&
	test_expect_code 3 allot alloc add nosuch resource=cpu su=1h start=2026-01-01 end=2099-01-01
'
test_expect_success 'overlapping allocation: exit 3, nothing added' '
	test_expect_code 3 allot alloc add chem resource=cpu su=1h start=2026-06-01 end=2026-07-01 &&
	test $(allot -P -n alloc show account=chem | wc -l) = 1
'
test_expect_success 'bad amount, bad date, unknown key, unknown verb: exit 2, nothing sent' '
	test_expect_code 2 allot alloc add chem resource=gpu su=12x start=2026-01-01 end=2099-01-01 2>err &&
	grep "^allot: error: su: " err &&
	test_expect_code 2 allot alloc add chem resource=gpu su=1h start=2026-02-30 end=2099-01-01 &&
	test_expect_code 2 allot account add x colour=blue 2>err &&
	grep "unknown key .colour." err &&
	test_expect_code 2 allot account frobnicate &&
	test_expect_code 2 allot --timeout=0 balance &&
	test $(allot -P -n alloc show account=chem | wc -l) = 1
'
test_expect_success 'job settle elapsed=0: a job cancelled as it started costs 0' '
	allot -P -n job hold jobid=1010 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=1 start=2026-03-03T00:00:00Z >h &&
	allot -P -n job settle jobid=1010 elapsed=00:00:00 state=CANCELLED >st &&
	test "$(cut -d"|" -f1,7 st)" = "settled|0h" &&
	allot -P -n job hold jobid=1011 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=1 start=2026-03-03T00:00:00Z >h &&
	allot -P -n job settle jobid=1011 elapsed=0s state=CANCELLED >st &&
	test "$(cut -d"|" -f1,7 st)" = "settled|0h" &&
	test_expect_code 2 allot job settle jobid=1011 elapsed=-1 2>err &&
	grep "^allot: error: elapsed: " err
'
test_expect_success 'job release fills in the only cluster, as the other job verbs do' '
	allot -P -n job hold jobid=1012 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=1 start=2026-03-03T00:00:00Z >h &&
	allot -P -n job release jobid=1012 comment=cancelled >rel &&
	test "$(cut -d"|" -f1 rel)" = released &&
	allot -P -n job show 1012 >js &&
	test "$(head -1 js | cut -d"|" -f7)" = released
'
test_expect_success 'job show CLUSTER:ID: a contradicting cluster= or an empty cluster is exit 2' '
	test_expect_code 2 allot job show darwin:1001 cluster=other 2>err &&
	grep "^allot: error: cluster: .other. contradicts .darwin." err &&
	allot -P -n job show darwin:1001 cluster=darwin >a &&
	allot -P -n job show 1001 >b && test_cmp a b &&
	test_expect_code 2 allot job show :1001 2>err &&
	grep "empty cluster" err
'
test_expect_success 'partition maxtime goes back to UNLIMITED, defaulttime to NONE (as Slurm)' '
	allot partition modify gpu cluster=darwin maxtime=UNLIMITED &&
	test "$(allot -P -n partition show gpu cluster=darwin | cut -d"|" -f8)" = UNLIMITED &&
	allot partition modify gpu cluster=darwin maxtime=2-00:00:00 defaulttime=1:00:00 &&
	test "$(allot -P -n partition show gpu cluster=darwin | cut -d"|" -f7,8)" = \
		"01:00:00|2-00:00:00" &&
	allot partition modify gpu cluster=darwin defaulttime=NONE maxtime=infinite &&
	test "$(allot -P -n partition show gpu cluster=darwin | cut -d"|" -f7,8)" = \
		"NONE|UNLIMITED" &&
	allot partition modify gpu cluster=darwin defaulttime=1:00:00 &&
	allot partition modify gpu cluster=darwin defaulttime= &&
	test "$(allot -P -n partition show gpu cluster=darwin | cut -d"|" -f7,8)" = \
		"NONE|UNLIMITED" &&
	allot partition show standard cluster=darwin >t &&
	grep "  DefaultTime  *MaxTime\$" t &&
	grep "  NONE  *UNLIMITED\$" t &&
	test_expect_code 2 allot partition modify gpu cluster=darwin maxtime=forever 2>err &&
	grep "^allot: error: maxtime: .forever." err
'
test_expect_success 'credit: allotd refusals name su= and key=, not the API fields' '
	test_expect_code 2 allot credit $(cat alloc_id) su=100000h kind=refund 2>err &&
	grep "^allot: error: su: refund" err &&
	allot credit $(cat alloc_id) su=1m key=t2000-k1 >/dev/null &&
	test_expect_code 3 allot credit $(cat alloc_id) su=2m key=t2000-k1 2>err &&
	grep "^allot: error: key: " err
'
test_expect_success 'priority takes CLUSTER:JOB like job show, and JOB with one cluster' '
	allot -P -n priority darwin/1001 >p1 &&
	allot -P -n priority darwin:1001 >p2 &&
	allot -P -n priority 1001 >p3 &&
	test_cmp p1 p2 && test_cmp p1 p3 &&
	grep " 1001 " p1 &&
	test_expect_code 2 allot priority darwin:x
'
test_expect_success 'tables: no blanks at line ends; an unknown uid shows empty, not -1' '
	allot user show >u &&
	! grep " \$" u &&
	test "$(allot -P -n user show allot_alice)" = "allot_alice||" &&
	allot balance >b && ! grep " \$" b &&
	allot job show 1001 >j && ! grep " \$" j
'
test_expect_success 'user modify uid= (empty) unsets the uid' '
	allot user add t2000_uid uid=4242 &&
	test "$(allot -P -n user show t2000_uid | cut -d"|" -f2)" = 4242 &&
	allot user modify t2000_uid uid= &&
	test "$(allot -P -n user show t2000_uid | cut -d"|" -f2)" = "" &&
	allot --json user show t2000_uid >uj &&
	test "$(json_get uid <uj)" = -1 &&
	allot user modify t2000_uid uid=4243 &&
	test "$(allot -P -n user show t2000_uid | cut -d"|" -f2)" = 4243 &&
	test_expect_code 2 allot user modify t2000_uid uid=-1 &&
	test_expect_code 2 allot user modify t2000_uid uid=NONE &&
	allot user remove t2000_uid
'
test_expect_success 'an empty --as or --url is an error, not the default' '
	test_expect_code 2 allot --as "" whoami 2>err &&
	grep "^allot: error: --as: missing value" err &&
	test_expect_code 2 allot --as= whoami &&
	test_expect_code 2 "$ALLOT_BIN" --url "" whoami 2>err &&
	grep "^allot: error: --url: missing value" err
'
test_expect_success 'usage clear says what it cleared; tree refuses algo= (always flux)' '
	allot usage clear cluster=darwin account=chem user=alice >out &&
	grep "^cleared usage of cluster darwin account chem user alice as of 20" out &&
	allot usage clear cluster=darwin account=chem >out &&
	grep "account chem and its sub-tree" out &&
	allot -P usage clear cluster=darwin account=chem >out &&
	test_must_be_empty out &&
	test_expect_code 2 allot tree algo=classic 2>err &&
	grep "unknown key .algo." err
'
test_expect_success 'limits set names the missing key; alloc show ACCOUNT says what to type' '
	test_expect_code 2 allot limits set scope=account owner=chem name=GrpTRES 2>err &&
	grep "^allot: error: value: required" err &&
	test_expect_code 2 allot limits set scope=account name=GrpTRES value= 2>err &&
	grep "^allot: error: owner: required" err &&
	test_expect_code 2 allot alloc show chem 2>err &&
	grep "allot alloc show account=chem" err &&
	test_expect_code 2 allot alloc frob chem 2>err &&
	grep "unknown verb" err
'
test_expect_success 'balance Period keeps a start that is not midnight' '
	allot alloc add phys resource=gpu su=1h start=2026-01-01T10:00 end=2099-01-01 >/dev/null &&
	allot -P -n balance phys >b &&
	grep "|phys|gpu|.*|2026-01-01T10:00:00Z..2099-01-01\$" b &&
	grep "|phys|cpu|.*|2026-01-01..2099-01-01\$" b
'
test_expect_success 'policy show prints ratios as the decimals add= takes, not ppm' '
	allot policy add alloc=$(cat alloc_id) cluster=darwin period=total base=1h grace=0.2 \
		carryover_factor=0.5 notify=0.75 initial=add >/dev/null &&
	allot -P policy show >ps &&
	head -1 ps | grep "|CarryFactor|Grace|Notify|Downscale|" &&
	sed -n 2p ps | grep "|0.5|0.2|0.75|1|" &&
	test "$(sed -n 2p ps | cut -d"|" -f15)" = ""
'
test_expect_success 'help for every command, with examples' '
	"$ALLOT_BIN" --help >h && grep "^commands:" h &&
	for n in cluster account user assoc qos partition alloc credit balance ledger job \
		failures limits db whoami step share tree usage priority policy command agent; do
		"$ALLOT_BIN" $n --help >h || return 1
		grep -q "^usage: allot" h || return 1
		grep -q "^examples:" h || return 1
	done &&
	"$ALLOT_BIN" job --help >h &&
	for k in user account partition qos timelimit billing source alloctres; do
		sed -n "/allot job settle/,/allot job release/p" h | grep -q "\[$k=" || return 1
	done &&
	"$ALLOT_BIN" account --help >h &&
	sed -n "/^keys for add:/,/^\$/p" h | grep -q "parent .*(default root)" &&
	sed -n "/^keys for modify:/,\$p" h >m &&
	grep -q "parent .*move the account" m && ! grep -q "default" m
'
test_expect_success 'allotd stopped: exit 5 with the address in the message' '
	allotd_stop &&
	test_expect_code 5 allot --timeout 2 balance 2>err &&
	grep "cannot reach allotd at $ALLOTD_URL" err
'
test_expect_success 'help: each program'"'"'s --help exits 0; an unknown noun with --help is 2' '
	"$ALLOT_BUILD_DIR/src/agent/allot-agent" --help >out &&
	grep -q "^usage: allot-agent" out &&
	"$STEP" --help >out &&
	grep -q "^usage: allot-step run" out &&
	"$ALLOT_BIN" --help >out &&
	test_expect_code 2 "$ALLOT_BIN" NOSUCH --help >out 2>err &&
	grep -q "unknown command .NOSUCH." err &&
	test_must_be_empty out
'
test_expect_success 'stop munged' '
	munged_stop
'
test_done
