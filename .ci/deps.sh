#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# deps.sh - install every Debian package allot's build and tests need (run as root).
# Idempotent and quiet; one apt-get line per concern so each dependency says why it is here.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y -q --no-install-recommends "$@" >/dev/null; }

if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: must run as root (apt-get)" >&2
    exit 1
fi
apt-get update -q >/dev/null

# Build toolchain and the test runners (cmocka unit tests, sharness integration scripts).
apt_install build-essential cmake pkg-config libcmocka-dev sharness perl curl procps iproute2
# The integration tests' helpers (JSON checks, HTTP clients, load scripts) are Python 3;
# t0100 and t1015 read doc/openapi.yaml with PyYAML; t1000 reads /metrics with the
# Prometheus client library's text-format parser (tests/lib/prom_check.py).
apt_install python3 python3-yaml python3-prometheus-client
# Storage: SQLite (embedded default) and PostgreSQL (client library and a server for tests).
apt_install libsqlite3-dev sqlite3 libpq-dev postgresql
# allotd: HTTP server, JSON, MUNGE authentication; liballot: HTTP client.
apt_install libmicrohttpd-dev libjansson-dev munge libmunge-dev libcurl4-openssl-dev
# Memory checking of the daemon's tests; clock jumps in policy tests; syscall order of the
# durable-reply test (t6010).
apt_install valgrind faketime strace
# Slurm integration (tests/sharness.d/30-slurm.sh, src/plugins): a real single-node cluster
# (slurmctld, slurmd, slurmdbd on MariaDB, munge) and libslurm's public headers; dpkg-dev
# lets .ci/slurm-source.sh unpack the matching Slurm source for the PrEp plugin's headers.
apt_install slurm-wlm slurmctld slurmd slurmdbd slurm-client libslurm-dev munge mariadb-server \
    mariadb-client dpkg-dev
# The man pages are rendered and checked with man-db and groff (t0210).
apt_install man-db groff-base bsdextrautils
# Slurm 24.11 built from Debian 13's source for the second end-to-end set
# (.ci/slurm-build.sh): MariaDB's client library for accounting_storage/mysql (the rest of
# what that build needs, munge and the toolchain, is above).
apt_install libmariadb-dev
# allotd tells systemd when it is ready (sd_notify, Type=notify).
apt_install libsystemd-dev
# The Debian packages (debian/, t0210): Debian's packaging tools and lintian.
apt_install debhelper devscripts lintian
# allot-step's integration tests read its JSON record with jq.
apt_install jq
# .ci/format-check.sh compares every C file with clang-format's output.
apt_install clang-format
# The web dashboard's browser test (t1065) renders the page in headless Chromium.
apt_install chromium
