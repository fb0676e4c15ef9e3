/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_coord.c - the Coordinator= of `sacctmgr dump`'s User lines made the accounts'
 * coordinators by `allot import slurm` (api_import_int.h).  They are applied after the
 * whole dump is read, as a user may coordinate an account the dump defines further on;
 * import adds coordinators and removes none, as it removes no association. */
#include <stdio.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/api_import_int.h"
#include "libutil/text.h"

int import_coord_note(struct walk *w, const char *user, struct slt_span list,
                      struct allot_error *err)
{
    size_t i = 0;
    while (i < list.n) {
        size_t j = i;
        while (j < list.n && list.p[j] != ',')
            j++;
        char account[ALLOT_NAME_MAX];
        struct slt_span one = {list.p + i, j - i};
        if (import_span_copy(account, sizeof account, "Coordinator", one, err) < 0 ||
            model_check_name("Coordinator", account, 0, err) < 0)
            return -1;
        if (!w->coords)
            w->coords = json_object();
        json_t *users = json_object_get(w->coords, account);
        if (!users) {
            users = json_object();
            json_object_set_new(w->coords, account, users);
        }
        json_object_set_new(users, user, json_true());
        i = j + 1;
    }
    return 0;
}

int import_coords_apply(struct walk *w, struct allot_error *err)
{
    const char *name;
    json_t *users;
    json_object_foreach(w->coords, name, users)
    {
        struct account a;
        struct allot_error e = {0};
        if (store_account_get(w->st, name, &a, &e) < 0) {
            /* A dry run has not written the dump's new accounts; any other is unknown. */
            if (e.code != ALLOT_ENOENT || !import_account_seen(w, name)) {
                if (e.code == ALLOT_ENOENT)
                    e.code = ALLOT_EINVAL; /* the dump names it: bad input */
                *err = e;
                return allot_error_prefix(err, "Coordinator");
            }
            memset(&a, 0, sizeof a);
        }
        char want[ALLOT_TEXT_MAX];
        text_copy(want, sizeof want, a.coordinators);
        size_t len = strlen(want);
        const char *user;
        json_t *v;
        json_object_foreach(users, user, v)
        {
            if (conf_list_contains(want, user))
                continue;
            int k = snprintf(want + len, sizeof want - len, "%s%s", len ? "," : "", user);
            if (k < 0 || (size_t)k >= sizeof want - len)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "Coordinator: account %s: coordinators longer than %zu "
                                    "characters",
                                    name, sizeof want - 1);
            len += (size_t)k;
        }
        if (strcmp(want, a.coordinators) == 0)
            continue;
        import_change(w, "~ account %s: coordinators '%s' -> '%s'", name, a.coordinators, want);
        text_copy(a.coordinators, sizeof a.coordinators, want);
        if (w->apply && store_account_modify(w->st, &a, err) < 0)
            return allot_error_prefix(err, "Coordinator");
    }
    return 0;
}
