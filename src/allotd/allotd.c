/* SPDX-License-Identifier: GPL-3.0-or-later */
/* allotd.c - what every module may ask of the daemon's context (allotd.h): the configuration
 * of the moment and the calling thread's own read connection.  Apart from main.c, so that
 * the daemon's modules are one library that allotd, the unit tests and the fuzz targets
 * all link (main.c is only the program).
 */
#include <pthread.h>

#include "allotd/allotd.h"

static pthread_key_t reader_key;

static void reader_free(void *p)
{
    store_close(p);
}

int allotd_readers_init(void)
{
    return pthread_key_create(&reader_key, reader_free) == 0 ? 0 : -1;
}

store_t *allotd_reader(struct allotd *d, struct allot_error *err)
{
    store_t *st = pthread_getspecific(reader_key);
    if (st)
        return st;
    st = store_open(&d->store_cfg, err);
    if (!st)
        return NULL;
    pthread_setspecific(reader_key, st);
    return st;
}

struct allot_conf *allotd_conf_get(struct allotd *d)
{
    pthread_mutex_lock(&d->conf_lock);
    struct allot_conf *c = conf_ref(d->conf);
    pthread_mutex_unlock(&d->conf_lock);
    return c;
}
