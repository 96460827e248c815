#!/bin/sh
# workload.trace.models through the CLI (docs/traces.md#model-profiles): with physics on,
# a trace without model profiles gives one warning on stderr and in results.json; shares
# assign profiles (and silence it); an unknown model name is an error naming the row.
# The fixtures are written here (a few hand-made rows).
# Usage: trace_models.sh SCHEDSIM WORKDIR
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
ok() { echo "ok: $1"; }

cat >t.csv <<'EOF'
job_id,submit_time_s,num_gpus,duration_s
a,0,1,600
b,60,2,1200
c,120,8,3600
d,180,4,900
EOF
cat >m.csv <<'EOF'
job_id,submit_time_s,num_gpus,duration_s,model
a,0,1,600,resnet50
b,60,2,1200,gpt2
EOF
cluster='seed: 3
cluster: {nodes: [{count: 2, type: H100-SXM, devices_per_node: 8}]}
physics: {}
policy: fifo'
printf '%s\nworkload: {trace: t.csv}\n' "$cluster" >plain.yaml
printf '%s\nworkload: {trace: {path: t.csv, models: {ResNet-50: 0.5, GPT-2-1.5B: 0.5}}}\n' "$cluster" >shares.yaml
printf '%s\nworkload: {trace: m.csv}\n' "$cluster" >unknown.yaml
printf '%s\nworkload: {trace: {path: m.csv, models: [{trace_model: gpt2, model: GPT-2-1.5B}]}}\n' "$cluster" >mapped.yaml

warning="schedsim: warning: t.csv: 4 of 4 jobs (100.0%) have no workload profile, so the physics model runs them at rate 1 on every device type; assign profiles with workload.trace.models (shares such as {ResNet-50: 0.5, BERT-large: 0.5}, or rules by GPU count and duration) (docs/traces.md#model-profiles)"
"$cli" run plain.yaml --quiet --out out_plain >stdout.txt 2>stderr.txt
status=$?
got=$(cat stderr.txt)
if [ "$status" = 0 ] && [ "$got" = "$warning" ]; then ok "plain trace: one warning on stderr"; else fail "plain trace: status $status, stderr: $got"; fi
if grep -q '"warnings": \[' out_plain/results.json && grep -q '"t.csv: 4 of 4 jobs (100.0%) have no workload profile' out_plain/results.json; then
  ok "plain trace: the warning is in results.json"
else
  fail "plain trace: results.json has no such warning"
fi

"$cli" run shares.yaml --quiet --out out_shares >stdout.txt 2>stderr.txt
status=$?
if [ "$status" = 0 ] && [ ! -s stderr.txt ]; then ok "shares: no warning"; else fail "shares: status $status, stderr: $(cat stderr.txt)"; fi
if grep -q '"warnings": \[\]' out_shares/results.json && grep -q '"models": {' out_shares/results.json; then
  ok "shares: the resolved config has workload.trace.models"
else
  fail "shares: results.json lacks the resolved models or has warnings"
fi
"$cli" run shares.yaml --quiet --out out_shares2 >/dev/null 2>&1
if cmp -s out_shares/jobs.csv out_shares2/jobs.csv; then ok "shares: same seed, same jobs.csv"; else fail "shares: two runs differ"; fi

error="schedsim: error: m.csv:3: job 'b': unknown workload profile 'gpt2' (did you mean 'gpt2-xl'?); known workload profiles: ResNet-50, BERT-large, GPT-2-1.5B, LLaMA-2-7B, LLaMA-2-70B, DLRM, StableDiffusion-UNet; names match ignoring case, '-', '_' and spaces, and aliases work too; with the physics model on every model name needs a profile: map it with a rule under workload.trace.models (e.g. - {trace_model: gpt2, model: GPT-2-1.5B}) or define it under workload_profiles"
"$cli" run unknown.yaml --quiet --out out_unknown >stdout.txt 2>stderr.txt
status=$?
got=$(cat stderr.txt)
if [ "$status" = 1 ] && [ "$got" = "$error" ]; then ok "unknown model: exit 1 and the message"; else fail "unknown model: status $status, stderr: $got"; fi
if [ ! -e out_unknown/results.json ]; then ok "unknown model: no results.json"; else fail "unknown model: a results.json was written"; fi

"$cli" run mapped.yaml --quiet --out out_mapped >stdout.txt 2>stderr.txt
status=$?
if [ "$status" = 0 ] && [ ! -s stderr.txt ]; then ok "mapped model: runs without warning"; else fail "mapped model: status $status, stderr: $(cat stderr.txt)"; fi

[ "$failures" = 0 ] && echo "trace_models: all passed"
exit "$failures"
