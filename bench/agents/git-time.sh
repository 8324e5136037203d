#!/bin/sh
# Benchmark shim for git that times every call: appends "<start ns> <end ns> <exit code> <cwd> <arguments>"
# to BENCH_GIT_CALLS after running the real git (BENCH_REAL_GIT). For profiling runs only, never timed ones:
# it costs a shell and two `date` per call.
start=$(date +%s%N)
"$BENCH_REAL_GIT" "$@"
code=$?
printf '%s %s %s %s %s\n' "$start" "$(date +%s%N)" "$code" "$PWD" "$*" >> "$BENCH_GIT_CALLS"
exit $code
