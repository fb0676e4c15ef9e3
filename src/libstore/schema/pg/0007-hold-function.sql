-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0007-hold-function.sql: a new hold's writes in one statement (PostgreSQL only).
-- Why: a hold through the portable verbs is six statements (job lookup, payer walk, the
-- conditional balance update, ledger append, job insert, balance re-read), each a loopback
-- round trip while the batch holds the bank's write lock; measured, those round trips, not
-- the commit, limit allot on PostgreSQL (doc/postgresql.md).  This function does the common
-- case -- a run not seen before whose payer has the funds -- in one call.  It writes nothing
-- and returns no row in every other case (replay, no payer, refused): store_hold then runs
-- the portable path, which records refusals and answers replays exactly as on SQLite, under
-- the same write lock, so the outcome does not depend on which path ran.
-- The statements are the ones of store_job.c / store_alloc.c (store_payer, SQL_BALANCE_APPLY
-- with checked = 1, the ledger append, the job insert); store_hold's tests run on both
-- backends and prove the two paths equal.
CREATE FUNCTION allot_hold_fast(p_cluster TEXT, p_job BIGINT, p_run BIGINT, p_user TEXT,
    p_account TEXT, p_partition TEXT, p_qos TEXT, p_submit BIGINT, p_start BIGINT,
    p_req_tres TEXT, p_alloc_tres TEXT, p_billing BIGINT, p_time_limit BIGINT,
    p_resource TEXT, p_at BIGINT, p_amount BIGINT, p_actor TEXT, p_now BIGINT)
RETURNS TABLE (o_id BIGINT, o_account TEXT, o_resource TEXT, o_cluster TEXT, o_start BIGINT,
    o_end BIGINT, o_category TEXT, o_comment TEXT, o_created BIGINT, o_granted BIGINT,
    o_used BIGINT, o_held BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_acct BIGINT;
    v_parent BIGINT;
    v_alloc BIGINT;
    v_payer TEXT;
BEGIN
    PERFORM 1 FROM jobs j WHERE j.cluster = p_cluster AND j.job_id = p_job AND j.run = p_run;
    IF FOUND THEN
        RETURN; -- a replay
    END IF;
    SELECT a.id, a.parent_id INTO v_acct, v_parent FROM accounts a WHERE a.name = p_account;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- The payer walk of store_payer: the account's allocation, else its parent's, ...
    FOR depth IN 0..1000 LOOP
        SELECT al.id, ac.name INTO v_alloc, v_payer FROM allocations al
            JOIN accounts ac ON ac.id = al.account_id
            JOIN alloc_balance b ON b.alloc_id = al.id
            WHERE al.account_id = v_acct AND al.resource = p_resource
              AND (al.cluster = p_cluster OR al.cluster = '')
              AND al.start_s <= p_at AND p_at < al.end_s
            ORDER BY al.start_s DESC LIMIT 1;
        EXIT WHEN FOUND;
        IF v_parent IS NULL THEN
            RETURN; -- no payer
        END IF;
        v_acct := v_parent;
        SELECT a.parent_id INTO v_parent FROM accounts a WHERE a.id = v_acct;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END LOOP;
    IF v_alloc IS NULL THEN
        RETURN;
    END IF;
    -- The atomic check-and-hold.
    UPDATE alloc_balance b SET held_sumin = b.held_sumin + p_amount
        WHERE b.alloc_id = v_alloc AND b.held_sumin + p_amount >= 0
          AND b.granted_sumin - b.used_sumin - (b.held_sumin + p_amount) >= 0;
    IF NOT FOUND THEN
        RETURN; -- refused: the portable path records it
    END IF;
    INSERT INTO ledger (alloc_id, kind, amount_sumin, actor, time_s, comment, cluster, job_id,
                        run, idem_key)
        VALUES (v_alloc, 'hold', p_amount, p_actor, p_now, '', p_cluster, p_job, p_run, '');
    INSERT INTO jobs (cluster, job_id, run, user_name, account, partition_name, qos, submit_s,
                      start_s, end_s, req_tres, alloc_tres, billing_micro, time_limit_s,
                      elapsed_s, slurm_state, status, hold_sumin, charge_sumin, alloc_id,
                      payer_account, settle_source, updated_s)
        VALUES (p_cluster, p_job, p_run, p_user, p_account, p_partition, p_qos, p_submit,
                p_start, 0, p_req_tres, p_alloc_tres, p_billing, p_time_limit, 0, '', 'held',
                p_amount, 0, v_alloc, v_payer, '', p_now);
    RETURN QUERY SELECT al.id, ac.name, al.resource, al.cluster, al.start_s, al.end_s,
            al.category, al.comment, al.created_s, b.granted_sumin, b.used_sumin,
            b.held_sumin
        FROM allocations al JOIN accounts ac ON ac.id = al.account_id
        JOIN alloc_balance b ON b.alloc_id = al.id WHERE al.id = v_alloc;
END;
$$;
