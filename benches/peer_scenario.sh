# Sourced by benches/after_work.sh and benches/peer_instructions.sh:
#   peer_scenario KIND NUM_TARGETS DIR   -> prints the path of the scenario it wrote
# The peer scenario KIND (pd, dc, delay_dc; ../shared/peers/scenarios) with pos and
# vel at rest (`state = "zero"`), as the C loop's fill writes them (the default is
# the signal 20 ms ago: more work, and a longer gap before the step); other target
# counts than the scenarios' 29 use the first NUM_TARGETS joints.
peer_scenario() {
  local kind=$1 t=$2 dir=$3
  local scen="$dir/$kind-$t.toml"
  local joints="joints = [$(seq -s, -f '"j%g"' 0 $((t - 1)))]"
  sed -E -e "s/^joints = \[.*\]/$joints/" -e 's/^\[command\]$/[command]\nstate = "zero"/' \
    "../shared/peers/scenarios/$kind.toml" > "$scen"
  echo "$scen"
}
