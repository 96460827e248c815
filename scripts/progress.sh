# Sourced by scripts/run_default.sh: one short progress line per phase instead of the raw
# package-manager and compiler output, which goes to a log file the line names. On a
# terminal the line updates in place; otherwise (CI, Slurm, a pipe) a plain line is
# printed every SCHEDSIM_PROGRESS_INTERVAL_S seconds (default 10). On failure the last
# 30 lines (SCHEDSIM_LOG_TAIL_LINES) of the log are printed with its path.
# SCHEDSIM_VERBOSE=1 prints the raw output as well (it is still copied to the log).

# "7 s", "3m05s"
progress_format_s() {
  local s=$1
  if [ "$s" -lt 60 ]; then printf '%d s' "$s"; else printf '%dm%02ds' $((s / 60)) $((s % 60)); fi
}

# The status a log line gives, or nothing: ninja's "[N/M]" step counter, the lines
# setup.sh prints when it installs something, and CMake's configure step.
progress_status_of() {
  local line=$1
  if [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\  ]]; then
    local n=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
    printf '%s/%s (%d%%)' "$n" "$m" $((100 * n / m))
  elif [[ $line == "schedsim setup: "* ]]; then
    printf '%s' "${line#schedsim setup: }"
  elif [[ $line == "-- "* ]]; then
    printf 'configuring'
  fi
}

# Reads the phase's output on stdin, writes it to LOG (fd 3), shows the status on stderr.
# Plain if-statements (no `test && action`): this runs in a pipeline's subshell, where
# errexit may or may not be in force.
progress_filter() {
  local label=$1 status=$2 log=$3 tty=0 verbose=0 line partial="" s elapsed last_print=$SECONDS
  if [ -t 2 ]; then tty=1; fi
  if [ "${SCHEDSIM_VERBOSE:-0}" = 1 ]; then verbose=1; tty=0; fi
  if [ "$tty" = 1 ]; then printf '%s: %s' "$label" "$status" >&2; fi
  # Wakes up every second without input, so that the elapsed time moves during a long
  # link step or download; a line cut by that timeout is put back together.
  while :; do
    if IFS= read -r -t 1 line; then
      line="$partial$line"
      partial=""
    elif [ $? -gt 128 ]; then
      partial="$partial$line"
      line=""
    else
      line="$partial$line"
      if [ -n "$line" ]; then printf '%s\n' "$line" >&3; fi
      if [ -n "$line" ] && [ "$verbose" = 1 ]; then printf '%s\n' "$line" >&2; fi
      break
    fi
    if [ -n "$line" ]; then
      printf '%s\n' "$line" >&3
      if [ "$verbose" = 1 ]; then printf '%s\n' "$line" >&2; fi
      s=$(progress_status_of "$line")
      if [ -n "$s" ]; then status=$s; fi
    fi
    if [ "$verbose" = 1 ]; then continue; fi
    elapsed=$(progress_format_s $((SECONDS - progress_start_s)))
    if [ "$tty" = 1 ]; then
      printf '\r\033[K%s: %s, %s' "$label" "$status" "$elapsed" >&2
    elif [ $((SECONDS - last_print)) -ge "${SCHEDSIM_PROGRESS_INTERVAL_S:-10}" ]; then
      printf '%s: %s, %s\n' "$label" "$status" "$elapsed" >&2
      last_print=$SECONDS
    fi
  done 3>>"$log"
  if [ "$tty" = 1 ]; then printf '\r\033[K' >&2; fi
  return 0
}

# phase_run LABEL FIRST_STATUS LOG COMMAND...: runs COMMAND with its stdout and stderr
# going to LOG (overwritten), prints "LABEL: ok (TIME)" or, when it fails, "LABEL: failed"
# with the exit status, the last lines of LOG and its path; returns COMMAND's status.
phase_run() {
  local label=$1 first=$2 log=$3 rc=0
  shift 3
  mkdir -p "$(dirname "$log")"
  : >"$log"
  progress_start_s=$SECONDS
  if [ ! -t 2 ] || [ "${SCHEDSIM_VERBOSE:-0}" = 1 ]; then
    printf '%s: %s (log: %s)\n' "$label" "$first" "$log" >&2
  fi
  { "$@" 2>&1 </dev/null | progress_filter "$label" "$first" "$log"; rc=${PIPESTATUS[0]}; } || true
  local elapsed
  elapsed=$(progress_format_s $((SECONDS - progress_start_s)))
  if [ "$rc" -ne 0 ]; then
    printf '%s: failed (exit status %d after %s); the last %d lines of %s:\n' \
      "$label" "$rc" "$elapsed" "${SCHEDSIM_LOG_TAIL_LINES:-30}" "$log" >&2
    tail -n "${SCHEDSIM_LOG_TAIL_LINES:-30}" "$log" | sed 's/^/  | /' >&2
    printf '%s: full log: %s\n' "$label" "$log" >&2
    return "$rc"
  fi
  local warnings
  warnings=$(grep -cE '^[^ ]+:[0-9]+:([0-9]+:)? warning: ' "$log" || true)
  if [ "$warnings" -gt 0 ]; then
    printf '%s: ok (%s; %d compiler warnings, see %s)\n' "$label" "$elapsed" "$warnings" "$log" >&2
  else
    printf '%s: ok (%s; log: %s)\n' "$label" "$elapsed" "$log" >&2
  fi
}
