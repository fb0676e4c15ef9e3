-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0014-partition-notify.sql: nothing to do on SQLite.  PostgreSQL's 0014 notifies allotd of
-- partition changes so it may cache them; on SQLite a partition lookup costs no round trip
-- and allotd does not cache.  This file keeps both backends at one schema version.
SELECT 1;
