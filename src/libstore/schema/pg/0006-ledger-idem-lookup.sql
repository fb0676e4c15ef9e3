-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0006-ledger-idem-lookup.sql: a plain index for the idempotency-key lookup of ledger entries.
-- Why: the partial UNIQUE index ledger_idem (WHERE idem_key <> '') of 0001 cannot serve
-- "WHERE idem_key = $1" with a bound $1 (SQLite cannot prove $1 <> ''), so every keyed
-- credit (policy boundaries, API credits with a key) scanned the whole ledger: a period
-- boundary of 100,000 policies took O(N^2) (bench/results/policy.md).  The UNIQUE rule
-- stays with ledger_idem; this index only makes the lookup a search.
CREATE INDEX ledger_idem_lookup ON ledger(idem_key);
