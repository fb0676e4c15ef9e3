-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0002-policy.sql (SQLite): periodic policies, their durable period marker, the command
-- outbox and the evaluation log (doc/design.md §5).
-- policies.current_period is THE period marker: the boundary transaction advances it with
-- a compare-and-set (WHERE current_period = old) in the same transaction that writes the
-- ledger entries and enqueues the commands, so each period is processed exactly once.
-- policy_periods keeps one row per processed period (its credit, carry, use at open/close).
-- commands: one row per change to apply on a cluster; idem_key makes enqueueing idempotent;
-- state pending -> sent -> confirmed | failed ('confirmed' only when an agent verified it).
-- evaluations: one row per threshold evaluation (usage, flags before/after, actions).

CREATE TABLE policies (
    id INTEGER PRIMARY KEY,
    alloc_id BIGINT NOT NULL UNIQUE REFERENCES allocations(id),
    cluster TEXT NOT NULL REFERENCES clusters(name),
    period_kind TEXT NOT NULL,
    base_sumin BIGINT NOT NULL CHECK (base_sumin >= 0),
    carryover BIGINT NOT NULL DEFAULT 1,
    carry_factor_ppm BIGINT NOT NULL DEFAULT 500000 CHECK (carry_factor_ppm >= 0),
    grace_ppm BIGINT NOT NULL DEFAULT 200000 CHECK (grace_ppm >= 0),
    notify_ppm BIGINT NOT NULL DEFAULT 800000,
    downscale_ppm BIGINT NOT NULL DEFAULT 1000000,
    slow_qos TEXT NOT NULL DEFAULT '',
    normal_qos TEXT NOT NULL DEFAULT '',
    reset_raw_usage BIGINT NOT NULL DEFAULT 1,
    limit_type TEXT NOT NULL DEFAULT 'GrpTRESMins',
    tres_weights TEXT NOT NULL DEFAULT '',
    fairshare BIGINT NOT NULL DEFAULT -1,
    current_period TEXT NOT NULL DEFAULT '',
    flags BIGINT NOT NULL DEFAULT 0,
    created_s BIGINT NOT NULL
);

CREATE TABLE policy_periods (
    policy_id BIGINT NOT NULL REFERENCES policies(id),
    period TEXT NOT NULL,
    start_s BIGINT NOT NULL,
    end_s BIGINT NOT NULL,
    base_sumin BIGINT NOT NULL,
    carry_sumin BIGINT NOT NULL,
    total_sumin BIGINT NOT NULL,
    used_open_sumin BIGINT NOT NULL,
    opened_s BIGINT NOT NULL,
    closed_s BIGINT NOT NULL DEFAULT 0,
    used_sumin BIGINT NOT NULL DEFAULT 0,
    expired_sumin BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (policy_id, period)
);

CREATE TABLE commands (
    id INTEGER PRIMARY KEY,
    cluster TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '',
    policy_id BIGINT NOT NULL DEFAULT 0,
    period TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    result TEXT NOT NULL DEFAULT '',
    idem_key TEXT NOT NULL,
    created_s BIGINT NOT NULL,
    sent_s BIGINT NOT NULL DEFAULT 0,
    done_s BIGINT NOT NULL DEFAULT 0,
    UNIQUE (idem_key)
);
CREATE INDEX commands_queue ON commands(cluster, state, id);
CREATE INDEX commands_policy ON commands(policy_id, period);

CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    policy_id BIGINT NOT NULL REFERENCES policies(id),
    period TEXT NOT NULL,
    time_s BIGINT NOT NULL,
    used_sumin BIGINT NOT NULL,
    total_sumin BIGINT NOT NULL,
    usage_ppm BIGINT NOT NULL,
    prev_flags BIGINT NOT NULL,
    new_flags BIGINT NOT NULL,
    actions TEXT NOT NULL DEFAULT '',
    command_ids TEXT NOT NULL DEFAULT ''
);
CREATE INDEX evaluations_policy ON evaluations(policy_id, period, id);

-- Agents: the last time each cluster's agent polled (allot agent status).
CREATE TABLE agents (
    cluster TEXT PRIMARY KEY,
    last_seen_s BIGINT NOT NULL,
    version TEXT NOT NULL DEFAULT ''
);
