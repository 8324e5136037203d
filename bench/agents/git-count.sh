#!/bin/sh
# Benchmark shim for git: appends "<ns> <arguments>" to BENCH_GIT_CALLS, then runs the real git
# (BENCH_REAL_GIT). Used only to count the git processes ralph starts, never while timing it.
printf '%s %s\n' "$(date +%s%N)" "$*" >> "$BENCH_GIT_CALLS"
exec "$BENCH_REAL_GIT" "$@"
