/* SPDX-License-Identifier: GPL-3.0-or-later */
/* journal.c - applied-but-unacknowledged command results on disk (see journal.h).
 * The unacknowledged entries are few (each is retried until allotd takes it), so they are
 * kept in a small array, capped at JOURNAL_MAX. */
#include "agent/journal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/text.h"

#define JOURNAL_MAX 4096

struct entry {
    long long id;
    int ok;
    char text[JOURNAL_TEXT_MAX];
};

struct journal {
    FILE *f; /* append */
    size_t n;
    struct entry e[JOURNAL_MAX];
};

static struct entry *find(struct journal *j, long long id)
{
    for (size_t i = 0; i < j->n; i++)
        if (j->e[i].id == id)
            return &j->e[i];
    return NULL;
}

static void drop(struct journal *j, long long id)
{
    struct entry *e = find(j, id);
    if (e)
        *e = j->e[--j->n];
}

static int add(struct journal *j, long long id, int ok, const char *text)
{
    struct entry *e = find(j, id);
    if (!e) {
        if (j->n >= JOURNAL_MAX)
            return -1;
        e = &j->e[j->n++];
    }
    e->id = id;
    e->ok = ok != 0;
    size_t k = 0;
    for (; text[k] && k + 1 < sizeof e->text; k++) /* one line, whatever it was given */
        e->text[k] = (unsigned char)text[k] < 0x20 ? ' ' : text[k];
    e->text[k] = 0;
    return 0;
}

/* Replay the file into j; a torn last line (a crash mid-append) is ignored. */
static void load(struct journal *j, FILE *f)
{
    char line[JOURNAL_TEXT_MAX + 64];
    while (fgets(line, sizeof line, f)) {
        long long id;
        int ok, at = 0;
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n')
            continue;
        line[n - 1] = 0;
        if (sscanf(line, "A %lld %d %n", &id, &ok, &at) == 2 && at > 0)
            (void)add(j, id, ok, line + at);
        else if (sscanf(line, "K %lld", &id) == 1)
            drop(j, id);
    }
}

static int put(FILE *f, const struct entry *e)
{
    return fprintf(f, "A %lld %d %s\n", e->id, e->ok, e->text) < 0 ? -1 : 0;
}

static int sync_file(FILE *f)
{
    return fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -1;
}

/* Write the unacknowledged entries to path.tmp and rename it over path. */
static int rewrite(struct journal *j, const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < j->n && rc == 0; i++)
        rc = put(f, &j->e[i]);
    if (rc == 0)
        rc = sync_file(f);
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

struct journal *journal_open(const char *path, char *why, size_t len)
{
    struct journal *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    FILE *f = fopen(path, "r");
    if (f) {
        load(j, f);
        fclose(f);
    } else if (errno != ENOENT) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        free(j);
        return NULL;
    }
    if (rewrite(j, path) < 0 || !(j->f = fopen(path, "a"))) {
        snprintf(why, len, "%s: cannot write: %s", path, strerror(errno));
        free(j);
        return NULL;
    }
    return j;
}

int journal_find(struct journal *j, long long id, int *ok, char *text, size_t len)
{
    struct entry *e = find(j, id);
    if (!e)
        return 0;
    *ok = e->ok;
    text_copy(text, len, e->text);
    return 1;
}

int journal_applied(struct journal *j, long long id, int ok, const char *text)
{
    if (add(j, id, ok, text) < 0)
        return -1;
    return put(j->f, find(j, id)) < 0 ? -1 : sync_file(j->f);
}

int journal_acked(struct journal *j, long long id)
{
    drop(j, id);
    if (fprintf(j->f, "K %lld\n", id) < 0)
        return -1;
    return fflush(j->f) == 0 ? 0 : -1; /* a lost ack only costs one repeated post */
}

void journal_close(struct journal *j)
{
    if (!j)
        return;
    if (j->f)
        fclose(j->f);
    free(j);
}
