-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0015-ledger-alloc-check.sql: nothing to do on SQLite.  PostgreSQL's 0015 replaces the
-- ledger's per-row foreign key to allocations with one check per statement (a foreign key
-- there is a query per row); on SQLite the foreign key is an in-process b-tree probe and
-- stays.  This file keeps both backends at one schema version.
SELECT 1;
