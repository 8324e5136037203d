#!/bin/sh
# Benchmark agent, Spec Kit mode: ticks the first open checkbox of tasks.md and answers like claude.
# Appends "<start ns> <end ns>" to $BENCH_AGENT_TIMES.
start=$(date +%s%N)
sed -i '0,/- \[ \] T/s//- [x] T/' "$BENCH_TASKS_FILE"
if grep -q -- '- \[ \] T' "$BENCH_TASKS_FILE"; then cat "$BENCH_ANSWER"; else cat "$BENCH_ANSWER_DONE"; fi
echo "$start $(date +%s%N)" >> "$BENCH_AGENT_TIMES"
