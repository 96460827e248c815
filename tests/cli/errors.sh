#!/bin/sh
# docs/errors.md must match what the CLI does: runs schedsim for an example of each class
# of error and checks the exact message (stderr) and exit status. Internal errors
# (status 3) cannot be caused from the command line: tests/app/test_cli_errors.cpp
# checks their message and status.
# Usage: errors.sh SCHEDSIM WORKDIR
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
esc=$(printf '\033')
cr=$(printf '\r')

# expect STATUS STDERR ARGS...: schedsim ARGS exits with STATUS and prints exactly STDERR.
expect() {
  want_status=$1
  want=$2
  shift 2
  "$cli" "$@" >stdout.txt 2>stderr.txt
  status=$?
  got=$(cat stderr.txt)
  if [ "$status" = "$want_status" ] && [ "$got" = "$want" ]; then
    printf "ok: schedsim %s -> %s\n" "$*" "$status" | cat -v
  else
    printf "FAIL: schedsim %s\n" "$*" | cat -v
    echo "  status $status, want $want_status"
    echo "  stderr: $got"
    echo "  want:   $want"
    failures=$((failures + 1))
  fi
}

check() {  # check DESCRIPTION COMMAND...: COMMAND must succeed
  description=$1
  shift
  if "$@"; then echo "ok: $description"; else echo "FAIL: $description"; failures=$((failures + 1)); fi
}

run_hint="schedsim: hint: run 'schedsim run --help' for the options"
# The registry as `schedsim policies` lists it (with LibTorch it ends in rl).
registered=$("$cli" policies | grep -v '^[[:space:]]' | grep -v '^$' | tr '\n' ',' | sed 's/,$//; s/,/, /g')

# 0: success.
expect 0 "" policies
expect 0 "" --version

# 1: bad input (InputError).
expect 1 "schedsim: error: /nonexistent/scenario.yaml: cannot open the config file (does it exist?)" run /nonexistent/scenario.yaml --out o
expect 1 "schedsim: error: --set policy=fifoo: unknown policy 'fifoo' (did you mean 'fifo'?); registered policies: $registered (see \`schedsim policies\`)" \
  run --set policy=fifoo --out o
# compare checks every name before the first run: nothing of fifo's run is left behind.
expect 1 "schedsim: error: --policies: unknown policy 'sjff' (did you mean 'sjf'?); registered policies: $registered (see \`schedsim policies\`)" \
  compare --quiet --policies fifo,sjff --set workload.synthetic.num_jobs=5 --out cmp
check "compare with a misspelt policy wrote nothing" test ! -e cmp

# 1: a policy asked for something it cannot have (PolicyError).
expect 1 "schedsim: policy error: policy 'carbon-aware' needs a carbon signal: add signals.carbon to the scenario (docs/energy.md)" \
  run --quiet --set policy=carbon-aware --set workload.synthetic.num_jobs=5 --out o

# 2: the command line (CLI11's parse errors in the house style, and repeated options).
expect 2 "schedsim: error: --seed: expected an integer, got 'abc'
$run_hint" run --seed abc
expect 2 "schedsim: error: --seed: must be an integer in 0..9223372036854775807 (2^63-1), got '-5'
$run_hint" run --seed=-5
expect 2 "schedsim: error: --seed: must be an integer in 0..9223372036854775807 (2^63-1), got '99999999999999999999'
$run_hint" run --seed 99999999999999999999
# Integers on the command line follow the config's rule: no leading zeros (CLI11 alone reads 010 as octal 8).
expect 2 "schedsim: error: --jobs: '010' has a leading zero (octal in YAML 1.1); write 10
schedsim: hint: run 'schedsim bench --help' for the options" bench --jobs 010 kernel
expect 2 "schedsim: error: --gpus: '0x10' is not a decimal integer (hexadecimal prefixes are not read); write 16
schedsim: hint: run 'schedsim bench --help' for the options" bench --gpus 0x10 kernel
expect 2 "schedsim: error: 'schedsim run' has no option '--sed' (did you mean '--seed'?)
$run_hint" run --sed 5
expect 2 "schedsim: error: 'schedsim run' has no option '--policies' (it is an option of 'schedsim compare' and 'schedsim bench' and 'schedsim report')
$run_hint" run --policies fifo
expect 2 "schedsim: error: --seed: given more than once; give it once (of the options of 'schedsim run', only --set may be repeated)
$run_hint" run --seed 1 --set seed=2 --seed 3
expect 2 "schedsim: error: --quiet: given more than once; give it once (of the options of 'schedsim run', only --set may be repeated)
$run_hint" run -q --quiet
expect 2 "schedsim: error: --policies: given more than once; give it once (of the options of 'schedsim compare', only --set and --policy may be repeated)
schedsim: hint: run 'schedsim compare --help' for the options" compare --policies fifo --policies sjf
expect 2 "schedsim: error: 'schedsim trace' has no option '--formats' (did you mean the command 'schedsim trace formats'?)
schedsim: hint: run 'schedsim trace --help' for the options" trace --formats
expect 0 "" run --quiet --quiet --help  # the help wins
expect 2 "schedsim: error: unknown command 'rnu' (did you mean 'run'?); the commands are: run, compare, policies, trace, bench, sweep, report, default-config, train, rl-bench, eval, ledger, advise, plan, serve, init, completion
schedsim: hint: run 'schedsim --help' for what each command does" rnu
expect 2 "schedsim: error: 'schedsim' needs a command: run, compare, policies, trace, bench, sweep, report, default-config, train, rl-bench, eval, ledger, advise, plan, serve, init, completion
schedsim: hint: run 'schedsim --help' for what each command does"
expect 2 "schedsim: error: unknown command 'trace inpsect' (did you mean 'trace inspect'?); the trace commands are: inspect, convert, sample, cluster-from, formats
schedsim: hint: run 'schedsim trace --help' for what each command does" trace inpsect x.csv
expect 2 "schedsim: error: 'schedsim trace inspect' needs its file argument (trace file (plain or gzip))
schedsim: hint: run 'schedsim trace inspect --help' for the options" trace inspect
expect 2 "schedsim: error: --on-bad-row: 'skp' is not allowed (did you mean 'skip'?); choose one of: error, skip
schedsim: hint: run 'schedsim trace inspect --help' for the options" trace inspect x.csv --on-bad-row skp
expect 2 "schedsim: error: --out: needs a value (output folder)
$run_hint" run --out
expect 2 "schedsim: error: unexpected argument 'b.yaml' ('schedsim run' takes only: config)
$run_hint" run a.yaml b.yaml
expect 2 "schedsim: error: --fraction: expected a number, got 'half'
schedsim: hint: run 'schedsim trace sample --help' for the options" trace sample x.csv --fraction half
expect 2 "schedsim: error: --snapshot: applies only with --snapshot-every
$run_hint" run --quiet --snapshot s.bin --set workload.synthetic.num_jobs=5 --out o

# Control characters in user text are escaped in messages and terminal tables.
expect 1 "schedsim: error: /nonexistent/\\x1b[31mred\\r.yaml: cannot open the config file (does it exist?)" run "/nonexistent/${esc}[31mred${cr}.yaml"
printf 'job_id,submit_time_s,duration_s,num_gpus\na\033[2J,0,10,16\n' >jobs.csv
printf 'cluster: {nodes: [{count: 1, type: V100, devices_per_node: 8}]}\nworkload: {trace: {path: jobs.csv}}\n' >big.yaml
expect 1 "schedsim: error: jobs.csv:2: job 'a\\x1b[2J': asks for 16 GPUs but the cluster has 8 in total; enlarge the cluster or set workload.oversized: drop to skip such jobs" \
  run big.yaml --out o
cp jobs.csv "t${esc}[31m.csv"
expect 0 "" trace inspect "t${esc}[31m.csv"
check "trace inspect escapes the file name" test "$(head -n 1 stdout.txt)" = 't\x1b[31m.csv (format schedsim)'

# 128 + N: stopped by a signal (SIGTERM: 143), with what was done kept.
"$cli" run --quiet --set workload.synthetic.num_jobs=5000000 --out big >/dev/null 2>stderr.txt &
pid=$!
sleep 2
kill -TERM "$pid"
wait "$pid"
status=$?
case "$(cat stderr.txt)" in
  "schedsim: interrupted by SIGTERM at simulated time "*) message=ok ;;
  *) message=bad ;;
esac
check "SIGTERM: status 143 ($status) and the interrupted message ($(cat stderr.txt))" test "$status" = 143 -a "$message" = ok

if [ "$failures" -ne 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "all passed"
