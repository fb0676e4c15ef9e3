/* SPDX-License-Identifier: GPL-3.0-or-later */
/* socket_why.c - why a unix: URL could not be reached, in words a user can act on.
 *
 * libcurl reports a failed connect to a Unix socket as "Failed to connect to localhost port
 * 80", the dummy host of the request URL (url.c), which names neither the socket nor the
 * cause.  The cause is the connect's errno: libcurl's CURLINFO_OS_ERRNO when it kept one,
 * else one connect of our own to the same path (non-blocking, closed at once).
 */
#include "liballot/client_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int client_socket_errno(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof sa.sun_path)
        return ENAMETOOLONG;
    memcpy(sa.sun_path, path, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int e = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
    close(fd);
    return e == EAGAIN || e == EINPROGRESS ? 0 : e; /* a full backlog: someone listens */
}

void client_socket_why(const char *path, int os_errno, char *buf, size_t size)
{
    const char *what, *hint;
    switch (os_errno) {
    case ENOENT:
        what = "no such file";
        hint = "is allotd running, with ListenSocket set to this path?";
        break;
    case EACCES:
    case EPERM:
        what = "permission denied";
        hint = "this user may not write to the socket or search a directory above it; "
               "allotd makes the socket mode 0666, so look at its directories";
        break;
    case ECONNREFUSED:
        what = "connection refused";
        hint = "nothing listens on it: allotd stopped and left the file, or it is not "
               "allotd's socket";
        break;
    case ENOTDIR:
        what = "not a directory";
        hint = "a part of the path above the socket is a file";
        break;
    case 0:
        what = "no connection";
        hint = "allotd did not accept it";
        break;
    default: {
        char tmp[128];
        /* The GNU strerror_r: thread-safe, returns its text (tmp or a static string). */
        snprintf(buf, size, "connect to unix socket %s: %s", path,
                 strerror_r(os_errno, tmp, sizeof tmp));
        return;
    }
    }
    snprintf(buf, size, "connect to unix socket %s: %s (%s)", path, what, hint);
}
