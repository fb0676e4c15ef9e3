/* SPDX-License-Identifier: GPL-3.0-or-later */
/* civil.c - civil dates and UTC times by arithmetic (civil.h). */
#include "libcore/civil.h"

int64_t civil_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t civil_days(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = civil_floor_div(y, 400);
    int64_t yoe = y - era * 400;                                   /* 0..399 */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365, from March 1 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* 0..146096 */
    return era * 146097 + doe - 719468;                            /* 719468: 0000-03-01 to 1970 */
}

void civil_date(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = civil_floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* n (0..99) as two digits at p. */
static void two(char *p, int n)
{
    p[0] = (char)('0' + n / 10);
    p[1] = (char)('0' + n % 10);
}

size_t civil_format_utc(int64_t t_s, char *buf)
{
    /* Years 0..9999: days -719528 (0000-01-01) .. 2932896 (9999-12-31). */
    if (t_s < -62167219200 || t_s > 253402300799)
        return 0;
    int64_t days = civil_floor_div(t_s, 86400), y;
    int sec = (int)(t_s - days * 86400), m, d;
    civil_date(days, &y, &m, &d);
    two(buf, (int)(y / 100));
    two(buf + 2, (int)(y % 100));
    buf[4] = '-';
    two(buf + 5, m);
    buf[7] = '-';
    two(buf + 8, d);
    buf[10] = 'T';
    two(buf + 11, sec / 3600);
    buf[13] = ':';
    two(buf + 14, sec / 60 % 60);
    buf[16] = ':';
    two(buf + 17, sec % 60);
    buf[19] = 'Z';
    buf[20] = '\0';
    return CIVIL_UTC_LEN;
}
