#!/bin/bash
# t0010-self-contained.t - the project speaks of itself alone: no file git tracks points a
# reader at something outside the repository (a design brief by section or by name, a work
# session by number instead of a measurement's date and commit, the source documents of the
# design, the outside style guide or notes, an issue by number).  doc/design.md is the
# design; bench/results/ names each measurement by its date and commit.
# The check reads the tracked files of the source tree (git grep, text files only), never
# git history, and is shown to find each pattern in a planted repository first.
test_description='tracked files name nothing outside the repository'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

# git refuses a repository another user owns ("dubious ownership") unless told otherwise;
# which user owns the checkout has nothing to do with what this test checks.
git_() { git -c safe.directory='*' "$@"; }

git_ -C "$ALLOT_SRC_DIR" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ skip_all="$ALLOT_SRC_DIR is not a git checkout"; test_done; }

# The patterns and the planted examples are built from pieces so that this file does not
# match itself.  Extended regular expressions for git grep -E.
d='DESIGN' s='session' r='reference' i='issue'
patterns=(
	"$d §"                    # a section of a design brief that is not in the repository
	"$d\\.md"                 # the brief by name
	"[Ss]essions? [0-9]"      # a work session instead of a date and commit
	"reference/0[0-9]"        # the source documents of the design
	"reference 0[0-9][0-9]"
	"STYLE\\.md"              # the outside style guide
	"SLURM""-NOTES"           # outside notes on the machine's Slurm
	"/work""/shared"          # the directory they live in
	"(^|[^[:alnum:]_])[Ii]ssue #?[0-9]" # an issue tracker's numbers
)

# outside_refs DIR: prints every tracked text line of DIR's work tree matching a pattern, as
# FILE:LINE:TEXT; returns 0 when there is one, 1 when there is none, 2 on a git error.
outside_refs() {
	local args=() p rc
	for p in "${patterns[@]}"; do args+=(-e "$p"); done
	git_ -C "$1" grep -n -I -E "${args[@]}" -- . >refs.out 2>refs.err
	rc=$?
	cat refs.out
	if [ "$rc" -gt 1 ] || [ -s refs.err ]; then
		cat refs.err >&2
		return 2
	fi
	return "$rc"
}

# split_refs DIR: the same patterns split over a line break ("... session\n# 13's"), which a
# line-by-line grep misses: prints FILE: TEXT for each; returns 0 when there is one, 1 when
# none.  Comment leaders (*, #, --, //) at the start of the next line are read as blanks.
split_refs() {
	git_ -C "$1" ls-files -z >files.z &&
	python3 - "$1" "${patterns[@]}" <<-\PY
	import re, sys
	root, pats = sys.argv[1], sys.argv[2:]
	rx = re.compile("|".join("(?:%s)" % p.replace("[:alnum:]", "A-Za-z0-9") for p in pats),
	                re.M)
	brk = re.compile(r"[ \t]*\n[ \t]*(?:\*|#|--|//)?[ \t]*")
	found = 0
	for name in open("files.z", "rb").read().split(b"\0"):
	    if not name:
	        continue
	    try:
	        data = open(root + "/" + name.decode(), "rb").read()
	    except (IsADirectoryError, FileNotFoundError):
	        continue
	    if b"\0" in data:
	        continue
	    text = data.decode("utf-8", "replace")
	    pos = 0
	    # Join each line break into one blank, remembering where breaks were.
	    out, breaks = "", []
	    for m in brk.finditer(text):
	        out += text[pos:m.start()]
	        breaks.append(len(out))
	        out += " "
	        pos = m.end()
	    out += text[pos:]
	    for m in rx.finditer(out):
	        if any(m.start() <= b < m.end() for b in breaks):
	            found += 1
	            print("%s: %s" % (name.decode(), out[m.start():m.end()]))
	sys.exit(0 if found else 1)
	PY
}

test_expect_success 'the check finds each kind of outside reference in a planted tree' '
	rm -rf planted && git_ init -q planted &&
	printf "%s\n" "see $d §3 for the rule" "as $d.md says" "measured in $s 23" \
		"${s^}s 12-15 measured" "$r/002, Schema" "($r 004)" \
		"rules in STYLE"".md" "SLURM""-NOTES.md says" "cp /work""/shared/x ." \
		"$i 7 item 2" "($i #12)" >planted/doc.md &&
	printf "int x; /* plain text */\n" >planted/clean.c &&
	git_ -C planted add doc.md clean.c &&
	test_expect_code 0 outside_refs planted >found &&
	test $(wc -l <found) = 11 &&
	! grep -q "^clean.c:" found &&
	echo "no outside reference here: a TCP session, 2 sessions, reissue 3" >planted/doc.md &&
	git_ -C planted add doc.md &&
	test_expect_code 1 outside_refs planted >none &&
	! test -s none &&
	printf "%s\n" "measured in $s" "# 23, on a host" "/* the design ($d" " * §3) says" \
		"one $s, 23 runs" >planted/doc.md &&
	git_ -C planted add doc.md &&
	test_expect_code 0 split_refs planted >split &&
	test $(wc -l <split) = 2 &&
	echo "no split reference: a $s" >planted/doc.md &&
	echo "ends; 23 more lines" >>planted/doc.md &&
	test_expect_code 1 split_refs planted
'

test_expect_success 'an untracked file is not the tree'"'"'s' '
	echo "$s 9" >planted/untracked.md &&
	test_expect_code 1 outside_refs planted
'

test_expect_success 'no tracked file of the source tree points outside the repository' '
	test_expect_code 1 outside_refs "$ALLOT_SRC_DIR" >tree ||
	{ { echo "outside references (say it here, or point at doc/design.md;" \
		"name a measurement by its date and commit):"; cat tree; } | sed "s/^/# /" >&5
	  false; }
'

test_expect_success 'nor one split over a line break' '
	test_expect_code 1 split_refs "$ALLOT_SRC_DIR" >split ||
	{ sed "s/^/# /" split >&5; false; }
'

test_done
