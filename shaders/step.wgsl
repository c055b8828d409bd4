// The step: one dispatch, or two recorded into one compute pass.
//   env_stage    workgroups of whole envs, one thread per (env, ctrl
//                column): each thread does its element's law_stage work and
//                OR-s its verdict into its env's in the workgroup's memory;
//                after a barrier, an env with a wild control has its
//                actuators computed again (`wild_element`), and one thread
//                per env does the rest of its env's output_stage work
//                (`end_env`). Where the plan allows it (the MuJoCo stage, if
//                any, per element; an env's columns fit in a workgroup): no
//                second dispatch, and no verdict in memory.
//   law_stage    one thread per (env, ctrl column): the last step's state
//                commit of its element (`settle_state`); the non-finite
//                check of its own command values; a delayed column's push
//                and lag draw computed without a write to find its frame
//                (the ring slot the push overwrites is the command itself);
//                the column's kind's law through `kind_law`, the switch the
//                generated prelude holds for the kinds of the plan (a learned
//                column evaluates its network there); a MuJoCo actuator's
//                force when each needs its own column alone (`mj_element`);
//                the non-finite check of its ctrl value and output planes.
//                Both verdicts are OR-ed into its env's flag. A delayed
//                column then writes its targets into the slot its push
//                overwrites (`push_column`). An env at fault is computed too
//                and zeroed after.
//   output_stage one thread per env: zeroes an env at fault; else the
//                per-env MuJoCo stage and its output check, the delay heads
//                and lag draws; writes the env's flag for the report, which
//                the next step's law stage reads to commit its state.
// Each env counts its own steps (the lag RNG's counter, in `flags`): read
// by every thread of its env, written after them by the thread that
// finishes the env.
// Together they are the loop body of `StepInputs::tiles` and
// `StepInputs::finish_env` in crates/sinew-cpu/src/lib.rs.

// Command fields (`CommandField` discriminants, generated in the prelude as
// FIELD_POSITION, FIELD_VELOCITY, FIELD_EFFORT; the order of `CMD_FIELDS`).
const FIELD_POS: u32 = 3u;
const FIELD_VEL: u32 = 4u;

// `ColumnDesc.buffer` of an undelayed column.
const NO_BUFFER: u32 = 0xffffffffu;
// Whether the plan has delay buffers: a pipeline constant, so a plan
// without them compiles no delayed branch (`GpuContext::pipelines`).
override DELAYED: bool = true;
// `MjMember.actuator` of a column whose own law computes its force.
const MJ_FROM_LAW: u32 = 0xffffffffu;

// Sizes and table offsets of one backend (`Dims`).
struct Dims {
    num_envs: u32,
    num_targets: u32,
    num_ctrl: u32,
    ring_stride: u32,
    num_buffers: u32,
    num_claimed: u32,
    claimed_offset: u32,
    seed: u32,
    // Parameter and state slots: `params` starts with [slot][env][ctrl]
    // tables, `state` holds [slot][env][ctrl] tables and as many for the
    // next state. The group data is in `params` at `data_offset`.
    num_param_slots: u32,
    num_state_slots: u32,
    data_offset: u32,
    // The MuJoCo stage (`MjStage`): actuators, and the offsets in `words` of
    // their paths (column, coef bits), tendon limits (lo bits, hi bits,
    // members offset, members len) and joint limits (joint, lo bits, hi bits).
    num_mj: u32,
    mj_path_offset: u32,
    mj_tendon_offset: u32,
    num_tendon_limits: u32,
    mj_joint_offset: u32,
    num_joint_limits: u32,
    effort_width: u32,
    // The learned stage (`LearnedStage`): columns, whose `LearnedColumn`
    // records (15 words), network layers (`NetLayer`, 8 words) and taps are
    // in `words` at these offsets; the weights are in `net_weights`.
    num_learned: u32,
    learned_columns_offset: u32,
    net_layers_offset: u32,
    learned_taps_offset: u32,
    // Input planes, [plane][env][target] in `state` after the state and the
    // next state; then output planes, [plane][env][ctrl].
    num_inputs: u32,
    num_outputs: u32,
    // The force coupling's members (`MjStage::members`) in `words`: their
    // count, the raw-force output plane, the act_dot output plane, then
    // (ctrl column, path offset, path len, actuator or MJ_FROM_LAW) each.
    mj_members_offset: u32,
    // The per-element MuJoCo stage (`mj_element`, `mj_law_element`) in
    // `words`, or NO_ELEMENTS: per ctrl column its actuator,
    // MJ_LAW_ELEMENT with a law member's path entry, or MJ_FROM_LAW.
    mj_element_offset: u32,
}

// `Dims.mj_element_offset` of a plan whose MuJoCo stage runs per env.
const NO_ELEMENTS: u32 = 0xffffffffu;
// The flag of a per-element stage's word for a law member, whose rest is
// its one path entry (`MJ_LAW_ELEMENT` in layout.rs).
const MJ_LAW_ELEMENT: u32 = 0x80000000u;

// One learned column (`LearnedColumn`), read from `words`.
struct LearnedColumn {
    ctrl_column: u32,
    cmd_column: u32,
    kind: u32,
    first_layer: u32,
    num_layers: u32,
    lstm_layers: u32,
    hidden: u32,
    history_len: u32,
    taps_offset: u32,
    num_taps: u32,
    input_order: u32,
    history_init: u32,
    pos_scale: f32,
    vel_scale: f32,
    torque_scale: f32,
}

// One network layer (`NetLayer`), read from `words`.
struct NetLayer {
    kind: u32,
    inputs: u32,
    outputs: u32,
    activation: u32,
    weight: u32,
    bias: u32,
    weight_hh: u32,
    bias_hh: u32,
}

// One ctrl column (`ColumnDesc`).
struct ColumnDesc {
    kind: u32,
    field: u32,
    cmd_column: u32,
    buffer: u32,
    ring_column: u32,
    aux: u32,
    data_offset: u32,
    data_len: u32,
}

// One delay buffer (`BufferDesc`).
struct BufferDesc {
    params: DelayParams,
    ring_offset: u32,
    num_columns: u32,
    // Offset in `words` of its ring columns' command columns.
    columns_offset: u32,
    _pad: u32,
}

// A read-only storage buffer, not a uniform one: lavapipe (Mesa 22) inlines
// uniform values that steer branches into the kernel and, when that halves
// it (with 64 envs it did), compiles the kernel again at every dispatch:
// 850 µs per step instead of 170.
@group(0) @binding(0) var<storage, read> dims: Dims;
// [field][env][target], fields in `CMD_FIELDS` order.
@group(0) @binding(1) var<storage, read> cmd: array<f32>;
// [env][ctrl column].
@group(0) @binding(2) var<storage, read_write> ctrl: array<f32>;
// One [env][ctrl column] table per parameter in use, at its offset.
@group(0) @binding(3) var<storage, read> params: array<f32>;
// [env][ring_stride]: each buffer's [slot][field][ring column].
@group(0) @binding(4) var<storage, read_write> ring: array<f32>;
// [env][buffer].
@group(0) @binding(5) var<storage, read_write> states: array<DelayState>;
// [env]: 1 when the step zeroed the env (the report); then [env]: the law
// stage's verdict, bit 0 an input and bit 1 an output not finite (set by
// law_stage, read and cleared by output_stage); then [env]: the steps the
// env has taken, a delayed plan's lag RNG counter (`env_step`).
@group(0) @binding(6) var<storage, read_write> flags: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> columns: array<ColumnDesc>;
@group(0) @binding(8) var<storage, read> buffers: array<BufferDesc>;
// Ring columns' command columns per buffer, then claimed (start, len) pairs.
@group(0) @binding(9) var<storage, read> words: array<u32>;
// The MuJoCo stage's actuators, in ctrl-column order.
@group(0) @binding(10) var<storage, read> mj: array<MjActuator>;
// [env][effort_width]: joint efforts.
@group(0) @binding(11) var<storage, read_write> effort: array<f32>;
// [slot][env][ctrl column] state, then as many slots of next state; then
// the input planes, [plane][env][target]; then the output planes,
// [plane][env][ctrl column].
@group(0) @binding(12) var<storage, read_write> state: array<f32>;
// Every network's weights and biases in groups of four, each layer's at the
// offsets its `NetLayer` gives in groups (`sinew_wgpu::layout::net_vectors`):
// a dense layer's rows of outputs padded to fours, an LSTM layer's rows of
// units with their four gates together.
@group(0) @binding(13) var<storage, read> net_weights: array<vec4<f32>>;

fn inputs_offset() -> u32 {
    return 2u * dims.num_state_slots * dims.num_envs * dims.num_ctrl;
}
fn input_at(k: u32, env: u32, column: u32) -> f32 {
    return state[inputs_offset() + (k * dims.num_envs + env) * dims.num_targets + column];
}
fn outputs_offset() -> u32 {
    return inputs_offset() + dims.num_inputs * dims.num_envs * dims.num_targets;
}
// Zeroes every output plane at element `i` (env · num_ctrl + column).
fn zero_outputs(i: u32) {
    for (var o = 0u; o < dims.num_outputs; o++) {
        state[outputs_offset() + o * dims.num_envs * dims.num_ctrl + i] = 0.0;
    }
}

// 1 when element `i`'s ctrl value `value` or one of its output planes is
// not finite.
fn outputs_bits(i: u32, value: f32) -> u32 {
    var bad = nonfinite_bits(value);
    for (var o = 0u; o < dims.num_outputs; o++) {
        bad |= nonfinite_bits(state[outputs_offset() + o * plane() + i]);
    }
    return bad;
}

fn cmd_at(field: u32, env: u32, column: u32) -> f32 {
    return cmd[(field * dims.num_envs + env) * dims.num_targets + column];
}

// The five command values of `env`'s command column `m`: its targets
// (position, velocity, effort) and its joint's position and velocity.
struct Command {
    targets: vec3<f32>,
    pos: f32,
    vel: f32,
}

// Read once per thread and passed on, rather than read again where used
// (by a delayed column's law, by its push): Mesa's lavapipe reads a buffer
// one lane at a time, a loop of eight for each read.
fn command_at(env: u32, m: u32) -> Command {
    return Command(
        vec3<f32>(
            cmd_at(FIELD_POSITION, env, m),
            cmd_at(FIELD_VELOCITY, env, m),
            cmd_at(FIELD_EFFORT, env, m),
        ),
        cmd_at(FIELD_POS, env, m),
        cmd_at(FIELD_VEL, env, m),
    );
}

// The step this thread's env takes (`env_step`).
var<private> law_step: u32;

// The steps `env` has taken before this one: the lag RNG's counter, which
// only a delayed plan reads or advances (`end_env`).
fn env_step(env: u32) -> u32 {
    if DELAYED {
        return atomicLoad(&flags[2u * dims.num_envs + env]);
    }
    return 0u;
}

// One env's delay stage after its pushes (the law stage wrote the frames, see
// `push_column`): advances each buffer's head and draws its lags (twin of
// the state half of `StepInputs::delay_stage`), after the law stage and the
// MuJoCo stage read the frames this push and draw select (`eval_law`).
fn delay_stage(env: u32) {
    for (var b = 0u; b < dims.num_buffers; b++) {
        let at = env * dims.num_buffers + b;
        var state = states[at];
        let p = buffers[b].params;
        _ = push(p, &state);
        update_lag(p, &state, dims.seed, env, law_step);
        states[at] = state;
    }
}

// Writes this step's targets of ctrl column `c` of `env`, when the column
// is delayed, into the ring slot its env's push overwrites: one thread per
// (env, column), so neighbouring threads write neighbouring ring columns
// (one thread per env wrote its whole frame before: 34.4 µs a step at
// 4096 × 29 on an H200, 14.2 since, where DC takes 12.1). The slot holds
// the buffer's oldest frame, which no read of this step takes (a read of
// the pushed slot takes the command itself) and no later read takes before
// the next push writes it again, so the write needs no wait for its env's
// verdict: an env at fault does not push, and its next push writes the
// same slot. `bad` (the element's own command values not finite) skips the
// write, so a ring never holds a non-finite value. `targets`: the column's
// command targets.
fn push_column(env: u32, column: ColumnDesc, targets: vec3<f32>, bad: u32) {
    if column.buffer == NO_BUFFER || bad != 0u {
        return;
    }
    let buffer = buffers[column.buffer];
    let cols = buffer.num_columns;
    let at = ring_index(env, column, buffer, law_pushed);
    ring[at] = targets.x;
    ring[at + cols] = targets.y;
    ring[at + 2u * cols] = targets.z;
}

// The ring index of delayed `column`'s position target in `slot` of
// `env`'s ring of its `buffer`; its velocity and effort targets follow one
// and two times the buffer's column count after.
fn ring_index(env: u32, column: ColumnDesc, buffer: BufferDesc, slot: u32) -> u32 {
    let cols = buffer.num_columns;
    return env * dims.ring_stride + buffer.ring_offset + slot * 3u * cols + column.ring_column;
}

// The law I/O: what `LawIo` gives a Rust law, for the (env, column) this
// thread evaluates. `eval_law` sets the `law_*` values, then calls the law.
var<private> law_env: u32;
// env · num_ctrl + column: the element of every [slot][env][ctrl] table.
var<private> law_at: u32;
var<private> law_targets: vec3<f32>;
var<private> law_pos: f32;
var<private> law_cmd_column: u32;
var<private> law_vel: f32;
var<private> law_field: u32;
var<private> law_aux: u32;
var<private> law_data_offset: u32;
var<private> law_data_len: u32;
// A delayed column's slot its env's push of this step writes (`eval_law`).
var<private> law_pushed: u32;
// `LawIo::force_scale`: 1 except when the force coupling evaluates a law again.
var<private> law_scale: f32;

fn plane() -> u32 {
    return dims.num_envs * dims.num_ctrl;
}
fn io_param(k: u32) -> f32 {
    return params[k * plane() + law_at];
}
fn io_target(field: u32) -> f32 {
    return law_targets[field];
}
fn io_pos() -> f32 {
    return law_pos;
}
fn io_vel() -> f32 {
    return law_vel;
}
fn io_field() -> u32 {
    return law_field;
}
fn io_state(k: u32) -> f32 {
    return state[k * plane() + law_at];
}
fn io_set_state(k: u32, value: f32) {
    state[(dims.num_state_slots + k) * plane() + law_at] = value;
}
fn io_input(k: u32) -> f32 {
    return input_at(k, law_env, law_cmd_column);
}
fn io_set_output(k: u32, value: f32) {
    state[outputs_offset() + k * plane() + law_at] = value;
}
fn io_data(i: u32) -> f32 {
    return params[dims.data_offset + law_data_offset + i];
}
fn io_data_len() -> u32 {
    return law_data_len;
}
fn io_force_scale() -> f32 {
    return law_scale;
}
// Twin of `LawIo::saturate`.
fn io_saturate(raw: u32, force: f32, lo: f32, hi: f32) -> f32 {
    io_set_output(raw, force);
    return clip(force * io_force_scale(), lo, hi);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn law_stage(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let i = thread_index(gid, num_workgroups);
    if i >= dims.num_envs * dims.num_ctrl {
        return;
    }
    let env = i / dims.num_ctrl;
    law_step = env_step(env);
    let verdict = element_stage(env, i - env * dims.num_ctrl).verdict;
    if verdict != 0u {
        atomicOr(&flags[dims.num_envs + env], verdict);
    }
}

// env_stage's verdicts, one per env of the workgroup, which its threads OR
// together, and the outputs' verdicts of the envs whose controls were wild,
// checked again; zero at each dispatch's start (wgpu and naga zero
// workgroup memory).
var<workgroup> env_verdicts: array<atomic<u32>, ENV_WORKGROUP_SIZE>;
var<workgroup> env_rechecks: array<atomic<u32>, ENV_WORKGROUP_SIZE>;

@compute @workgroup_size(ENV_WORKGROUP_SIZE)
fn env_stage(
    @builtin(local_invocation_index) l: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    // Whole envs per workgroup (the host fuses only when one fits); the
    // threads past them wait at the barriers and do nothing.
    let envs = ENV_WORKGROUP_SIZE / dims.num_ctrl;
    let local_env = l / dims.num_ctrl;
    let c = l - local_env * dims.num_ctrl;
    let env = (group.y * num_workgroups.x + group.x) * envs + local_env;
    let live = local_env < envs && env < dims.num_envs;
    var element = Element(0u, 0.0);
    if live {
        law_step = env_step(env);
        element = element_stage(env, c);
        if element.verdict != 0u {
            atomicOr(&env_verdicts[local_env], element.verdict);
        }
    }
    // Every element's ctrl, state, ring and verdict before its env's end;
    // every thread's read of its env's flag and step before they change.
    storageBarrier();
    workgroupBarrier();
    var verdict = 0u;
    if live {
        verdict = atomicLoad(&env_verdicts[local_env]);
    }
    // A control past MuJoCo's bound (bit 2) zeroes every control of its
    // env: as the per-env stage would, each actuator runs again with a zero
    // control, and the env's outputs are checked again (the plan allows one
    // dispatch only with a stage per element, in which that changes each
    // actuator's own results alone).
    let wild = (verdict & 5u) == 4u;
    if MJ_STAGE {
        if live && wild {
            let bad = wild_element(env, c, element);
            if bad != 0u {
                atomicOr(&env_rechecks[local_env], bad);
            }
        }
        storageBarrier();
        workgroupBarrier();
    }
    if live && c == 0u {
        var bad = (verdict >> 1u) & 1u;
        if wild {
            bad = atomicLoad(&env_rechecks[local_env]);
        }
        end_env(env, verdict & 1u, bad);
    }
}

// An element's results (`element_stage`): its verdict, and its law's value
// before the per-element MuJoCo stage, which an env with a wild control
// computes again (`wild_element`).
struct Element {
    verdict: u32,
    forwarded: f32,
}

// Element `c` of `env`, whose first results were `element`, in an env
// with a control past MuJoCo's bound: an actuator of the per-element
// MuJoCo stage again with a zero control (its ctrl value, act_dot, next
// activation and joint efforts written again). Returns its outputs'
// verdict as the per-env stage checks it after: the actuator's outputs
// again, another element's as they were (1: one not finite).
fn wild_element(env: u32, c: u32, element: Element) -> u32 {
    let k = words[dims.mj_element_offset + c];
    if k == MJ_FROM_LAW || (k & MJ_LAW_ELEMENT) != 0u {
        return (element.verdict >> 1u) & 1u;
    }
    let i = env * dims.num_ctrl + c;
    let again = plan_mj_element(env, k, element.forwarded, true);
    ctrl[i] = again.force;
    return again.bad | outputs_bits(i, again.force);
}

// Element `c` of `env` (at `env · num_ctrl + c` in every [env][ctrl]
// table): the last step's commit of its state, the non-finite check of its
// own command values, its law, its per-element MuJoCo stage, its ctrl
// value, its ring push and the non-finite check of its outputs. Returns its
// verdict (bit 0 an input, bit 1 an output not finite, bit 2 a control past
// MuJoCo's bound) and its law's value.
fn element_stage(env: u32, c: u32) -> Element {
    let i = env * dims.num_ctrl + c;
    settle_state(env, i);
    // This element's claimed values, read where neighbouring threads read
    // theirs.
    let column = columns[c];
    let m = column.cmd_column;
    let command = command_at(env, m);
    var bad = nonfinite_bits(command.targets.x) | nonfinite_bits(command.targets.y)
        | nonfinite_bits(command.targets.z) | nonfinite_bits(command.pos)
        | nonfinite_bits(command.vel);
    for (var p = 0u; p < dims.num_inputs; p++) {
        bad |= nonfinite_bits(input_at(p, env, m));
    }
    let forwarded = eval_law(env, c, column, command, 1.0);
    var value = forwarded;
    var outputs_bad = 0u;
    var wild = 0u;
    if (MJ_STAGE || MJ_COUPLED) && dims.mj_element_offset != NO_ELEMENTS {
        let k = words[dims.mj_element_offset + c];
        if k == MJ_FROM_LAW {
            // Not in the stage.
        } else if (k & MJ_LAW_ELEMENT) != 0u {
            outputs_bad = plan_mj_law_element(env, k & ~MJ_LAW_ELEMENT, value);
        } else {
            let element = plan_mj_element(env, k, value, false);
            value = element.force;
            outputs_bad = element.bad;
            wild = u32(element.wild);
        }
    }
    ctrl[i] = value;
    if DELAYED {
        push_column(env, column, command.targets, bad);
    }
    // The element's outputs too, read where neighbouring threads read
    // theirs: bit 1 of the verdict (the per-env MuJoCo stage checks its
    // own).
    outputs_bad |= outputs_bits(i, value);
    return Element(bad | (outputs_bad << 1u) | (wild << 2u), forwarded);
}

// The law of ctrl column `c` (`column`) of `env`, whose command is
// `command`, its raw force scaled by `scale` (`LawIo::force_scale`): sets
// the `law_*` values, then calls the law. The element's next state must
// equal its state on entry (`settle_state`, `restart_next_state`): slots
// a law does not write keep it.
fn eval_law(env: u32, c: u32, column: ColumnDesc, command: Command, scale: f32) -> f32 {
    let i = env * dims.num_ctrl + c;
    let m = column.cmd_column;
    law_targets = command.targets;
    if DELAYED && column.buffer != NO_BUFFER {
        // The env's push and lag draw of this step, which `end_env`
        // commits: the frame they select is the command when it is the one
        // pushed, else one already in the ring.
        let buffer = buffers[column.buffer];
        let cols = buffer.num_columns;
        var state = states[env * dims.num_buffers + column.buffer];
        let pushed = push(buffer.params, &state);
        update_lag(buffer.params, &state, dims.seed, env, law_step);
        let slot = read_slot(buffer.params, state);
        law_pushed = pushed;
        if slot != pushed {
            let at = ring_index(env, column, buffer, slot);
            law_targets = vec3<f32>(ring[at], ring[at + cols], ring[at + 2u * cols]);
        }
    }
    law_env = env;
    law_at = i;
    law_cmd_column = m;
    law_pos = command.pos;
    law_vel = command.vel;
    law_field = column.field;
    law_aux = column.aux;
    law_data_offset = column.data_offset;
    law_data_len = column.data_len;
    law_scale = scale;
    return kind_law(column.kind);
}

// Zeroes an env's joint efforts.
fn mj_zero(env: u32) {
    for (var j = 0u; j < dims.effort_width; j++) {
        effort[env * dims.effort_width + j] = 0.0;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn output_stage(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let env = thread_index(gid, num_workgroups);
    if env >= dims.num_envs {
        return;
    }
    law_step = env_step(env);
    // The law stage's verdict, cleared for the next step.
    let verdict = atomicLoad(&flags[dims.num_envs + env]);
    atomicStore(&flags[dims.num_envs + env], 0u);
    finish_env(env, verdict);
}

// The end of `env`'s step after its elements' (`element_stage`), whose
// verdict is `verdict`: bit 0, an input at fault (the env does not push
// into its delay rings); bit 1, an output; bit 2, a control past MuJoCo's
// bound in the per-element MuJoCo stage. The per-env MuJoCo stage where
// the plan has one or a control was wild, and its output check; then
// `end_env`.
fn finish_env(env: u32, verdict: u32) {
    let row = env * dims.num_ctrl;
    var bad = (verdict >> 1u) & 1u;
    let wild = (verdict & 4u) != 0u;
    // The law stage computed a per-element stage, unless a control was
    // wild.
    if (verdict & 1u) == 0u && words[dims.mj_members_offset] > 0u
        && (dims.mj_element_offset == NO_ELEMENTS || wild) {
        // Without actuators or tendon ranges, the stage only sums the laws'
        // values into joint efforts: the law stage's check of ctrl and the
        // outputs stands (232 loads fewer per env for 29 `mj_dcmotor`s that
        // share joints or drive tendons, which the per-element stage does
        // not take). Else the stage rewrites them: checked after it.
        let rewrites = dims.num_mj > 0u || dims.num_tendon_limits > 0u;
        bad = plan_mj_env_stage(env, wild) | select(bad, 0u, rewrites);
        for (var j = 0u; j < dims.effort_width; j++) {
            bad |= nonfinite_bits(effort[env * dims.effort_width + j]);
        }
        for (var c = 0u; rewrites && c < dims.num_ctrl; c++) {
            bad |= outputs_bits(row + c, ctrl[row + c]);
        }
    }
    end_env(env, verdict & 1u, bad);
}

// The end of `env`'s step after its MuJoCo stage: `inputs_bad`, 1 when an
// input is not finite (the env does not push into its delay rings, and is
// zeroed); `bad`, 1 when an output is not finite (the env is zeroed).
// Advances the delay heads and draws the lags (after the MuJoCo stage,
// which evaluates laws again with their frames from the states before this
// push); writes the env's flag for the report, which the next step's law
// stage reads to commit its state, and counts the step.
fn end_env(env: u32, inputs_bad: u32, bad: u32) {
    if DELAYED && inputs_bad == 0u {
        delay_stage(env);
    }
    let zeroed = (inputs_bad | bad) != 0u;
    if zeroed {
        let row = env * dims.num_ctrl;
        for (var c = 0u; c < dims.num_ctrl; c++) {
            ctrl[row + c] = 0.0;
            zero_outputs(row + c);
        }
        mj_zero(env);
    }
    atomicStore(&flags[env], u32(zeroed));
    if DELAYED {
        atomicStore(&flags[2u * dims.num_envs + env], law_step + 1u);
    }
}

// The last step's state commit of element `i` of `env` (twin of
// `StepInputs::commit`), MuJoCo's activations included: where the env's
// flag is clear (the step kept it), its next state becomes its state; else
// its state (the one before that step) becomes its next state again. Both
// then hold the state this step starts from, and the next state is where
// this step's laws write. One read and one write per slot, which the law
// stage made anyway to start the next state from the state. The commit was
// a dispatch of its own before, one thread per element after the output
// stage: timed in a pass of its own, 6.8 µs beside a step of 22.4 (4096 ×
// 29 MuJoCo servos on an H200). The host reads the state as this would
// commit it (`WgpuBackend::state_host`) and writes both halves.
fn settle_state(env: u32, i: u32) {
    let s = dims.num_state_slots;
    if s == 0u {
        return;
    }
    let p = plane();
    if atomicLoad(&flags[env]) == 0u {
        for (var k = 0u; k < s; k++) {
            state[k * p + i] = state[(s + k) * p + i];
        }
    } else {
        for (var k = 0u; k < s; k++) {
            state[(s + k) * p + i] = state[k * p + i];
        }
    }
}

// Starts element `i`'s next state again from its state, for a law
// evaluated a second time in a step (`mj_env_stage`'s tendon range).
fn restart_next_state(i: u32) {
    let s = dims.num_state_slots;
    for (var k = 0u; k < s; k++) {
        state[(s + k) * plane() + i] = state[k * plane() + i];
    }
}
