/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobverbs.c - drives liballot's typed job verbs against a running allotd, linked with the
 * shared liballot.so the way the Slurm plugins use it.  Run by tests/integration/t2002-*.t
 * (the test sets up the bank with the CLI); prints one line per step and exits 0 only when
 * every decision and number is the expected one.
 * usage: liballot_jobverbs URL CLUSTER ACCOUNT USER PARTITION
 */
#include <stdio.h>
#include <string.h>

#include "allot/allot.h"

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    struct allot_error err = {0};
    struct allot_job_result res;
    allot_client_t *c;

    if (argc != 6) {
        fprintf(stderr, "usage: %s URL CLUSTER ACCOUNT USER PARTITION\n", argv[0]);
        return 2;
    }
    c = allot_client_create(argv[1], &err);
    if (!c) {
        fprintf(stderr, "create: %s\n", err.msg);
        return 1;
    }
    allot_client_set_timeout_ms(c, 2000, NULL);
    struct allot_job_desc job = {
        .cluster = argv[2],
        .account = argv[3],
        .user = argv[4],
        .partition = argv[5],
        .time_limit_s = 3600,
        .tres = "cpu=2,node=1",
        .elapsed_s = -1,
    };

    /* 2 CPUs for 1 h cost 2 SU-hours = 120 SU-minutes. */
    EXPECT(allot_job_admit(c, &job, &res, &err) == 0, "admit: %s", err.msg);
    printf("admit ok=%d cost=%lld available=%lld alloc=%lld payer=%s\n", res.ok,
           (long long)res.cost_sumin, (long long)res.available_sumin, (long long)res.alloc_id,
           res.payer_account);
    EXPECT(res.ok == 1 && res.cost_sumin == 120 && res.refusal == ALLOT_OK, "admit decision");

    struct allot_job_desc big = job;
    big.time_limit_s = 1000 * 3600;
    EXPECT(allot_job_admit(c, &big, &res, &err) == 0, "admit big: %s", err.msg);
    printf("admit-big ok=%d refusal=%s message=%s\n", res.ok, allot_errname(res.refusal),
           res.message);
    EXPECT(res.ok == 0 && res.refusal == ALLOT_EFUNDS && strstr(res.message, argv[3]),
           "refusal with the account in the message");

    job.job_id = 4242;
    EXPECT(allot_job_hold(c, &job, &res, &err) == 0, "hold: %s", err.msg);
    printf("hold ok=%d replay=%d hold=%lld\n", res.ok, res.replay, (long long)res.hold_sumin);
    EXPECT(res.ok == 1 && res.replay == 0 && res.hold_sumin == 120, "hold decision");
    EXPECT(allot_job_hold(c, &job, &res, &err) == 0, "hold again: %s", err.msg);
    EXPECT(res.ok == 1 && res.replay == 1, "hold replay");

    job.elapsed_s = 61; /* 2 CPUs x 61 s = 122 CPU-s -> ceil(122/60) = 3 SU-minutes */
    job.state = "COMPLETED";
    job.source = "epilog";
    EXPECT(allot_job_settle(c, &job, &res, &err) == 0, "settle: %s", err.msg);
    printf("settle ok=%d charge=%lld\n", res.ok, (long long)res.charge_sumin);
    EXPECT(res.ok == 1 && res.charge_sumin == 3, "settle charge");
    EXPECT(allot_job_settle(c, &job, &res, &err) == 0 && res.replay == 1, "settle replay");

    /* No allocation for the account at hold (t2002 gives bob an association with account
     * "empty", which has none): a refusal (a failure row), not an error. */
    struct allot_job_desc none = job;
    none.account = "empty";
    none.job_id = 4243;
    EXPECT(allot_job_hold(c, &none, &res, &err) == 0, "hold without allocation: %s", err.msg);
    printf("hold-empty ok=%d refusal=%s message=%s\n", res.ok, allot_errname(res.refusal),
           res.message);
    EXPECT(res.ok == 0 && res.refusal == ALLOT_EFUNDS && strstr(res.message, "empty"),
           "refusal naming the account");

    /* An account the bank does not know: no decision and nothing recorded, -1 with ENOENT
     * naming the account. */
    struct allot_job_desc unknown = job;
    unknown.account = "no-such-account";
    unknown.job_id = 4245;
    allot_error_clear(&err);
    int rc = allot_job_hold(c, &unknown, &res, &err);
    printf("hold-unknown rc=%d code=%s msg=%s\n", rc, allot_errname(err.code), err.msg);
    EXPECT(rc == -1 && err.code == ALLOT_ENOENT && strstr(err.msg, "no-such-account") &&
               res.ok == 0,
           "ENOENT naming the account");

    /* A malformed request gets no decision: -1 with allotd's code and message. */
    struct allot_job_desc bad = job;
    bad.cluster = "bad cluster name";
    bad.job_id = 4244;
    allot_error_clear(&err);
    rc = allot_job_hold(c, &bad, &res, &err);
    printf("hold-bad rc=%d code=%s msg=%s\n", rc, allot_errname(err.code), err.msg);
    EXPECT(rc == -1 && err.code == ALLOT_EINVAL && strstr(err.msg, "cluster") && res.ok == 0,
           "EINVAL naming the cluster");

    allot_client_destroy(c);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
