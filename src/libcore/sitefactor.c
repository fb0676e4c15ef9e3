/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sitefactor.c - HADM site-factor formulae (see sitefactor.h). */
#include "libcore/sitefactor.h"

#include <math.h>

static double clamp01(double x)
{
    if (isnan(x) || x < 0.0)
        return 0.0;
    return x > 1.0 ? 1.0 : x;
}

double sitefactor_credit(int64_t used_sumin, int64_t granted_sumin)
{
    if (granted_sumin <= 0)
        return 0.0;
    return clamp01(1.0 - (double)used_sumin / (double)granted_sumin);
}

double sitefactor_temporal(int64_t dt_expire_s, int64_t min_dt_expire_s, int64_t max_dt_expire_s)
{
    if (max_dt_expire_s <= 0 || dt_expire_s <= 0)
        return 1.0;
    if (min_dt_expire_s < 0)
        min_dt_expire_s = 0;
    return clamp01(1.0 - ((double)dt_expire_s - (double)min_dt_expire_s) / (double)max_dt_expire_s);
}

double sitefactor_power(double f_credit, double f_temporal, double n_credit, double n_temporal)
{
    double a = pow(clamp01(f_credit), n_credit > 0.0 ? n_credit : 0.0);
    double b = pow(clamp01(f_temporal), n_temporal > 0.0 ? n_temporal : 0.0);
    return clamp01(a * b);
}

double sitefactor_sigmoid(double x, double l, double x0)
{
    if (isnan(x) || isnan(l) || isnan(x0))
        return 0.0;
    x = clamp01(x);
    x0 = clamp01(x0);
    if (x == 0.0 || x == 1.0)
        return x; /* S(0) = 0 and S(1) = 1 exactly, whatever rounding would say */
    if (fabs(l) < 1e-9)
        return x; /* the l -> 0 limit is the identity */
    double s;
    if (l < 0.0) {
        /* Every exponent l*x, l, l*x0 is <= 0: the direct form cannot overflow. */
        s = (expm1(l * x) * (exp(l) + exp(l * x0))) / (expm1(l) * (exp(l * x) + exp(l * x0)));
    } else {
        /* Multiply through by e^{-l}: exponents l(x-1), l(x0-1), -l are <= 0.
         * numerator   e^{-l}(e^{lx} - 1)(e^l + e^{l x0})  = (e^{l(x-1)} - e^{-l})(1 + e^{l(x0-1)})
         * denominator e^{-l}(e^l - 1)(e^{lx} + e^{l x0})  = (1 - e^{-l})(e^{l(x-1)} + e^{l(x0-1)})
         */
        double num = (l < 1.0 ? exp(-l) * expm1(l * x) : exp(l * (x - 1.0)) - exp(-l)) *
                     (1.0 + exp(l * (x0 - 1.0)));
        double den = -expm1(-l) * (exp(l * (x - 1.0)) + exp(l * (x0 - 1.0)));
        /* Both exponentials of den underflow only for huge l: S is then a step at x0
         * (with value 1/2 at x0 itself, the limit of the formula). */
        s = den > 0.0 ? num / den : x > x0 ? 1.0 : x < x0 ? 0.0 : 0.5;
    }
    return clamp01(s);
}

double sitefactor_sigmoid2(double f_credit, double l_credit, double x0_credit, double f_temporal,
                           double l_temporal, double x0_temporal)
{
    return sitefactor_sigmoid(f_credit, l_credit, x0_credit) *
           sitefactor_sigmoid(f_temporal, l_temporal, x0_temporal);
}

uint32_t sitefactor_to_slurm(double sf, uint32_t max)
{
    return (uint32_t)llround(clamp01(sf) * (double)max);
}
