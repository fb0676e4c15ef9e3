/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_test_pg.h - the PostgreSQL side of the libstore test fixture (store_test.h).
 *
 * When ALLOT_TEST_PG_CONNINFO holds a libpq keyword/value connection string (the ctest
 * registrations of src/libstore/test/pg.cmake set it from a server the test starts), every
 * fixture gets a fresh schema "allot_t<pid>_<n>" in that database and opens the store with
 * search_path set to it, so each test starts from an empty bank exactly as with a fresh
 * SQLite file, and tests never see each other's rows.  Teardown drops the schema.
 * Without the variable nothing here is used and the fixture is SQLite's.
 */
#ifndef ALLOT_LIBSTORE_TEST_STORE_TEST_PG_H
#define ALLOT_LIBSTORE_TEST_STORE_TEST_PG_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The conninfo from the environment, or NULL for SQLite. */
static inline const char *fx_pg_base(void)
{
    const char *c = getenv("ALLOT_TEST_PG_CONNINFO");
    return c && *c ? c : NULL;
}

static inline void fx_pg_quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* Run one SQL command on the base database; fails the test on error. */
static inline void fx_pg_admin(const char *sql)
{
    PGconn *c = PQconnectdb(fx_pg_base());
    if (PQstatus(c) != CONNECTION_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(c));
        PQfinish(c);
        fail_msg("postgres: %s", msg);
    }
    PQsetNoticeProcessor(c, fx_pg_quiet, NULL);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
        PQclear(r);
        PQfinish(c);
        fail_msg("postgres: %s: %s", sql, msg);
    }
    PQclear(r);
    PQfinish(c);
}

/* Create a fresh schema; write its name into schema[size] and the store's conninfo into
 * conninfo[size]. */
static inline void fx_pg_create(char *schema, size_t ssize, char *conninfo, size_t csize)
{
    static int n;
    char sql[320];
    snprintf(schema, ssize, "allot_t%ld_%d", (long)getpid(), ++n);
    snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema, schema);
    fx_pg_admin(sql);
    snprintf(conninfo, csize, "%s options='-c search_path=%s'", fx_pg_base(), schema);
}

/* Run SQL on the store's own schema (conninfo from the fixture), bypassing the store, e.g.
 * to corrupt a balance for a store_check test.  Returns 0, or -1 when the server refused it
 * (as the ledger's append-only trigger does). */
static inline int fx_pg_exec(const char *conninfo, const char *sql)
{
    PGconn *c = PQconnectdb(conninfo);
    int rc = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PQsetNoticeProcessor(c, fx_pg_quiet, NULL);
        PGresult *r = PQexec(c, sql);
        rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
        PQclear(r);
    }
    PQfinish(c);
    return rc;
}

static inline void fx_pg_drop(const char *schema)
{
    char sql[320];
    snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", schema);
    fx_pg_admin(sql);
}

#endif
