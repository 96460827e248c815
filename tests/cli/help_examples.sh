#!/bin/sh
# Every subcommand's --help (found from the "Subcommands:" sections of --help, at every
# level) ends with examples (issue 29). Usage: help_examples.sh SCHEDSIM
set -u
exe=$1
fail=0
count=0
subcommands() {  # the names listed under "Subcommands:" in the help of "$@"
  "$exe" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}
check() {
  count=$((count + 1))
  if ! "$exe" "$@" --help | grep -q '^Examples:$'; then
    echo "FAIL: 'schedsim $* --help' has no Examples: section"
    fail=1
  fi
  for sub in $(subcommands "$@"); do check "$@" "$sub"; done
}
for top in $(subcommands); do check "$top"; done
[ "$count" -ge 20 ] || { echo "FAIL: only $count subcommands found"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $count subcommands have examples"
exit $fail
