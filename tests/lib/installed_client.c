/* SPDX-License-Identifier: GPL-3.0-or-later */
/* installed_client.c - a program built the way a site builds against an installed liballot
 * (t0200-install.t compiles it with `pkg-config --cflags --libs allot`, and once against
 * liballot.a): it prints the library's version and asks allotd who it is.
 *   installed_client URL USER  (USER: the test user of an AuthType=none allotd) */
#include <stdio.h>
#include <stdlib.h>

#include <allot/allot.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: installed_client URL USER\n");
        return 2;
    }
    struct allot_error err = {0};
    allot_client_t *c = allot_client_create(argv[1], &err);
    if (!c || allot_client_set_test_user(c, argv[2], &err) < 0) {
        fprintf(stderr, "installed_client: %s\n", err.msg);
        allot_client_destroy(c);
        return 1;
    }
    int status = 0;
    char *reply = NULL;
    int rc = allot_request(c, "GET", "/v1/whoami", NULL, &status, &reply, &err);
    printf("version %s\nstatus %d\n%s\n", allot_version(), status, reply ? reply : "");
    if (rc < 0)
        fprintf(stderr, "installed_client: %s\n", err.msg);
    free(reply);
    allot_client_destroy(c);
    return rc < 0 ? 1 : 0;
}
