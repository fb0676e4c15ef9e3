/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_forecast.c - GET /v1/allocations/{id}/forecast and GET /v1/forecasts: when each
 * allocation's available balance reaches zero at its recent burn, with a band, and what is
 * left at its end (the model is libcore/forecast.h's; the reading store_alloc_forecast's). */
#include <math.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libcore/forecast.h"

static json_t *json_when(int64_t t_s)
{
    return t_s == FORECAST_NEVER ? json_null() : json_time(t_s);
}

json_t *api_forecast_json(const struct allocation *a, const struct balance *b,
                          const struct forecast *f, int64_t at_s, int window)
{
    json_t *o = json_balance(a, b);
    double left = forecast_days_left(f, at_s);
    json_object_set_new(o, "at", json_time(at_s));
    json_object_set_new(o, "window_days", json_integer(window));
    json_object_set_new(o, "history_days", json_integer(f->days));
    json_object_set_new(o, "burn_sumin_per_day", json_integer(f->rate_sumin));
    json_object_set_new(o, "burn_low_sumin_per_day", json_integer(f->rate_low_sumin));
    json_object_set_new(o, "burn_high_sumin_per_day", json_integer(f->rate_high_sumin));
    json_object_set_new(o, "exhausts", json_when(f->exhaust_s));
    json_object_set_new(o, "exhausts_early", json_when(f->exhaust_early_s));
    json_object_set_new(o, "exhausts_late", json_when(f->exhaust_late_s));
    json_object_set_new(o, "days_left",
                        isinf(left) ? json_null() : json_real(floor(left * 100.0) / 100.0));
    json_object_set_new(o, "before_end", json_boolean(f->before_end));
    json_object_set_new(o, "end_balance_sumin", json_integer(f->end_balance_sumin));
    json_object_set_new(o, "end_balance_low_sumin", json_integer(f->end_balance_low_sumin));
    json_object_set_new(o, "end_balance_high_sumin", json_integer(f->end_balance_high_sumin));
    return o;
}

int api_forecast_window(struct req *r, int *window, struct allot_error *err)
{
    int64_t w = FORECAST_WINDOW_DEFAULT;
    if (json_query_int(r, "window", 1, &w, err) < 0)
        return -1;
    if (w > FORECAST_WINDOW_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "window: '%s' must be at most %d days",
                            req_query(r, "window"), FORECAST_WINDOW_MAX);
    *window = (int)w;
    return 0;
}

int api_alloc_forecast(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct allocation a;
    struct balance b, from;
    struct forecast f;
    int window;
    int64_t at_s = 0;
    /* Who may read it: as GET /v1/allocations/{id}. */
    if (!st || api_forecast_window(r, &window, err) < 0 ||
        json_query_time(r, "at", &at_s, err) < 0 || api_alloc_visible(r, st, &a, &b, err) < 0)
        return -1;
    /* at=: the forecast as it was made then, from the entries written up to then. */
    int given = at_s > 0;
    if (!given)
        at_s = (int64_t)time(NULL);
    if (store_alloc_forecast(st, &a, given ? NULL : &b, at_s, window, &f, &from, err) < 0)
        return -1;
    r->out = api_forecast_json(&a, &from, &f, at_s, window);
    return 0;
}
