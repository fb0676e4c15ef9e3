-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0012-drop-fast-functions.sql: drop allot_hold_fast (0007) and allot_settle_fast (0010).
-- store_job_batch's one statement now takes a single hold or settle too (a batch of one),
-- so they were a second and third implementation of the same two cases, used by nothing.
DROP FUNCTION allot_hold_fast;
DROP FUNCTION allot_settle_fast;
