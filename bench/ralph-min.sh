#!/usr/bin/env bash
# The classic ralph.sh loop, cut to its bones, as the benchmark's yardstick:
#   query the task source, run the agent on the prompt, commit (PRD mode), look for the token, log a line.
# Usage: ralph-min.sh beads|speckit|prd MAX_ITERATIONS
# Reads BENCH_EPIC (beads), BENCH_TASKS_FILE (speckit), BENCH_PRD_FILE (prd) from the environment.
set -u
mode=$1
max=$2
logs=.ralph-min
mkdir -p "$logs"
# The loop's own logs stay out of its commits, as ralph's .ralph/ does.
[ "$mode" = prd ] && echo "/$logs/" >> "$(git rev-parse --git-path info/exclude)"
log() { printf '%(%Y-%m-%d %H:%M:%S)T %s\n' -1 "$1" >> "$logs/ralph-min.log"; }

for ((i = 1; i <= max; i++)); do
  case $mode in
    beads) next=$(bd ready --parent "$BENCH_EPIC" --limit 0 --json | jq -r '[.[] | select(.issue_type != "epic")][0].id // empty') ;;
    speckit) next=$(grep -m1 -o -- '- \[ \] T[0-9]*' "$BENCH_TASKS_FILE") ;;
    prd) next=$(jq -r '[.userStories[] | select(.passes != true)] | sort_by(.priority) | .[0].id // empty' "$BENCH_PRD_FILE") ;;
    *) echo "ralph-min.sh: unknown mode $mode" >&2; exit 1 ;;
  esac
  if [ -z "$next" ]; then
    log "no task left"
    exit 0
  fi
  out="$logs/iteration-$i.jsonl"
  printf '%s' "${PROMPT:-/sp:next}" | claude -p --output-format stream-json --verbose --dangerously-skip-permissions > "$out" 2>&1
  # PRD mode commits each iteration's work, as ralph does there by default: the same git work on both sides.
  if [ "$mode" = prd ]; then git add -A && git commit -q -m "ralph-min: $next" > /dev/null; fi
  if grep -q '<promise>COMPLETE</promise>' "$out"; then
    log "iteration $i: $next: complete"
    exit 0
  fi
  log "iteration $i: $next"
done
log "iteration limit $max reached"
exit 2
