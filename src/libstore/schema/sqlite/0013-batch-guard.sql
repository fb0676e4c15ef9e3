-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0013-batch-guard.sql: nothing to do on SQLite.  PostgreSQL's 0013 adds the check that
-- store_job_batch's one statement runs on itself; this file keeps both backends at one
-- schema version.
SELECT 1;
