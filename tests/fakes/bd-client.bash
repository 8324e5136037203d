# The fake bd, called through the run's bd server (tests/fakes/bd-server.mjs): sourced by the `bd` that
# makeSandbox writes into a sandbox's bin, which sets FAKE_BD_SCRIPT to tests/fakes/bd first. The call
# costs this bash process instead of a node start, and runs the same code as `node tests/fakes/bd`.
# With no server (FAKE_BD_SERVER unset or unreachable, as inside a sandbox without network), or when the
# call needs a process of its own (FAKE_BD_DELAY_MS), it runs `node tests/fakes/bd` instead.
# Every variable the fake reads is in fake_bd_names: the server fails a call that reads another one.
fake_bd_names=(FAKE_BD_VERSION FAKE_BD_LOG FAKE_BD_FAIL FAKE_BD_GARBAGE FAKE_BD_DELAY_MS FAKE_BD_NOW FAKE_BD_SERVERS FAKE_BD_LEASE_TTL_MS BD_JSON_ENVELOPE BD_ACTOR BEADS_ACTOR BD_ALLOW_REMOTE_MIGRATE CLAUDE_CODE BD_AGENT_MODE BEADS_DIR BEADS_DOLT_SERVER_MODE BEADS_DOLT_SERVER_HOST BEADS_DOLT_SERVER_PORT BEADS_DOLT_SERVER_DATABASE)
if [[ -n ${FAKE_BD_SERVER-} && -z ${FAKE_BD_DELAY_MS-} ]] && { exec 3<>"/dev/tcp/127.0.0.1/${FAKE_BD_SERVER%%:*}"; } 2>/dev/null; then
  fake_bd_base=${TMPDIR:-/tmp}/fake-bd-$$
  # The answer comes back through these two files: opened now, read through the descriptors once the
  # server wrote them and removed their names.
  if { exec 4<>"$fake_bd_base.out" 5<>"$fake_bd_base.err"; } 2>/dev/null; then
    fake_bd_env=()
    for fake_bd_name in "${fake_bd_names[@]}"; do
      if [[ -v $fake_bd_name ]]; then fake_bd_env+=("$fake_bd_name=${!fake_bd_name}"); else fake_bd_env+=("$fake_bd_name"); fi
    done
    # The physical working directory, as process.cwd() gives it.
    builtin cd -P . 2>/dev/null
    printf '%s\0' "${FAKE_BD_SERVER#*:}" "$fake_bd_base.out" "$fake_bd_base.err" "$PWD" "$#" "$@" "${#fake_bd_env[@]}" "${fake_bd_env[@]}" >&3
    IFS= read -r -d '' fake_bd_code <&3
    if [[ $fake_bd_code =~ ^[0-9]+$ ]]; then
      IFS= read -r -d '' fake_bd_out <&4
      IFS= read -r -d '' fake_bd_err <&5
      printf '%s' "$fake_bd_err" >&2
      printf '%s' "$fake_bd_out"
      exit "$fake_bd_code"
    fi
    echo "fake bd: the bd server at 127.0.0.1:${FAKE_BD_SERVER%%:*} gave no answer" >&2
    exit 2
  fi
  exec 3>&-
fi
exec node "$FAKE_BD_SCRIPT" "$@"
