-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0010-settle-function.sql: nothing to do on SQLite.  PostgreSQL's 0010 adds a server-side
-- fast path for settling a held run, as 0007 does for new holds; this file keeps both
-- backends at the same schema version.
SELECT 1;
