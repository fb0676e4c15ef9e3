# SPDX-License-Identifier: GPL-3.0-or-later
# 35-step.sh - allot-step for the scripts that test it: the programs, the monitor's options
# in a real Slurm allocation, and a step's verdict in a batch script (t3510, t3511) where
# each step writes NAME.json and then echoes "NAME=<its exit code>" into job.out.
#
# STEP, PROG       allot-step and its test program (allot-step-testprog) in this build.
# STEP_OPTS        the monitor's options for a step in Slurm: 1 s samples, sacct tried 15
#                  times a second apart, 20 s for each helper command.
# step_verdict NAME STATUS CODE  print NAME.json; its result has that status and return
#                                code, and the batch script saw allot-step exit with CODE.

STEP="$ALLOT_BUILD_DIR/src/step/allot-step"
PROG="$ALLOT_BUILD_DIR/src/step/allot-step-testprog"
STEP_OPTS="--interval-ms 1000 --sacct-tries 15 --sacct-delay-ms 1000 --helper-timeout-ms 20000"

step_verdict() {
    jq . "$1.json" &&
        test "$(jq -r .result.status "$1.json")" = "$2" &&
        test "$(jq -r .result.return_code "$1.json")" = "$3" &&
        grep -x "$1=$3" job.out
}
