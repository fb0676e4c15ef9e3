#!/bin/bash
# t0210-man.t - the man pages the build writes from the programs' own texts (man/mkman.sh):
# each renders with man-db and groff without a warning, holds every command, option and
# allot.conf key its program prints, and `cmake --install` puts them under the man
# directory; --help of every program exits 0.
test_description='man pages: rendered without warnings, complete, installed'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
AGENT_BIN=$ALLOT_BUILD_DIR/src/agent/allot-agent
STEP_BIN=$ALLOT_BUILD_DIR/src/step/allot-step
MAN_DIR=$ALLOT_BUILD_DIR/man
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
command -v man >/dev/null || { skip_all="man-db not installed"; test_done; }
pages="allot.1 allot-step.1 allotd.8 allot.conf.5 allot-agent.8"

# The page as text, 200 columns wide so a word is never split across lines.
render() { LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$MAN_DIR/$1" 2>/dev/null | col -b; }

test_expect_success 'every program prints its help on stdout and exits 0' '
	for p in "$ALLOT_BIN" "$ALLOTD_BIN" "$AGENT_BIN" "$STEP_BIN"; do
		"$p" --help >help.out 2>help.err || { echo "$p --help: exit $?"; return 1; }
		test -s help.out && test ! -s help.err || { echo "$p --help: output"; return 1; }
	done
'
test_expect_success 'every page renders without a warning (man --warnings, groff -ww)' '
	for p in $pages; do
		test -s "$MAN_DIR/$p" || { echo "missing $p"; return 1; }
		LC_ALL=C.UTF-8 MANROFFSEQ="" MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
			"$MAN_DIR/$p" >/dev/null 2>warn &&
		groff -man -ww -z -Tutf8 "$MAN_DIR/$p" 2>>warn &&
		{ test ! -s warn || { echo "$p:"; cat warn; return 1; }; }
	done
'
test_expect_success 'allot(1) holds every command and every key its help lists' '
	render allot.1 >allot.txt &&
	"$ALLOT_BIN" --help | sed -n "/^commands:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p" >nouns &&
	test $(wc -l <nouns) -ge 20 &&
	while read -r n; do
		grep -q "^   allot $n\$" allot.txt || { echo "no section for $n"; return 1; }
		"$ALLOT_BIN" "$n" --help | grep -o "[a-z_]*=" | sort -u >keys &&
		while read -r k; do
			grep -q -- "$k" allot.txt || { echo "$n: no $k"; return 1; }
		done <keys || return 1
	done <nouns &&
	for o in --url --as --json --parsable --noheader --timeout --config --version; do
		grep -q -- "$o" allot.txt || { echo "no $o"; return 1; }
	done
'
test_expect_success 'allot.conf(5) holds every key of allotd --config-table' '
	render allot.conf.5 >conf.txt &&
	"$ALLOTD_BIN" --config-table | sed -n "3,\$s/^| \([A-Za-z]*\) |.*/\1/p" >conf-keys &&
	test $(wc -l <conf-keys) -ge 30 &&
	while read -r k; do
		grep -q "^       $k (" conf.txt || { echo "no key $k"; return 1; }
	done <conf-keys
'
test_expect_success 'allotd(8), allot-agent(8), allot-step(1) hold every option of --help' '
	for pair in allotd.8:"$ALLOTD_BIN" allot-agent.8:"$AGENT_BIN" allot-step.1:"$STEP_BIN"; do
		page=${pair%%:*} prog=${pair#*:} &&
		render "$page" >page.txt &&
		"$prog" --help | grep -o -- "--[a-z][a-z-]*" | sort -u >opts &&
		test -s opts &&
		while read -r o; do
			grep -q -- "$o" page.txt || { echo "$page: no $o"; return 1; }
		done <opts || return 1
	done
'
test_expect_success 'cmake --install puts each page in its section under the man directory' '
	stage=$(mktemp -d /tmp/allot-man-XXXXXX) &&
	DESTDIR=$stage cmake --install "$ALLOT_BUILD_DIR" >install.log &&
	prefix=$(sed -n "s/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p" "$ALLOT_BUILD_DIR/CMakeCache.txt") &&
	for p in $pages; do
		cmp "$MAN_DIR/$p" "$stage$prefix/share/man/man${p##*.}/$p" || return 1
	done &&
	rm -rf "$stage"
'
test_done
