#!/bin/bash
# t2020-balance-cluster.t - which allocation pays for a job, as users read it: `allot balance
# cluster=C` (GET /v1/balances?cluster=C) lists the allocations a job on cluster C may draw
# on, those scoped to C or to every cluster; the job is paid by the nearest account's
# allocation among them (its own, else its parent's), and when that one runs short the job
# is refused, never paid by another (doc/design.md §2.6, doc/money.md "Which allocation pays").
test_description='allot balance cluster=: what a cluster'"'"'s jobs may draw on'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup

# science pays cpu on every cluster; its child chem has cpu on darwin only, and gpu on hpc
# only; bio, another child, has cpu on hpc only.
test_expect_success 'a bank with allocations scoped to one cluster and to every cluster' '
	munged_start "$PWD/munge" &&
	allotd_start &&
	allot cluster add darwin && allot cluster add hpc && allot cluster add mars &&
	allot account add science &&
	allot account add chem parent=science &&
	allot account add bio parent=science &&
	allot user add alice uid=1001 &&
	for c in darwin hpc; do
		allot assoc add cluster=$c account=chem user=alice &&
		allot partition add standard cluster=$c resource=cpu || return 1
	done &&
	allot partition add gpu cluster=hpc resource=gpu &&
	allot -P -n alloc add science resource=cpu su=100h start=2026-01-01 end=2099-01-01 |
		cut -d"|" -f1 >all_id &&
	allot -P -n alloc add chem resource=cpu su=2h cluster=darwin start=2026-01-01 \
		end=2099-01-01 | cut -d"|" -f1 >chem_id &&
	allot -P -n alloc add chem resource=gpu su=5h cluster=hpc start=2026-01-01 \
		end=2099-01-01 | cut -d"|" -f1 >gpu_id &&
	allot -P -n alloc add bio resource=cpu su=7h cluster=hpc start=2026-01-01 \
		end=2099-01-01 | cut -d"|" -f1 >bio_id &&
	test -s all_id && test -s chem_id && test -s gpu_id && test -s bio_id
'

# Allocation|Account|Resource|Cluster of each row, sorted.
rows() { cut -d"|" -f1-4 | sort; }
# The ids of a listing's items, sorted, comma-separated.
ids() {
	python3 -c 'import json,sys
print(",".join(str(i) for i in sorted(x["id"] for x in json.load(sys.stdin)["items"])))'
}

test_expect_success 'cluster=darwin: the allocations scoped to darwin and to every cluster' '
	allot -P -n balance cluster=darwin | rows >got &&
	printf "%s\n" "$(cat all_id)|science|cpu|" "$(cat chem_id)|chem|cpu|darwin" | sort >expect &&
	test_cmp expect got
'
test_expect_success 'cluster=hpc: science'"'"'s, chem'"'"'s gpu and bio'"'"'s, not chem'"'"'s darwin cpu' '
	allot -P -n balance cluster=hpc | rows >got &&
	printf "%s\n" "$(cat all_id)|science|cpu|" "$(cat gpu_id)|chem|gpu|hpc" \
		"$(cat bio_id)|bio|cpu|hpc" | sort >expect &&
	test_cmp expect got
'
test_expect_success 'a cluster with only the every-cluster allocation; with account= and active=' '
	allot -P -n balance cluster=mars | rows >got &&
	echo "$(cat all_id)|science|cpu|" >expect &&
	test_cmp expect got &&
	allot -P -n balance chem cluster=hpc active=yes | rows >got &&
	echo "$(cat gpu_id)|chem|gpu|hpc" >expect &&
	test_cmp expect got
'
test_expect_success 'the API answers the same rows, and the same filter on /v1/allocations' '
	sort -n all_id chem_id | paste -s -d, >expect &&
	api GET "/v1/balances?cluster=darwin" >b &&
	ids <b >got && test_cmp expect got &&
	api GET "/v1/allocations?cluster=darwin" >a &&
	ids <a >got && test_cmp expect got
'
test_expect_success 'an unknown cluster is not found (exit 3, 404 naming it), not an empty list' '
	test_expect_code 3 allot balance cluster=nosuch >out 2>err &&
	! test -s out &&
	grep "nosuch" err &&
	api_bad 404 "" GET "/v1/balances?cluster=nosuch" &&
	grep "cluster: .nosuch. does not exist" out &&
	api_bad 400 cluster GET "/v1/balances?cluster=bad%20name"
'
test_expect_success 'chem on darwin is paid by its own allocation: 2h, refused beyond, no fall-through' '
	allot -P -n job admit cluster=darwin user=alice account=chem partition=standard \
		timelimit=60 tres=cpu=2 >adm &&
	test "$(cut -d"|" -f1,2,3 adm)" = "admitted|$(cat chem_id)|chem" &&
	test_expect_code 1 allot -P -n job admit cluster=darwin user=alice account=chem \
		partition=standard timelimit=60 tres=cpu=3 >deny 2>err &&
	test "$(cut -d"|" -f1,2 deny)" = "refused|$(cat chem_id)" &&
	grep "available 2h" err
'
test_expect_success 'chem on hpc is paid by its parent science (scoped to every cluster)' '
	allot -P -n job admit cluster=hpc user=alice account=chem partition=standard \
		timelimit=60 tres=cpu=3 >adm &&
	test "$(cut -d"|" -f1,2,3 adm)" = "admitted|$(cat all_id)|science"
'
test_expect_success 'allot balance --help says which allocation pays and what cluster= lists' '
	"$ALLOT_BIN" balance --help >help &&
	grep "cluster=C" help &&
	grep "nearest account above" help
'

test_done
