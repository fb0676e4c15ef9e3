# SPDX-License-Identifier: GPL-3.0-or-later
# help2roff.awk - a program's --help text (or allotd --config-table) as a man page body.
#
# The help text is the one source of a man page: this script only lays it out, so the page
# cannot drift from what the program prints.  Layout of the help text it reads:
#   "usage: ..." and the lines indented under it   -> SYNOPSIS (first block) or a literal block
#   an unindented line "heading:"                  -> a section (.SH HEADING)
#   an unindented line "heading: text"              -> a section whose text follows
#     (after a blank line; heading in lowercase letters and blanks)
#   unindented lines                               -> filled paragraphs (blank line between)
#   indented lines                                 -> kept as they are (.nf)
#   "@@page NAME" (from mkman.sh)                  -> .SS NAME: another command's help, whose
#                                                     headings become bold lines
# With -v table=1, lines from allotd --config-table's Markdown table on are one .TP per key.
# Variables: name, section, date, source, manual, summary (the NAME line), seealso.

function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.']/)
        s = "\\&" s
    return s
}

# `code` in the config table's Markdown -> bold.
function code(s,    out, i, n, parts) {
    n = split(s, parts, "`")
    out = ""
    for (i = 1; i <= n; i++)
        out = out (i % 2 == 0 ? "\\fB" parts[i] "\\fR" : parts[i])
    return out
}

function fill_mode() {
    if (nf) {
        print ".fi"
        nf = 0
    }
}

function heading(h) {
    fill_mode()
    if (sub_page) {
        print ".PP"
        print ".B \"" esc(h) "\""
    } else {
        print ".SH \"" esc(toupper(h)) "\""
    }
    after_heading = 1
    description_done = 1
    blank = 0
}

BEGIN {
    printf ".TH \"%s\" \"%s\" \"%s\" \"%s\" \"%s\"\n", toupper(name), section, date, source, manual
    print ".SH NAME"
    print esc(name) " \\- " esc(summary)
}

# The config table: text before it is laid out as help text, the table as one .TP per key.
table && /^\| key \| type/ {
    fill_mode()
    print ".SH KEYS"
    in_table = 1
    next
}

in_table {
    if ($0 !~ /^\| / || $0 ~ /^\|---/)
        next
    line = substr($0, 3, length($0) - 4) # without the outer "| " and " |"
    n = split(line, f, / \| /)
    meaning = f[5]
    for (i = 6; i <= n; i++) # a " | " inside the meaning
        meaning = meaning " | " f[i]
    print ".TP"
    print "\\fB" esc(f[1]) "\\fR (" esc(f[2]) "; default " esc(f[3]) "; reloadable: " esc(f[4]) ")"
    print code(esc(meaning))
    next
}

/^@@page / {
    fill_mode()
    print ".SS \"" esc(substr($0, 8)) "\""
    sub_page = 1
    in_usage = 0
    after_heading = 1
    blank = 0
    next
}

/^[ \t]*$/ {
    in_usage = 0
    blank = 1
    next
}

/^usage: / {
    fill_mode()
    if (!sub_page && !synopsis_done) {
        print ".SH SYNOPSIS"
        synopsis_done = 1
    } else if (blank && !after_heading) {
        print ".PP"
    }
    print ".nf"
    nf = 1
    in_usage = 1
    print esc(substr($0, 8))
    after_heading = 0
    blank = 0
    next
}

in_usage && /^       / {
    line = $0
    sub(/^       /, "", line) # the indent under "usage: "
    print esc(line)
    next
}

/^[A-Za-z][^:]*:$/ && length($0) <= 40 {
    heading(substr($0, 1, length($0) - 1))
    next
}

/^[a-z][a-z ]*: / && (blank || NR == 1) && index($0, ":") <= 20 {
    i = index($0, ":")
    heading(substr($0, 1, i - 1))
    $0 = substr($0, i + 2)
}

/^[ \t]/ {
    if (!nf) {
        if (blank && !after_heading)
            print ".PP"
        print ".nf"
        nf = 1
    } else if (blank) {
        print ""
    }
    in_usage = 0
    print esc($0)
    blank = 0
    after_heading = 0
    next
}

{
    need_pp = (nf || blank) && !after_heading
    fill_mode()
    if (synopsis_done && !description_done && !sub_page) {
        print ".SH DESCRIPTION"
        need_pp = 0
    }
    description_done = 1
    if (need_pp)
        print ".PP"
    in_usage = 0
    print esc($0)
    blank = 0
    after_heading = 0
}

END {
    fill_mode()
    if (seealso != "") {
        print ".SH \"SEE ALSO\""
        n = split(seealso, s, " ")
        for (i = 1; i <= n; i++)
            print "\\fB" esc(s[i]) (i < n ? "," : "")
    }
}
