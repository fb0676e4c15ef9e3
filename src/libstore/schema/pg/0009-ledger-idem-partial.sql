-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0009-ledger-idem-partial.sql: drop ledger_idem_lookup of 0006.  The keyed-entry lookup
-- now also says idem_key <> '' (store_alloc.c), so both SQLite and PostgreSQL use the
-- partial UNIQUE index ledger_idem of 0001 for it.  The plain index held every job entry
-- under the same empty key and cost every ledger append one more index insert: most
-- appends (holds, releases, debits) carry no key.
DROP INDEX ledger_idem_lookup;
