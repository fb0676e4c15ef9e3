-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0003-usage.sql: fair-share usage resets (`allot usage clear`, Slurm's RawUsage=0) and the
-- job scrub horizon (`allot db scrub-old-jobs`).
-- usage_resets: usage of an association (user '' = the account and everything under it)
-- counts only jobs that ended at or after time_s.  One row per (cluster, account, user);
-- clearing again moves time_s forward.
-- job_scrubs: one row per scrub: jobs not held that were last updated before before_s were
-- deleted; ledger entries about them stay (the money history is never deleted).

CREATE TABLE usage_resets (
    cluster TEXT NOT NULL,
    account TEXT NOT NULL,
    user_name TEXT NOT NULL DEFAULT '',
    time_s BIGINT NOT NULL,
    PRIMARY KEY (cluster, account, user_name)
);

CREATE TABLE job_scrubs (
    before_s BIGINT NOT NULL,
    time_s BIGINT NOT NULL,
    deleted BIGINT NOT NULL
);

CREATE INDEX jobs_usage ON jobs(cluster, status, end_s);
