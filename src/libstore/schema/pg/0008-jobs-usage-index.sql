-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0008-jobs-usage-index.sql: jobs_usage of 0003 led with cluster, which made it a rival of
-- the primary key (cluster, job_id, run) for every job lookup.  PostgreSQL, planning a
-- table it has not analyzed yet (a new bank filling up), chose it at equal cost and
-- filtered every job of the cluster per hold and settle: ~0.2 ms per statement and growing
-- (bench/results/postgresql.md).  The usage query it serves filters status = 'settled' and
-- an end_s range, with the cluster optional ($1 = '' OR ...), so (status, end_s) serves it
-- as well, and no index but the key starts with cluster.
DROP INDEX jobs_usage;
CREATE INDEX jobs_usage ON jobs(status, end_s);
