#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# symbols.sh LIB: liballot.so must export allot_* symbols only (liballot.map), and the
# public entry points must be there.
lib=$1
nm -D --defined-only "$lib" | awk '{print $3}' >syms.txt || exit 1
if grep -v '^allot_' syms.txt; then
    echo "symbols.sh: $lib exports names outside allot_*" >&2
    exit 1
fi
for s in allot_client_create allot_request allot_job_admit allot_job_settle allot_errorf; do
    grep -qx "$s" syms.txt || { echo "symbols.sh: $s missing" >&2; exit 1; }
done
echo "ok: $(wc -l <syms.txt) symbols, all allot_*"
