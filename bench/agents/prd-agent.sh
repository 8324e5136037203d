#!/bin/sh
# Benchmark agent, PRD mode: marks the first story that does not pass yet as passing, answers like claude.
# Stories are in priority order, so that is the one ralph picked. Appends "<start ns> <end ns>".
start=$(date +%s%N)
sed -i '0,/"passes": false/s//"passes": true/' "$BENCH_PRD_FILE"
if grep -q '"passes": false' "$BENCH_PRD_FILE"; then cat "$BENCH_ANSWER"; else cat "$BENCH_ANSWER_DONE"; fi
echo "$start $(date +%s%N)" >> "$BENCH_AGENT_TIMES"
