#!/usr/bin/env bash
# `credence plan` with 1000 simulated experiments at each of R = 5, 10, 20, 50 on a pilot cell of
# each real table (issue 29): the demo's results, the R package's example study, the five-data-set
# study (written by `cargo test -p credence-cli --test e2e_five_datasets`) and the dataset-shift
# table. Prints each plan's wall time, sampler and fits per R; `--all-sims` as the first argument
# runs all 1000 at every R (the reference for the sequential rule's answers).
#   cargo build --release -p credence-cli && credence demo --out credence-demo   (once)
#   benches/plan_tables.sh [--all-sims]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/credence
demo=${CREDENCE_DEMO_TABLE:-credence-demo/results.csv}
five=target/tmp/e2e-five-datasets/study.csv
extra=("$@")
run() {
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$bin" plan "$@" --r 5,10,20,50 --sims 1000 --backend cpu --quiet --json=- "${extra[@]}" >"/tmp/plan-$name.json"
  end=$(date +%s.%N)
  python3 - "$name" "$start" "$end" "/tmp/plan-$name.json" <<'PY'
import json, sys
name, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
p = json.load(open(path))["plan"]
pts = " ".join(f"R={x['r']}: {x['assurance']:.3f}+-{x['assurance_mcse']:.3f} ({x['fits']} fits, {x['refit']} refit, {x['unclean']} unclean)" for x in p["points"])
print(f"{name:6} {float(end) - float(start):6.1f} s  {p['sampler']:5} smallest R {p['smallest_r']}  {pts}")
PY
}
run demo "$demo" --where n=300 --response crps --pair realization --a mcd --b ensemble
run rpkg rpkg/inst/extdata/study.csv --where n=100 --where train_rep=0 --response crps --pair realization --a ensemble --b map
run five "$five" --where dataset=concrete --where n=50 --response crps --pair realization --a ensemble --b mcd
run shift tests/data/shift_table.csv --where intensity=3 --response nll --pair shift --a A --b B
