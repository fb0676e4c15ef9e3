/* SPDX-License-Identifier: GPL-3.0-or-later */
/* notify.h - tell the service manager what allotd is doing (systemd's Type=notify):
 * READY=1 once it serves, RELOADING=1 while a SIGHUP is handled, STOPPING=1 when it drains.
 * A no-op without $NOTIFY_SOCKET, and in a build without libsystemd. */
#ifndef ALLOT_ALLOTD_NOTIFY_H
#define ALLOT_ALLOTD_NOTIFY_H

/* state: newline-separated sd_notify assignments ("READY=1\nSTATUS=serving"). */
void notify_state(const char *state);

#endif
