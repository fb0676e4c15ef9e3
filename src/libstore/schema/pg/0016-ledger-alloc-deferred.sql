-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0016-ledger-alloc-deferred.sql: nothing to do on PostgreSQL.  SQLite's 0016 replaces
-- the index ledger_alloc with a table filled in id-sorted passes; PostgreSQL keeps the
-- index (its ids come from a sequence, and its b-tree inserts are not what its writer
-- spends on).  This file keeps both backends at one schema version.
SELECT 1;
