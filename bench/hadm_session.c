/* SPDX-License-Identifier: GPL-3.0-or-later */
/* hadm_session.c - see hadm_session.h. */
#include "hadm_session.h"

#include <stdio.h>
#include <string.h>

static void set_err(char *err, size_t size, const char *what, const char *msg)
{
    snprintf(err, size, "%s: %s", what, msg && *msg ? msg : "unknown PostgreSQL error");
    size_t n = strlen(err);
    while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
        err[--n] = '\0';
}

PGconn *hadm_session_open(const char *conninfo, char *err, size_t size)
{
    PGconn *pg = PQconnectdb(conninfo);
    if (!pg) {
        set_err(err, size, "connect", "out of memory");
        return NULL;
    }
    if (PQstatus(pg) != CONNECTION_OK) {
        set_err(err, size, "connect", PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    PGresult *r1 = PQprepare(pg, HADM_PREDEBIT, "SELECT hadm.predebit($1, $2, $3, $4)", 4, NULL);
    PGresult *r2 = PQprepare(pg, HADM_DEBIT, "SELECT hadm.debit($1, $2)", 2, NULL);
    int ok = PQresultStatus(r1) == PGRES_COMMAND_OK && PQresultStatus(r2) == PGRES_COMMAND_OK;
    PQclear(r1);
    PQclear(r2);
    if (!ok) {
        set_err(err, size, "prepare", PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    return pg;
}
