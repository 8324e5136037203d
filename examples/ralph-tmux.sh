#!/usr/bin/env bash
# Starts ralph in a detached tmux session: the run in the top pane, `ralph status --watch` below it and
# `ralph serve` (the live page) beside that. Steer it from any shell in the repo: ralph pause, ralph
# unpause, ralph stop (after the current iteration), ralph stop --now.
#
#   examples/ralph-tmux.sh [SESSION] [RALPH OPTIONS…]     (run from your project's repository)
#   tmux attach -t SESSION                                  (watch; detach again with Ctrl+B d)
#
# SESSION defaults to "ralph". ralph starts as `node RALPH_HOME/bin/ralph.mjs` (RALPH_HOME: the folder
# above this script), which loads tsx from ralph's own node_modules, so it works from any repository,
# offline. RALPH overrides that command (split into words), e.g. RALPH=ralph with an installed `ralph`
# command. RALPH_SERVE_PORT sets the page's port (default 7420; 0 picks a free one). Every pane starts in
# the current folder.
set -euo pipefail

session="${1:-ralph}"
if [[ $# -gt 0 ]]; then shift; fi

if ! command -v tmux >/dev/null 2>&1; then
  echo "ralph-tmux: tmux not found on PATH: install it (apt-get install tmux, brew install tmux)" >&2
  exit 1
fi
if tmux has-session -t "=${session}" 2>/dev/null; then
  echo "ralph-tmux: a tmux session named '${session}' already exists: attach with 'tmux attach -t ${session}' or pick another name" >&2
  exit 1
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ralph_home="${RALPH_HOME:-$(dirname "${here}")}"
if [[ -n "${RALPH:-}" ]]; then
  read -r -a ralph <<<"${RALPH}"
else
  ralph=(node "${ralph_home}/bin/ralph.mjs")
fi

# Each pane runs one shell command line; every word is quoted with printf %q, so nothing in the
# options or paths is interpreted. When the command ends the pane keeps a shell open.
quote() { printf '%q ' "$@"; }
keep_open='code=$?; echo; echo "[exited with ${code}; this pane stays open]"; exec "${SHELL:-/bin/sh}"'
run_cmd="$(quote "${ralph[@]}" "$@"); ${keep_open}"
status_cmd="$(quote "${ralph[@]}" status --watch); ${keep_open}"
serve_port="${RALPH_SERVE_PORT:-7420}"
serve_cmd="$(quote "${ralph[@]}" serve --port "${serve_port}"); ${keep_open}"

tmux new-session -d -s "${session}" -n ralph -c "${PWD}" "${run_cmd}"
tmux split-window -v -l 12 -t "=${session}:ralph" -c "${PWD}" "${status_cmd}"
tmux split-window -h -l 50 -t "=${session}:ralph.1" -c "${PWD}" "${serve_cmd}"
tmux select-pane -t "=${session}:ralph.0"

echo "ralph is running in tmux session '${session}' (in ${PWD})."
echo "  watch:  tmux attach -t ${session}        (detach: Ctrl+B then d)"
if [[ "${serve_port}" != 0 ]]; then echo "  page:   http://127.0.0.1:${serve_port}/   (over SSH: ssh -L ${serve_port}:127.0.0.1:${serve_port} HOST)"; fi
steer="$(quote "${ralph[@]}")"
echo "  steer:  ${steer}pause | ${steer}unpause | ${steer}stop (after this iteration) | ${steer}stop --now   (in ${PWD})"
