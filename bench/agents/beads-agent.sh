#!/bin/sh
# Benchmark agent, beads mode: closes the next task of the epic and answers like a real claude run.
# Appends "<start ns> <end ns>" to $BENCH_AGENT_TIMES. The tasks form a chain ws-9w6.2 … ws-9w6.(N+1).
start=$(date +%s%N)
n=$(cat "$BENCH_STATE" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$BENCH_STATE"
bd close "ws-9w6.$((n + 1))" --reason "done by the bench agent" --json > /dev/null
if [ "$n" -ge "$BENCH_TASKS" ]; then cat "$BENCH_ANSWER_DONE"; else cat "$BENCH_ANSWER"; fi
echo "$start $(date +%s%N)" >> "$BENCH_AGENT_TIMES"
