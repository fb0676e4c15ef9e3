-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0013-batch-guard.sql: allot_batch_guard, the check inside store_job_batch's statement.
-- The statement now commits in the same round trip as it runs (db_step_tx), so the client
-- can no longer look at its counts and roll back: when a balance row refused its change
-- (the books were inconsistent, or something wrote without the write lock), the statement
-- itself must fail, which makes the COMMIT behind it end the transaction as a rollback.
CREATE FUNCTION allot_batch_guard(moves bigint, moved bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF moves <> moved THEN
        RAISE EXCEPTION 'job batch: % of % balance rows refused their change (a balance would go negative, or it changed under the write lock)',
            moves - moved, moves USING ERRCODE = 'check_violation';
    END IF;
    RETURN moved;
END
$$;
