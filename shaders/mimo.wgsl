// MIMo's actuation models. Twin of crates/sinew-core/src/kinds/mimo.rs.

const MIMO_LMIN: f32 = 0.5;
const MIMO_LMAX: f32 = 1.6;
const MIMO_FVMAX: f32 = 1.2;
const MIMO_FPMAX: f32 = 1.3;
const MIMO_LCE_MIN: f32 = 0.75;
const MIMO_LCE_MAX: f32 = 1.05;
const MIMO_EPS: f32 = 1e-10;

fn mimo_bump(length: f32, a: f32, mid: f32, b: f32) -> f32 {
    let left = 0.5 * (a + mid);
    let right = 0.5 * (mid + b);
    if length <= a || length >= b {
        return 0.0;
    } else if length < left {
        let x = (length - a) * (length - a) * 0.5;
        return x / ((left - a) * (left - a));
    } else if length < mid {
        let x = (mid - length) * (mid - length) * 0.5;
        return 1.0 - x / ((mid - left) * (mid - left));
    } else if length < right {
        let x = (length - mid) * (length - mid) * 0.5;
        return 1.0 - x / ((right - mid) * (right - mid));
    }
    let x = (b - length) * (b - length) * 0.5;
    return x / ((b - right) * (b - right));
}

fn mimo_force_length(length: f32) -> f32 {
    return mimo_bump(length, MIMO_LMIN, 1.0, MIMO_LMAX)
        + 0.15 * mimo_bump(length, MIMO_LMIN, 0.5 * (MIMO_LMIN + 0.95), 0.95);
}

fn mimo_force_velocity(v: f32) -> f32 {
    let c = MIMO_FVMAX - 1.0;
    if v <= -1.0 {
        return 0.0;
    } else if v <= 0.0 {
        return (v + 1.0) * (v + 1.0);
    } else if v <= c {
        return MIMO_FVMAX - (c - v) * (c - v) / c;
    }
    return MIMO_FVMAX;
}

fn mimo_force_passive(length: f32) -> f32 {
    let b = 0.5 * (MIMO_LMAX + 1.0);
    if length <= 1.0 {
        return 0.0;
    } else if length <= b {
        let x = (length - 1.0) / (b - 1.0);
        return 0.25 * MIMO_FPMAX * x * x * x;
    }
    let x = (length - b) / (b - 1.0);
    return 0.25 * MIMO_FPMAX * (1.0 + 3.0 * x);
}

// (m1, lce1_ref, m2, lce2_ref).
fn mimo_parametrization(range_lo: f32, range_hi: f32, springref: f32) -> vec4<f32> {
    let phi_min = range_lo - springref;
    let phi_max = range_hi - springref;
    let span = MIMO_LCE_MAX - MIMO_LCE_MIN + MIMO_EPS;
    let m1 = span / (phi_max - phi_min + MIMO_EPS);
    let m2 = span / (phi_min - phi_max - MIMO_EPS);
    return vec4<f32>(m1, MIMO_LCE_MIN - m1 * phi_min, m2, MIMO_LCE_MIN - m2 * phi_max);
}

fn mimo_muscle_force(m: f32, lce_ref: f32, vmax: f32, phi: f32, dq: f32, act: f32) -> f32 {
    let lce = phi * m + lce_ref;
    let lce_dot = m * dq;
    return mimo_force_length(lce) * mimo_force_velocity(lce_dot / vmax) * act + mimo_force_passive(lce);
}

fn mimo_activation_step(act: f32, goal: f32, timestep: f32, tau: f32) -> f32 {
    return clip(act + (timestep * (goal - act)) / tau, 0.0, 1.0);
}

fn mimo_muscle_law() -> f32 {
    let h = io_param(MIMO_MUSCLE_TIMESTEP);
    let tau = io_param(MIMO_MUSCLE_TAU);
    let a1 = mimo_activation_step(io_state(MIMO_MUSCLE_ACTIVATION_NEG), clip(io_input(MIMO_MUSCLE_IN_MUSCLE_TARGET_NEG), 0.0, 1.0), h, tau);
    let a2 = mimo_activation_step(io_state(MIMO_MUSCLE_ACTIVATION_POS), clip(io_input(MIMO_MUSCLE_IN_MUSCLE_TARGET_POS), 0.0, 1.0), h, tau);
    let qs = io_param(MIMO_MUSCLE_SPRINGREF);
    let p = mimo_parametrization(io_param(MIMO_MUSCLE_RANGE_LO), io_param(MIMO_MUSCLE_RANGE_HI), qs);
    let phi = io_pos() - qs;
    let dq = io_vel();
    let vmax = io_param(MIMO_MUSCLE_VMAX);
    let f1 = mimo_muscle_force(p.x, p.y, vmax, phi, dq, a1);
    let f2 = mimo_muscle_force(p.z, p.w, vmax, phi, dq, a2);
    let fmax1 = io_param(MIMO_MUSCLE_FMAX_NEG);
    let fmax2 = io_param(MIMO_MUSCLE_FMAX_POS);
    io_set_state(MIMO_MUSCLE_ACTIVATION_NEG, a1);
    io_set_state(MIMO_MUSCLE_ACTIVATION_POS, a2);
    io_set_output(MIMO_MUSCLE_OUT_MUSCLE_ACTIVATION_NEG, a1);
    io_set_output(MIMO_MUSCLE_OUT_MUSCLE_ACTIVATION_POS, a2);
    io_set_output(MIMO_MUSCLE_OUT_MUSCLE_FORCE_NEG, f1 * fmax1);
    io_set_output(MIMO_MUSCLE_OUT_MUSCLE_FORCE_POS, f2 * fmax2);
    io_set_output(MIMO_MUSCLE_OUT_MUSCLE_COST, a1 * a1 * fmax1 + a2 * a2 * fmax2);
    return -(p.x * f1 * fmax1 + p.z * f2 * fmax2);
}

fn mimo_spring_damper_law() -> f32 {
    let u = clip(io_target(FIELD_EFFORT), io_param(MIMO_SPRING_DAMPER_ACTION_LO), io_param(MIMO_SPRING_DAMPER_ACTION_HI));
    let gear = io_param(MIMO_SPRING_DAMPER_GEAR);
    io_set_output(MIMO_SPRING_DAMPER_OUT_MIMO_TORQUE, gear * u);
    io_set_output(MIMO_SPRING_DAMPER_OUT_MIMO_COST, abs(u * u * gear));
    return u;
}

fn mimo_positional_law() -> f32 {
    return clip(io_target(FIELD_POSITION), io_param(MIMO_POSITIONAL_RANGE_LO), io_param(MIMO_POSITIONAL_RANGE_HI));
}
