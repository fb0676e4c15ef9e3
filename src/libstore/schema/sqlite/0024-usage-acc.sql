-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0024-usage-acc.sql: fair-share usage kept as it happens (doc/fairshare.md, "How usage is
-- kept").  Share, tree and priority read these rows, never the jobs.
-- usage_params: the one row (id 1) of the decay the accumulators were kept with
-- (PriorityDecayHalfLife, PriorityUsageResetPeriod as 0..5, UsageSource).  No row: the
-- accumulators are not kept yet; allotd rebuilds them from the jobs when it starts (so an
-- upgraded bank is correct on its first start) and whenever its configuration differs.
-- usage_acc: one row per (cluster, account, user, qos) that has settled usage.  Values are
-- libcore's decay accumulator (decay.h) with IEEE-754 doubles stored as their 64 bits
-- (exact on both backends): ref_bits is the decaying sum at ref_s, plain_bits the same
-- charges undecayed (for a NoDecay QOS), period_s the reset period of the newest charge,
-- reset_s the association's last `allot usage clear` (runs that ended before it count not).
-- usage_pending: settles written by PostgreSQL's batched statement (store_job_batch.c),
-- which cannot run libcore's arithmetic; readers add them, the next fold moves them into
-- usage_acc.
-- usage_dirty: accumulators whose settled runs changed after they were counted (a job scrub
-- deleting them, an edit by hand): the trigger below marks them, readers recompute them
-- from those runs and the next fold writes them back.
CREATE TABLE usage_params (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    halflife_s BIGINT NOT NULL,
    reset_period BIGINT NOT NULL,
    source TEXT NOT NULL
);

CREATE TABLE usage_acc (
    cluster TEXT NOT NULL,
    account TEXT NOT NULL,
    user_name TEXT NOT NULL,
    qos TEXT NOT NULL,
    ref_bits BIGINT NOT NULL,
    plain_bits BIGINT NOT NULL,
    ref_s BIGINT NOT NULL,
    period_s BIGINT NOT NULL,
    reset_s BIGINT NOT NULL,
    PRIMARY KEY (cluster, account, user_name, qos)
);

CREATE TABLE usage_pending (
    id INTEGER PRIMARY KEY,
    cluster TEXT NOT NULL,
    account TEXT NOT NULL,
    user_name TEXT NOT NULL,
    qos TEXT NOT NULL,
    end_s BIGINT NOT NULL,
    elapsed_s BIGINT NOT NULL,
    charge_sumin BIGINT NOT NULL,
    billing_micro BIGINT NOT NULL
);

CREATE TABLE usage_dirty (
    cluster TEXT NOT NULL,
    account TEXT NOT NULL,
    user_name TEXT NOT NULL,
    qos TEXT NOT NULL,
    PRIMARY KEY (cluster, account, user_name, qos)
);

CREATE TRIGGER jobs_usage_update AFTER UPDATE OF cluster, account, user_name, qos, end_s,
    elapsed_s, charge_sumin, billing_micro, status ON jobs
    WHEN OLD.status = 'settled'
BEGIN
    INSERT INTO usage_dirty (cluster, account, user_name, qos)
        VALUES (OLD.cluster, OLD.account, OLD.user_name, OLD.qos) ON CONFLICT DO NOTHING;
    INSERT INTO usage_dirty (cluster, account, user_name, qos)
        SELECT NEW.cluster, NEW.account, NEW.user_name, NEW.qos WHERE NEW.status = 'settled'
        ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER jobs_usage_delete AFTER DELETE ON jobs WHEN OLD.status = 'settled'
BEGIN
    INSERT INTO usage_dirty (cluster, account, user_name, qos)
        VALUES (OLD.cluster, OLD.account, OLD.user_name, OLD.qos) ON CONFLICT DO NOTHING;
END;
