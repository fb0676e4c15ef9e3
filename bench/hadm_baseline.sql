-- SPDX-License-Identifier: GPL-3.0-or-later
-- hadm_baseline.sql - the comparison point of bench/pg_bench.sh: HADM's bank as published
-- (its schema and its serialized access to the activity tables), written for this benchmark.  An "activity" parent table inherited by
-- credits, predebits, debits and failures; a "balances" view summing them per allocation;
-- a PL/pgSQL pre-debit procedure that takes a PostgreSQL advisory lock, reads the balance
-- from the view, and inserts the pre-debit (or a failure); a debit procedure, under the
-- same lock, that resolves the pre-debit into the per-owner aggregate debit.  Each call is
-- its own transaction (autocommit) with synchronous_commit on: the same durability as an
-- acknowledged allotd request.  Indexes on allocation_id / job_id keep the sums as cheap
-- as the design allows.
DROP SCHEMA IF EXISTS hadm CASCADE;
CREATE SCHEMA hadm;
SET search_path = hadm;

CREATE TABLE allocations (
    allocation_id SERIAL PRIMARY KEY,
    workgroup TEXT NOT NULL,
    resource TEXT NOT NULL,
    start_date TIMESTAMPTZ NOT NULL,
    end_date TIMESTAMPTZ NOT NULL
);
CREATE TABLE activity (
    activity_id BIGSERIAL PRIMARY KEY,
    allocation_id INTEGER NOT NULL REFERENCES allocations(allocation_id),
    amount BIGINT NOT NULL,
    comments TEXT NOT NULL DEFAULT ''
);
CREATE TABLE credits () INHERITS (activity);
CREATE TABLE predebits (job_id BIGINT NOT NULL, status TEXT NOT NULL, owner_uid INTEGER NOT NULL)
    INHERITS (activity);
CREATE TABLE debits (owner_uid INTEGER NOT NULL) INHERITS (activity);
CREATE TABLE failures (job_id BIGINT NOT NULL, owner_uid INTEGER NOT NULL) INHERITS (activity);
CREATE INDEX credits_alloc ON credits(allocation_id);
CREATE INDEX predebits_alloc ON predebits(allocation_id);
CREATE UNIQUE INDEX predebits_job ON predebits(job_id);
CREATE INDEX debits_alloc ON debits(allocation_id, owner_uid);

CREATE VIEW balances AS
SELECT a.allocation_id,
       COALESCE((SELECT SUM(amount) FROM credits c WHERE c.allocation_id = a.allocation_id), 0)
     - COALESCE((SELECT SUM(amount) FROM predebits p WHERE p.allocation_id = a.allocation_id), 0)
     - COALESCE((SELECT SUM(amount) FROM debits d WHERE d.allocation_id = a.allocation_id), 0)
       AS balance
FROM allocations a;

-- Pre-debit: true when the job may run.  The advisory lock serializes every procedure that
-- moves SUs, so two 20 SU pre-debits against 30 SU cannot both pass.
CREATE FUNCTION predebit(p_alloc INTEGER, p_job BIGINT, p_uid INTEGER, p_amount BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql SET search_path = hadm AS $$
DECLARE
    b BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(4242);
    SELECT balance INTO b FROM balances WHERE allocation_id = p_alloc;
    IF b IS NULL OR b < p_amount THEN
        INSERT INTO failures (allocation_id, amount, job_id, owner_uid)
        VALUES (p_alloc, p_amount, p_job, p_uid);
        RETURN FALSE;
    END IF;
    INSERT INTO predebits (allocation_id, amount, job_id, status, owner_uid)
    VALUES (p_alloc, p_amount, p_job, 'executing', p_uid);
    RETURN TRUE;
END;
$$;

-- Actual debit at job end: the pre-debit becomes part of the owner's aggregate debit.
CREATE FUNCTION debit(p_job BIGINT, p_actual BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql SET search_path = hadm AS $$
DECLARE
    pd RECORD;
BEGIN
    PERFORM pg_advisory_xact_lock(4242);
    SELECT allocation_id, owner_uid INTO pd FROM predebits
    WHERE job_id = p_job AND status = 'executing';
    IF NOT FOUND THEN
        RETURN FALSE;
    END IF;
    DELETE FROM predebits WHERE job_id = p_job;
    UPDATE debits SET amount = amount + p_actual
    WHERE allocation_id = pd.allocation_id AND owner_uid = pd.owner_uid;
    IF NOT FOUND THEN
        INSERT INTO debits (allocation_id, amount, owner_uid)
        VALUES (pd.allocation_id, p_actual, pd.owner_uid);
    END IF;
    RETURN TRUE;
END;
$$;
