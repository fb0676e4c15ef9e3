-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0013-batch-guard.sql: allot_batch_guard, the checks inside store_job_batch's statement.
-- The statement now commits in the same round trip as it runs (db_step_tx), so the client
-- can no longer look at its counts and roll back: when a balance row refused its change,
-- or a settled run's row was not updated (the books were inconsistent, or something wrote
-- without the write lock), the statement itself must fail, which makes the COMMIT behind
-- it end the transaction as a rollback.  Returns got when it equals want.
CREATE FUNCTION allot_batch_guard(what text, want bigint, got bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF want <> got THEN
        RAISE EXCEPTION 'job batch: % of % % rows refused their change (a balance would go negative, or a row changed under the write lock)',
            want - got, want, what USING ERRCODE = 'check_violation';
    END IF;
    RETURN got;
END
$$;
