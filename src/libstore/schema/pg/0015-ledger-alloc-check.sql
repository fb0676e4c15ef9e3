-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0015-ledger-alloc-check.sql: the ledger's reference to its allocation, checked once per
-- statement instead of once per row.
--
-- Why: a foreign key checks each inserted row with a query of its own (a lookup and a
-- row lock through SPI).  The batch statement of store_job_batch inserts a ledger entry
-- or two per hold and settle, and those checks were ~10% of the writer backend's CPU
-- (bench/results/postgresql.md, 2026-11-24, 1c9ec85).  The same guarantee, in one query per
-- statement:
--  * an INSERT into ledger locks every allocation it names FOR KEY SHARE, as the foreign
--    key did (so a concurrent DELETE of one waits for this transaction, then sees its
--    entries), and fails with foreign_key_violation when one does not exist;
--  * a DELETE of an allocation that ledger entries name, a change of its id, or a
--    TRUNCATE of allocations while the ledger has entries, fails the same way (the foreign
--    key's NO ACTION).
-- SQLite keeps its foreign key: there the check is an in-process b-tree probe.
ALTER TABLE ledger DROP CONSTRAINT ledger_alloc_id_fkey;

CREATE FUNCTION allot_ledger_alloc_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    named BIGINT;
    locked BIGINT;
    missing BIGINT;
BEGIN
    WITH l AS (SELECT id FROM allocations WHERE id IN (SELECT alloc_id FROM added)
               FOR KEY SHARE)
    SELECT (SELECT count(DISTINCT alloc_id) FROM added), (SELECT count(*) FROM l)
        INTO named, locked;
    IF locked <> named THEN
        SELECT a.alloc_id INTO missing FROM added a
            WHERE NOT EXISTS (SELECT 1 FROM allocations x WHERE x.id = a.alloc_id) LIMIT 1;
        RAISE EXCEPTION 'ledger: allocation % does not exist', missing
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER ledger_alloc_exists AFTER INSERT ON ledger REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION allot_ledger_alloc_check();

CREATE FUNCTION allot_alloc_in_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF EXISTS (SELECT 1 FROM ledger) THEN
            RAISE EXCEPTION 'allocations: the ledger has entries'
                USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF NEW.id = OLD.id THEN
            RETURN NEW;
        END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM ledger WHERE alloc_id = OLD.id) THEN
        RAISE EXCEPTION 'allocation % has ledger entries', OLD.id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER allocations_in_ledger BEFORE DELETE OR UPDATE OF id ON allocations
    FOR EACH ROW EXECUTE FUNCTION allot_alloc_in_ledger();
CREATE TRIGGER allocations_truncate BEFORE TRUNCATE ON allocations
    FOR EACH STATEMENT EXECUTE FUNCTION allot_alloc_in_ledger();
