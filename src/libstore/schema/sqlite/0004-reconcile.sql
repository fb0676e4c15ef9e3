-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0004-reconcile.sql (SQLite): the agent's sacct reconciliation marker, one row per cluster
-- (doc/design.md §3.5).  until_s is the end of the last sacct window the agent finished:
-- every job that ended before it has been settled or reported.  It only moves forward
-- (the agent resumes from it after a restart; a replayed window settles nothing twice,
-- settling is idempotent per run).  The counters and the last report are for status.
CREATE TABLE reconcile_marks (
    cluster TEXT PRIMARY KEY,
    until_s BIGINT NOT NULL,
    updated_s BIGINT NOT NULL,
    settled BIGINT NOT NULL DEFAULT 0,
    unknown BIGINT NOT NULL DEFAULT 0,
    report TEXT NOT NULL DEFAULT ''
);
