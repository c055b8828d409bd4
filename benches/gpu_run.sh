#!/usr/bin/env bash
# The GPU measurement set in one go, for a machine with a real GPU: the
# integration tests, `sinew bench --backend all`, the step as one dispatch
# and as two side by side (alternating, two rounds), and the scenario files.
#   benches/gpu_run.sh SINEW INTEGRATION OUT
# SINEW: a release `sinew`; INTEGRATION: the integration test binary
# (`cargo test --release --test integration --no-run` prints its path); OUT:
# a folder, which gets one log (gpu_run.log) and bench --backend all's JSON.
# Run from the project root (the scenario files are in benches/). A part that
# fails or runs past its limit is noted in the log and the rest still run;
# about six minutes in all on an H200.
set -uo pipefail
sinew=$1 tests=$2 out=$3
mkdir -p "$out"
log="$out/gpu_run.log"
: > "$log"
part() {
  local limit=$1
  shift
  echo "== $*" >> "$log"
  local start=$SECONDS
  timeout "$limit" "$@" >> "$log" 2>&1
  echo "== rc $?, $((SECONDS - start)) s" >> "$log"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv 2>&1
} >> "$log"
part 180 "$tests"
part 240 "$sinew" bench --backend all --json "$out/bench_all.json"
kinds=pd,dc,delayed_dc,delay_dc,passthrough,mujoco,mj_dcmotor,servo,muscle_pair,learned_mlp
for round in 1 2; do
  for dispatches in two one; do
    part 150 "$sinew" bench --backend wgpu --kinds "$kinds" --envs 1024,4096,65536 \
      --gpu-dispatches "$dispatches"
  done
done
for f in panda mujoco_beside_pid mujoco_site g1_five_laws g1_mjlab_force go1_dc_pd spot_isaaclab; do
  part 90 "$sinew" bench --backend all --scenario "benches/$f.toml" --envs 4096,65536
done
