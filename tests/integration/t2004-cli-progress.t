#!/bin/bash
# t2004-cli-progress.t - the progress line of the long CLI commands (src/cli/progress.c):
# `allot db export`, `allot db import` (from a file: done / total; from a pipe: done and the
# rate), `allot import sacct` and `allot import slurm` draw "WHAT: done / total UNIT (P%),
# R UNIT/s" on stderr when it is a terminal (script(1) gives them one), and print nothing of it otherwise.
test_description='allot: progress of db export, db import and the imports on a terminal'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup
command -v script >/dev/null || { skip_all="script(1) not installed"; test_done; }
"$ALLOT_BIN" db --help | grep -q "not in this build" && { skip_all="allot built without db"; test_done; }

command -v python3 >/dev/null && test_set_prereq PYTHON3
# on_tty CMD: run the shell command CMD with a terminal as stdin, stdout and stderr; what the
# terminal showed, carriage returns as newlines.
on_tty() { script -qec "$1" /dev/null | tr "\r" "\n"; }

test_expect_success 'a bank: cluster c1, accounts a0 a1, users u0..u3, allocations' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	allotd_start PriorityDecayHalfLife=0 &&
	allot cluster add c1 >/dev/null &&
	allot partition add batch cluster=c1 resource=cpu billing=CPU=1.0,Mem=0.25G >/dev/null &&
	for a in a0 a1; do
		allot account add $a >/dev/null &&
		allot alloc add $a resource=cpu su=100000000h start=2020-01-01 end=2100-01-01 >/dev/null ||
			return 1
	done &&
	for u in 0 1 2 3; do
		allot user add u$u >/dev/null &&
		allot assoc add cluster=c1 account=a$((u % 2)) user=u$u >/dev/null || return 1
	done
'
test_expect_success PYTHON3 'import sacct: jobs done / total on a terminal' '
	python3 "$ALLOT_SRC_DIR/tests/lib/sacct_gen.py" 200 --accounts 2 --users 4 >jobs.txt &&
	on_tty "$ALLOT_BIN --url $ALLOTD_URL import sacct jobs.txt cluster=c1" >tty &&
	grep "^import: 200 / 200 jobs (100%), [0-9]* jobs/s" tty
'
test_expect_success 'import slurm: the dump records done / total on a terminal' '
	cat >dump.cfg <<-\EOF &&
	Cluster - '"'"'c1'"'"':Fairshare=1
	Parent - '"'"'root'"'"'
	Account - '"'"'b0'"'"':Description='"'"'b0'"'"':Organization='"'"'b0'"'"':Fairshare=1
	Parent - '"'"'b0'"'"'
	User - '"'"'u9'"'"':DefaultAccount='"'"'b0'"'"':Fairshare=1
	EOF
	on_tty "$ALLOT_BIN --url $ALLOTD_URL import slurm file=dump.cfg" >tty &&
	grep "^import slurm: 5 / 5 records (100%), [0-9]* records/s" tty &&
	grep "^import slurm cluster c1: read" tty &&
	allot import slurm file=dump.cfg >out 2>err &&
	grep "no changes" out &&
	test_must_be_empty err
'
test_expect_success 'db export to a file: rows done / total on a terminal, nothing without one' '
	allotd_stop &&
	on_tty "$ALLOT_BIN --config \"$ALLOTD_CONF\" db export dump.jsonl" >tty &&
	n=$(sed -n "s/^exported \([0-9]*\) rows to dump.jsonl/\1/p" tty) &&
	test "$n" -gt 200 &&
	grep "^db export: $n / $n rows (100%), [0-9]* rows/s" tty &&
	"$ALLOT_BIN" --config "$ALLOTD_CONF" db export dump2.jsonl >out 2>err &&
	test_must_be_empty err && echo $n >rows
'
test_expect_success 'db import: from a file done / total, from a pipe done and rate' '
	n=$(cat rows) &&
	echo "StorageLoc=$PWD/new.db" >new.conf &&
	"$ALLOT_BIN" --config new.conf db upgrade >/dev/null &&
	on_tty "$ALLOT_BIN --config new.conf db import dump.jsonl" >tty &&
	grep "^db import: $n / $n rows (100%), [0-9]* rows/s" tty &&
	grep "^imported $n rows" tty &&
	echo "StorageLoc=$PWD/new2.db" >new2.conf &&
	"$ALLOT_BIN" --config new2.conf db upgrade >/dev/null &&
	on_tty "cat dump.jsonl | $ALLOT_BIN --config new2.conf db import -" >tty &&
	grep "^db import: $n rows, [0-9]* rows/s" tty &&
	echo "StorageLoc=$PWD/new3.db" >new3.conf &&
	"$ALLOT_BIN" --config new3.conf db upgrade >/dev/null &&
	"$ALLOT_BIN" --config new3.conf db import dump.jsonl >out 2>err &&
	test_must_be_empty err
'
test_expect_success 'stop munged' '
	munged_stop
'
test_done
