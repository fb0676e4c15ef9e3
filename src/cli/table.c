/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table.c - collecting and printing the CLI's tables (table.h).
 *
 * Columns are padded by display width, not byte length: names and comments are UTF-8
 * ("Müller"), and a padding counted in bytes would push every later column left by one per
 * extra byte.  The CLI sets no locale, so the width of a cell is its number of code points
 * (bytes that are not UTF-8 continuation bytes); double-width characters (CJK) still count
 * one, which is the price of not depending on the environment's locale. */
#include "cli/table.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

struct table {
    int ncols;
    char **headers;
    enum table_align *align;
    size_t *width; /* table_set_width; 0 = widest cell */
    char ***rows;  /* rows[i][col] */
    int nrows, caprows;
};

table_t *table_create(int ncols, const char *const *headers)
{
    table_t *t = xcalloc(1, sizeof(*t));
    t->ncols = ncols;
    t->headers = xcalloc((size_t)ncols, sizeof(char *));
    t->align = xcalloc((size_t)ncols, sizeof(enum table_align));
    t->width = xcalloc((size_t)ncols, sizeof(size_t));
    for (int i = 0; i < ncols; i++)
        t->headers[i] = xstrdup(headers[i] ? headers[i] : "");
    return t;
}

void table_destroy(table_t *t)
{
    if (!t)
        return;
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            free(t->rows[r][c]);
        free(t->rows[r]);
    }
    for (int c = 0; c < t->ncols; c++)
        free(t->headers[c]);
    free(t->rows);
    free(t->headers);
    free(t->align);
    free(t->width);
    free(t);
}

void table_set_align(table_t *t, int col, enum table_align a)
{
    if (col >= 0 && col < t->ncols)
        t->align[col] = a;
}

void table_set_width(table_t *t, int col, size_t width)
{
    if (col >= 0 && col < t->ncols)
        t->width[col] = width;
}

void table_add_row(table_t *t, const char *const *cells)
{
    if (t->nrows == t->caprows) {
        t->caprows = t->caprows ? t->caprows * 2 : 16;
        t->rows = xrealloc(t->rows, (size_t)t->caprows * sizeof(char **));
    }
    char **row = xcalloc((size_t)t->ncols, sizeof(char *));
    for (int c = 0; c < t->ncols; c++)
        row[c] = xstrdup(cells[c] ? cells[c] : "");
    t->rows[t->nrows++] = row;
}

/* Print s with characters that would break a record replaced by spaces. */
static void put_cell(FILE *f, const char *s, int parsable)
{
    for (const char *p = s; *p; p++) {
        char ch = *p;
        if (ch == '\n' || ch == '\r' || ch == '\t' || (parsable && ch == '|'))
            ch = ' ';
        fputc(ch, f);
    }
}

static void print_record(FILE *f, char *const *cells, int ncols, int end)
{
    for (int c = 0; c < ncols; c++) {
        fputs(c ? "|" : "", f);
        put_cell(f, cells[c], 1);
    }
    fputs(end ? "|\n" : "\n", f);
}

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes
 * doubled; line breaks kept inside the quotes, so a record may span lines as CSV allows. */
static void put_csv_cell(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static void print_csv(const table_t *t, FILE *f, int header)
{
    for (int r = header ? -1 : 0; r < t->nrows; r++) {
        char *const *cells = r < 0 ? t->headers : t->rows[r];
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? "," : "", f);
            put_csv_cell(f, cells[c]);
        }
        fputc('\n', f);
    }
}

static void print_parsable(const table_t *t, FILE *f, int header, int end)
{
    if (header)
        print_record(f, t->headers, t->ncols, end);
    for (int r = 0; r < t->nrows; r++)
        print_record(f, t->rows[r], t->ncols, end);
}

size_t table_width(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) /* 10xxxxxx continues the previous code point */
            n++;
    return n;
}

/* s cut to width display characters, the last one '+' (into buf of len bytes). */
static const char *cut(const char *s, size_t width, char *buf, size_t len)
{
    size_t n = 0, chars = 0;
    for (; s[n] && n + 5 < len; n++) {
        if (((unsigned char)s[n] & 0xC0) != 0x80 && ++chars == width)
            break;
        buf[n] = s[n];
    }
    buf[n] = '+';
    buf[n + 1] = '\0';
    return buf;
}

static void print_padded(FILE *f, const char *s, size_t width, enum table_align a, int last)
{
    char buf[1024];
    size_t len = table_width(s);
    if (len > width && width > 0) {
        s = cut(s, width, buf, sizeof buf);
        len = table_width(s);
    }
    size_t pad = width > len ? width - len : 0;
    if (a == TABLE_RIGHT)
        for (size_t i = 0; i < pad; i++)
            fputc(' ', f);
    put_cell(f, s, 0);
    if (a == TABLE_LEFT && !last) /* no trailing blanks at line end */
        for (size_t i = 0; i < pad; i++)
            fputc(' ', f);
}

void table_print(const table_t *t, FILE *f, enum table_mode mode, int header)
{
    size_t *w;

    if (mode == TABLE_CSV) {
        print_csv(t, f, header);
        return;
    }
    if (mode != TABLE_ALIGNED) {
        print_parsable(t, f, header, mode == TABLE_PARSABLE_END);
        return;
    }
    w = xcalloc((size_t)t->ncols, sizeof(size_t));
    for (int c = 0; c < t->ncols; c++) {
        if (t->width[c]) {
            w[c] = t->width[c];
            continue;
        }
        w[c] = header ? table_width(t->headers[c]) : 0;
        for (int r = 0; r < t->nrows; r++) {
            size_t len = table_width(t->rows[r][c]);
            if (len > w[c])
                w[c] = len;
        }
    }
    if (header) {
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? "  " : "", f);
            print_padded(f, t->headers[c], w[c], t->align[c], c == t->ncols - 1);
        }
        fputc('\n', f);
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? "  " : "", f);
            for (size_t i = 0; i < w[c]; i++)
                fputc('-', f);
        }
        fputc('\n', f);
    }
    for (int r = 0; r < t->nrows; r++) {
        /* Stop at the last non-empty cell: empty trailing cells would only leave blanks at
         * the end of the line (which diff, grep '$' and copy-paste all trip over). */
        int last = t->ncols - 1;
        while (last > 0 && t->rows[r][last][0] == '\0')
            last--;
        for (int c = 0; c <= last; c++) {
            fputs(c ? "  " : "", f);
            print_padded(f, t->rows[r][c], w[c], t->align[c], c == last);
        }
        fputc('\n', f);
    }
    free(w);
}
