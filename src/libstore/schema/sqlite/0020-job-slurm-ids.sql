-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0020-job-slurm-ids.sql: Slurm's array and het ids of a job id (doc/api.md "Job ids").
-- A job array's task and a het job's component each have a job id of their own, under
-- which they are held and charged, but users name them as Slurm prints them: 54_3 (array
-- job 54, task 3) or 60+1 (het job 60, component 1).  The plugins send these ids with a
-- hold or settle, and the agent's sacct reconciliation with its settles; one row per job
-- id (a requeue keeps its ids).  A table of its own, not columns of jobs: the hold and
-- settle statements (and store_job_batch's) stay as they are, and most jobs have no row.
-- array_task_id and het_job_offset are -1 when the job is not an array task / het
-- component (array_job_id / het_job_id 0).
CREATE TABLE job_slurm_ids (
    cluster TEXT NOT NULL,
    job_id BIGINT NOT NULL,
    array_job_id BIGINT NOT NULL DEFAULT 0,
    array_task_id BIGINT NOT NULL DEFAULT -1,
    het_job_id BIGINT NOT NULL DEFAULT 0,
    het_job_offset BIGINT NOT NULL DEFAULT -1,
    PRIMARY KEY (cluster, job_id)
);
CREATE INDEX job_slurm_ids_array ON job_slurm_ids(cluster, array_job_id, array_task_id);
CREATE INDEX job_slurm_ids_het ON job_slurm_ids(cluster, het_job_id, het_job_offset);
