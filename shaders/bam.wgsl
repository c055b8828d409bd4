// BAM's servo models. Twin of crates/sinew-core/src/kinds/bam.rs.

// The friction budget (F_s, K_v), the coefficients from parameter slot
// `first` on in `FRICTION_PARAMS` order (twin of `bam_friction`).
fn bam_friction(first: u32, tau_m: f32, tau_e: f32, dq: f32) -> vec2<f32> {
    let load = abs(tau_e - tau_m);
    let directional = abs(tau_e * io_param(first + 8u) - tau_m * io_param(first + 7u));
    let directional_stribeck = abs(tau_e * io_param(first + 10u) - tau_m * io_param(first + 9u));
    let x = abs(dq / io_param(first + 3u));
    // pow(0, a) is left to the implementation: 0, as in Rust.
    let s = exp(-select(pow(x, io_param(first + 4u)), 0.0, x == 0.0));
    let ae = abs(tau_e);
    let am = abs(tau_m);
    var quad = 0.0;
    if ae < am {
        quad = io_param(first + 12u) * (ae * ae);
    } else if ae > am {
        quad = io_param(first + 11u) * (am * am);
    }
    let gate = select(0.0, 1.0, sign(tau_e) != sign(tau_m));
    var fs = io_param(first);
    fs += io_param(first + 5u) * load;
    fs += directional;
    fs += s * io_param(first + 2u);
    fs += io_param(first + 6u) * load * s;
    fs += directional_stribeck * s;
    fs += s * quad * gate;
    return vec2<f32>(fs, io_param(first + 1u));
}

// Writes a servo's friction outputs (twin of `write_friction`): the kind's
// planes and first friction slot.
fn bam_write_friction(first: u32, tau_e: u32, frictionloss: u32, damping: u32, tau_m: f32) {
    let budget = bam_friction(first, tau_m, io_input(tau_e), io_vel());
    io_set_output(frictionloss, budget.x);
    io_set_output(damping, budget.y);
}

// k_t·V/R − k_t²·q̇/R (twin of `dc_motor_torque`).
fn bam_dc_motor_torque(kt: f32, resistance: f32, volts: f32, dq: f32) -> f32 {
    var tau = kt * volts / resistance;
    tau -= kt * kt * dq / resistance;
    return tau;
}

// Twin of `voltage_duty`.
fn bam_voltage_duty(
    goal: f32,
    q: f32,
    dq: f32,
    kp: f32,
    error_gain: f32,
    vin: f32,
    kt: f32,
    resistance: f32,
    max_current: f32,
    max_pwm: f32,
) -> f32 {
    var duty = (goal - q) * kp * error_gain;
    if nonfinite_bits(max_current) == 0u {
        let lo = (kt * dq - resistance * max_current) / vin;
        let hi = (kt * dq + resistance * max_current) / vin;
        duty = clip(duty, lo, hi);
    }
    return clip(duty, -max_pwm, max_pwm);
}

// The voltage-controlled servo (twin of `<BamVoltageCfg as Kind>::law`).
fn bam_voltage_law() -> f32 {
    let kt = io_param(BAM_VOLTAGE_KT);
    let resistance = io_param(BAM_VOLTAGE_RESISTANCE);
    let vin = io_param(BAM_VOLTAGE_VIN);
    let dq = io_vel();
    let duty = bam_voltage_duty(
        io_target(FIELD_POSITION),
        io_pos(),
        dq,
        io_param(BAM_VOLTAGE_KP),
        io_param(BAM_VOLTAGE_ERROR_GAIN),
        vin,
        kt,
        resistance,
        io_param(BAM_VOLTAGE_MAX_CURRENT),
        io_param(BAM_VOLTAGE_MAX_PWM),
    );
    let tau = bam_dc_motor_torque(kt, resistance, vin * duty, dq) * io_input(BAM_VOLTAGE_IN_TORQUE_ENABLE);
    bam_write_friction(
        BAM_VOLTAGE_FRICTION_BASE,
        BAM_VOLTAGE_IN_EXTERNAL_TORQUE,
        BAM_VOLTAGE_OUT_FRICTIONLOSS,
        BAM_VOLTAGE_OUT_DAMPING,
        tau,
    );
    return tau;
}
