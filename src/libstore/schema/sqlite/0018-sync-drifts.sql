-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0018-sync-drifts.sql: where allot's copy of a cluster differs from Slurm (allot-agent's
-- sync, doc/agent.md "Sync").  sync_state: one row per cluster, the agent's last pass
-- (mode, time, generation) and running totals of drifts found and resolved.
-- sync_drifts: the drifts the last pass found, keyed (cluster, kind, object, field), each
-- with Slurm's value, allot's, what the mode made of it (status 'reported': left as found;
-- 'unresolvable': the mode cannot fix it; 'failed': fixing it failed, note says why; a
-- resolved drift is not stored) and when it was first seen; a pass replaces the cluster's
-- set (rows of older generations are deleted).
CREATE TABLE sync_state (
    cluster TEXT PRIMARY KEY REFERENCES clusters(name) ON DELETE CASCADE,
    mode TEXT NOT NULL,
    generation BIGINT NOT NULL,
    synced_s BIGINT NOT NULL,
    found_total BIGINT NOT NULL,
    resolved_total BIGINT NOT NULL
);
CREATE TABLE sync_drifts (
    cluster TEXT NOT NULL REFERENCES clusters(name) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    object TEXT NOT NULL,
    field TEXT NOT NULL,
    slurm_value TEXT NOT NULL,
    allot_value TEXT NOT NULL,
    status TEXT NOT NULL,
    note TEXT NOT NULL,
    generation BIGINT NOT NULL,
    first_seen_s BIGINT NOT NULL,
    last_seen_s BIGINT NOT NULL,
    PRIMARY KEY (cluster, kind, object, field)
);
