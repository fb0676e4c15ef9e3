#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Fetch the source tree of exactly the installed Slurm, for allot's PrEp and
# site_factor plugins, which need Slurm's internal headers (slurmctld.h, prep.h).
#
# Design: the installed libslurm-dev package names its source package and version;
# `apt-get source <src>=<version>` gives that exact tree. A deb-src entry is added
# next to the distribution's own (same URIs, suites and keyring) when none exists.
# The tree is unpacked once into a per-version cache directory and reused.
#
# Usage: .ci/slurm-source.sh [CACHE_DIR]
#   CACHE_DIR defaults to $ALLOT_SLURM_SRC_CACHE or /var/cache/allot/slurm-src.
#   On success the last line of stdout is the source directory, suitable for
#   cmake -DSLURM_SOURCE_DIR=...; the build also finds it there by itself.
#   Exit status 1 with a message on stderr saying what to do otherwise.
# Needs root only when the tree is not cached yet (apt sources, apt-get update).
set -euo pipefail

die() {
    echo "slurm-source: error: $*" >&2
    exit 1
}

cache_root=${1:-${ALLOT_SLURM_SRC_CACHE:-/var/cache/allot/slurm-src}}

version=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) ||
    die "libslurm-dev is not installed (apt-get install libslurm-dev)"
srcpkg=$(dpkg-query -W -f='${source:Package}' libslurm-dev)
upstream=${version#*:}
upstream=${upstream%%-*}
upstream=${upstream%%+*}

dest="$cache_root/$srcpkg-$version"
marker="src/slurmctld/slurmctld.h"

find_tree() {
    local d
    for d in "$dest"/*/; do
        if [ -f "$d$marker" ] && [ -f "${d}src/common/prep.h" ]; then
            echo "${d%/}"
            return 0
        fi
    done
    return 1
}

if tree=$(find_tree); then
    echo "slurm-source: using cached $srcpkg $version" >&2
    echo "$tree"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "Slurm $version source is not in $dest; run this script as root once, " \
    "or configure with -DSLURM_SOURCE_DIR=DIR, or build without plugins (-DALLOT_PLUGINS=OFF)"

# A deb-src entry mirroring the distribution's deb entries, unless one exists.
have_src() {
    grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/
}
if ! have_src; then
    src_list=/etc/apt/sources.list.d/debian.sources
    [ -f "$src_list" ] || die "no deb-src entry and no $src_list to copy one from"
    sed -e 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' "$src_list" \
        >/etc/apt/sources.list.d/allot-deb-src.sources
    echo "slurm-source: added /etc/apt/sources.list.d/allot-deb-src.sources" >&2
fi

if ! apt-get source --print-uris -qq "$srcpkg=$version" >/dev/null 2>&1; then
    apt-get update -qq || die "apt-get update failed"
fi

work=$(mktemp -d "$cache_root.tmp.XXXXXX" 2>/dev/null) || {
    mkdir -p "$(dirname "$cache_root")"
    work=$(mktemp -d "$cache_root.tmp.XXXXXX")
}
chmod 0755 "$work" # apt's _apt user downloads into it
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -qq "$srcpkg=$version" >&2) ||
    die "apt-get source $srcpkg=$version failed (is a deb-src entry for this release reachable?)"

mkdir -p "$cache_root"
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
chmod 0755 "$dest"

tree=$(find_tree) || die "unpacked $srcpkg $version but found no $marker under $dest"
grep -q "^ *Version:[[:space:]]*${upstream%.*}" "$tree/META" 2>/dev/null ||
    echo "slurm-source: warning: $tree/META does not name version $upstream" >&2
echo "$tree"
