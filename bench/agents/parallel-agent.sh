#!/bin/sh
# Benchmark agent for --parallel: finds its task in the prompt (stdin), creates a file of its own, ticks its
# Spec Kit checkbox when BENCH_TASKS_REL names the tasks.md, works BENCH_WORK_S seconds, then answers like
# claude with a PRD report. Appends "<start ns> <end ns> <task>" to BENCH_AGENT_TIMES.
start=$(date +%s%N)
prompt=$(cat)
id=$(printf '%s\n' "$prompt" | grep -o -m1 '\*\*US-[0-9]*\*\*' | tr -d '*')
[ -n "$id" ] || id=$(printf '%s\n' "$prompt" | sed -n 's/^\(T[0-9][0-9][0-9]\) .*/\1/p' | head -n 1)
echo "$id" > "work-$id.txt"
if [ -n "$BENCH_TASKS_REL" ]; then sed -i "s/^- \[ \] $id /- [X] $id /" "$BENCH_TASKS_REL"; fi
sleep "${BENCH_WORK_S:-2}"
cat "$BENCH_ANSWER"
echo "$start $(date +%s%N) $id" >> "$BENCH_AGENT_TIMES"
