#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# prom_check.py - read a /metrics page on stdin with the Prometheus Python client's own
# text-format parser (Debian's python3-prometheus-client) and check what the parser does
# not: every family has HELP and TYPE, no family appears twice, and each histogram's
# buckets are cumulative (non-decreasing in le) and end in +Inf equal to its _count.
# Prints "NAME TYPE SAMPLES" per family (the parser names a counter without _total);
# exits 1 naming the first problem.
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def fail(msg):
    print("prom_check: " + msg, file=sys.stderr)
    sys.exit(1)


def check_histogram(fam):
    series = {}
    for s in fam.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        h = series.setdefault(key, {"buckets": [], "count": None, "sum": None})
        if s.name == fam.name + "_bucket":
            h["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name == fam.name + "_count":
            h["count"] = s.value
        elif s.name == fam.name + "_sum":
            h["sum"] = s.value
    for key, h in series.items():
        b = sorted(h["buckets"])
        if not b or not math.isinf(b[-1][0]):
            fail("%s%s: no +Inf bucket" % (fam.name, key))
        if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            fail("%s%s: buckets not cumulative: %s" % (fam.name, key, b))
        if h["count"] is None or h["sum"] is None or b[-1][1] != h["count"]:
            fail("%s%s: +Inf bucket %s, _count %s, _sum %s" % (fam.name, key, b[-1][1],
                                                                 h["count"], h["sum"]))


text = sys.stdin.read()
seen = set()
try:
    fams = list(text_string_to_metric_families(text))
except Exception as e:  # the parser raises ValueError and others on a bad line
    fail("not Prometheus text format: %s" % e)
for fam in fams:
    if fam.name in seen:
        fail("family %s appears twice" % fam.name)
    seen.add(fam.name)
    if fam.type == "unknown" or not fam.documentation:
        fail("family %s has no TYPE or no HELP" % fam.name)
    if fam.type == "histogram":
        check_histogram(fam)
    print(fam.name, fam.type, len(fam.samples))
