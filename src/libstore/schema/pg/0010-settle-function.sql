-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0010-settle-function.sql: a held run's settle in one statement (PostgreSQL only).
-- Why: the portable settle is six statements (job lookup, the balance UPDATE, two ledger
-- appends, the job UPDATE, the payer re-read) and allotd's threshold check adds a policy
-- lookup, each a loopback round trip while the batch holds the bank's write lock; measured
-- (bench/results/postgresql.md), those round trips bound allot on PostgreSQL.  This
-- function does the common case -- a run that is held -- in one call, the way 0007 does a
-- new hold.  It writes nothing and returns no row in every other case (replay, refused or
-- never-held run, anything out of range): store_settle then runs the portable path, which
-- answers those exactly as on SQLite.
-- Inputs computed by store_settle: p_elapsed (the request's elapsed, or end - start),
-- p_node_fail (1: NODE_FAIL, which costs 0), p_charge (an explicit charge, or -1: compute it).
-- The charge is ceil(billing_micro x elapsed / 60e6) as money_charge_sumin computes it, in
-- exact numeric arithmetic; store_settle's tests compare both backends' charges.
-- Returns the job row (store_job.c JOB_COLS), the payer allocation and its balance
-- (STORE_ALLOC_COLS, STORE_BALANCE_COLS) and the allocation's policy id (0: none), so the
-- caller's threshold check needs no lookup when there is no policy.
CREATE FUNCTION allot_settle_fast(p_cluster TEXT, p_job BIGINT, p_run BIGINT, p_start BIGINT,
    p_end BIGINT, p_elapsed BIGINT, p_state TEXT, p_billing BIGINT, p_alloc_tres TEXT,
    p_node_fail BIGINT, p_charge BIGINT, p_source TEXT, p_actor TEXT, p_now BIGINT)
RETURNS TABLE (o_cluster TEXT, o_job_id BIGINT, o_run BIGINT, o_user TEXT, o_account TEXT,
    o_partition TEXT, o_qos TEXT, o_submit BIGINT, o_start BIGINT, o_end BIGINT,
    o_req_tres TEXT, o_alloc_tres TEXT, o_billing BIGINT, o_time_limit BIGINT,
    o_elapsed BIGINT, o_state TEXT, o_status TEXT, o_hold BIGINT, o_charge BIGINT,
    o_alloc_id BIGINT, o_payer TEXT, o_source TEXT, o_updated BIGINT,
    a_id BIGINT, a_account TEXT, a_resource TEXT, a_cluster TEXT, a_start BIGINT,
    a_end BIGINT, a_category TEXT, a_comment TEXT, a_created BIGINT, b_granted BIGINT,
    b_used BIGINT, b_held BIGINT, o_policy BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_alloc BIGINT;
    v_hold BIGINT;
    v_status TEXT;
    v_billing BIGINT;
    v_charge NUMERIC;
BEGIN
    SELECT j.alloc_id, j.hold_sumin, j.status, j.billing_micro
        INTO v_alloc, v_hold, v_status, v_billing
        FROM jobs j WHERE j.cluster = p_cluster AND j.job_id = p_job AND j.run = p_run;
    IF NOT FOUND OR v_status <> 'held' OR v_hold <= 0 OR v_alloc IS NULL OR v_alloc <= 0 THEN
        RETURN; -- not known, replay, refused, or odd: the portable path decides
    END IF;
    IF p_billing > 0 THEN
        v_billing := p_billing;
    END IF;
    IF p_node_fail <> 0 THEN
        v_charge := 0;
    ELSIF p_charge >= 0 THEN
        v_charge := p_charge;
    ELSE
        IF v_billing < 0 OR p_elapsed < 0 THEN
            RETURN;
        END IF;
        v_charge := div(v_billing::NUMERIC * p_elapsed + 59999999, 60000000);
    END IF;
    IF v_charge > 1000000000000000 THEN
        RETURN; -- out of range: the portable path reports it
    END IF;
    -- Release the whole hold and debit the charge: one unchecked balance move.
    UPDATE alloc_balance b SET used_sumin = b.used_sumin + v_charge::BIGINT,
            held_sumin = b.held_sumin - v_hold
        WHERE b.alloc_id = v_alloc AND b.held_sumin - v_hold >= 0;
    IF NOT FOUND THEN
        RETURN; -- inconsistent balance: the portable path reports it
    END IF;
    INSERT INTO ledger (alloc_id, kind, amount_sumin, actor, time_s, comment, cluster, job_id,
                        run, idem_key)
        VALUES (v_alloc, 'release', v_hold, p_actor, p_now, 'settle', p_cluster, p_job, p_run,
                '');
    IF v_charge > 0 THEN
        INSERT INTO ledger (alloc_id, kind, amount_sumin, actor, time_s, comment, cluster,
                            job_id, run, idem_key)
            VALUES (v_alloc, 'debit', v_charge::BIGINT, p_actor, p_now, p_state, p_cluster,
                    p_job, p_run, '');
    END IF;
    UPDATE jobs j SET start_s = CASE WHEN p_start > 0 THEN p_start ELSE j.start_s END,
            end_s = p_end, elapsed_s = p_elapsed, slurm_state = p_state,
            billing_micro = v_billing,
            alloc_tres = CASE WHEN p_alloc_tres <> '' THEN p_alloc_tres ELSE j.alloc_tres END,
            status = 'settled', charge_sumin = v_charge::BIGINT, settle_source = p_source,
            updated_s = p_now
        WHERE j.cluster = p_cluster AND j.job_id = p_job AND j.run = p_run;
    RETURN QUERY SELECT j.cluster, j.job_id, j.run, j.user_name, j.account, j.partition_name,
            j.qos, j.submit_s, j.start_s, j.end_s, j.req_tres, j.alloc_tres, j.billing_micro,
            j.time_limit_s, j.elapsed_s, j.slurm_state, j.status, j.hold_sumin,
            j.charge_sumin, j.alloc_id, j.payer_account, j.settle_source, j.updated_s,
            al.id, ac.name, al.resource, al.cluster, al.start_s, al.end_s, al.category,
            al.comment, al.created_s, b.granted_sumin, b.used_sumin, b.held_sumin,
            COALESCE((SELECT p.id FROM policies p WHERE p.alloc_id = al.id), 0)
        FROM jobs j JOIN allocations al ON al.id = j.alloc_id
        JOIN accounts ac ON ac.id = al.account_id
        JOIN alloc_balance b ON b.alloc_id = al.id
        WHERE j.cluster = p_cluster AND j.job_id = p_job AND j.run = p_run;
END;
$$;
