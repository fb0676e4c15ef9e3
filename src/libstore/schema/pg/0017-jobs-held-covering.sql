-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0017-jobs-held-covering.sql: the two partial indexes on held jobs of 0011 carry every
-- column admission's counts filter on (account, user, QOS, cluster), so a count reads
-- index entries only and never a jobs row.  Why: a QOS's count (GrpSubmitJobs,
-- MaxSubmitJobsPerUser/Account), a subtree's and the cluster's filtered each held run on
-- a column the index lacked, one row read per held run: ~35 ms per admission with 50,000
-- runs held, read cold after every group commit (bench/results/bank.md, 2026-11-26, 1ca89d2).  A
-- hold still enters two indexes and its settle leaves them; only their entries grow.
DROP INDEX jobs_held_account;
DROP INDEX jobs_held_user;
CREATE INDEX jobs_held_account ON jobs(account, qos, cluster, user_name) WHERE status = 'held';
CREATE INDEX jobs_held_user ON jobs(user_name, qos, cluster, account) WHERE status = 'held';
