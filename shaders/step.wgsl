// The step: three dispatches recorded into one compute pass.
//   env_stage    one thread per env: non-finite input check, delay push, lag draw.
//   law_stage    one thread per (env, ctrl column): the column's law (a
//                learned column evaluates its network there).
//   output_stage one thread per env: the MuJoCo stage, the non-finite output
//                check, the activation and learned-state commits; advances
//                the step counter.
// Together they are the loop body of `StepInputs::env` in crates/sinew-cpu/src/lib.rs.

// Law codes of `ColumnDesc.law` (sinew_wgpu::LAW_*).
const LAW_IDEAL_PD: u32 = 0u;
const LAW_DC_MOTOR: u32 = 1u;
const LAW_PASS_THROUGH: u32 = 2u;
const LAW_MJ_GENERAL: u32 = 3u;
const LAW_LEARNED_MLP: u32 = 4u;
const LAW_LSTM_NET: u32 = 5u;

// Command fields (`CommandField` discriminants; the order of `CMD_FIELDS`).
const FIELD_POSITION: u32 = 0u;
const FIELD_VELOCITY: u32 = 1u;
const FIELD_EFFORT: u32 = 2u;
const FIELD_POS: u32 = 3u;
const FIELD_VEL: u32 = 4u;

// `ColumnDesc.buffer` of an undelayed column.
const NO_BUFFER: u32 = 0xffffffffu;

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
    // Offsets of the parameter tables in `params`, by `Param` discriminant.
    stiffness_offset: u32,
    damping_offset: u32,
    effort_limit_offset: u32,
    saturation_effort_offset: u32,
    velocity_limit_offset: u32,
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
    // records (16 words), network layers (`NetLayer`, 8 words) and taps are
    // in `words` at these offsets; the weights are in `params`.
    num_learned: u32,
    learned_columns_offset: u32,
    net_layers_offset: u32,
    learned_taps_offset: u32,
    net_weights_offset: u32,
    // u32s of learned state per env, after the per-env headers.
    learned_stride: u32,
    learned_period: u32,
    _pad: u32,
}

// One learned column (`LearnedColumn`), read from `words`.
struct LearnedColumn {
    ctrl_column: u32,
    cmd_column: u32,
    kind: u32,
    first_layer: u32,
    num_layers: u32,
    lstm_layers: u32,
    hidden: u32,
    state_offset: u32,
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
    law: u32,
    field: u32,
    cmd_column: u32,
    buffer: u32,
    ring_column: u32,
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

@group(0) @binding(0) var<uniform> dims: Dims;
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
// [env]: 1 when the step zeroed the env.
@group(0) @binding(6) var<storage, read_write> flags: array<u32>;
@group(0) @binding(7) var<storage, read> columns: array<ColumnDesc>;
@group(0) @binding(8) var<storage, read> buffers: array<BufferDesc>;
// Ring columns' command columns per buffer, then claimed (start, len) pairs.
@group(0) @binding(9) var<storage, read> words: array<u32>;
// [0]: the global step (the lag RNG's counter).
@group(0) @binding(10) var<storage, read_write> counter: array<u32>;
// The MuJoCo stage's actuators, in ctrl-column order.
@group(0) @binding(11) var<storage, read> mj: array<MjActuator>;
// [env][2 · num_mj]: activations, then act_dots.
@group(0) @binding(12) var<storage, read_write> mj_state: array<f32>;
// [env][effort_width]: joint efforts.
@group(0) @binding(13) var<storage, read_write> effort: array<f32>;
// [env][2]: learned headers (commit count, fresh flag); then
// [env][learned_stride]: histories and LSTM states, f32 bits.
@group(0) @binding(14) var<storage, read_write> learned: array<u32>;

fn cmd_at(field: u32, env: u32, column: u32) -> f32 {
    return cmd[(field * dims.num_envs + env) * dims.num_targets + column];
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn env_stage(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let env = thread_index(gid, num_workgroups);
    if env >= dims.num_envs {
        return;
    }
    let step = counter[0];
    var bad = 0u;
    for (var k = 0u; k < dims.num_claimed; k++) {
        let start = words[dims.claimed_offset + 2u * k];
        let len = words[dims.claimed_offset + 2u * k + 1u];
        for (var field = 0u; field < 5u; field++) {
            for (var c = start; c < start + len; c++) {
                bad |= nonfinite_bits(cmd_at(field, env, c));
            }
        }
    }
    flags[env] = bad;
    if bad != 0u {
        return;
    }
    for (var b = 0u; b < dims.num_buffers; b++) {
        let buffer = buffers[b];
        let p = buffer.params;
        let at = env * dims.num_buffers + b;
        var state = states[at];
        let cols = buffer.num_columns;
        let frame = 3u * cols;
        let base = env * dims.ring_stride + buffer.ring_offset;
        let pushed = push(p, &state);
        let start = base + pushed.slot * frame;
        for (var field = 0u; field < 3u; field++) {
            for (var k = 0u; k < cols; k++) {
                ring[start + field * cols + k] = cmd_at(field, env, words[buffer.columns_offset + k]);
            }
        }
        if pushed.fill {
            for (var slot = 1u; slot < p.len; slot++) {
                for (var k = 0u; k < frame; k++) {
                    ring[base + slot * frame + k] = ring[base + k];
                }
            }
        }
        update_lag(p, &state, dims.seed, env, step);
        states[at] = state;
    }
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
    let c = i - env * dims.num_ctrl;
    if flags[env] != 0u {
        ctrl[i] = 0.0;
        return;
    }
    let column = columns[c];
    let m = column.cmd_column;
    var position_target: f32;
    var velocity_target: f32;
    var effort_target: f32;
    if column.buffer == NO_BUFFER {
        position_target = cmd_at(FIELD_POSITION, env, m);
        velocity_target = cmd_at(FIELD_VELOCITY, env, m);
        effort_target = cmd_at(FIELD_EFFORT, env, m);
    } else {
        let buffer = buffers[column.buffer];
        let cols = buffer.num_columns;
        let slot = read_slot(buffer.params, states[env * dims.num_buffers + column.buffer]);
        let at = env * dims.ring_stride + buffer.ring_offset + slot * 3u * cols + column.ring_column;
        position_target = ring[at];
        velocity_target = ring[at + cols];
        effort_target = ring[at + 2u * cols];
    }
    let pos = cmd_at(FIELD_POS, env, m);
    let vel = cmd_at(FIELD_VEL, env, m);
    var out: f32;
    switch column.law {
        case LAW_IDEAL_PD: {
            out = ideal_pd_effort(
                params[dims.stiffness_offset + i],
                params[dims.damping_offset + i],
                params[dims.effort_limit_offset + i],
                position_target,
                pos,
                velocity_target,
                vel,
                effort_target,
            );
        }
        case LAW_DC_MOTOR: {
            out = dc_motor_effort(
                params[dims.stiffness_offset + i],
                params[dims.damping_offset + i],
                params[dims.effort_limit_offset + i],
                params[dims.saturation_effort_offset + i],
                params[dims.velocity_limit_offset + i],
                position_target,
                pos,
                velocity_target,
                vel,
                effort_target,
            );
        }
        case LAW_LEARNED_MLP, LAW_LSTM_NET: {
            let col = learned_column(column.field);
            let error = position_target - pos;
            var raw: f32;
            if column.law == LAW_LEARNED_MLP {
                raw = mlp_effort(col, env, error, vel);
            } else {
                raw = lstm_effort(col, env, error, vel);
            }
            out = dc_motor_clip(
                raw,
                params[dims.saturation_effort_offset + i],
                params[dims.velocity_limit_offset + i],
                params[dims.effort_limit_offset + i],
                vel,
            );
        }
        default: {
            switch column.field {
                case FIELD_POSITION: {
                    out = pass_through(position_target);
                }
                case FIELD_VELOCITY: {
                    out = pass_through(velocity_target);
                }
                default: {
                    out = pass_through(effort_target);
                }
            }
        }
    }
    ctrl[i] = out;
}

fn learned_column(k: u32) -> LearnedColumn {
    let at = dims.learned_columns_offset + 16u * k;
    var w: array<u32, 16>;
    for (var j = 0u; j < 16u; j++) {
        w[j] = words[at + j];
    }
    return LearnedColumn(
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12],
        bitcast<f32>(w[13]), bitcast<f32>(w[14]), bitcast<f32>(w[15]),
    );
}

fn net_layer(l: u32) -> NetLayer {
    let at = dims.net_layers_offset + 8u * l;
    return NetLayer(
        words[at], words[at + 1u], words[at + 2u], words[at + 3u],
        words[at + 4u], words[at + 5u], words[at + 6u], words[at + 7u],
    );
}

fn net_weight(at: u32) -> f32 {
    return params[dims.net_weights_offset + at];
}

// Offset in `learned` of an env's state row.
fn learned_row(env: u32) -> u32 {
    return 2u * dims.num_envs + env * dims.learned_stride;
}

// `count` dense layers from `first` on one row (twin of `dense`).
fn dense_stack(first: u32, count: u32, input: array<f32, NET_MAX_WIDTH>) -> f32 {
    var x = input;
    var y: array<f32, NET_MAX_WIDTH>;
    for (var l = first; l < first + count; l++) {
        let layer = net_layer(l);
        for (var o = 0u; o < layer.outputs; o++) {
            var acc = 0.0;
            for (var i = 0u; i < layer.inputs; i++) {
                acc += x[i] * net_weight(layer.weight + i * layer.outputs + o);
            }
            y[o] = activate(layer.activation, acc + net_weight(layer.bias + o));
        }
        x = y;
    }
    return x[0];
}

// An MLP column's scaled output before the DC clip (twin of
// `LearnedStage::mlp_column`): writes this step's frame into the rings.
fn mlp_effort(col: LearnedColumn, env: u32, error: f32, vel: f32) -> f32 {
    let count = learned[2u * env];
    let fresh = learned[2u * env + 1u];
    let len = col.history_len;
    let at = learned_row(env) + col.state_offset;
    if fresh != 0u {
        let fill_error = select(error, 0.0, col.history_init != 0u);
        let fill_vel = select(vel, 0.0, col.history_init != 0u);
        for (var s = 0u; s < len; s++) {
            learned[at + s] = bitcast<u32>(fill_error);
            learned[at + len + s] = bitcast<u32>(fill_vel);
        }
    }
    let now = count % len;
    learned[at + now] = bitcast<u32>(error);
    learned[at + len + now] = bitcast<u32>(vel);
    let n = col.num_taps;
    var pos_half = 0u;
    var vel_half = n;
    if col.input_order != 0u {
        pos_half = n;
        vel_half = 0u;
    }
    var x: array<f32, NET_MAX_WIDTH>;
    for (var k = 0u; k < n; k++) {
        let t = words[dims.learned_taps_offset + col.taps_offset + k];
        let slot = (count + dims.learned_period - t) % len;
        x[pos_half + k] = col.pos_scale * bitcast<f32>(learned[at + slot]);
        x[vel_half + k] = col.vel_scale * bitcast<f32>(learned[at + len + slot]);
    }
    return dense_stack(col.first_layer, col.num_layers, x) * col.torque_scale;
}

// An LSTM column's output before the DC clip (twin of
// `LearnedStage::lstm_column`): reads the half of the state the count
// names (zeros when fresh), writes the other.
fn lstm_effort(col: LearnedColumn, env: u32, error: f32, vel: f32) -> f32 {
    let count = learned[2u * env];
    let fresh = learned[2u * env + 1u];
    let hidden = col.hidden;
    let gates = 4u * hidden;
    let half = col.lstm_layers * 2u * hidden;
    let at = learned_row(env) + col.state_offset;
    var old_at = at;
    var new_at = at + half;
    if count % 2u == 1u {
        old_at = at + half;
        new_at = at;
    }
    var x: array<f32, NET_MAX_WIDTH>;
    x[0] = error;
    x[1] = vel;
    for (var l = 0u; l < col.lstm_layers; l++) {
        let layer = net_layer(col.first_layer + l);
        let h_old = old_at + 2u * l * hidden;
        let h_new = new_at + 2u * l * hidden;
        for (var u = 0u; u < hidden; u++) {
            var pre: vec4<f32>;
            for (var q = 0u; q < 4u; q++) {
                let r = q * hidden + u;
                var from_x = 0.0;
                for (var i = 0u; i < layer.inputs; i++) {
                    from_x += x[i] * net_weight(layer.weight + i * gates + r);
                }
                var from_h = 0.0;
                for (var j = 0u; j < hidden; j++) {
                    let h = select(bitcast<f32>(learned[h_old + j]), 0.0, fresh != 0u);
                    from_h += h * net_weight(layer.weight_hh + j * gates + r);
                }
                pre[q] = (from_x + net_weight(layer.bias + r)) + (from_h + net_weight(layer.bias_hh + r));
            }
            let c_old = select(bitcast<f32>(learned[h_old + hidden + u]), 0.0, fresh != 0u);
            let hc = lstm_unit(pre, c_old);
            learned[h_new + u] = bitcast<u32>(hc.x);
            learned[h_new + hidden + u] = bitcast<u32>(hc.y);
        }
        for (var u = 0u; u < hidden; u++) {
            x[u] = bitcast<f32>(learned[h_new + u]);
        }
    }
    return dense_stack(col.first_layer + col.lstm_layers, col.num_layers - col.lstm_layers, x);
}

// One env's MuJoCo stage (twin of `MjStage::env_forces`): ctrl holds the
// forwarded controls on entry and `actuator_force` on exit; writes the
// act_dots and the joint efforts. Returns 1 when a next activation is not
// finite.
fn mj_env_stage(env: u32) -> u32 {
    let m = dims.num_mj;
    let row = env * dims.num_ctrl;
    let srow = env * 2u * m;
    let erow = env * dims.effort_width;
    var wild = false;
    for (var k = 0u; k < m; k++) {
        let a = mj[k];
        let u = mj_ctrl(a, ctrl[row + a.ctrl_column]);
        ctrl[row + a.ctrl_column] = u;
        wild = wild || abs(u) > MJ_MAX_CTRL;
    }
    var bad = 0u;
    for (var k = 0u; k < m; k++) {
        let a = mj[k];
        let c = row + a.ctrl_column;
        let u = select(ctrl[c], 0.0, wild);
        var length = 0.0;
        var velocity = 0.0;
        for (var p = 0u; p < a.path_len; p++) {
            let at = dims.mj_path_offset + 2u * (a.path_offset + p);
            let coef = bitcast<f32>(words[at + 1u]);
            length += coef * cmd_at(FIELD_POS, env, words[at]);
            velocity += coef * cmd_at(FIELD_VEL, env, words[at]);
        }
        let out = mj_force(a, u, mj_state[srow + k], a.gear * length, a.gear * velocity);
        ctrl[c] = out.force;
        mj_state[srow + m + k] = out.act_dot;
        bad |= nonfinite_bits(out.act_next);
    }
    for (var t = 0u; t < dims.num_tendon_limits; t++) {
        let at = dims.mj_tendon_offset + 4u * t;
        let lo = bitcast<f32>(words[at]);
        let hi = bitcast<f32>(words[at + 1u]);
        let first = words[at + 2u];
        let len = words[at + 3u];
        var total = 0.0;
        for (var i = first; i < first + len; i++) {
            total += ctrl[row + mj[words[i]].ctrl_column];
        }
        let scale = mj_tendon_scale(total, lo, hi);
        for (var i = first; i < first + len; i++) {
            let c = row + mj[words[i]].ctrl_column;
            ctrl[c] = ctrl[c] * scale;
        }
    }
    for (var j = 0u; j < dims.effort_width; j++) {
        effort[erow + j] = 0.0;
    }
    for (var k = 0u; k < m; k++) {
        let a = mj[k];
        let c = row + a.ctrl_column;
        let force = mj_force_limit(a, ctrl[c]);
        ctrl[c] = force;
        for (var p = 0u; p < a.path_len; p++) {
            let at = dims.mj_path_offset + 2u * (a.path_offset + p);
            let column = words[at];
            if column < dims.effort_width {
                effort[erow + column] += a.gear * bitcast<f32>(words[at + 1u]) * force;
            }
        }
    }
    for (var l = 0u; l < dims.num_joint_limits; l++) {
        let at = dims.mj_joint_offset + 3u * l;
        let j = erow + words[at];
        effort[j] = clip(effort[j], bitcast<f32>(words[at + 1u]), bitcast<f32>(words[at + 2u]));
    }
    return bad;
}

// Zeroes an env's joint efforts and act_dots (its activations stay).
fn mj_zero(env: u32) {
    let m = dims.num_mj;
    for (var k = 0u; k < m; k++) {
        mj_state[env * 2u * m + m + k] = 0.0;
    }
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
    if env == 0u {
        // env_stage, the only reader, ran in an earlier dispatch.
        counter[0] = counter[0] + 1u;
    }
    if env >= dims.num_envs {
        return;
    }
    if flags[env] != 0u {
        mj_zero(env);
        return;
    }
    let m = dims.num_mj;
    var bad = 0u;
    if m > 0u {
        bad |= mj_env_stage(env);
        for (var k = 0u; k < m; k++) {
            bad |= nonfinite_bits(mj_state[env * 2u * m + m + k]);
        }
        for (var j = 0u; j < dims.effort_width; j++) {
            bad |= nonfinite_bits(effort[env * dims.effort_width + j]);
        }
    }
    let row = env * dims.num_ctrl;
    for (var c = 0u; c < dims.num_ctrl; c++) {
        bad |= nonfinite_bits(ctrl[row + c]);
    }
    if bad != 0u {
        for (var c = 0u; c < dims.num_ctrl; c++) {
            ctrl[row + c] = 0.0;
        }
        mj_zero(env);
        flags[env] = 1u;
    } else {
        // Twin of `MjStage::commit`.
        for (var k = 0u; k < m; k++) {
            let at = env * 2u * m + k;
            mj_state[at] = mj_next_act(mj[k], mj_state[at], mj_state[at + m]);
        }
        // Twin of `LearnedStage::commit`.
        if dims.num_learned > 0u {
            learned[2u * env] = (learned[2u * env] + 1u) % dims.learned_period;
            learned[2u * env + 1u] = 0u;
        }
    }
}
