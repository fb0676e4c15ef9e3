#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# dom_check.py - checks on a page as Chromium's --dump-dom wrote it (the dashboard tests):
#   dom_check.py FILE ID              prints the text of element ID ("" and exit 1: none)
#   dom_check.py FILE ID --hidden     exit 0 when element ID carries the hidden attribute
#   dom_check.py FILE ID --rows       prints each <tr> of element ID's <tbody>, cells by |
#   dom_check.py FILE ID --attr NAME  prints attribute NAME of element ID
#   dom_check.py FILE --buttons ID    prints the text of each <button> inside ID, one a line
# Text is what a reader sees (entities decoded, whitespace folded).
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids = tag, dict(attrs), parent, []

    def text(self):
        return "".join(k if isinstance(k, str) else k.text() for k in self.kids)

    def walk(self):
        yield self
        for k in self.kids:
            if isinstance(k, Node):
                yield from k.walk()


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.kids.append(data)


def fold(s):
    return " ".join(s.split())


def main():
    t = Tree()
    t.feed(open(sys.argv[1], encoding="utf-8").read())
    args = sys.argv[2:]
    if args[0] == "--buttons":
        target = next((n for n in t.root.walk() if n.attrs.get("id") == args[1]), None)
        if target is None:
            sys.exit(1)
        for n in target.walk():
            if n.tag == "button":
                print(fold(n.text()))
        return
    target = next((n for n in t.root.walk() if n.attrs.get("id") == args[0]), None)
    if target is None:
        sys.exit(1)
    if len(args) == 1:
        print(fold(target.text()))
    elif args[1] == "--hidden":
        sys.exit(0 if "hidden" in target.attrs else 1)
    elif args[1] == "--attr":
        print(target.attrs.get(args[2], ""))
    elif args[1] == "--rows":
        for n in target.walk():
            if n.tag == "tr" and n.parent.tag == "tbody":
                print("|".join(fold(c.text()) for c in n.kids
                               if isinstance(c, Node) and c.tag == "td"))


main()
