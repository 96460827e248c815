#!/bin/sh
# A market run's ledger verifies; the same ledger with one row's provider edited fails,
# naming that row. Usage: ledger_verify.sh SCHEDSIM CONFIG OUT_DIR
cli=$1
config=$2
out=$3
"$cli" run "$config" --quiet --check-invariants --set workload.synthetic.num_jobs=40 --out "$out" || exit 1
"$cli" ledger verify "$out/ledger.csv" || exit 1
sed '3s/,cloud-a,/,cloud-x,/' "$out/ledger.csv" > "$out/tampered.csv"
cmp -s "$out/ledger.csv" "$out/tampered.csv" && { echo "ledger_verify.sh: row 1 is not cloud-a's"; exit 1; }
"$cli" ledger verify "$out/tampered.csv" 2>&1
status=$?
[ "$status" -eq 0 ] && { echo "ledger_verify.sh: the edited ledger verified"; exit 1; }
echo "tampered: exit status $status"
exit 0
