/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_dashboard.c - `allot dashboard`: a link to allotd's web dashboard that signs the
 * browser in as the caller (a read-only token, POST /v1/tokens).
 *
 * The browser needs allotd's HTTP address: the one this command talks to when that is
 * http(s), else allotd's ListenAddr from the reply (a wildcard host becomes this host's
 * name, as a browser elsewhere cannot reach 0.0.0.0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "libutil/xalloc.h"

/* The http(s) base a browser should use, into out. */
static int http_base(struct cli *cli, const char *listen, char *out, size_t len,
                     struct allot_error *err)
{
    const char *url = allot_client_url(cli->client);
    if (url && (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0)) {
        if ((size_t)snprintf(out, len, "%s", url) >= len)
            return allot_errorf(err, ALLOT_ETOOBIG, "dashboard: allotd URL too long");
        return 0;
    }
    if (!listen || !*listen)
        return allot_errorf(err, ALLOT_EINVAL,
                            "dashboard: allotd has no TCP listener (ListenAddr is empty); a "
                            "browser cannot reach its Unix socket");
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return allot_errorf(err, ALLOT_EPROTO,
                            "dashboard: allotd's listen address '%s' has "
                            "no port",
                            listen);
    int hostlen = (int)(colon - listen);
    char host[256];
    if (hostlen == 0 || (hostlen == 7 && strncmp(listen, "0.0.0.0", 7) == 0) ||
        (hostlen == 4 && strncmp(listen, "[::]", 4) == 0) ||
        (hostlen == 2 && strncmp(listen, "::", 2) == 0)) {
        if (gethostname(host, sizeof(host)) < 0)
            return allot_errorf(err, ALLOT_EIO, "dashboard: gethostname failed");
        host[sizeof(host) - 1] = '\0';
    } else {
        snprintf(host, sizeof(host), "%.*s", hostlen, listen);
    }
    if ((size_t)snprintf(out, len, "http://%s%s", host, colon) >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "dashboard: allotd address too long");
    return 0;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    int npos = 0;
    if (verb)
        return allot_errorf(err, ALLOT_EINVAL, "dashboard: unexpected '%s' (see --help)", verb);
    if (args_split(argc, argv, NULL, 0, &npos, &kvs, err) < 0)
        return -1;
    json_t *body = json_object();
    const char *ttl = args_get(&kvs, "ttl");
    int64_t ttl_s = 0;
    if (ttl) {
        if (args_duration("ttl", ttl, &ttl_s, err) < 0) {
            json_decref(body);
            return -1;
        }
        json_object_set_new(body, "ttl_s", json_integer(ttl_s));
    }
    if (args_check_used(&kvs, "dashboard", err) < 0) {
        json_decref(body);
        return -1;
    }
    char *reply = NULL;
    int rc = cli_request(cli, "POST", "/v1/tokens", body, &reply, err);
    json_decref(body);
    if (rc < 0) {
        free(reply);
        return -1;
    }
    json_t *doc = json_loads(reply ? reply : "", 0, NULL);
    free(reply);
    const char *path = json_string_value(json_object_get(doc, "dashboard"));
    const char *expires = json_string_value(json_object_get(doc, "expires"));
    if (!path || !expires) {
        json_decref(doc);
        return allot_errorf(err, ALLOT_EPROTO, "dashboard: allotd's reply has no link");
    }
    if (cli->json) {
        char *text = json_dumps(doc, JSON_INDENT(2));
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(doc);
        return 0;
    }
    char base[512];
    rc = http_base(cli, json_string_value(json_object_get(doc, "listen")), base, sizeof(base), err);
    if (rc == 0) {
        printf("%s%s\n", base, path);
        fflush(stdout); /* the link first, then the note, also when both go to a file */
        fprintf(stderr,
                "Open this link in a browser; it shows what %s may see, read-only, "
                "until %s.  Keep it to yourself: the link is the login.\n",
                json_string_value(json_object_get(doc, "user")), expires);
    }
    json_decref(doc);
    return rc;
}

const struct cli_command cmd_dashboard = {
    .noun = "dashboard",
    .summary = "a link to the web dashboard (balances and burn-down charts)",
    .help = "usage: allot dashboard [ttl=DURATION]\n"
            "\n"
            "Prints a link to allotd's web dashboard that signs the browser in as you (after\n"
            "--as: as that user), read-only, for ttl (default 8 hours, at most a day; Slurm\n"
            "time syntax, or <N>s).  The link carries a token: anyone with it sees what you\n"
            "see until it expires, or until allotd restarts.  The browser must reach\n"
            "allotd's TCP listener (ListenAddr).\n"
            "\n"
            "examples:\n"
            "  allot dashboard\n"
            "  allot dashboard ttl=1:00:00\n"
            "  allot --as alice dashboard\n",
    .run = run,
    .needs_verb = 0,
};
