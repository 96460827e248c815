#!/bin/sh
# `schedsim init DIR` (issue 29): prints the files it wrote and the next command; a second
# time it refuses with the first existing file, exit status 1. Usage: init.sh SCHEDSIM WORKDIR
set -u
exe=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail=0
want="wrote s/synthetic.yaml
wrote s/trace.yaml
wrote s/heterogeneous.yaml
wrote s/sweep.yaml
next: schedsim run s/synthetic.yaml --out results/synthetic
  (each file says what it is for and how to run it; keys: docs/config.md)"
got=$("$exe" init s --data-dir data)
[ "$got" = "$want" ] || { echo "FAIL: init printed:"; echo "$got"; fail=1; }
grep -q '^    path: \.\./data/itp/cluster05.csv$' s/trace.yaml || { echo "FAIL: trace.yaml's path is not relative to s/"; fail=1; }
err=$("$exe" init s 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || { echo "FAIL: second init exit $rc"; fail=1; }
[ "$err" = "schedsim: error: s/synthetic.yaml: already exists; schedsim init never overwrites a file (remove it, or give another folder: schedsim init DIR)" ] ||
  { echo "FAIL: second init said: $err"; fail=1; }
"$exe" run s/synthetic.yaml --out out -q || { echo "FAIL: run s/synthetic.yaml"; fail=1; }
[ -f out/results.json ] || { echo "FAIL: no out/results.json"; fail=1; }
[ $fail -eq 0 ] && echo "ok: init writes, refuses to overwrite, and its synthetic scenario runs"
exit $fail
