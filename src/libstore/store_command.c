/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_command.c - the command outbox of store.h: what allotd asks each cluster's agent to
 * do (limit pushes, QOS changes of policies), claimed by the agent under a lease and answered
 * with a result; and what the bank knows of each agent (when it last claimed, what waits).
 *
 * Exactly once: a command's idempotency key is UNIQUE in the commands table, so a boundary
 * or an evaluation replayed adds nothing (store_command_add answers with the first row).
 * A claim hands out pending commands and those whose lease ran out, and records the agent as
 * seen; a result moves a command out of pending/sent once, never back.
 * Statement ids: the block STMT_COMMAND_FIRST..STMT_COMMAND_LAST of store_int.h, numbered by
 * enum cstmt below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/store_int.h"
#include "libutil/text.h"

enum cstmt {
    C_ADD,
    C_BY_KEY,
    C_GET,
    C_LIST,
    C_CLAIM,
    C_MARK_SENT,
    C_RESULT,
    C_WAITING,
    A_SEEN,
    A_GET,
    C_NSTMT
};
_Static_assert(STMT_COMMAND_FIRST + C_NSTMT - 1 <= STMT_COMMAND_LAST, "grow the command id block");

#define COMMAND_COLS                                                                               \
    "id, cluster, kind, target, payload, policy_id, period, state, attempts, result, idem_key, "   \
    "created_s, sent_s, done_s"
static const char SQL_C_ADD[] =
    "INSERT INTO commands (cluster, kind, target, payload, policy_id, period, idem_key, "
    "created_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (idem_key) DO NOTHING "
    "RETURNING id";
static const char SQL_C_BY_KEY[] = "SELECT " COMMAND_COLS " FROM commands WHERE idem_key = $1";
static const char SQL_C_GET[] = "SELECT " COMMAND_COLS " FROM commands WHERE id = $1";
static const char SQL_C_LIST[] =
    "SELECT " COMMAND_COLS " FROM commands WHERE ($1 = '' OR cluster = $1) "
    "AND (CAST($2 AS BIGINT) = 0 OR policy_id = $2) AND ($3 = '' OR period = $3) AND ($4 = '' OR "
    "state = $4) "
    "AND id > $5 ORDER BY id LIMIT $6";
static const char SQL_C_CLAIM[] =
    "SELECT " COMMAND_COLS " FROM commands WHERE cluster = $1 AND (state = 'pending' OR "
    "(state = 'sent' AND sent_s <= $2)) ORDER BY id LIMIT $3";
static const char SQL_C_MARK_SENT[] =
    "UPDATE commands SET state = 'sent', attempts = attempts + 1, sent_s = $1 WHERE id = $2";
static const char SQL_C_RESULT[] =
    "UPDATE commands SET state = $1, result = $2, done_s = $3 WHERE id = $4 "
    "AND state IN ('pending', 'sent')";
static const char SQL_C_WAITING[] =
    "SELECT COUNT(*), COALESCE(MIN(created_s), 0) FROM commands WHERE cluster = $1 "
    "AND state IN ('pending', 'sent')";
static const char SQL_A_SEEN[] =
    "INSERT INTO agents (cluster, last_seen_s) VALUES ($1, $2) "
    "ON CONFLICT (cluster) DO UPDATE SET last_seen_s = excluded.last_seen_s";
static const char SQL_A_GET[] = "SELECT last_seen_s FROM agents WHERE cluster = $1";

static db_stmt_t *cstmt(store_t *st, enum cstmt id, const char *sql, struct allot_error *err)
{
    return store_stmt(st, STMT_COMMAND_FIRST + (int)id, sql, err);
}

static const char *const STATE_NAMES[] = {"pending", "sent", "confirmed", "failed"};

const char *store_command_state_name(enum command_state s)
{
    return (unsigned)s < 4 ? STATE_NAMES[s] : "?";
}

static enum command_state state_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, STATE_NAMES[i]) == 0)
            return (enum command_state)i;
    return COMMAND_FAILED; /* unreachable: the store writes only these names */
}

static void read_command(db_stmt_t *s, struct command *c)
{
    memset(c, 0, sizeof *c);
    c->id = db_column_int64(s, 0);
    db_column_copy(s, 1, c->cluster, sizeof c->cluster);
    db_column_copy(s, 2, c->kind, sizeof c->kind);
    db_column_copy(s, 3, c->target, sizeof c->target);
    db_column_copy(s, 4, c->payload, sizeof c->payload);
    c->policy_id = db_column_int64(s, 5);
    db_column_copy(s, 6, c->period, sizeof c->period);
    c->state = state_parse(db_column_text(s, 7));
    c->attempts = db_column_int64(s, 8);
    db_column_copy(s, 9, c->result, sizeof c->result);
    db_column_copy(s, 10, c->idem_key, sizeof c->idem_key);
    c->created_s = db_column_int64(s, 11);
    c->sent_s = db_column_int64(s, 12);
    c->done_s = db_column_int64(s, 13);
}

static int command_by(store_t *st, enum cstmt id, const char *sql, const char *key, int64_t num,
                      struct command *out, struct allot_error *err)
{
    db_stmt_t *s = cstmt(st, id, sql, err);
    if (!s)
        return -1;
    if (key)
        db_bind_text(s, 1, key);
    else
        db_bind_int64(s, 1, num);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        db_reset(s);
        return allot_errorf(err, ALLOT_ENOENT, "command %lld does not exist", (long long)num);
    }
    read_command(s, out);
    db_reset(s);
    return 0;
}

int store_command_add(store_t *st, struct command *c, int64_t now_s, int *replay,
                      struct allot_error *err)
{
    char tmp[ALLOT_TRES_MAX];
    if (replay)
        *replay = 0;
    if (store_ready_write(st, "command add", err) < 0)
        return -1;
    if (model_check_name("cluster", c->cluster, 0, err) < 0 ||
        model_check_name("kind", c->kind, 0, err) < 0 ||
        model_check_name("target", c->target, 0, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "payload", c->payload, err) < 0)
        return -1;
    if (!c->idem_key[0])
        return allot_errorf(err, ALLOT_EINVAL, "command: an idempotency key is required");
    db_stmt_t *s = cstmt(st, C_ADD, SQL_C_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, c->cluster);
    db_bind_text(s, 2, c->kind);
    db_bind_text(s, 3, c->target);
    db_bind_text(s, 4, c->payload);
    db_bind_int64(s, 5, c->policy_id);
    db_bind_text(s, 6, c->period);
    db_bind_text(s, 7, c->idem_key);
    db_bind_int64(s, 8, now_s);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        c->id = db_column_int64(s, 0);
        db_reset(s);
        c->state = COMMAND_PENDING;
        c->attempts = 0;
        c->result[0] = 0;
        c->created_s = now_s;
        c->sent_s = c->done_s = 0;
        return 0;
    }
    db_reset(s);
    if (command_by(st, C_BY_KEY, SQL_C_BY_KEY, c->idem_key, 0, c, err) < 0)
        return -1;
    if (replay)
        *replay = 1;
    return 0;
}

int store_command_get(store_t *st, int64_t id, struct command *out, struct allot_error *err)
{
    if (store_ready(st, "command get", err) < 0)
        return -1;
    return command_by(st, C_GET, SQL_C_GET, NULL, id, out, err);
}

STORE_ROWS(command, struct command, store_command_f, read_command(s, &row))

int store_command_list(store_t *st, const struct command_filter *f, store_command_f cb, void *arg,
                       struct allot_error *err)
{
    if (store_ready(st, "command list", err) < 0)
        return -1;
    db_stmt_t *s = cstmt(st, C_LIST, SQL_C_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->cluster ? f->cluster : "");
    db_bind_int64(s, 2, f ? f->policy_id : 0);
    db_bind_text(s, 3, f && f->period ? f->period : "");
    db_bind_text(s, 4, f && f->state >= 0 ? store_command_state_name(f->state) : "");
    db_bind_int64(s, 5, f ? f->after_id : 0);
    db_bind_int64(s, 6, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, command_row, &(struct command_walk){cb, arg}, err);
}

int store_command_claim(store_t *st, const char *cluster, int64_t now_s, int64_t lease_s, int max,
                        store_command_f cb, void *arg, struct allot_error *err)
{
    if (store_ready_write(st, "command claim", err) < 0)
        return -1;
    if (model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    if (max <= 0 || max > 1000)
        return allot_errorf(err, ALLOT_EINVAL, "max: must be 1..1000");
    db_stmt_t *s = cstmt(st, A_SEEN, SQL_A_SEEN, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, now_s);
    if (db_run(s, err) < 0)
        return -1;
    /* Read first, then mark: SQLite must not update rows under an open SELECT. */
    struct command *v = calloc((size_t)max, sizeof *v);
    if (!v)
        return allot_errorf(err, ALLOT_ENOMEM, "command claim: out of memory");
    int n = 0, rc;
    s = cstmt(st, C_CLAIM, SQL_C_CLAIM, err);
    if (!s) {
        free(v);
        return -1;
    }
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, now_s - lease_s);
    db_bind_int64(s, 3, max);
    while (n < max && (rc = db_step(s, err)) == 1)
        read_command(s, &v[n++]);
    db_reset(s);
    if (n < max && rc < 0) {
        free(v);
        return -1;
    }
    int ret = 0;
    for (int i = 0; i < n; i++) {
        s = cstmt(st, C_MARK_SENT, SQL_C_MARK_SENT, err);
        if (!s) {
            ret = -1;
            break;
        }
        db_bind_int64(s, 1, now_s);
        db_bind_int64(s, 2, v[i].id);
        if (db_run(s, err) < 0) {
            ret = -1;
            break;
        }
        v[i].state = COMMAND_SENT;
        v[i].attempts++;
        v[i].sent_s = now_s;
    }
    for (int i = 0; ret == 0 && i < n; i++) {
        int r = cb(&v[i], arg);
        if (r) {
            ret = r;
            break;
        }
    }
    free(v);
    return ret;
}

int store_command_result(store_t *st, int64_t id, enum command_state state, const char *result,
                         int64_t now_s, int *replay, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    struct command c;
    if (replay)
        *replay = 0;
    if (store_ready_write(st, "command result", err) < 0)
        return -1;
    if (state != COMMAND_CONFIRMED && state != COMMAND_FAILED)
        return allot_errorf(err, ALLOT_EINVAL, "state: must be confirmed or failed");
    /* Long sacctmgr errors are cut to fit rather than refused: the text is evidence. */
    text_copy(tmp, sizeof tmp, result ? result : "");
    if (store_command_get(st, id, &c, err) < 0)
        return -1;
    /* A final result stays: the same state again is a replay (an agent that lost the
     * answer), the other state is a conflict (two agents under expired leases disagree),
     * refused rather than reported as if it had been taken. */
    if (c.state == COMMAND_CONFIRMED || c.state == COMMAND_FAILED) {
        if (c.state != state)
            return allot_errorf(err, ALLOT_ECONFLICT,
                                "state: command %lld is already %s (result '%s'); a %s "
                                "result cannot replace it",
                                (long long)id, store_command_state_name(c.state), c.result,
                                store_command_state_name(state));
        if (replay)
            *replay = 1;
        return 0;
    }
    db_stmt_t *s = cstmt(st, C_RESULT, SQL_C_RESULT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, store_command_state_name(state));
    db_bind_text(s, 2, tmp);
    db_bind_int64(s, 3, now_s);
    db_bind_int64(s, 4, id);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) != 1) /* the row was read in this transaction as pending or sent */
        return allot_errorf(err, ALLOT_EINTERNAL, "command %lld: result not written",
                            (long long)id);
    return 0;
}

int store_agent_status(store_t *st, const char *cluster, int64_t *last_seen_s,
                       int64_t *oldest_waiting_s, int64_t *waiting, struct allot_error *err)
{
    if (store_ready(st, "agent status", err) < 0)
        return -1;
    db_stmt_t *s;
    int rc = store_first_row(st, STMT_COMMAND_FIRST + A_GET, SQL_A_GET, &cluster, 1, &s, err);
    if (rc < 0)
        return -1;
    *last_seen_s = rc == 1 ? db_column_int64(s, 0) : 0;
    if (rc == 1)
        db_reset(s);
    rc = store_first_row(st, STMT_COMMAND_FIRST + C_WAITING, SQL_C_WAITING, &cluster, 1, &s, err);
    if (rc < 0)
        return -1;
    *waiting = rc == 1 ? db_column_int64(s, 0) : 0;
    *oldest_waiting_s = rc == 1 ? db_column_int64(s, 1) : 0;
    if (rc == 1)
        db_reset(s);
    return 0;
}
