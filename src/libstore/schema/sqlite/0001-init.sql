-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0001-init.sql (SQLite): the bank's first schema (doc/design.md §2, §3, §9).
-- Applied by store_upgrade inside one transaction, which then records version 1 in
-- schema_version.  Money columns are integer SU-minutes (_sumin); times are UTC epoch
-- seconds (_s); enum values are stored by their model.h names ('credit', 'held', ...).
-- The ledger is append-only (triggers refuse UPDATE and DELETE); alloc_balance caches
-- per-allocation sums of the ledger and is written in the same transaction as each entry.

CREATE TABLE schema_version (
    version BIGINT PRIMARY KEY,
    applied_s BIGINT NOT NULL
);

CREATE TABLE clusters (
    name TEXT PRIMARY KEY,
    created_s BIGINT NOT NULL
);

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    parent_id BIGINT REFERENCES accounts(id),
    shares BIGINT NOT NULL DEFAULT 1 CHECK (shares >= 0),
    description TEXT NOT NULL DEFAULT '',
    organization TEXT NOT NULL DEFAULT '',
    created_s BIGINT NOT NULL
);
CREATE INDEX accounts_parent ON accounts(parent_id);

CREATE TABLE users (
    name TEXT PRIMARY KEY,
    uid BIGINT NOT NULL DEFAULT -1,
    default_account TEXT NOT NULL DEFAULT '',
    created_s BIGINT NOT NULL
);
CREATE INDEX users_uid ON users(uid);

CREATE TABLE assocs (
    id INTEGER PRIMARY KEY,
    cluster TEXT NOT NULL REFERENCES clusters(name),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    user_name TEXT NOT NULL REFERENCES users(name),
    partition_name TEXT NOT NULL DEFAULT '',
    shares BIGINT NOT NULL DEFAULT 1 CHECK (shares >= 0),
    default_qos TEXT NOT NULL DEFAULT '',
    qos TEXT NOT NULL DEFAULT '',
    UNIQUE (cluster, account_id, user_name, partition_name)
);
CREATE INDEX assocs_user ON assocs(user_name);
CREATE INDEX assocs_account ON assocs(account_id);

CREATE TABLE qos (
    name TEXT PRIMARY KEY,
    priority BIGINT NOT NULL DEFAULT 0,
    flags TEXT NOT NULL DEFAULT '',
    usage_factor_ppm BIGINT NOT NULL DEFAULT 1000000,
    limit_factor_ppm BIGINT NOT NULL DEFAULT -1,
    description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE partitions (
    cluster TEXT NOT NULL REFERENCES clusters(name),
    name TEXT NOT NULL,
    resource TEXT NOT NULL,
    billing_weights TEXT NOT NULL DEFAULT '',
    max_tres BIGINT NOT NULL DEFAULT 0,
    qos TEXT NOT NULL DEFAULT '',
    default_time_s BIGINT NOT NULL DEFAULT -1,
    max_time_s BIGINT NOT NULL DEFAULT -1,
    PRIMARY KEY (cluster, name)
);

CREATE TABLE limits (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, owner, name)
);

CREATE TABLE allocations (
    id INTEGER PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    resource TEXT NOT NULL,
    cluster TEXT NOT NULL DEFAULT '',
    start_s BIGINT NOT NULL,
    end_s BIGINT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    comment TEXT NOT NULL DEFAULT '',
    created_s BIGINT NOT NULL,
    CHECK (start_s < end_s)
);
-- The payer lookup: (account, resource) then the time range.
CREATE INDEX allocations_payer ON allocations(account_id, resource, start_s);

CREATE TABLE alloc_balance (
    alloc_id BIGINT PRIMARY KEY REFERENCES allocations(id),
    granted_sumin BIGINT NOT NULL DEFAULT 0,
    used_sumin BIGINT NOT NULL DEFAULT 0,
    held_sumin BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE ledger (
    id INTEGER PRIMARY KEY,
    alloc_id BIGINT NOT NULL REFERENCES allocations(id),
    kind TEXT NOT NULL,
    amount_sumin BIGINT NOT NULL,
    actor TEXT NOT NULL DEFAULT '',
    time_s BIGINT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    cluster TEXT NOT NULL DEFAULT '',
    job_id BIGINT NOT NULL DEFAULT 0,
    run BIGINT NOT NULL DEFAULT 0,
    idem_key TEXT NOT NULL DEFAULT '',
    CHECK (amount_sumin > 0 OR (kind = 'adjustment' AND amount_sumin <> 0))
);
CREATE UNIQUE INDEX ledger_idem ON ledger(idem_key) WHERE idem_key <> '';
CREATE INDEX ledger_alloc ON ledger(alloc_id, id);
CREATE INDEX ledger_job ON ledger(cluster, job_id, run) WHERE job_id <> 0;
CREATE INDEX ledger_time ON ledger(time_s);
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'ledger is append-only');
END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'ledger is append-only');
END;

CREATE TABLE jobs (
    cluster TEXT NOT NULL,
    job_id BIGINT NOT NULL,
    run BIGINT NOT NULL,
    user_name TEXT NOT NULL DEFAULT '',
    account TEXT NOT NULL DEFAULT '',
    partition_name TEXT NOT NULL DEFAULT '',
    qos TEXT NOT NULL DEFAULT '',
    submit_s BIGINT NOT NULL DEFAULT 0,
    start_s BIGINT NOT NULL DEFAULT 0,
    end_s BIGINT NOT NULL DEFAULT 0,
    req_tres TEXT NOT NULL DEFAULT '',
    alloc_tres TEXT NOT NULL DEFAULT '',
    billing_micro BIGINT NOT NULL DEFAULT 0,
    time_limit_s BIGINT NOT NULL DEFAULT 0,
    elapsed_s BIGINT NOT NULL DEFAULT 0,
    slurm_state TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    hold_sumin BIGINT NOT NULL DEFAULT 0,
    charge_sumin BIGINT NOT NULL DEFAULT 0,
    alloc_id BIGINT NOT NULL DEFAULT 0,
    payer_account TEXT NOT NULL DEFAULT '',
    settle_source TEXT NOT NULL DEFAULT '',
    updated_s BIGINT NOT NULL,
    PRIMARY KEY (cluster, job_id, run)
);
CREATE INDEX jobs_account ON jobs(account, status);
CREATE INDEX jobs_user ON jobs(user_name, status);
CREATE INDEX jobs_updated ON jobs(updated_s);

CREATE TABLE failures (
    id INTEGER PRIMARY KEY,
    cluster TEXT NOT NULL DEFAULT '',
    job_id BIGINT NOT NULL DEFAULT 0,
    run BIGINT NOT NULL DEFAULT 0,
    user_name TEXT NOT NULL DEFAULT '',
    account TEXT NOT NULL DEFAULT '',
    partition_name TEXT NOT NULL DEFAULT '',
    alloc_id BIGINT NOT NULL DEFAULT 0,
    stage TEXT NOT NULL,
    time_s BIGINT NOT NULL,
    needed_sumin BIGINT NOT NULL DEFAULT 0,
    available_sumin BIGINT NOT NULL DEFAULT 0,
    held_sumin BIGINT NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT ''
);
CREATE INDEX failures_time ON failures(time_s);
CREATE INDEX failures_account ON failures(account, time_s);
CREATE INDEX failures_user ON failures(user_name, time_s);
CREATE INDEX failures_job ON failures(cluster, job_id, run) WHERE job_id <> 0;

INSERT INTO accounts (name, parent_id, shares, description, organization, created_s)
VALUES ('root', NULL, 1, 'root of the account tree', '', 0);
