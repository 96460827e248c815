#!/bin/bash
# `schedsim completion bash|zsh` (issue 29): the bash script installs a completion for
# schedsim, and the subcommands it offers at each level are those of --help.
# Usage: completion.sh SCHEDSIM
set -u
exe=$1
fail=0
subcommands() {  # the names listed under "Subcommands:" in the help of "$@"
  "$exe" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' | sort | tr '\n' ' '
}
offered() {  # what the completion offers after the words "$@" and an empty current word
  COMP_WORDS=(schedsim "$@" "")
  COMP_CWORD=${#COMP_WORDS[@]}
  COMP_CWORD=$((COMP_CWORD - 1))
  COMPREPLY=()
  _schedsim
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
source <("$exe" completion bash) || { echo "FAIL: the bash script does not source"; exit 1; }
spec=$(complete -p schedsim)
[ "$spec" = "complete -o filenames -F _schedsim schedsim" ] || { echo "FAIL: complete -p schedsim: '$spec'"; fail=1; }
for words in "" trace ledger; do
  want=$(subcommands $words)
  got=$(offered $words)
  [ "$want" = "$got" ] || { echo "FAIL: after 'schedsim $words': offered '$got', --help lists '$want'"; fail=1; }
done
# Options after a dash, at the right level (the option is not offered elsewhere).
COMP_WORDS=(schedsim run --se); COMP_CWORD=2; _schedsim
[ "${COMPREPLY[*]}" = "--set --seed" ] || { echo "FAIL: 'schedsim run --se': '${COMPREPLY[*]}'"; fail=1; }
COMP_WORDS=(schedsim trace sample --lo); COMP_CWORD=3; _schedsim
[ "${COMPREPLY[*]}" = "--load-scale" ] || { echo "FAIL: 'schedsim trace sample --lo': '${COMPREPLY[*]}'"; fail=1; }
# zsh: no zsh on the test machines; the script lists the same levels and ends with compdef.
zsh_script=$("$exe" completion zsh)
case "$zsh_script" in "#compdef schedsim"*) ;; *) echo "FAIL: the zsh script does not start with #compdef schedsim"; fail=1 ;; esac
echo "$zsh_script" | grep -q 'compdef _schedsim schedsim' || { echo "FAIL: the zsh script does not register _schedsim"; fail=1; }
echo "$zsh_script" | grep -qF '"/trace") subs=(inspect convert sample cluster-from formats)' || { echo "FAIL: zsh: trace's subcommands"; fail=1; }
if command -v zsh >/dev/null; then echo "$zsh_script" | zsh -n || { echo "FAIL: zsh -n"; fail=1; }; fi
# An unknown shell is a usage error.
out=$("$exe" completion fish 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "FAIL: completion fish: exit $rc: $out"; fail=1; }
[ $fail -eq 0 ] && echo "ok: bash completion matches --help at every level tried"
exit $fail
