-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0016-ledger-alloc-deferred.sql: an allocation's ledger entries are found through
-- ledger_alloc_index, filled in id-sorted passes, instead of the index ledger_alloc,
-- written by every append.
--
-- Why: ledger_alloc (alloc_id, id) has one insertion point per allocation, so a group
-- commit whose entries span k allocations dirtied k of its leaves (6.9 of a commit's ~20
-- WAL pages in the 32-allocation bench), and a fifth of the writer's work went to it
-- (bench/results/bank.md,
-- 2026-11-24 to 2026-11-25, f582a6a..902b1b0).  Here the store appends with no allocation
-- index and, every few hundred entries, copies the new (alloc_id, id) pairs into
-- ledger_alloc_index sorted, touching each allocation's leaf once per pass
-- (store_ledger_index_pass, store_alloc.c), in the transaction of the commit that
-- triggers it.
--
-- Invariant: every ledger entry with id <= ledger_alloc_mark.upto is in
-- ledger_alloc_index; entries above it are the tail, which readers scan by id (it is
-- bounded by the pass interval).  Ids ascend in commit order on SQLite (one writer, rowid
-- max + 1, entries are never deleted), so a pass that indexes every id up to the largest
-- leaves nothing behind.  store_check verifies the invariant both ways.  PostgreSQL keeps
-- its index: its ids come from a sequence and its b-tree inserts do not cost the same.
CREATE TABLE ledger_alloc_index (
    alloc_id INTEGER NOT NULL,
    id INTEGER NOT NULL,
    PRIMARY KEY (alloc_id, id)
) WITHOUT ROWID;
CREATE TABLE ledger_alloc_mark (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    upto INTEGER NOT NULL
);
-- Read through ledger_alloc, still there: in order, no sort of the whole ledger.
INSERT INTO ledger_alloc_index (alloc_id, id) SELECT alloc_id, id FROM ledger ORDER BY alloc_id, id;
INSERT INTO ledger_alloc_mark (one, upto) VALUES (1, (SELECT COALESCE(MAX(id), 0) FROM ledger));
DROP INDEX ledger_alloc;
