#!/bin/sh
# Benchmark agent for the landing queue. A story prompt (`**US-NNN**`): appends its own line to shared.txt
# (every story writes the end of one file: a textual conflict whenever two land at once) when BENCH_SHARED
# is set, else writes a file of its own; works BENCH_WORK_S seconds; answers with a PRD report. A resolve
# prompt ("Resolve a merge conflict"): keeps both sides (drops git's marker lines), like a union merge.
# Appends "<start ns> <end ns> <task or resolve>" to BENCH_AGENT_TIMES.
start=$(date +%s%N)
prompt=$(cat)
if printf '%s\n' "$prompt" | grep -q '^# Resolve a merge conflict'; then
  for file in $(printf '%s\n' "$prompt" | sed -n 's/^Files with conflicts: //p' | tr ',' ' '); do
    sed -i '/^<<<<<<< /d; /^=======$/d; /^>>>>>>> /d' "$file"
  done
  echo '{"type":"result","subtype":"success","is_error":false,"result":"Resolved: both sides kept.","num_turns":1,"total_cost_usd":0.001}'
  echo "$start $(date +%s%N) resolve" >> "$BENCH_AGENT_TIMES"
  exit 0
fi
id=$(printf '%s\n' "$prompt" | grep -o -m1 '\*\*US-[0-9]*\*\*' | tr -d '*')
if [ -n "$BENCH_SHARED" ]; then echo "line of $id" >> shared.txt; else echo "$id" > "work-$id.txt"; fi
sleep "${BENCH_WORK_S:-2}"
cat "$BENCH_ANSWER"
echo "$start $(date +%s%N) $id" >> "$BENCH_AGENT_TIMES"
