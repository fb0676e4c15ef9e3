#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# mkman.sh - write one man page from the text its program prints (man/CMakeLists.txt).
#   mkman.sh PAGE OUT VERSION PROGRAM
# PAGE is allot.1, allotd.8, allot.conf.5, allot-agent.8 or allot-step.1; PROGRAM is the built
# program whose --help (allotd --config-table for allot.conf.5) is the page's one source.
# allot.1 holds `allot --help` and then `allot NOUN --help` for every noun that lists, so a
# new command is in the page without an edit here.
set -eu
page=$1 out=$2 version=$3 prog=$4
here=$(dirname "$0")
# Reproducible builds set SOURCE_DATE_EPOCH; else the build's date.
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
name=${page%.*} section=${page##*.}
manual="allot manual"
case $section in 8) manual="allot administration" ;; 5) manual="allot configuration" ;; esac

roff() { # summary seealso [table]
    awk -v name="$name" -v section="$section" -v date="$date" -v source="allot $version" \
        -v manual="$manual" -v summary="$1" -v seealso="$2" -v table="${3:-0}" \
        -f "$here/help2roff.awk"
}

tmp=$out.tmp
case $page in
allot.1)
    # The nouns are the "commands:" section of allot --help: two blanks, the noun, its summary.
    "$prog" --help >"$tmp.help"
    nouns=$(sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$tmp.help")
    test -n "$nouns" || { echo "mkman.sh: no commands in allot --help" >&2; exit 1; }
    {
        cat "$tmp.help"
        echo
        echo "commands in detail:"
        for n in $nouns; do
            echo "@@page allot $n"
            "$prog" "$n" --help
        done
    } | roff "command-line client of the allot allocation bank" \
        "allotd(8) allot.conf(5) allot-step(1) allot-agent(8)" >"$tmp"
    rm -f "$tmp.help"
    ;;
allotd.8)
    "$prog" --help | roff "the allot allocation bank daemon" \
        "allot.conf(5) allot(1) allot-agent(8)" >"$tmp"
    ;;
allot.conf.5)
    # The description is the example file's opening comment (after its title line), the
    # keys are the table allotd prints.
    {
        echo "description:"
        sed -n '2,/^$/s/^# \{0,1\}//p' "$here/../etc/allot.conf.example"
        echo
        "$prog" --config-table
    } | roff "configuration of allotd, allot db, allot-agent and the Slurm plugins" \
        "allotd(8) allot(1)" 1 >"$tmp"
    ;;
allot-agent.8)
    "$prog" --help | roff "carry the allot bank's decisions to a Slurm cluster" \
        "allotd(8) allot(1) sacctmgr(1)" >"$tmp"
    ;;
allot-step.1)
    "$prog" --help | roff "run and measure one step of a Slurm job" \
        "allot(1) srun(1) sstat(1)" >"$tmp"
    ;;
*)
    echo "mkman.sh: unknown page $page" >&2
    exit 2
    ;;
esac
mv "$tmp" "$out"
