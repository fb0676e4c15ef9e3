#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# settle_gen.py N CLUSTER OUTDIR - finished jobs for the bulk settle tests (t1085): writes
# OUTDIR/holds.json (hold bodies of the first N/5 jobs, run 0), OUTDIR/settles.json (a
# settle body for every run: the held ones by run, the others never held, with who and
# where, job N/2 requeued once) and OUTDIR/bulk.json ({"jobs": settles}).  Accounts a0/a1,
# users u0..u3 (user i in a(i mod 2)), partition batch; fixed, so two banks get the same.
import json
import os
import sys

n, cluster, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
t0 = 1767225600  # 2026-01-01T00:00:00Z
states = ["COMPLETED", "COMPLETED", "FAILED", "TIMEOUT", "NODE_FAIL", "CANCELLED by 0"]
holds, settles = [], []
for j in range(1, n + 1):
    u = j % 4
    who = {"user": "u%d" % u, "account": "a%d" % (u % 2), "partition": "batch"}
    start = t0 + 600 * j
    elapsed = 60 + (j * 37) % 3000
    cpus = 1 + j % 8
    tres = "cpu=%d,mem=%dG,node=1" % (cpus, 2 * cpus)
    runs = 2 if j == n // 2 else 1
    for r in range(runs):
        s = {"cluster": cluster, "job_id": j, "run": r, "start": start + 4000 * r,
             "end": start + 4000 * r + elapsed, "elapsed_s": elapsed,
             "state": "REQUEUED" if r + 1 < runs else states[j % len(states)],
             "source": "sacct"}
        if j <= n // 5:
            holds.append(dict(who, cluster=cluster, job_id=j, run=0, start=start,
                              time_limit_s=3600, tres=tres, alloc_tres=tres))
        else:
            s.update(who, qos="", time_limit_s=3600, alloc_tres=tres)
        settles.append(s)
os.makedirs(out, exist_ok=True)
json.dump(holds, open(os.path.join(out, "holds.json"), "w"))
json.dump(settles, open(os.path.join(out, "settles.json"), "w"))
json.dump({"jobs": settles}, open(os.path.join(out, "bulk.json"), "w"))
