-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0005-steps.sql (sqlite): monitored step records (allot-step, doc/design.md §7.3).
-- One row per (cluster, job, step name, attempt): recording the same key again with the
-- same record is a replay, with a different record a conflict, so a retried POST can never
-- duplicate or silently rewrite a step.  record is allot-step's JSON (doc/step.md "The
-- record") in canonical form (sorted keys, compact), stored verbatim; status,
-- return_code and exec_ms are copied out of it for listing without parsing JSON.
-- user_name is the job's user as the bank knew it when the step was recorded ('' when an
-- operator recorded a step of a job the bank has not seen); it decides who may read it.
CREATE TABLE steps (
    cluster TEXT NOT NULL,
    job_id BIGINT NOT NULL,
    step_name TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    user_name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    return_code BIGINT NOT NULL,
    exec_ms BIGINT NOT NULL,
    record TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_s BIGINT NOT NULL,
    PRIMARY KEY (cluster, job_id, step_name, attempt)
);
CREATE INDEX steps_user ON steps(user_name, created_s);
