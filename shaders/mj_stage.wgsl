// The per-env MuJoCo stage, run by step.wgsl's `finish_env`: each actuator
// with this env's parameters, its length and velocity, the force coupling
// and the joint efforts (twin of `MjStage` in
// crates/sinew-core/src/plan/mujoco.rs).

// Actuator `k` with this env's parameters (`row`: the env's first ctrl
// element) where it reads them from the parameter table (twin of
// `MjActuator::with_params`).
fn mj_env_actuator(k: u32, row: u32) -> MjActuator {
    let compiled = mj[k];
    if (compiled.flags & MJ_TABLE_PARAMS) != 0u {
        return plan_mj_table_actuator(compiled, row);
    }
    return compiled;
}

// How many of `gainprm`, `biasprm` and `dynprm` (from the first) the law
// of an actuator of these types reads (`mj_force`, `mj_force_after`): the
// others keep their compiled values, which no step reads.
fn mj_table_counts(a: MjActuator) -> vec3<u32> {
    let dc = a.gain_type == MJ_GAIN_DCMOTOR || a.bias_type == MJ_BIAS_DCMOTOR;
    var gain = 1u;
    switch a.gain_type {
        case MJ_GAIN_AFFINE: { gain = 3u; }
        case MJ_GAIN_MUSCLE: { gain = 9u; }
        default: {}
    }
    var bias = 0u;
    switch a.bias_type {
        case MJ_BIAS_AFFINE, MJ_BIAS_DCMOTOR: { bias = 3u; }
        case MJ_BIAS_MUSCLE: { bias = 9u; }
        default: {}
    }
    var dynamics = 0u;
    switch a.dyn_type {
        case MJ_DYN_FILTER, MJ_DYN_FILTER_EXACT: { dynamics = 1u; }
        case MJ_DYN_MUSCLE: { dynamics = 3u; }
        default: {}
    }
    let counts = vec3<u32>(gain, bias, dynamics);
    // A dcmotor gain or bias reads gainprm[1] and, for whether it is
    // stateless, dynprm[0].
    return select(counts, max(counts, vec3<u32>(2u, 0u, 1u)), dc);
}

// `compiled` with this env's parameters from the parameter table: those
// its law reads (`mj_table_counts`). All 28 were 112 of the about 170
// bytes an element of position servos moves in the law stage, whose 135 µs
// at 65536 × 29 on an H200 ran near the device's copy bandwidth.
fn mj_table_actuator(compiled: MjActuator, row: u32) -> MjActuator {
    var a = compiled;
    let at = row + a.ctrl_column;
    let n = mj_table_counts(compiled);
    for (var q = 0u; q < 9u; q++) {
        if q < n.x {
            a.gainprm[q] = params[(MJ_GENERAL_GAINPRM0 + q) * plane() + at];
        }
        if q < n.y {
            a.biasprm[q] = params[(MJ_GENERAL_BIASPRM0 + q) * plane() + at];
        }
    }
    for (var q = 0u; q < 3u; q++) {
        if q < n.z {
            a.dynprm[q] = params[(MJ_GENERAL_DYNPRM0 + q) * plane() + at];
        }
    }
    a.gear = params[MJ_GENERAL_GEAR * plane() + at];
    a.ctrl_lo = params[MJ_GENERAL_CTRL_LO * plane() + at];
    a.ctrl_hi = params[MJ_GENERAL_CTRL_HI * plane() + at];
    a.force_lo = params[MJ_GENERAL_FORCE_LO * plane() + at];
    a.force_hi = params[MJ_GENERAL_FORCE_HI * plane() + at];
    a.act_lo = params[MJ_GENERAL_ACT_LO * plane() + at];
    a.act_hi = params[MJ_GENERAL_ACT_HI * plane() + at];
    a.flags |= MJ_CTRL_LIMITED | MJ_FORCE_LIMITED | MJ_ACT_LIMITED;
    if a.dyn_type == MJ_DYN_FILTER_EXACT && a.dynprm[0] != compiled.dynprm[0] {
        // In f32 here (the compiled step is f64's).
        let tau = max(a.dynprm[0], MJ_MINVAL);
        a.act_step = tau * -mj_expm1(-fdiv(a.timestep, tau));
    }
    return a;
}

// An actuator's length and velocity along its path (twin of
// `MjStage::length_velocity`).
fn mj_length_velocity(a: MjActuator, env: u32) -> vec2<f32> {
    var length = 0.0;
    var velocity = 0.0;
    for (var p = 0u; p < a.path_len; p++) {
        let at = dims.mj_path_offset + 2u * (a.path_offset + p);
        let coef = bitcast<f32>(words[at + 1u]);
        length += coef * cmd_at(FIELD_POS, env, words[at]);
        velocity += coef * cmd_at(FIELD_VEL, env, words[at]);
    }
    return vec2<f32>(a.gear * length, a.gear * velocity);
}

// One env's MuJoCo stage (twin of `MjStage::env_forces`): ctrl holds the
// forwarded controls on entry and `actuator_force` on exit; writes the
// act_dots (an output plane), the next activations (the next state's
// MJ_ACT_SLOT) and the joint efforts. `known_wild`: the law stage found a
// control past MuJoCo's bound (`mj_element`), so every control enters the
// laws as 0, whatever ctrl holds. Returns 1 when a next activation is not
// finite.
fn mj_env_stage(env: u32, known_wild: bool) -> u32 {
    let m = dims.num_mj;
    let row = env * dims.num_ctrl;
    let act_dot = outputs_offset() + words[dims.mj_members_offset + 2u] * plane();
    let erow = env * dims.effort_width;
    var wild = known_wild;
    for (var k = 0u; k < m; k++) {
        let a = mj_env_actuator(k, row);
        let u = mj_ctrl(a, ctrl[row + a.ctrl_column]);
        ctrl[row + a.ctrl_column] = u;
        wild = wild || abs(u) > MJ_MAX_CTRL;
    }
    var bad = 0u;
    for (var k = 0u; k < m; k++) {
        let a = mj_env_actuator(k, row);
        let c = row + a.ctrl_column;
        let u = select(ctrl[c], 0.0, wild);
        let lv = mj_length_velocity(a, env);
        let out = mj_force(a, u, state[MJ_ACT_SLOT * plane() + c], lv.x, lv.y);
        ctrl[c] = out.force;
        state[act_dot + c] = out.act_dot;
        state[(dims.num_state_slots + MJ_ACT_SLOT) * plane() + c] = out.act_next;
        bad |= nonfinite_bits(out.act_next);
    }
    let members = dims.mj_members_offset;
    let raw = outputs_offset() + words[members + 1u] * plane() + row;
    for (var t = 0u; t < dims.num_tendon_limits; t++) {
        let at = dims.mj_tendon_offset + 4u * t;
        let lo = bitcast<f32>(words[at]);
        let hi = bitcast<f32>(words[at + 1u]);
        let first = words[at + 2u];
        let len = words[at + 3u];
        var total = 0.0;
        for (var i = first; i < first + len; i++) {
            let member = members + 3u + 4u * words[i];
            let c = words[member];
            if words[member + 3u] == MJ_FROM_LAW {
                total += state[raw + c];
            } else {
                total += ctrl[row + c];
            }
        }
        let scale = mj_tendon_scale(total, lo, hi);
        for (var i = first; i < first + len; i++) {
            let member = members + 3u + 4u * words[i];
            let c = words[member];
            if words[member + 3u] != MJ_FROM_LAW {
                ctrl[row + c] = ctrl[row + c] * scale;
            } else if scale != 1.0 {
                let column = columns[c];
                let command = command_at(env, column.cmd_column);
                restart_next_state(row + c);
                ctrl[row + c] = eval_law(env, c, column, command, scale);
            }
        }
    }
    for (var k = 0u; k < m; k++) {
        let a = mj_env_actuator(k, row);
        let c = row + a.ctrl_column;
        let force = mj_force_limit(a, ctrl[c]);
        if a.bias_type == MJ_BIAS_DCMOTOR {
            ctrl[c] = mj_force_after(a, force, mj_length_velocity(a, env).x);
        } else {
            ctrl[c] = force;
        }
    }
    for (var j = 0u; j < dims.effort_width; j++) {
        effort[erow + j] = 0.0;
    }
    for (var k = 0u; k < words[members]; k++) {
        let member = members + 3u + 4u * k;
        let value = ctrl[row + words[member]];
        // An actuator's ctrl is its force; a law member's its effort.
        var factor = 1.0;
        if words[member + 3u] != MJ_FROM_LAW {
            factor = mj_env_actuator(words[member + 3u], row).gear;
        }
        let path_offset = words[member + 1u];
        for (var p = 0u; p < words[member + 2u]; p++) {
            let at = dims.mj_path_offset + 2u * (path_offset + p);
            let column = words[at];
            if column < dims.effort_width {
                effort[erow + column] += factor * bitcast<f32>(words[at + 1u]) * value;
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

// One actuator's result in the per-element stage.
struct MjElement {
    force: f32,
    // 1 when its next activation or joint effort is not finite.
    bad: u32,
    // Its control is past MuJoCo's bound, which zeroes every control of
    // the env: the env's end computes its actuators again (`finish_env`
    // runs `mj_env_stage` for the env, `env_stage` `wild_element`).
    wild: bool,
}

// Actuator `k` of `env` in a stage computed per element
// (`Dims.mj_element_offset`), `forwarded` its law's value: what
// `mj_env_stage` computes for it, in the same operations (twin of
// `MjStage::plain_force`), when no control of the env is past MuJoCo's
// bound, or with `known_wild` when one is (its control then enters as 0).
// Writes its act_dot, next activation and the effort of each joint of its
// path, which it alone drives.
fn mj_element(env: u32, k: u32, forwarded: f32, known_wild: bool) -> MjElement {
    let row = env * dims.num_ctrl;
    let a = mj_env_actuator(k, row);
    let c = row + a.ctrl_column;
    let u = select(mj_ctrl(a, forwarded), 0.0, known_wild);
    let lv = mj_length_velocity(a, env);
    let out = mj_force(a, u, state[MJ_ACT_SLOT * plane() + c], lv.x, lv.y);
    let act_dot = outputs_offset() + words[dims.mj_members_offset + 2u] * plane();
    state[act_dot + c] = out.act_dot;
    state[(dims.num_state_slots + MJ_ACT_SLOT) * plane() + c] = out.act_next;
    var bad = nonfinite_bits(out.act_next);
    var force = mj_force_limit(a, out.force);
    if a.bias_type == MJ_BIAS_DCMOTOR {
        force = mj_force_after(a, force, lv.x);
    }
    for (var p = 0u; p < a.path_len; p++) {
        bad |= mj_element_effort(env, a.path_offset + p, a.gear, force);
    }
    return MjElement(force, bad, abs(u) > MJ_MAX_CTRL);
}

// A law member's part in a stage computed per element, `entry` its one
// path entry and `value` its law's value (its effort): what `mj_env_stage`
// computes for it (twin of `MjStage::law_efforts`, and of the joint ranges
// of `MjStage::env_forces`). Returns 1 when its joint effort is not finite.
fn mj_law_element(env: u32, entry: u32, value: f32) -> u32 {
    return mj_element_effort(env, entry, 1.0, value);
}

// Writes the joint effort of a member of a stage computed per element
// (its joint's one writer), `entry` its path entry of that joint, `factor` its gear
// (1 for a law member) and `value` its force, as `mj_env_stage` sums it
// from 0 and clips it to the joint's range. Returns 1 when that effort is
// not finite.
fn mj_element_effort(env: u32, entry: u32, factor: f32, value: f32) -> u32 {
    let at = dims.mj_path_offset + 2u * entry;
    let joint = words[at];
    if joint >= dims.effort_width {
        return 0u;
    }
    var effort_j = 0.0 + factor * bitcast<f32>(words[at + 1u]) * value;
    for (var l = 0u; l < dims.num_joint_limits; l++) {
        let limit = dims.mj_joint_offset + 3u * l;
        if words[limit] == joint {
            effort_j = clip(effort_j, bitcast<f32>(words[limit + 1u]), bitcast<f32>(words[limit + 2u]));
        }
    }
    effort[env * dims.effort_width + joint] = effort_j;
    return nonfinite_bits(effort_j);
}
