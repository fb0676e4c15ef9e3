/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fairshare.h - fair-share factors on a usage tree: Slurm classic, Slurm Fair Tree, flux.
 *
 * fairshare_compute() fills one row per association (input index order) with the numbers that
 * `sshare -a -l -P` shows (RawUsage = subtree usage, NormShares, NormUsage, EffectvUsage,
 * FairShare, LevelFS) for the selected algorithm; formatters print those rows as sshare and
 * `flux account view-bank -t` do.  Formulas, tie rules and every interpretation choice are in
 * doc/fairshare.md; in short:
 *   CLASSIC   S = prod(shares/level_shares) down the tree, U = raw/root raw,
 *             UE = U for children of root, else U + (UE_parent - U) * shares/level_shares,
 *             F = 2^(-(UE/S)/dampening), 0 when S = 0.
 *   FAIR_TREE LevelFS = (shares/level_shares) / (raw/parent raw) (0 if no shares, inf if no
 *             usage); siblings sorted by LevelFS, users first on ties; depth-first; tied users
 *             share a rank, tied accounts merge their children; F = rank / user count.
 *   FLUX      weight = (shares/sum shares) / (usage/sum usage) among siblings (0 if no shares,
 *             2^64+1 if no usage), ties within flux's epsilon; same walk; F = rank / users.
 * Work is O(n log n) with no per-node allocation: a few arrays of n entries.
 * Threads: reads the tree only; concurrent calls on one tree are safe.
 */
#ifndef ALLOT_LIBCORE_FAIRSHARE_H
#define ALLOT_LIBCORE_FAIRSHARE_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/usage.h"

enum fairshare_algo {
    FAIRSHARE_CLASSIC = 0, /* PriorityFlags=NO_FAIR_TREE */
    FAIRSHARE_FAIR_TREE,   /* Slurm's default since 19.05 */
    FAIRSHARE_FLUX,        /* flux-accounting weighted tree */
};

struct fairshare_opts {
    enum fairshare_algo algo;
    uint32_t dampening; /* FairShareDampeningFactor (classic only), >= 1; 0 means 1 */
};

/* flux's weight for an association with shares and no usage (2^64, one more than
 * 1 / (1 / UINT64_MAX) in flux's arithmetic).  The API shows every level above it, FAIR_TREE's
 * +inf included, as this value, so both algorithms answer with one finite number. */
#define FAIRSHARE_LEVEL_MAX 18446744073709551616.0

/* One association's result.  NAN marks a value Slurm prints as blank. */
struct fairshare_row {
    double raw_usage;     /* own + descendants' usage (sshare RawUsage before truncation) */
    double norm_shares;   /* NormShares */
    double norm_usage;    /* NormUsage: raw / root raw, capped at 1 */
    double effectv_usage; /* EffectvUsage */
    double fairshare;     /* FairShare in [0, 1]; NAN for accounts in FAIR_TREE and FLUX */
    double level_fs;      /* FAIR_TREE LevelFS (may be +inf), FLUX sibling weight; else NAN */
    uint32_t rank;        /* FAIR_TREE / FLUX user rank (users count .. 1); 0 otherwise */
};

/* Compute rows[0..n) for tree t (n = usage_tree_count(t)) from the tree's own usage values.
 * rows is caller-allocated.  Errors: ALLOT_EINVAL for an unknown algorithm, ALLOT_ENOMEM;
 * rows may be partly written on error (callers discard them). */
int fairshare_compute(const usage_tree_t *t, const struct fairshare_opts *o,
                      struct fairshare_row *rows, struct allot_error *err);

/* Header line of `sshare -a -l -P` for algo (no newline), static. */
const char *fairshare_sshare_header(enum fairshare_algo algo);

/* Format association i as `sshare -a -l -P` prints it (no newline) into buf[len]:
 * Account (indented by depth)|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|
 * FairShare[|LevelFS]|GrpTRESMins|TRESRunMins; the last two come from the caller (NULL = "").
 * Blank where a live sshare prints nothing: root's RawShares and NormUsage, Fair Tree
 * account FairShare, root LevelFS (checked against 22.05.8 by t3600-sshare-slurm).
 * Returns the length, or -1 with ALLOT_ETOOBIG if buf is too small (buf then holds a
 * truncated, NUL-terminated line). */
int fairshare_format_sshare(const usage_tree_t *t, const struct fairshare_row *rows,
                            enum fairshare_algo algo, size_t i, const char *grp_tres_mins,
                            const char *tres_run_mins, char *buf, size_t len,
                            struct allot_error *err);

/* Header of `flux account view-bank -t` (no newline), static. */
const char *fairshare_flux_header(void);

/* Format association i as a `flux account view-bank -t` line (no newline): account column
 * indented by depth and left-justified in 20, then user, shares, usage and (users only)
 * fair-share right-justified in 20, numbers as Python prints floats.  Returns as above. */
int fairshare_format_flux(const usage_tree_t *t, const struct fairshare_row *rows, size_t i,
                          char *buf, size_t len, struct allot_error *err);

/* Python's repr() of a float ("0.0", "16000.0", "0.5", "1e-05", "inf") into buf[len]. */
int fairshare_format_pyfloat(double v, char *buf, size_t len);

#endif
