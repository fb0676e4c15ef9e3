/* SPDX-License-Identifier: GPL-3.0-or-later */
/* url.c - the client's address syntax and URL encoding.
 *
 * Two address forms exist (allot.h): an HTTP base URL, or "unix:/path" for allotd's Unix
 * socket, which libcurl reaches with CURLOPT_UNIX_SOCKET_PATH while the request URL names
 * a dummy host.  The parser is strict so a typo fails at startup with a message naming the
 * url instead of as a connection error at the first request.
 */
#include "liballot/client_int.h"
#include "allot/allot.h"

#include <stdlib.h>
#include <string.h>

#define URL_MAX 4096

static int is_unreserved(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* Host and port part of an http URL: a non-empty run of host characters, an optional
 * ":port" of 1..5 digits, an optional path prefix.  No user info, query or fragment. */
static int check_http_rest(const char *rest, struct allot_error *err)
{
    const char *p = rest;
    size_t hostlen = 0;
    if (*p == '[') { /* IPv6 literal */
        const char *close = strchr(p, ']');
        if (!close || close == p + 1)
            return allot_errorf(err, ALLOT_EINVAL, "url: malformed IPv6 address in '%s'", rest);
        p = close + 1;
        hostlen = 1;
    } else {
        while (*p && *p != ':' && *p != '/') {
            unsigned char ch = (unsigned char)*p;
            if (!(is_unreserved(ch)))
                return allot_errorf(err, ALLOT_EINVAL, "url: bad character '%c' in host", *p);
            p++;
            hostlen++;
        }
    }
    if (hostlen == 0)
        return allot_errorf(err, ALLOT_EINVAL, "url: missing host");
    if (*p == ':') {
        int digits = 0;
        long port = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            port = port * 10 + (*p - '0');
        if (digits == 0 || digits > 5 || port < 1 || port > 65535)
            return allot_errorf(err, ALLOT_EINVAL, "url: port must be 1..65535");
    }
    if (*p && *p != '/')
        return allot_errorf(err, ALLOT_EINVAL, "url: unexpected '%c' after host/port", *p);
    for (; *p; p++) {
        if (*p == '?' || *p == '#' || *p == '@' || (unsigned char)*p <= ' ')
            return allot_errorf(err, ALLOT_EINVAL,
                                "url: path prefix may not contain '?', '#', '@' or spaces");
    }
    return 0;
}

int client_url_parse(const char *url, char **base, char **socket_path, struct allot_error *err)
{
    char *b = NULL, *s = NULL;
    size_t len;

    if (!url || !*url)
        return allot_errorf(err, ALLOT_EINVAL, "url: empty");
    len = strnlen(url, URL_MAX + 1);
    if (len > URL_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "url: longer than %d characters", URL_MAX);

    if (strncmp(url, "unix:", 5) == 0) {
        const char *path = url + 5;
        size_t plen = strlen(path);
        if (path[0] != '/')
            return allot_errorf(err, ALLOT_EINVAL,
                                "url: '%s': a unix socket path must be absolute (unix:/path)", url);
        /* sun_path holds 108 bytes on Linux including the NUL. */
        if (plen >= 108)
            return allot_errorf(err, ALLOT_EINVAL, "url: unix socket path longer than 107 bytes");
        while (plen > 1 && path[plen - 1] == '/')
            plen--;
        s = strndup(path, plen);
        b = strdup("http://localhost");
    } else {
        size_t skip;
        if (strncmp(url, "http://", 7) == 0)
            skip = 7;
        else if (strncmp(url, "https://", 8) == 0)
            skip = 8;
        else
            return allot_errorf(err, ALLOT_EINVAL,
                                "url: '%s': expected http://HOST:PORT or unix:/PATH", url);
        if (check_http_rest(url + skip, err) < 0)
            return -1;
        while (len > skip && url[len - 1] == '/')
            len--;
        b = strndup(url, len);
    }
    if (!b || (strncmp(url, "unix:", 5) == 0 && !s)) {
        free(b);
        free(s);
        return allot_errorf(err, ALLOT_ENOMEM, "url: out of memory");
    }
    *base = b;
    *socket_path = s;
    return 0;
}

char *allot_urlencode(const char *s, struct allot_error *err)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    char *out, *o;

    if (!s)
        s = "";
    for (const char *p = s; *p; p++)
        n += is_unreserved((unsigned char)*p) ? 1 : 3;
    out = malloc(n + 1);
    if (!out) {
        allot_errorf(err, ALLOT_ENOMEM, "out of memory");
        return NULL;
    }
    o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_unreserved(*p)) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}
