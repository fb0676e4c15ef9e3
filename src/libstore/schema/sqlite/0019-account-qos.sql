-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0019-account-qos.sql: an account's own QOS list and default QOS, as Slurm's account
-- association holds them (`sacctmgr dump` writes them on the Account and Cluster lines).
-- `allot import slurm` keeps them so `allot export slurm` gives them back; '' = inherited
-- from the parent account, as in Slurm.
ALTER TABLE accounts ADD COLUMN qos TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN default_qos TEXT NOT NULL DEFAULT '';
