/* SPDX-License-Identifier: GPL-3.0-or-later */
/* notify.c - see notify.h.  A failed notification is logged and otherwise ignored: the
 * service manager's own timeout reports a daemon that never said it was ready. */
#include "allotd/notify.h"

#include <string.h>

#include "libutil/log.h"

#ifdef ALLOT_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

void notify_state(const char *state)
{
    int rc = sd_notify(0, state);
    if (rc < 0)
        log_warn("msg=\"cannot notify the service manager\" error=\"%s\"", strerror(-rc));
}
#else
void notify_state(const char *state)
{
    (void)state;
}
#endif
