-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0011-jobs-partial-indexes.sql: the secondary indexes of jobs hold only the rows their
-- queries read.  Admission counts the held jobs of an account or a user
-- (store_job_count_held); the usage report reads settled jobs by end_s (store_usage.c).
-- As full indexes, every hold inserted a row into all three and every settle (status and
-- end_s change) rewrote its entries in all three, though a held job is never in a usage
-- report and a settled one is never counted.  Partial on the status each query names:
-- a hold enters the two "held" indexes, its settle leaves them and enters the "settled"
-- one (SQLite deletes; PostgreSQL adds no entry for a tuple outside the predicate), and
-- the held indexes stay as small as the running jobs.  Both backends use a partial index
-- when the query says the same "status = '...'" literally; the queries do.
DROP INDEX jobs_account;
DROP INDEX jobs_user;
DROP INDEX jobs_usage;
CREATE INDEX jobs_held_account ON jobs(account) WHERE status = 'held';
CREATE INDEX jobs_held_user ON jobs(user_name) WHERE status = 'held';
CREATE INDEX jobs_settled_end ON jobs(end_s) WHERE status = 'settled';
