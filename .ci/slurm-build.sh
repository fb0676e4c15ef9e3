#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Build another Slurm release than the installed one, from Debian's archive, into a
# private prefix, for the end-to-end tests against that release (tests/run.sh sets
# ALLOT_SLURM_PREFIX to the result).
#
# Design: a deb-src entry for SUITE (default trixie, Slurm 24.11) is added beside the
# distribution's own; nothing of SUITE is installed or pinned, only its source is read.
# `apt-get source slurm-wlm/SUITE` fetches the tree; when the archive serves the upstream
# tarball but not Debian's packaging files (the patches are not needed to run Slurm), the
# tarball apt already fetched and checked against SUITE's Sources index is used alone.
# Only what the tests run is built (daemons, the client commands they call, the plugins
# those load; no docs, contribs, data_parser, slurmrestd, sview) with `make -j2`, in a
# private directory renamed into place when complete, so an interrupted build leaves
# nothing half-made.  The result is cached per source version and reused:
#   CACHE/slurm-VERSION/prefix   bin, sbin, lib/slurm (plugins), include
#   CACHE/slurm-VERSION/src      the configured source tree (config.h), for allot's plugins
#   CACHE/slurm-VERSION/build-seconds   how long the build took
#
# Usage: .ci/slurm-build.sh [SUITE] [CACHE_DIR]
#   CACHE_DIR defaults to $ALLOT_SLURM_BUILD_CACHE or /var/cache/allot.
#   The last line of stdout is CACHE/slurm-VERSION (prefix/ and src/ under it).
#   ALLOT_SLURM_BUILD_JOBS (default 2) sets make's -j.
set -euo pipefail

die() {
    echo "slurm-build: error: $*" >&2
    exit 1
}

suite=${1:-trixie}
cache_root=${2:-${ALLOT_SLURM_BUILD_CACHE:-/var/cache/allot}}
jobs=${ALLOT_SLURM_BUILD_JOBS:-2}
srcpkg=slurm-wlm

# The source version SUITE has, from apt's index (no download).  Adds SUITE's deb-src
# entry and refreshes the index when apt does not know the suite's source yet.
list=/etc/apt/sources.list.d/allot-$suite-src.sources
uris() { apt-get source --print-uris -qq "$srcpkg/$suite" 2>/dev/null; }
if ! out=$(uris) || [ -z "$out" ]; then
    [ "$(id -u)" = 0 ] || die "apt knows no $srcpkg source for $suite; run this script as root once"
    if [ ! -f "$list" ]; then
        cat >"$list" <<EOF
# Added by allot's .ci/slurm-build.sh: $suite's source packages only (no binaries).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
        echo "slurm-build: added $list" >&2
    fi
    flock /tmp/allot-apt.lock apt-get update -qq || die "apt-get update failed"
    out=$(uris) || die "apt finds no $srcpkg source in $suite"
fi
dsc=$(awk '$2 ~ /\.dsc$/ { print $2; exit }' <<<"$out")
[ -n "$dsc" ] || die "cannot read the source version from apt-get source --print-uris"
version=${dsc#"${srcpkg}_"}
version=${version%.dsc}
dest=$cache_root/slurm-$version

if [ -x "$dest/prefix/sbin/slurmctld" ] && [ -f "$dest/src/config.h" ]; then
    echo "slurm-build: using cached Slurm $version" >&2
    echo "$dest"
    exit 0
fi
[ "$(id -u)" = 0 ] || die "Slurm $version is not built in $dest; run this script as root once"

mkdir -p "$cache_root"
work=$(mktemp -d "$dest.tmp.XXXXXX")
chmod 0755 "$work" # apt's _apt user downloads into it
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# Fetch: the whole source package if the archive has it, else the upstream tarball
# (apt-get source leaves it behind, checked against the index's SHA256).
mkdir "$work/dl"
chmod 0755 "$work/dl"
if ! (cd "$work/dl" && flock /tmp/allot-apt.lock apt-get source -qq "$srcpkg/$suite" >"$work/dl.log" 2>&1); then
    orig=$(awk '$2 ~ /\.orig\.tar\./ { print $2; exit }' <<<"$out")
    want=$(awk '$2 ~ /\.orig\.tar\./ { print $4; exit }' <<<"$out")
    [ -n "$orig" ] && [ -f "$work/dl/$orig" ] ||
        die "apt-get source $srcpkg/$suite failed: $(tail -n 3 "$work/dl.log")"
    [ "SHA256:$(sha256sum "$work/dl/$orig" | cut -d' ' -f1)" = "$want" ] ||
        die "$orig does not match $suite's Sources index"
    echo "slurm-build: $suite's packaging files are unreachable; building upstream $orig" >&2
    tar -C "$work/dl" -xf "$work/dl/$orig"
fi
tree=$(find "$work/dl" -mindepth 2 -maxdepth 2 -name configure.ac -printf '%h\n' | head -n 1)
[ -n "$tree" ] || die "no configure.ac in the unpacked $srcpkg $version"
mv "$tree" "$work/src"
rm -rf "$work/dl"

# Configure for the final location (paths are compiled in), install through DESTDIR.
cd "$work/src"
# Shared objects only (static ones would compile every file twice), no debug information.
./configure -q --prefix="$dest/prefix" --sysconfdir="$dest/prefix/etc" --disable-static \
    --disable-sview --disable-slurmrestd --disable-x11 --without-hdf5 --without-rdkafka \
    CFLAGS=-O2 >"$work/configure.log" 2>&1 ||
    die "configure failed: $(tail -n 20 "$work/configure.log")"

# What the tests use, in src/Makefile.am's order.  Plugin families that nothing here
# loads are left out; data_parser (JSON/YAML output) is the big one.
dirs="api bcast common conmgr curl database interfaces lua"
for p in accounting_storage acct_gather_energy acct_gather_profile acct_gather_interconnect \
    acct_gather_filesystem auth certmgr cgroup cli_filter cred gpu gres hash job_container \
    job_submit jobacct_gather jobcomp mcs mpi node_features preempt prep priority proctrack \
    sched select serializer site_factor switch task tls topology; do
    dirs="$dirs plugins/$p"
done
dirs="$dirs sacct sacctmgr sbatch scancel scontrol sinfo slurmctld slurmd slurmdbd sprio"
dirs="$dirs squeue srun sshare sstat stepmgr"
mk() {
    make -j"$jobs" -C "$@" >>"$work/make.log" 2>&1 ||
        die "make -C $* failed: $(tail -n 30 "$work/make.log")"
}
for d in $dirs; do
    if [ -d "src/$d" ]; then mk "src/$d"; fi
done
stage=$work/stage
for d in $dirs; do
    if [ -d "src/$d" ]; then mk "src/$d" install DESTDIR="$stage"; fi
done
[ -f "$stage$dest/prefix/lib/slurm/accounting_storage_mysql.so" ] ||
    die "accounting_storage/mysql was not built (is libmariadb-dev installed?)"
mkdir -p "$stage$dest/prefix/include/slurm"
cp slurm/*.h "$stage$dest/prefix/include/slurm/"
mv "$stage$dest/prefix" "$work/prefix"
rm -rf "$stage"
echo $(($(date +%s) - start)) >"$work/build-seconds"

rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
echo "slurm-build: built Slurm $version in $(cat "$dest/build-seconds") s" >&2
echo "$dest"
