/* SPDX-License-Identifier: GPL-3.0-or-later */
/* journal.h - the agent's record of commands it applied but allotd has not acknowledged.
 *
 * Why: a command applied whose result never reached allotd (allotd down, the agent stopped
 * or killed before the post) stays 'sent' and is handed out again after its lease.  Most
 * commands are harmless to apply twice (the diff skips them), a RawUsage reset is not: the
 * second one erases the usage accrued since the first.  So the result is written here,
 * flushed to disk, before it is posted; a command handed out again whose id is here gets
 * its recorded result posted again instead of being applied again.
 * Format: one line per event, "A <id> <ok> <text>" (applied) and "K <id>" (acknowledged);
 * at open, acknowledged entries are dropped (the file is rewritten and renamed over).
 * Threads: single-threaded.
 */
#ifndef ALLOT_AGENT_JOURNAL_H
#define ALLOT_AGENT_JOURNAL_H

#include <stddef.h>

#define JOURNAL_TEXT_MAX 240 /* what allotd keeps of a result */

struct journal;

/* Open (create) the journal at path and drop acknowledged entries.  NULL with why. */
struct journal *journal_open(const char *path, char *why, size_t len);

/* The recorded, unacknowledged result of command id: 1 with *ok and text, 0 when none. */
int journal_find(struct journal *j, long long id, int *ok, char *text, size_t len);

/* Record that command id was applied with this result (flushed and fsync'd): 0 or -1. */
int journal_applied(struct journal *j, long long id, int ok, const char *text);

/* Record that allotd acknowledged command id's result: 0 or -1. */
int journal_acked(struct journal *j, long long id);

void journal_close(struct journal *j);

#endif
