#!/usr/bin/env bash
# Instructions per step of Sinew's CPU step and of the C peer's loop
# (../shared/peers/act_kernels.c, through benches/peer_after_work.c) on the
# three peer workloads, each on one thread under valgrind's callgrind (300
# steps less 100, over 200: the setup cancels). Unlike a timing, the ratio
# does not move with this shared machine's load, so a change to either loop
# can be judged by it before it is timed. Valgrind has no AVX-512: Sinew's
# count is of its AVX2 forms (benches/instructions.sh), and the C loop is
# built for AVX2 (-march=haswell; GCC contracts to FMA there as it does with
# -march=native). Sizes in SIZES (default "1024x12 4096x29").
#   benches/peer_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/peer_scenario.sh
command -v valgrind > /dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
build="${TMPDIR:-/tmp}/sinew-peers"; mkdir -p "$build"
peer="$build/peer_after_work_avx2"
gcc -O3 -march=haswell -fopenmp -Wall -I../shared/peers benches/peer_after_work.c \
    ../shared/peers/act_kernels.c -o "$peer" -lm
# Instructions of the C loop's KERNEL ENVS TARGETS over STEPS hot steps.
count() {
  local out
  if ! out=$(OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$peer" "$@" 2>&1); then
    echo "$out" | grep -v '^==' >&2
    echo "peer_instructions.sh: the C loop did not run ($*)" >&2
    exit 1
  fi
  echo "$out" | sed -nE 's/.*Collected : ([0-9]+)/\1/p'
}
printf '| workload | envs × targets | C loop per env | Sinew per env | Sinew / C |\n|---|---|---:|---:|---:|\n'
for size in ${SIZES:-1024x12 4096x29}; do
  n=${size%x*}; t=${size#*x}
  for k in pd dc delay_dc; do
    scen=$(peer_scenario "$k" "$t" "$build")
    s=$(benches/instructions.sh "$scen" "$n" "$t" | sed -nE 's/.*: ([0-9]+) instructions per step.*/\1/p')
    a=$(count "$k" "$n" "$t" 100); b=$(count "$k" "$n" "$t" 300)
    awk -v k=$k -v z="$n × $t" -v c=$(( (b - a) / 200 )) -v s="$s" -v n="$n" \
      'BEGIN { printf "| %s | %s | %.0f | %.0f | %.2f× |\n", k, z, c / n, s / n, s / c }'
  done
done
