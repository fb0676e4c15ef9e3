# SPDX-License-Identifier: GPL-3.0-or-later
# host_conditions.sh - sourced by every bench script: host_conditions BUILD_DIR DIR prints,
# as "# " lines before the bench's own numbers, the host's fdatasync latency in DIR (where
# the bench's database lives), the loopback HTTP floor, the CPU share and the wake-up round
# trip (bench/host_probe, bench/host_cond.h).  Figures compare only beside these lines.
host_conditions() {
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ -x "$1/bench/host_probe" ]; then
        "$1/bench/host_probe" --seconds 1 --dir "$2" | sed 's/^/# /'
    else
        echo "# host: build the host_probe target to see fdatasync latency, HTTP floor, CPU share"
    fi
}
