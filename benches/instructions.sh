#!/usr/bin/env bash
# Instructions per CPU step of one `sinew bench` workload, preset or scenario on one thread,
# counted by valgrind's callgrind (benches/instructions.rs at 100 and 300 steps; the difference
# over 200 leaves out the setup). Unlike a timing, the count does not move with this shared machine's load, so a
# change to the step loop can be judged by it before it is timed. Valgrind has no AVX-512: the
# count is of the AVX2 forms of the law loops.
#   benches/instructions.sh WORKLOAD [NUM_ENVS] [NUM_TARGETS]   (defaults: 128 envs, 29 targets)
# WORKLOAD: a `sinew bench` kind, a preset (unitree_g1, …) or a scenario file.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
kind="${1:?usage: benches/instructions.sh WORKLOAD [NUM_ENVS] [NUM_TARGETS]}"
envs="${2:-128}"; targets="${3:-29}"
exe=$(cargo bench --bench instructions --no-run 2>&1 | sed -nE 's/.*Executable .*\((.*)\)$/\1/p')
count() {
  local out
  if ! out=$(RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$exe" "$kind" "$envs" "$targets" "$1" 2>&1); then
    echo "$out" | grep -v '^==' >&2
    echo "instructions.sh: $kind did not run" >&2
    exit 1
  fi
  echo "$out" | sed -nE 's/.*Collected : ([0-9]+)/\1/p'
}
a=$(count 100); b=$(count 300)
echo "$kind $envs × $targets: $(( (b - a) / 200 )) instructions per step, $(( (b - a) / 200 / envs )) per env"
