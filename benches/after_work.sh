#!/usr/bin/env bash
# Sinew's CPU step and the C peer's loop (../shared/peers/act_kernels.c),
# each timed hot, after the caller's own work and after idling, in one run.
#   benches/after_work.sh [SINEW_BINARY]   (default: target/release/sinew)
# Sinew's figures are `sinew bench --scenario` on the peer scenarios (with
# pos and vel at rest); the C loop's come from benches/peer_after_work.c,
# whose work between steps is the same command generation done by the
# kernel's own OpenMP threads with the kernel's split (each thread's rows
# stay in its caches). Sizes in SIZES (default "4096x29 16384x29
# 65536x29"). Only figures of one run compare.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/peer_scenario.sh
peers=../shared/peers
bin="${1:-target/release/sinew}"
[ -x "$bin" ] || cargo build --release -q -p sinew-cli
build="${TMPDIR:-/tmp}/sinew-peers"; mkdir -p "$build"
gcc -O3 -march=native -fopenmp -Wall -I"$peers" benches/peer_after_work.c \
    "$peers/act_kernels.c" -o "$build/peer_after_work" -lm
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
printf '| workload | envs × targets | mode | C loop µs | Sinew µs | Sinew / C | C / its hot | Sinew / its hot |\n'
printf '|---|---|---|---:|---:|---:|---:|---:|\n'
for size in ${SIZES:-4096x29 16384x29 65536x29}; do
  n=${size%x*}; t=${size#*x}
  for k in pd dc delay_dc; do
    scen=$(peer_scenario "$k" "$t" "$build")
    c=$(OMP_NUM_THREADS=2 OMP_PROC_BIND=close "$build/peer_after_work" "$k" "$n" "$t")
    s=$("$bin" bench --backend cpu --scenario "$scen" --envs "$n" 2>/dev/null)
    for mode in hot after_work after_idle; do
      cus=$(echo "$c" | awk -F, -v m=$mode '$2 == m {print $5}')
      chot=$(echo "$c" | awk -F, '$2 == "hot" {print $5}')
      sus=$(echo "$s" | awk -F'|' -v m=" $mode " '$3 == m {print $5 + 0}')
      shot=$(echo "$s" | awk -F'|' '$3 == " hot " {print $5 + 0}')
      awk -v k=$k -v z="$n × $t" -v m=$mode -v c="$cus" -v s="$sus" -v ch="$chot" -v sh="$shot" \
        'BEGIN { printf "| %s | %s | %s | %.1f | %.1f | %.2f× | %.2f× | %.2f× |\n", k, z, m, c, s, s / c, c / ch, s / sh }'
    done
  done
done
