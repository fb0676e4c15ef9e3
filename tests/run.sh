#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# run.sh - THE test command (README): install what the suite needs, build, run every test.
#
#   bash tests/run.sh              release-with-debug build in build/, every test, and the
#                                  Slurm end-to-end set again against Slurm 24.11 (slurm24)
#   bash tests/run.sh --sanitize   ASan+UBSan build in build-asan/, every test but the
#                                  PostgreSQL repeats of the integration tests (tNNNN-*-pg:
#                                  the same code paths as their SQLite runs apart from
#                                  db_pg.c, which the store_*_pg unit tests, t4100 and t4200
#                                  still run under the sanitizers), those labelled no-asan
#                                  or package (t0220 builds and installs the Debian
#                                  packages, which hold no sanitizer build), and no Slurm
#                                  24.11 set (the plugins' code is the same)
#
# Must run as root on Debian 12: it apt-get installs packages (.ci/deps.sh), fetches the
# installed Slurm's source for the plugins (.ci/slurm-source.sh) and starts real daemons
# (munged, MariaDB, slurmdbd, slurmctld, slurmd, PostgreSQL, allotd) on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=release
[ "${1:-}" = "--sanitize" ] && mode=sanitize

bash .ci/deps.sh
if [ -f .ci/slurm-deps.sh ]; then bash .ci/slurm-deps.sh; fi
slurm_src=$(bash .ci/slurm-source.sh | tail -n 1) || slurm_src=

if [ "$mode" = sanitize ]; then
    bdir=build-asan
    cmake_args=(-DALLOT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
    ctest_args=(-LE 'no-asan|package' -E '^t[0-9]+-.*-pg$')
    # Leaks are errors; a sanitizer finding stops the test that hit it.  Tests that fake the
    # clock preload libfaketime ahead of the ASan runtime, which ASan refuses by default.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:verify_asan_link_order=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
    bdir=build
    cmake_args=()
    ctest_args=()
fi
[ -n "$slurm_src" ] && cmake_args+=(-DSLURM_SOURCE_DIR="$slurm_src")
# The plain run also tests Slurm 24.11 (Debian 13's), built once into a cache
# (.ci/slurm-build.sh): a second plugin set and the tests labelled slurm24.
if [ "$mode" = release ]; then
    slurm_extra=$(bash .ci/slurm-build.sh trixie | tail -n 1)
    cmake_args+=(-DALLOT_SLURM_EXTRA="$slurm_extra")
fi

cmake -S . -B "$bdir" "${cmake_args[@]}"
cmake --build "$bdir" -j"$(nproc)"
# One test per CPU at a time: every test keeps its daemons in its own directory on its own
# claimed loopback ports (find_free_port in tests/sharness.d/00-common.sh), and most of a
# test's time is one process at a time, so two run side by side in about half the time.
ctest --test-dir "$bdir" --output-on-failure --timeout 900 -j "$(nproc)" "${ctest_args[@]}"
