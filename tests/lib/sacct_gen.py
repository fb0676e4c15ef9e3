#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# sacct_gen.py N [--accounts A] [--users U] [--cluster C] [--end EPOCH] [--seed S] [--steps]
# A `sacct -P` listing of N finished jobs, as `sacct -P -a -X --duplicates --format=
# JobIDRaw,State,User,Account,Partition,Start,End,Elapsed,AllocTRES,QOS,Timelimit` prints
# it (header first), on stdout: users u0..u(U-1), user i in account a(i mod A), partition
# "batch", job ids from 1000, jobs ending over the year before --end (default: now minus a
# day), 1 s to 4 h each, mostly COMPLETED.  --steps adds a ".batch" row after some jobs (as
# sacct without -X prints them).  --phases makes the use of each account change over the year
# as projects' does: spells of 3 to 42 days at a level of their own (some idle, some bursts),
# quieter weekends, about N jobs in all (bench/forecast_replay.c scores forecasts on it).
# The same seed gives the same file.
import argparse, random, sys, time

p = argparse.ArgumentParser()
p.add_argument("n", type=int)
p.add_argument("--accounts", type=int, default=50)
p.add_argument("--users", type=int, default=500)
p.add_argument("--cluster", default="")
p.add_argument("--end", type=int, default=int(time.time()) - 86400)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--steps", action="store_true")
p.add_argument("--phases", action="store_true")
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
def row(jid, u, acct, end, elapsed, cpus, state):
    start = end - elapsed
    tres = f"billing={cpus},cpu={cpus},mem={cpus * 2}G,node=1"
    out.write(f"{jid}|{state}|u{u}|a{acct}|batch|{ts(start)}|{ts(end)}|{dur(elapsed)}|"
              f"{tres}|normal|{dur(4 * 3600)}\n")
    if a.steps and (jid - 1000) % 7 == 0:
        out.write(f"{jid}.batch|{state}|||batch|{ts(start)}|{ts(end)}|{dur(elapsed)}|"
                  f"cpu={cpus},mem={cpus * 2}G,node=1||\n")


def poisson(lam):
    if lam > 30:
        return max(0, int(rnd.gauss(lam, lam ** 0.5) + 0.5))
    k, p, limit = 0, 1.0, 2.718281828459045 ** -lam
    while True:
        p *= rnd.random()
        if p <= limit:
            return k
        k += 1


if a.phases:
    days = 365
    t0 = a.end - days * 86400
    per_day = a.n / days / max(a.accounts, 1)  # mean jobs per account-day
    jid = 1000
    for acct in range(a.accounts):
        size = rnd.lognormvariate(0, 0.7)  # some projects are bigger than others
        d = 0
        while d < days:
            spell = rnd.randint(3, 42)
            r = rnd.random()
            level = 0.0 if r < 0.15 else size * rnd.lognormvariate(0, 0.6) * (3 if r > 0.92 else 1)
            for k in range(d, min(days, d + spell)):
                weekend = time.gmtime(t0 + k * 86400).tm_wday >= 5
                for _ in range(poisson(per_day * level * (0.4 if weekend else 1.1))):
                    end = t0 + k * 86400 + rnd.randint(1, 86400)
                    u = acct + a.accounts * rnd.randrange(max(1, a.users // a.accounts))
                    row(jid, u, acct, end, rnd.randint(1, 4 * 3600),
                        rnd.choice((1, 1, 2, 4, 8, 16)), rnd.choice(states))
                    jid += 1
            d += spell
    sys.exit(0)

span = year / max(a.n, 1)
for i in range(a.n):
    u = rnd.randrange(a.users)
    cpus = rnd.choice((1, 1, 2, 4, 8, 16))
    elapsed = rnd.randint(1, 4 * 3600)
    end = a.end - year + int(i * span)
    state = rnd.choice(states)
    row(1000 + i, u, u % a.accounts, end, elapsed, cpus, state)
