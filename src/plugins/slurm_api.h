/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slurm_api.h - the few libslurmfull functions allot's job_submit plugin calls that
 * Slurm's public headers do not declare.
 *
 * Design: job_submit/allot builds with the public headers only (slurm/slurm.h), so it
 * does not depend on Slurm's source tree.  slurmctld exports these names from
 * libslurmfull.so (checked with nm on 22.05.8); the plugin resolves them when slurmctld
 * loads it and links against nothing.  Signatures follow src/common/{log,xstring}.h.
 *
 * Threads: all are safe from any thread of slurmctld.
 */
#ifndef ALLOT_PLUGINS_SLURM_API_H
#define ALLOT_PLUGINS_SLURM_API_H

#include <stdbool.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

/* Log at Slurm's info / error / debug level into slurmctld's log. */
extern void slurm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int slurm_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern void slurm_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copy STR with Slurm's allocator; Slurm frees it (job_submit's err_msg). NULL -> NULL. */
extern char *slurm_xstrdup(const char *str);

/* Free *ITEM allocated by Slurm's allocator and set it to NULL (xfree). */
extern void slurm_xfree(void **item);

/* slurmctld's configuration (ClusterName); read-only for plugins. */
extern slurm_conf_t slurm_conf;

/* slurmctld's association manager (src/common/assoc_mgr.h): fill USER (uid set) from the
 * users Slurm knows; SLURM_ERROR when there is no such user.  USER's strings point into
 * the manager's own records: copy them at once.  LOCKED false: it takes its own lock.
 * With slurmctld's accounting connection and enforcement flags (src/slurmctld/slurmctld.h),
 * as Slurm's job_submit/lua calls it. */
extern int assoc_mgr_fill_in_user(void *db_conn, slurmdb_user_rec_t *user, int enforce,
                                  slurmdb_user_rec_t **user_pptr, bool locked);
/* The same for an association (uid, acct, partition set; cluster NULL: slurmctld's own);
 * with enforce ACCOUNTING_ENFORCE_ASSOCS, SLURM_ERROR when there is none. */
extern int assoc_mgr_fill_in_assoc(void *db_conn, slurmdb_assoc_rec_t *assoc, int enforce,
                                   slurmdb_assoc_rec_t **assoc_pptr, bool locked);
extern void *acct_db_conn;
extern uint16_t accounting_enforce;

#endif
