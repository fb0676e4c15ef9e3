# SPDX-License-Identifier: GPL-3.0-or-later
# bash completion for allot(1).  The words come from allot itself (`allot --complete WORDS`,
# src/cli/complete.c), which reads its command table: nouns, verbs, key= words, and
# account or user names from the bank when it answers within a second.  A command added to
# allot completes without an edit here.

_allot() {
    local line=${COMP_LINE:0:COMP_POINT} full pre w
    local -a words cands
    # Words as typed, whole: "parent=sc" stays one word (COMP_WORDS splits it at '=').
    read -ra words <<<"$line"
    [[ -z $line || $line =~ [[:space:]]$ ]] && words+=("")
    ((${#words[@]} >= 2)) || return 0
    full=${words[-1]}
    mapfile -t cands < <("${words[0]}" --complete "${words[@]:1}" 2>/dev/null)
    # readline replaces only the text after the last '=' or ':' in COMP_WORDBREAKS.
    pre=
    [[ $COMP_WORDBREAKS == *=* && $full == *=* ]] && pre=${full%"${full##*=}"}
    [[ $COMP_WORDBREAKS == *:* && ${full#"$pre"} == *:* ]] && pre=${full%"${full##*:}"}
    COMPREPLY=()
    for w in "${cands[@]}"; do
        [[ $w == "$full"* ]] && COMPREPLY+=("${w#"$pre"}")
    done
    # A key= word wants its value next, not a blank.
    [[ ${COMPREPLY[*]} == *= || ${COMPREPLY[*]} == *"= "* ]] && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _allot allot
