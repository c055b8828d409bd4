#!/usr/bin/env bash
# Instructions per element of every registered kind's law, its `Kind::example` on every target of
# one group, counted as benches/instructions.sh counts them (callgrind, one thread, the AVX2 forms:
# valgrind has no AVX-512). A law loop that runs one element at a time in its AVX2 form stands out
# here though this machine's own timings take the AVX-512 form (MuJoCo 4's dcmotor did: 645 per
# element, 131 once in vector lanes; BENCHMARKS.md).
# `KEY+force` rows: the kind with `compute_force` set, where it has a MuJoCo equivalent (the MuJoCo
# stage computes the force from the forwarded command).
# `wrapped` wraps a robot's own actuators, which the bench's robot has none of: it does not run.
#   benches/kind_instructions.sh [NUM_ENVS] [NUM_TARGETS]   (defaults: 128 envs, 29 targets)
set -euo pipefail
cd "$(dirname "$0")/.."
envs="${1:-128}"; targets="${2:-29}"
exe=$(cargo bench --bench instructions --no-run 2>&1 | sed -nE 's/.*Executable .*\((.*)\)$/\1/p')
printf '| kind | instructions per step | per element |\n|---|---:|---:|\n'
for key in $("$exe" kinds); do
  if line=$(benches/instructions.sh "kind:$key" "$envs" "$targets" 2>/dev/null); then
    per_step=$(echo "$line" | sed -nE 's/.*: ([0-9]+) instructions per step.*/\1/p')
    awk -v k="$key" -v s="$per_step" -v n=$((envs * targets)) \
      'BEGIN { printf "| %s | %d | %.1f |\n", k, s, s / n }'
  else
    echo "| $key | did not run | |"
  fi
done
