#!/bin/bash
# t2005-cli-complete.t - bash completion of allot (completion/allot.bash, src/cli/complete.c),
# driven as bash drives it: COMP_LINE and COMP_POINT set, _allot called, COMPREPLY read.
# Nouns, verbs and key= words come from allot's command table (every noun of allot --help
# completes), account and user names from the bank; a bank that does not answer costs at
# most about a second and leaves the other words.  cmake --install puts the file where
# bash-completion looks for it.
test_description='allot bash completion'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
allot_cli_setup

command -v python3 >/dev/null && test_set_prereq PYTHON3
# comp LINE: the words bash would offer at the end of LINE ("allot" is this build's), sorted.
comp() {
	bash -c '. "$1" && COMP_LINE=$2 && COMP_POINT=${#COMP_LINE} &&
		COMP_WORDBREAKS=$'"'"'"\x27><=;|&(:'"'"' && _allot &&
		{ [ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}"; }' _ \
		"$ALLOT_SRC_DIR/completion/allot.bash" "${1/#allot /$ALLOT_BIN }" | sort
}

test_expect_success 'start munged and allotd; accounts and users' '
	munged_start "$PWD/munge" &&
	allotd_start &&
	allot cluster add darwin &&
	allot account add chem &&
	allot account add chemistry2 &&
	allot account add phys &&
	allot user add alice &&
	allot user add bob &&
	export ALLOT_URL=$ALLOTD_URL
'
test_expect_success 'every noun of allot --help completes; a prefix narrows them' '
	"$ALLOT_BIN" --help | sed -n "/^commands:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p" | sort >nouns &&
	test $(wc -l <nouns) -ge 20 &&
	comp "allot " >got && test_cmp nouns got &&
	comp "allot acc" >got && echo account >expect && test_cmp expect got &&
	comp "allot --json -P ba" >got && echo balance >expect && test_cmp expect got
'
test_expect_success 'verbs: a crud noun from its flags, the others from their table entry' '
	comp "allot account " >got && printf "add\nmodify\nremove\nshow\n" >expect && test_cmp expect got &&
	comp "allot job s" >got && printf "settle\nshow\n" >expect && test_cmp expect got &&
	comp "allot db " >got && grep -x export got && grep -x scrub-old-jobs got &&
	comp "allot step " >got && grep -x run got && grep -x list got
'
test_expect_success 'keys of the verb: add and modify differ; a job verb its own' '
	comp "allot account add newacct " >got &&
	grep -x parent= got && grep -x description= got && grep -x qos= got &&
	comp "allot account modify chem " >got &&
	grep -x parent= got && ! grep -x qos= got &&
	comp "allot job settle e" >got && printf "elapsed=\nend=\n" >expect && test_cmp expect got &&
	comp "allot credit 1 " >got && grep -x su= got && grep -x kind= got
'
test_expect_success 'account and user names from the bank: positional and key values' '
	comp "allot account show " >got && printf "chem\nchemistry2\nphys\nroot\n" >expect && test_cmp expect got &&
	comp "allot account show ch" >got && printf "chem\nchemistry2\n" >expect && test_cmp expect got &&
	comp "allot balance p" >got && grep -x phys got &&
	comp "allot limits show " >got && grep -x account= got &&
	grep -v "=\$" got >names && printf "alice\nbob\n" >expect && test_cmp expect names &&
	comp "allot assoc add account=ch" >got && printf "chem\nchemistry2\n" >expect && test_cmp expect got &&
	comp "allot assoc add account=chem user=" >got && printf "alice\nbob\n" >expect && test_cmp expect got &&
	comp "allot account modify chem parent=p" >got && echo phys >expect && test_cmp expect got
'
test_expect_success 'options complete; an option value is left to bash' '
	comp "allot --no" >got && echo --noheader >expect && test_cmp expect got &&
	comp "allot --config " >got && test_must_be_empty got
'
test_expect_success PYTHON3 'a bank that does not answer: no names, the rest within ~1 s' '
	port=$(find_free_port) &&
	{ python3 -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", int(sys.argv[1]))); s.listen(8)
time.sleep(20)   # connections wait in the backlog, never answered
" "$port" >/dev/null 2>&1 & } &&
	pid=$! &&
	test_when_finished "kill $pid 2>/dev/null" &&
	wait_for 10 sh -c "ss -ltn | grep -q \"127.0.0.1:$port \"" &&
	start=$(date +%s%N) &&
	comp "allot --url http://127.0.0.1:$port account show " >got &&
	end=$(date +%s%N) &&
	test_must_be_empty got &&
	echo "took $(( (end - start) / 1000000 )) ms" &&
	test $(( (end - start) / 1000000 )) -ge 900 && test $(( (end - start) / 1000000 )) -lt 3000 &&
	comp "allot --url http://127.0.0.1:$port account add x pa" >got &&
	echo parent= >expect && test_cmp expect got
'
test_expect_success 'cmake --install puts it where bash-completion loads it for allot' '
	stage=$(mktemp -d /tmp/allot-compl-XXXXXX) &&
	DESTDIR=$stage cmake --install "$ALLOT_BUILD_DIR" >install.log &&
	prefix=$(sed -n "s/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p" "$ALLOT_BUILD_DIR/CMakeCache.txt") &&
	cmp "$ALLOT_SRC_DIR/completion/allot.bash" "$stage$prefix/share/bash-completion/completions/allot" &&
	rm -rf "$stage"
'
test_expect_success 'stop allotd and munged' '
	allotd_stop &&
	munged_stop
'
test_done
