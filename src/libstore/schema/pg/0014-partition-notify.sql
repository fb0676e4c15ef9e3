-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0014-partition-notify.sql: every change to partitions (by allotd, by another allotd on
-- this database, by hand in psql) sends a notification on channel allot_partitions when it
-- commits.  allotd caches partitions to price holds without a read round trip, and drops
-- its cache on each notification (src/allotd/partcache.c).  Statement level: one
-- notification per statement, whatever the number of rows (a cascade from clusters too).
CREATE FUNCTION allot_partitions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('allot_partitions', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER partitions_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON partitions
    FOR EACH STATEMENT EXECUTE FUNCTION allot_partitions_changed();
