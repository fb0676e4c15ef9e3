#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# format-check.sh - fail when a tracked C file differs from what clang-format makes of it.
#
# The tree is formatted with Debian 12's clang-format (14) and .clang-format at the top;
# another clang-format version may format a few constructs differently, so the check uses
# the version Debian 12 ships and installs it (as root) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "format-check: clang-format is not installed (apt-get install clang-format)" >&2
        exit 1
    fi
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        clang-format >/dev/null
fi

mapfile -t files < <(git ls-files '*.c' '*.h')
bad=$(clang-format --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning:.*/\1/p' |
    sort -u)
if [ -n "$bad" ]; then
    echo "format-check: these files differ from clang-format's output:" >&2
    echo "$bad" | sed 's/^/  /' >&2
    echo "format-check: fix with: git ls-files '*.c' '*.h' | xargs clang-format -i" >&2
    exit 1
fi
echo "format-check: ${#files[@]} C files formatted"
