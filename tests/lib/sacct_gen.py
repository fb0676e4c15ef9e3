#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# sacct_gen.py N [--accounts A] [--users U] [--cluster C] [--end EPOCH] [--seed S] [--steps]
# A `sacct -P` listing of N finished jobs, as `sacct -P -a -X --duplicates --format=
# JobIDRaw,State,User,Account,Partition,Start,End,Elapsed,AllocTRES,QOS,Timelimit` prints
# it (header first), on stdout: users u0..u(U-1), user i in account a(i mod A), partition
# "batch", job ids from 1000, jobs ending over the year before --end (default: now minus a
# day), 1 s to 4 h each, mostly COMPLETED.  --steps adds a ".batch" row after some jobs (as
# sacct without -X prints them).  The same seed gives the same file.
import argparse, random, sys, time

p = argparse.ArgumentParser()
p.add_argument("n", type=int)
p.add_argument("--accounts", type=int, default=50)
p.add_argument("--users", type=int, default=500)
p.add_argument("--cluster", default="")
p.add_argument("--end", type=int, default=int(time.time()) - 86400)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--steps", action="store_true")
a = p.parse_args()
rnd = random.Random(a.seed)
states = ["COMPLETED"] * 16 + ["FAILED", "TIMEOUT", "CANCELLED by 1001", "NODE_FAIL"]
year = 365 * 86400


def ts(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))


def dur(s):
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


out = sys.stdout
out.write("JobIDRaw|State|User|Account|Partition|Start|End|Elapsed|AllocTRES|QOS|Timelimit\n")
span = year / max(a.n, 1)
for i in range(a.n):
    u = rnd.randrange(a.users)
    cpus = rnd.choice((1, 1, 2, 4, 8, 16))
    elapsed = rnd.randint(1, 4 * 3600)
    end = a.end - year + int(i * span)
    start = end - elapsed
    state = rnd.choice(states)
    tres = f"billing={cpus},cpu={cpus},mem={cpus * 2}G,node=1"
    jid = 1000 + i
    out.write(f"{jid}|{state}|u{u}|a{u % a.accounts}|batch|{ts(start)}|{ts(end)}|{dur(elapsed)}|"
              f"{tres}|normal|{dur(4 * 3600)}\n")
    if a.steps and i % 7 == 0:
        out.write(f"{jid}.batch|{state}|||batch|{ts(start)}|{ts(end)}|{dur(elapsed)}|"
                  f"cpu={cpus},mem={cpus * 2}G,node=1||\n")
