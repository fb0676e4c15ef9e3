-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0012-drop-fast-functions.sql: nothing to do on SQLite.  PostgreSQL's 0012 drops the
-- server functions of 0007 and 0010; this file keeps both backends at one schema version.
SELECT 1;
