#!/bin/bash
# t2003-cli-format.t - the Slurm tools' output conventions on every listing of the allot CLI:
# format=/-o/--format picks columns by header name, in order, with widths (Name%W cuts a
# longer cell to W-1 characters and a '+', as sacct does); -p ends each line with '|'
# (sacctmgr -p), -P does not; -n drops the header.  A column the listing lacks is exit 2
# naming the columns there are, and nothing is printed.
test_description='allot CLI: format=, -o, -p, -P, --noheader'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup

test_expect_success 'start munged and allotd; a small bank' '
	munged_start "$PWD/munge" &&
	allotd_start &&
	allot cluster add darwin &&
	allot account add chem "description=Chemistry department" &&
	allot account add phys &&
	allot user add alice uid=1001 &&
	allot assoc add cluster=darwin account=chem user=alice &&
	allot partition add standard cluster=darwin resource=cpu &&
	allot alloc add chem resource=cpu su=100h start=2026-01-01 end=2099-01-01 &&
	allot alloc add phys resource=cpu su=2500000h start=2026-01-01 end=2099-01-01 &&
	allot job hold jobid=7 user=alice account=chem partition=standard timelimit=60 \
		tres=cpu=4 start=2026-03-01T10:00:00Z >/dev/null &&
	test_expect_code 1 allot job hold jobid=8 user=alice account=chem partition=standard \
		timelimit=2-00:00:00 tres=cpu=4 start=2026-03-02T00:00:00Z >/dev/null 2>&1
'
# Every listing: its -P header, then format= with its columns reversed must print the same
# cells as -P, reversed.
listings="cluster show|account show|user show|assoc show|qos show|partition show|alloc show|balance|ledger chem|job show|failures|limits list|command list|policy show"
test_expect_success 'every listing: format= with the columns reversed prints them reversed' '
	IFS="|" && set -- $listings && unset IFS &&
	for l in "$@"; do
		allot -P $l >all || { echo "$l failed"; return 1; }
		cols=$(head -1 all | tr "|" "\n" | tac | paste -s -d,) &&
		test -n "$cols" &&
		allot -P $l "format=$cols" >picked &&
		awk -F"|" -v OFS="|" "{ s = \$NF; for (i = NF - 1; i >= 1; i--) s = s OFS \$i; print s }" all >expect &&
		test_cmp expect picked || { echo "listing: $l"; return 1; }
	done
'
test_expect_success 'share: format= picks from its table (-P alone is sshare -l as allotd wrote it)' '
	allot -P share format=FairShare,Account >s &&
	head -1 s >h && echo "FairShare|Account" >expect && test_cmp expect h &&
	grep "|chem\$" s
'
test_expect_success '-o and --format are format=; names are case-insensitive' '
	allot -P balance format=Account,Available >a &&
	allot -P -o account,AVAILABLE balance >b &&
	allot -P balance --format=Account,Available >c &&
	allot -P balance --format Account,Available >d &&
	test_cmp a b && test_cmp a c && test_cmp a d &&
	head -1 a >h && echo "Account|Available" >expect && test_cmp expect h &&
	grep "^chem|" a
'
test_expect_success 'Name%W: the column is W wide; a longer cell is cut with a +' '
	allot account show format=Account,Description%8 >t &&
	grep "^chem  *Chemist+\$" t &&
	sed -n 2p t | grep -x -- "-*  --------" &&
	allot balance format=Account%3,Available%12 >b &&
	grep "^ch+  *96h\$" b &&
	test "$(sed -n "/^ch+/p" b | wc -c)" = "$((3 + 2 + 12 + 1))"
'
test_expect_success '-p ends every line with |, -P does not, -n drops the header' '
	allot -p account show chem >p &&
	printf "Account|Parent|Shares|Organization|Description|Coordinators|\nchem|root|1||Chemistry department||\n" >expect &&
	test_cmp expect p &&
	allot -pn account show chem >pn && sed -n 2p expect >expect2 && test_cmp expect2 pn &&
	allot -p -n balance format=Account >pb && grep -x "chem|" pb &&
	allot -P --noheader balance format=Account >Pb && grep -x "chem" Pb
'
test_expect_success 'a column the listing lacks: exit 2, the columns named, nothing printed' '
	test_expect_code 2 allot balance format=Account,NoSuch >out 2>err &&
	test_must_be_empty out &&
	grep "format: no column .NoSuch. here (columns: .*Account.*Available" err &&
	test_expect_code 2 allot balance format=Account%0 >out 2>err &&
	test_must_be_empty out && grep "width must be 1..1000" err &&
	test_expect_code 2 allot balance -o 2>err && grep -- "-o: missing value" err
'
test_expect_success 'format= on a command that prints no columns: exit 2, said so' '
	test_expect_code 2 allot tree format=Account >out 2>err &&
	grep "format: .allot tree. prints no columns to pick from" err &&
	allot --json balance format=Account >out &&
	grep "\"items\"" out
'
test_expect_success 'stop allotd and munged' '
	allotd_stop &&
	munged_stop
'
test_done
