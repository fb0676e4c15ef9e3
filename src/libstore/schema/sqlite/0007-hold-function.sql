-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0007-hold-function.sql: nothing to do on SQLite.  PostgreSQL's 0007 adds a server-side
-- fast path for new holds (round trips cost there, not here); this file keeps both backends
-- at the same schema version, which `allot db export`/`import` compare across backends.
SELECT 1;
