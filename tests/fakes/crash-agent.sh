#!/usr/bin/env bash
# The crash tests' agent for PRD and Spec Kit prompts, in bash: it does what crash-agent.mjs does for them
# (see there), without a node start (~45 ms of CPU each, a few hundred times a suite). A beads prompt (or
# anything else) goes on to crash-agent.mjs, the same process (exec), its prompt given again.
# Environment: CRASH_AGENT_LOG, CRASH_AGENT_STARTED, CRASH_AGENT_AWAIT, CRASH_AGENT_MS, CRASH_AGENT_DEAF,
# as crash-agent.mjs reads them.
set -u
stdin=$(cat)
prompt="$stdin"$'\n'"$*"

task=
kind=
prd_re='- Task: \*\*([^*]+)\*\*'
if [[ $prompt =~ $prd_re ]]; then
  task=${BASH_REMATCH[1]}
  kind=prd
elif [[ $prompt == *"This iteration's work"* ]]; then
  work=${prompt#*"This iteration's work"}
  speckit_re='(^|[^A-Za-z0-9_])(T[0-9]{3})([^A-Za-z0-9_]|$)'
  if [[ $work =~ $speckit_re ]]; then
    task=${BASH_REMATCH[2]}
    kind=speckit
  fi
fi
if [[ -z $kind ]]; then
  # beads, or a prompt cut short: crash-agent.mjs decides (it does nothing for a prompt naming no task).
  here=$(dirname "$(readlink -f "$0")")
  exec node "$here/crash-agent.mjs" "$@" <<<"$stdin"
fi

# Waits without a process of its own: a read that times out on a pipe nobody writes to.
exec {never}<> <(:)
pause() { read -r -t "$1" -u "$never" _ || true; }

if [[ -n ${CRASH_AGENT_LOG:-} ]]; then
  cwd=${PWD//\\/\\\\}
  printf '{"task":"%s","pid":%d,"cwd":"%s"}\n' "$task" "$$" "${cwd//\"/\\\"}" >>"$CRASH_AGENT_LOG"
fi
[[ -n ${CRASH_AGENT_STARTED:-} ]] && : >"$CRASH_AGENT_STARTED"
if [[ -n ${CRASH_AGENT_AWAIT:-} ]]; then
  for ((tries = 0; tries < 3000; tries += 1)); do
    [[ -e $CRASH_AGENT_AWAIT ]] && break
    pause 0.01
  done
  if [[ ! -e $CRASH_AGENT_AWAIT ]]; then
    echo "crash agent: $CRASH_AGENT_AWAIT never appeared" >&2
    exit 1
  fi
fi

[[ -d work ]] || mkdir work
printf '%s done\n' "$task" >"work/$task.txt"
if [[ $kind == prd && -f prd.json ]]; then
  # `passes: true` on the story with this id (its "passes" comes after its "id", as written); in place.
  updated=$(awk -v id="$task" '
    /"id": / { current = index($0, "\"id\": \"" id "\"") > 0 }
    current && /"passes": false/ { sub(/"passes": false/, "\"passes\": true"); current = 0 }
    { print }' prd.json) && printf '%s\n' "$updated" >prd.json
fi
if [[ $kind == speckit ]]; then
  for file in specs/*/tasks.md; do
    [[ -f $file ]] && sed -i "0,/- \[ \] $task /s//- [X] $task /" "$file"
  done
fi
[[ -n ${CRASH_AGENT_DEAF:-} ]] && trap '' TERM
ms=${CRASH_AGENT_MS:-0}
if ((ms > 0)); then pause "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"; fi
if [[ $kind == prd ]]; then
  text="Done.\\n\\n## Ralph Report\\nStatus: completed\\nSummary: did $task\\nChanges:\\n- work/$task.txt: added\\nQuality:\\n- tests: pass\\nLearnings:\\n- none\\nCommits:\\n- none\\n"
else
  text="Did $task."
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","num_turns":1,"total_cost_usd":0.001}\n' "$text"
