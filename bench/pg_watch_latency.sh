#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# pg_watch_latency.sh [BUILD_DIR] - how soon one allotd prices jobs with a partition changed
# through another (the partition cache's notification, doc/postgresql.md): a private
# PostgreSQL and two allotd, A and B; 20 times: PATCH the weights through B, then hold
# through A (keep-alive) until a hold is billed the new way; prints the time from B's reply
# to that hold's reply.  Measures and prints; asserts nothing.
#   bash bench/pg_watch_latency.sh build-rel
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
export ALLOT_SRC_DIR=$src ALLOT_BUILD_DIR=$(cd "${1:-$src/build}" && pwd)
. "$src/tests/sharness.d/00-common.sh"
. "$src/tests/sharness.d/20-postgres.sh"
tmp=$(mktemp -d /tmp/allot-watchlat-XXXXXX) && cd "$tmp" || exit 1
. "$src/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$tmp"
cleanup() { pg_allotd_stop A; pg_allotd_stop B; pg_stop -m immediate; rm -rf "$tmp"; }
trap cleanup EXIT
pg_start "$tmp/pg" || exit 1
pg_allotd_start A || exit 1
pg_allotd_start B || exit 1
pga A POST /v1/clusters '{"name":"c1"}' >/dev/null &&
pga A POST /v1/accounts '{"name":"acct0","parent":"root"}' >/dev/null &&
pga A POST /v1/users '{"name":"u"}' >/dev/null &&
pga A POST /v1/assocs '{"cluster":"c1","account":"acct0","user":"u"}' >/dev/null &&
pga A POST /v1/partitions '{"cluster":"c1","name":"batch","resource":"cpu","billing_weights":"CPU=1.0"}' >/dev/null &&
pga A POST /v1/allocations '{"account":"acct0","resource":"cpu","start":"2020-01-01","end":"2099-01-01","amount_sumin":100000000}' >/dev/null || exit 1
sleep 2
python3 - "$(cat A/url)" "$(cat B/url)" <<'PY'
import http.client, json, sys, time, urllib.parse
a = urllib.parse.urlparse(sys.argv[1]); b = urllib.parse.urlparse(sys.argv[2])
ca = http.client.HTTPConnection(a.hostname, a.port); cb = http.client.HTTPConnection(b.hostname, b.port)
H = {"X-Allot-User": "root", "Content-Type": "application/json"}
job = [0]
def hold():
    job[0] += 1
    ca.request("POST", "/v1/jobs/hold", json.dumps({"cluster":"c1","job_id":job[0],"user":"u","account":"acct0","partition":"batch","time_limit_s":60,"tres":"cpu=4"}), H)
    return json.loads(ca.getresponse().read())["job"]["billing_micro"]
hold(); hold()
lat = []
for k in range(20):
    w = 1.0 + (k + 1) * 0.25
    want = int(w * 4000000)
    cb.request("PATCH", "/v1/partitions/c1/batch", json.dumps({"billing_weights": "CPU=%g" % w}), H)
    cb.getresponse().read()
    t0 = time.monotonic(); n = 0
    while hold() != want:
        n += 1
    lat.append((time.monotonic() - t0) * 1000)
lat.sort()
print("change via B seen by A: min %.2f ms, median %.2f ms, max %.2f ms (20 changes)" % (lat[0], lat[10], lat[-1]))
PY
