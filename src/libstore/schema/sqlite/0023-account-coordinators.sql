-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0023-account-coordinators.sql: an account's coordinators (its PIs), as Slurm keeps them:
-- users who may read the account's per-user usage, jobs, refusals and forecasts
-- (doc/api.md "Authentication and roles").  A comma-separated list of user names, set by
-- superusers or imported from `sacctmgr dump`'s Coordinator=; '' = none.
ALTER TABLE accounts ADD COLUMN coordinators TEXT NOT NULL DEFAULT '';
