-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0021-failure-observed.sql: a failure row may record a refusal that was only observed
-- (allot.conf EnforceMode=observe): the bank computed it, the job was admitted or started
-- anyway.  `allot report observe` lists these; `allot failures` shows the flag.  Rows of
-- enforced refusals keep 0.
ALTER TABLE failures ADD COLUMN observed BIGINT NOT NULL DEFAULT 0;
