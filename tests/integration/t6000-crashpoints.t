#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t6000-crashpoints.t - crash at every durability boundary, at many moments (STYLE §4, after
# SQLite's test6.c: crash at the Nth sync, reopen, check).
#
# A sequential client runs a bank workload (reference data, allocation, idempotent credits,
# holds, settles, releases) and logs each operation allotd acknowledged.  For each writer
# crash point (writer.before_commit, writer.after_commit, writer.after_sync) and each N in a spread of batch
# numbers, allotd is started with ALLOT_CRASH=<point>:<N> and _exits at the Nth group commit.
# After the restart: every acknowledged operation is present exactly once, no job has two
# holds, debits or releases, GET /v1/check passes; then the client resumes from its first
# unacknowledged operation (replays are idempotent) and the final bank must equal a run
# without any crash, entry for entry; with allotd stopped, `allot db check` passes on the
# file.  t1040 covers kill -9 and the crash points under a 64-client storm; this one covers
# every moment of a mixed workload with exact expectations.  SQLite backend (allotd_start's).
test_description='allotd crash points: acknowledged operations survive exactly once'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
CONF="AuthType=none TestMode=local Operators=slurm"

cat >client.py <<\PY
# client.py URL ACK START: run the workload from op START; append each acknowledged op's
# index to ACK.  Exit 0 when done, 2 when allotd went away, 1 on a wrong answer.
# client.py URL ACK --recover OUT: after a restart: check that every op in ACK is present
# exactly once, resume from the first unacknowledged op (which may have been done before
# the crash: replays are idempotent), check again, and write the bank's observable state
# (no ids, no times) to OUT.
# One python run per step and http.client, not urllib.request: the interpreter's start and
# urllib's imports were a third of this script's time.
import http.client, json, sys

url, path = sys.argv[1], sys.argv[2]
host, port = url.split("//", 1)[1].rsplit(":", 1)

def call(method, p, body=None, user="root"):
    headers = {"X-Allot-User": user}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, p, body=data, headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        conn.close()

def alloc_id():
    st, r = call("GET", "/v1/allocations?account=science")
    assert st == 200 and r["items"], (st, r)
    return r["items"][0]["id"]

JOBS = 12
def ops():
    o = [("create", "POST", "/v1/clusters", {"name": "c1"}),
         ("create", "POST", "/v1/accounts", {"name": "science"}),
         ("create", "POST", "/v1/accounts", {"name": "chem", "parent": "science"}),
         ("create", "POST", "/v1/partitions", {"cluster": "c1", "name": "std"}),
         ("create", "POST", "/v1/allocations", {"account": "science", "start": "2020-01-01",
                                                "end": "2100-01-01", "su": "100h"}),
         ("create", "POST", "/v1/users", {"name": "alice"}),
         ("create", "POST", "/v1/assocs", {"cluster": "c1", "account": "chem", "user": "alice"})]
    for j in range(1, JOBS + 1):
        if j % 4 == 1:
            o.append(("credit", "k%d" % j, 60 * j))
        o.append(("hold", j))
        o.append(("release" if j % 4 == 0 else "settle", j))
    return o

def run_op(op, retry):
    kind = op[0]
    if kind == "create":
        st, r = call(op[1], op[2], op[3])
        # A create replayed after a crash may find its object already made.
        return st in (200, 201) or (retry and st == 409), (st, r)
    if kind == "credit":
        st, r = call("POST", "/v1/allocations/%d/credit" % alloc_id(),
                     {"amount_sumin": op[2], "idempotency_key": op[1]})
        return st in (200, 201), (st, r)
    job = op[1]
    if kind == "hold":
        st, r = call("POST", "/v1/jobs/hold", {"cluster": "c1", "job_id": job, "user": "alice",
                     "account": "chem", "partition": "std", "time_limit_s": 600, "billing": 2},
                     user="slurm")
    elif kind == "settle":
        st, r = call("POST", "/v1/jobs/settle", {"cluster": "c1", "job_id": job,
                     "elapsed_s": 60 * job, "state": "COMPLETED"}, user="slurm")
    else:
        st, r = call("POST", "/v1/jobs/release", {"cluster": "c1", "job_id": job}, user="slurm")
    return st == 200, (st, r)

def dump():
    out = []
    for p in ("/v1/clusters", "/v1/accounts", "/v1/partitions"):
        st, r = call("GET", p)
        assert st == 200, (p, st, r)
        out += [(p, it["name"]) for it in r["items"]]
    st, r = call("GET", "/v1/balances?account=science")
    b = r["items"][0]
    out.append(("balance", b["granted_sumin"], b["used_sumin"], b["held_sumin"],
                b["available_sumin"]))
    st, r = call("GET", "/v1/ledger?account=science")
    out += sorted(("ledger", e["kind"], e["amount_sumin"], e["job_id"], e["idempotency_key"])
                  for e in r["items"])
    # Every job is on c1; unfiltered, as a crash may come before c1 exists (cluster=c1
    # would then be 404: no such cluster and no job names it).
    st, r = call("GET", "/v1/jobs")
    assert st == 200, ("/v1/jobs", st, r)
    out += sorted(("job", j["job_id"], j["run"], j["status"], j["hold_sumin"], j["charge_sumin"])
                  for j in r["items"])
    return out

def verify(acked):
    o = ops()
    st, r = call("GET", "/v1/ledger?account=science")
    if st == 404:
        # A crash may come before the account exists: the listing is then 404 (no such
        # account and no entry), and the checks below find any acknowledged op missing.
        sa, accounts = call("GET", "/v1/accounts")
        assert sa == 200 and "science" not in [a["name"] for a in accounts["items"]], (st, r)
        r = {"items": []}
    assert st in (200, 404), (st, r)
    per, keys = {}, {}
    for e in r["items"]:
        if e["job_id"]:
            k = (e["kind"], e["job_id"])
            per[k] = per.get(k, 0) + 1
        if e["idempotency_key"]:
            keys[e["idempotency_key"]] = keys.get(e["idempotency_key"], 0) + 1
    assert all(n == 1 for n in per.values()), ("duplicate ledger entries", per)
    assert all(n == 1 for n in keys.values()), ("duplicate idempotency keys", keys)
    st, r = call("GET", "/v1/jobs")
    assert st == 200, ("/v1/jobs", st, r)
    jobs = {j["job_id"]: j for j in r["items"]}
    for i in acked:
        op = o[i]
        if op[0] == "create":
            p = op[2] if op[2] != "/v1/partitions" else "/v1/partitions/c1"
            name = op[3].get("name")
            if name is None:
                alloc_id()
            elif p == "/v1/clusters":
                st, r = call("GET", p)
                assert name in [c["name"] for c in r["items"]], ("cluster missing", op, r)
            else:
                st, r = call("GET", p + "/" + name)
                assert st == 200, ("acknowledged object missing", op, st, r)
        elif op[0] == "credit":
            assert keys.get(op[1]) == 1, ("acknowledged credit missing", op)
        elif op[0] == "hold":
            assert op[1] in jobs and per.get(("hold", op[1])) == 1, ("hold missing", op)
        elif op[0] == "settle":
            j = jobs.get(op[1])
            # billing 2 for 60 x job seconds, at most the 20 SU-minute hold (600 s x 2)
            assert j and j["status"] == "settled" and j["charge_sumin"] == min(2 * op[1], 20), (op, j)
        else:
            j = jobs.get(op[1])
            assert j and j["status"] == "released", (op, j)
    st, r = call("GET", "/v1/check")
    assert st == 200 and r["ok"] is True, ("check", st, r)
    print("verified", len(acked), "acknowledged ops;", len(jobs), "jobs")

def read_acked():
    try:
        return [int(l) for l in open(path)]
    except FileNotFoundError:
        return []

# run(START, RETRY): the workload from op START; the exit code described at the top.
def run(start, retry):
    o = ops()
    with open(path, "a") as ack:
        for i in range(start, len(o)):
            try:
                ok, detail = run_op(o[i], retry=(retry and i == start))
            except (OSError, http.client.HTTPException) as e:
                print("allotd went away at op", i, repr(e))
                return 2
            if not ok:
                print("op", i, o[i], "answered", detail)
                return 1
            ack.write("%d\n" % i)
            ack.flush()
    print("done", len(o), "ops")
    return 0

if sys.argv[3] != "--recover":
    sys.exit(run(int(sys.argv[3]), False))
acked = read_acked()
verify(acked)
rc = run(acked[-1] + 1 if acked else 0, True)
if rc != 0:
    sys.exit(rc)
verify(read_acked())
with open(sys.argv[4], "w") as f:
    for row in dump():
        f.write(" ".join(map(str, row)) + "\n")
PY

test_expect_success 'reference: the workload without a crash' '
	allotd_start $CONF &&
	python3 client.py "$ALLOTD_URL" ack 0 &&
	python3 client.py "$ALLOTD_URL" ack --recover want &&
	test $(wc -l <ack) = 34 &&
	allotd_stop &&
	test "$ALLOTD_EXIT" = 0
'

# Batches are counted from allotd start: 1 = the first write (the cluster), 34 = the last.
for point in writer.before_commit writer.after_commit writer.after_sync; do
	for n in 1 2 4 6 9 13 18 24 29 34; do
		test_expect_success "crash at $point pass $n: acknowledged ops once, resume equals reference" '
			allotd_stop &&
			rm -rf allotd ack &&
			ALLOT_CRASH=$point:$n allotd_start $CONF &&
			{ python3 client.py "$ALLOTD_URL" ack 0 >client.out; echo $? >client.rc; } &&
			cat client.out &&
			test "$(cat client.rc)" = 2 &&
			wait_for 10 pid_gone "$ALLOTD_PID" &&
			{ wait $ALLOTD_PID; echo $? >exit.rc; } &&
			ALLOTD_PID= &&
			test "$(cat exit.rc)" = 99 &&
			allotd_start $CONF &&
			python3 client.py "$ALLOTD_URL" ack --recover got &&
			test_cmp want got &&
			allotd_stop &&
			"$ALLOT_BIN" --config "$ALLOTD_CONF" db check
		'
	done
done
test_expect_success 'cleanup' 'allotd_stop'
test_done
