#!/usr/bin/env bash
# The README's two commands as a new user runs them: `npm ci && npm test` in a fresh clone of this
# checkout's HEAD, with the Debian tools some tests need hidden (default: chromium and tmux) and, for
# `npm test`, no network at all. Needs root for the private mount and network namespaces (unshare).
#
#   npm run test:fresh                      chromium and tmux hidden
#   npm run test:fresh -- chromium tmux make bwrap
#   HIDE= npm run test:fresh                nothing hidden
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tools=("$@")
if ((${#tools[@]} == 0)); then read -r -a tools <<<"${HIDE-chromium tmux}"; fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ralph-fresh-XXXXXX")"
trap 'rm -rf "$work"' EXIT
git clone -q "$here" "$work/ralph"
cd "$work/ralph"
echo "fresh clone of $(git rev-parse --short HEAD) in $work/ralph"
start=$(date +%s)
npm ci --no-audit --no-fund
echo "npm ci: $(($(date +%s) - start)) s"

# Inside the namespaces: /dev/null is bound over each hidden tool (it is then no executable file, so
# neither `command -v` nor the tests find it), and the only network is the loopback interface, up as on
# any machine (the webhook and `ralph serve` tests talk to their own server on 127.0.0.1).
hide=""
for tool in "${tools[@]}"; do
  for dir in ${PATH//:/ }; do
    [[ -f "$dir/$tool" ]] && hide+="mount --bind /dev/null '$dir/$tool'; "
  done
done
start=$(date +%s)
status=0
unshare --mount --net --propagation private bash -c "ip link set lo up; $hide npm test" || status=$?
echo "npm test: exit $status in $(($(date +%s) - start)) s (hidden: ${tools[*]:-nothing}; no network but loopback)"
changes="$(git status --porcelain --ignored | grep -v '^!! node_modules/$' || true)"
if [[ -n "$changes" ]]; then
  echo "the fresh clone changed after npm test:"
  echo "$changes"
  status=1
fi
exit "$status"
