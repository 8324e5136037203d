#!/bin/sh
# Benchmark agent that never makes progress: closes nothing, changes nothing, and answers like a real
# claude run that says it worked. Appends "<start ns> <end ns>" to $BENCH_AGENT_TIMES.
start=$(date +%s%N)
cat "$BENCH_ANSWER"
echo "$start $(date +%s%N)" >> "$BENCH_AGENT_TIMES"
