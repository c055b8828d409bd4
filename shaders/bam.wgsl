// BAM's servo models. Twin of crates/sinew-core/src/kinds/bam.rs.

// The friction budget (F_s, K_v), the coefficients from parameter slot
// `first` on in `FRICTION_PARAMS` order (twin of `bam_friction`).
fn bam_friction(first: u32, tau_m: f32, tau_e: f32, dq: f32) -> vec2<f32> {
    let load = abs(tau_e - tau_m);
    let directional = abs(tau_e * io_param(first + 8u) - tau_m * io_param(first + 7u));
    let directional_stribeck = abs(tau_e * io_param(first + 10u) - tau_m * io_param(first + 9u));
    let x = abs(dq / io_param(first + 3u));
    // pow(0, a) is left to the implementation: 0, as in Rust.
    let s = fexp(-select(pow(x, io_param(first + 4u)), 0.0, x == 0.0));
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

// A servo kind's law after its motor (twin of `servo_law`): `motor` is
// (command, τ_m); the friction and command outputs, given the kind's first
// friction slot and its planes.
fn bam_servo_law(motor: vec2<f32>, first: u32, tau_e: u32, frictionloss: u32, damping: u32, command: u32) -> f32 {
    let budget = bam_friction(first, motor.y, io_input(tau_e), io_vel());
    io_set_output(frictionloss, budget.x);
    io_set_output(damping, budget.y);
    io_set_output(command, motor.x);
    return motor.y;
}

// One testbench step after the motor (twin of `bench_law`): `motor` is
// (command, τ_m); the servo's first friction slot, the bench's first (mass)
// and dt slots, its q and dq state slots and its output planes.
fn bam_bench_step(
    motor: vec2<f32>,
    first: u32,
    mass: u32,
    dt_slot: u32,
    q: u32,
    dq: u32,
    outputs: BamBenchOutputs,
) -> f32 {
    let tau_m = motor.y;
    let m = io_param(mass);
    let l = io_param(mass + 1u);
    let ma = io_param(mass + 2u);
    let armature = io_param(mass + 3u);
    let q_offset = io_param(mass + 4u);
    let dt = io_param(dt_slot);
    let pos = io_state(q);
    let vel = io_state(dq);
    let tau_e = (m + ma / 2.0) * BAM_GRAVITY * l * sin(pos + q_offset);
    var inertia = m * (l * l);
    inertia += ma / 3.0 * (l * l);
    inertia += armature;
    let budget = bam_friction(first, tau_m, tau_e, vel);
    var net = tau_m + tau_e;
    let tau_stop = inertia / dt * vel + net;
    let tau_f = -sign(tau_stop) * min(abs(tau_stop), budget.x + budget.y * abs(vel));
    net += tau_f;
    let ddq = net / inertia;
    let vel_next = clip(vel + ddq * dt, -BAM_MAX_VELOCITY, BAM_MAX_VELOCITY);
    let pos_next = pos + (vel_next * dt + 0.5 * ddq * (dt * dt));
    io_set_state(q, pos_next);
    io_set_state(dq, vel_next);
    io_set_output(outputs.frictionloss, budget.x);
    io_set_output(outputs.damping, budget.y);
    io_set_output(outputs.command, motor.x);
    io_set_output(outputs.acceleration, ddq);
    io_set_output(outputs.gravity_torque, tau_e);
    return tau_m;
}

// A bench kind's output planes.
struct BamBenchOutputs {
    frictionloss: u32,
    damping: u32,
    command: u32,
    acceleration: u32,
    gravity_torque: u32,
}

// `BENCH_GRAVITY` and `BENCH_MAX_VELOCITY`.
const BAM_GRAVITY: f32 = -9.80665;
const BAM_MAX_VELOCITY: f32 = 100.0;

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

// ---- voltage (twin of `<BamVoltageCfg as Servo>::motor`)
fn bam_voltage_motor(goal: f32, q: f32, dq: f32, torque_on: f32) -> vec2<f32> {
    let kt = io_param(BAM_VOLTAGE_KT);
    let resistance = io_param(BAM_VOLTAGE_RESISTANCE);
    let vin = io_param(BAM_VOLTAGE_VIN);
    let duty = bam_voltage_duty(
        goal,
        q,
        dq,
        io_param(BAM_VOLTAGE_KP),
        io_param(BAM_VOLTAGE_ERROR_GAIN),
        vin,
        kt,
        resistance,
        io_param(BAM_VOLTAGE_MAX_CURRENT),
        io_param(BAM_VOLTAGE_MAX_PWM),
    );
    let volts = vin * duty;
    return vec2<f32>(volts, bam_dc_motor_torque(kt, resistance, volts, dq) * torque_on);
}

fn bam_voltage_law() -> f32 {
    let motor = bam_voltage_motor(io_target(FIELD_POSITION), io_pos(), io_vel(), io_input(BAM_VOLTAGE_IN_TORQUE_ENABLE));
    return bam_servo_law(motor, BAM_VOLTAGE_FRICTION_BASE, BAM_VOLTAGE_IN_EXTERNAL_TORQUE, BAM_VOLTAGE_OUT_FRICTIONLOSS, BAM_VOLTAGE_OUT_DAMPING, BAM_VOLTAGE_OUT_COMMAND);
}

fn bam_voltage_bench_law() -> f32 {
    let motor = bam_voltage_motor(
        io_target(FIELD_POSITION),
        io_state(BAM_VOLTAGE_BENCH_Q),
        io_state(BAM_VOLTAGE_BENCH_DQ),
        io_input(BAM_VOLTAGE_BENCH_IN_TORQUE_ENABLE),
    );
    return bam_bench_step(motor, BAM_VOLTAGE_FRICTION_BASE, BAM_VOLTAGE_BENCH_MASS, BAM_VOLTAGE_BENCH_DT, BAM_VOLTAGE_BENCH_Q, BAM_VOLTAGE_BENCH_DQ, BamBenchOutputs(BAM_VOLTAGE_BENCH_OUT_FRICTIONLOSS, BAM_VOLTAGE_BENCH_OUT_DAMPING, BAM_VOLTAGE_BENCH_OUT_COMMAND, BAM_VOLTAGE_BENCH_OUT_ACCELERATION, BAM_VOLTAGE_BENCH_OUT_GRAVITY_TORQUE));
}

// ---- STS3215 (twin of `<BamSts3215Cfg as Servo>::motor`)
fn bam_sts3215_motor(goal: f32, q: f32, dq: f32, torque_on: f32) -> vec2<f32> {
    let step = io_param(BAM_STS3215_MAX_VELOCITY) * io_param(BAM_STS3215_DT);
    let previous = io_state(BAM_STS3215_TARGET_SMOOTH);
    let smoothed = clip(goal, previous - step, previous + step);
    io_set_state(BAM_STS3215_TARGET_SMOOTH, smoothed);
    let duty = (smoothed - q) * io_param(BAM_STS3215_KP) * io_param(BAM_STS3215_ERROR_GAIN) * io_param(BAM_STS3215_ERROR_GAIN_RATIO);
    let max_pwm = io_param(BAM_STS3215_MAX_PWM);
    let volts = io_param(BAM_STS3215_VIN) * clip(duty, -max_pwm, max_pwm);
    return vec2<f32>(volts, bam_dc_motor_torque(io_param(BAM_STS3215_KT), io_param(BAM_STS3215_RESISTANCE), volts, dq) * torque_on);
}

fn bam_sts3215_law() -> f32 {
    let motor = bam_sts3215_motor(io_target(FIELD_POSITION), io_pos(), io_vel(), io_input(BAM_STS3215_IN_TORQUE_ENABLE));
    return bam_servo_law(motor, BAM_STS3215_FRICTION_BASE, BAM_STS3215_IN_EXTERNAL_TORQUE, BAM_STS3215_OUT_FRICTIONLOSS, BAM_STS3215_OUT_DAMPING, BAM_STS3215_OUT_COMMAND);
}

fn bam_sts3215_bench_law() -> f32 {
    let motor = bam_sts3215_motor(
        io_target(FIELD_POSITION),
        io_state(BAM_STS3215_BENCH_Q),
        io_state(BAM_STS3215_BENCH_DQ),
        io_input(BAM_STS3215_BENCH_IN_TORQUE_ENABLE),
    );
    return bam_bench_step(motor, BAM_STS3215_FRICTION_BASE, BAM_STS3215_BENCH_MASS, BAM_STS3215_BENCH_DT, BAM_STS3215_BENCH_Q, BAM_STS3215_BENCH_DQ, BamBenchOutputs(BAM_STS3215_BENCH_OUT_FRICTIONLOSS, BAM_STS3215_BENCH_OUT_DAMPING, BAM_STS3215_BENCH_OUT_COMMAND, BAM_STS3215_BENCH_OUT_ACCELERATION, BAM_STS3215_BENCH_OUT_GRAVITY_TORQUE));
}

// ---- current (twins of `current_command`, `xl330_bus_torque` and
// `<BamCurrentCfg as Servo>::motor`)
fn bam_current_command(goal: f32, q: f32, dq: f32, kp: f32, error_gain: f32, vin: f32, kt: f32, resistance: f32, current_limit: f32) -> f32 {
    let current = (goal - q) * kp * error_gain;
    let hi = 1.0 / resistance * (vin - kt * dq);
    let lo = 1.0 / resistance * (-vin - kt * dq);
    return clip(clip(current, lo, hi), -current_limit, current_limit);
}

fn bam_xl330_bus_torque(current: f32, dq: f32, vin: f32, kt: f32, resistance: f32) -> f32 {
    let emf = kt * dq;
    let disc = emf * emf + 4.0 * vin * resistance * abs(current);
    let duty = clip((emf + sign(current) * sqrt(disc)) / (2.0 * vin), -1.0, 1.0);
    let phase = (duty * vin - emf) / resistance;
    return kt * phase;
}

fn bam_current_motor(goal: f32, q: f32, dq: f32, torque_on: f32) -> vec2<f32> {
    let kt = io_param(BAM_CURRENT_KT);
    let resistance = io_param(BAM_CURRENT_RESISTANCE);
    let vin = io_param(BAM_CURRENT_VIN);
    let current = bam_current_command(goal, q, dq, io_param(BAM_CURRENT_KP), io_param(BAM_CURRENT_ERROR_GAIN), vin, kt, resistance, io_param(BAM_CURRENT_CURRENT_LIMIT));
    var tau = kt * current;
    if io_data(0u) != 0.0 {
        tau = bam_xl330_bus_torque(current, dq, vin, kt, resistance);
    }
    return vec2<f32>(current, tau * torque_on);
}

fn bam_current_law() -> f32 {
    let motor = bam_current_motor(io_target(FIELD_POSITION), io_pos(), io_vel(), io_input(BAM_CURRENT_IN_TORQUE_ENABLE));
    return bam_servo_law(motor, BAM_CURRENT_FRICTION_BASE, BAM_CURRENT_IN_EXTERNAL_TORQUE, BAM_CURRENT_OUT_FRICTIONLOSS, BAM_CURRENT_OUT_DAMPING, BAM_CURRENT_OUT_COMMAND);
}

fn bam_current_bench_law() -> f32 {
    let motor = bam_current_motor(
        io_target(FIELD_POSITION),
        io_state(BAM_CURRENT_BENCH_Q),
        io_state(BAM_CURRENT_BENCH_DQ),
        io_input(BAM_CURRENT_BENCH_IN_TORQUE_ENABLE),
    );
    return bam_bench_step(motor, BAM_CURRENT_FRICTION_BASE, BAM_CURRENT_BENCH_MASS, BAM_CURRENT_BENCH_DT, BAM_CURRENT_BENCH_Q, BAM_CURRENT_BENCH_DQ, BamBenchOutputs(BAM_CURRENT_BENCH_OUT_FRICTIONLOSS, BAM_CURRENT_BENCH_OUT_DAMPING, BAM_CURRENT_BENCH_OUT_COMMAND, BAM_CURRENT_BENCH_OUT_ACCELERATION, BAM_CURRENT_BENCH_OUT_GRAVITY_TORQUE));
}

// ---- eRob (twin of `<BamErobCfg as Servo>::motor`)
fn bam_erob_motor(goal: f32, q: f32, dq: f32, torque_on: f32) -> vec2<f32> {
    let kp = io_param(BAM_EROB_KP);
    let kt = io_param(BAM_EROB_KT);
    let resistance = io_param(BAM_EROB_RESISTANCE);
    let amps = (goal - q) * kp + io_param(BAM_EROB_DAMPING) * sqrt(kp) * (0.0 - dq);
    let max_amps = io_param(BAM_EROB_MAX_AMPS);
    let command = clip(amps, -max_amps, max_amps);
    let tau = kt * (command * torque_on);
    let bound = kt / resistance * io_param(BAM_EROB_MAX_VOLTS);
    let emf = kt * kt * dq / resistance;
    return vec2<f32>(command, clip(tau, -bound - emf, bound - emf));
}

fn bam_erob_law() -> f32 {
    let motor = bam_erob_motor(io_target(FIELD_POSITION), io_pos(), io_vel(), io_input(BAM_EROB_IN_TORQUE_ENABLE));
    return bam_servo_law(motor, BAM_EROB_FRICTION_BASE, BAM_EROB_IN_EXTERNAL_TORQUE, BAM_EROB_OUT_FRICTIONLOSS, BAM_EROB_OUT_DAMPING, BAM_EROB_OUT_COMMAND);
}

fn bam_erob_bench_law() -> f32 {
    let motor = bam_erob_motor(
        io_target(FIELD_POSITION),
        io_state(BAM_EROB_BENCH_Q),
        io_state(BAM_EROB_BENCH_DQ),
        io_input(BAM_EROB_BENCH_IN_TORQUE_ENABLE),
    );
    return bam_bench_step(motor, BAM_EROB_FRICTION_BASE, BAM_EROB_BENCH_MASS, BAM_EROB_BENCH_DT, BAM_EROB_BENCH_Q, BAM_EROB_BENCH_DQ, BamBenchOutputs(BAM_EROB_BENCH_OUT_FRICTIONLOSS, BAM_EROB_BENCH_OUT_DAMPING, BAM_EROB_BENCH_OUT_COMMAND, BAM_EROB_BENCH_OUT_ACCELERATION, BAM_EROB_BENCH_OUT_GRAVITY_TORQUE));
}

// ---- Go1 (twin of `<BamGo1Cfg as Servo>::motor`)
fn bam_go1_motor(goal: f32, q: f32, dq: f32, torque_on: f32) -> vec2<f32> {
    var tau = (goal - q) * io_param(BAM_GO1_KP) * io_param(BAM_GO1_RATIO);
    tau += io_param(BAM_GO1_DAMPING) * (0.0 - dq);
    let max_torque = io_param(BAM_GO1_MAX_TORQUE);
    let command = clip(tau, -max_torque, max_torque);
    return vec2<f32>(command, command * torque_on);
}

fn bam_go1_law() -> f32 {
    let motor = bam_go1_motor(io_target(FIELD_POSITION), io_pos(), io_vel(), io_input(BAM_GO1_IN_TORQUE_ENABLE));
    return bam_servo_law(motor, BAM_GO1_FRICTION_BASE, BAM_GO1_IN_EXTERNAL_TORQUE, BAM_GO1_OUT_FRICTIONLOSS, BAM_GO1_OUT_DAMPING, BAM_GO1_OUT_COMMAND);
}

fn bam_go1_bench_law() -> f32 {
    let motor = bam_go1_motor(
        io_target(FIELD_POSITION),
        io_state(BAM_GO1_BENCH_Q),
        io_state(BAM_GO1_BENCH_DQ),
        io_input(BAM_GO1_BENCH_IN_TORQUE_ENABLE),
    );
    return bam_bench_step(motor, BAM_GO1_FRICTION_BASE, BAM_GO1_BENCH_MASS, BAM_GO1_BENCH_DT, BAM_GO1_BENCH_Q, BAM_GO1_BENCH_DQ, BamBenchOutputs(BAM_GO1_BENCH_OUT_FRICTIONLOSS, BAM_GO1_BENCH_OUT_DAMPING, BAM_GO1_BENCH_OUT_COMMAND, BAM_GO1_BENCH_OUT_ACCELERATION, BAM_GO1_BENCH_OUT_GRAVITY_TORQUE));
}

// ---- the budget alone (twin of `<BamFriction as Kind>::law`)
fn bam_friction_law() -> f32 {
    let tau = io_target(FIELD_EFFORT);
    let budget = bam_friction(0u, tau, io_input(BAM_FRICTION_IN_EXTERNAL_TORQUE), io_vel());
    io_set_output(BAM_FRICTION_OUT_FRICTIONLOSS, budget.x);
    io_set_output(BAM_FRICTION_OUT_DAMPING, budget.y);
    return tau;
}
