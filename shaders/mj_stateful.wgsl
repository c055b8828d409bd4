// MuJoCo 4's pid and dcmotor. Twin of crates/sinew-core/src/kinds/mj_stateful/{pid,dcmotor}.rs.

const MJ_IN_POS: u32 = 1u;
const MJ_IN_VEL: u32 = 2u;
const MJ_IN_FF: u32 = 4u;
const MJ_IN_VOLTAGE: u32 = 8u;

fn mj_expm1(x: f32) -> f32 {
    if abs(x) < 0.1 {
        let x2 = x * x;
        return x + x2 * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0)))));
    }
    return fexp(x) - 1.0;
}

// (limited control, slot rate).
fn mj_slew(u0: f32, z: f32, limit: f32, h: f32) -> vec2<f32> {
    let rate = fdiv(u0 - z, h);
    if rate > limit || rate < -limit {
        let clipped = clip(rate, -limit, limit);
        return vec2<f32>(z + clipped * h, clipped);
    }
    return vec2<f32>(u0, rate);
}

fn mj_windup(error: f32, z: f32, limit: f32) -> f32 {
    if limit > 0.0 {
        if z >= limit {
            return min(error, 0.0);
        }
        if z <= -limit {
            return max(error, 0.0);
        }
    }
    return error;
}

// The slew slot on the first control of `u` (twin of `slew_first`).
fn mj_slew_first(u: ptr<function, array<f32, 3>>, bits: u32, slewmax: f32, h: f32, lo: f32, hi: f32, slot: u32) -> f32 {
    if slewmax <= 0.0 {
        return 0.0;
    }
    let first = mj_first_control(bits);
    let z = io_state(slot);
    let s = mj_slew((*u)[first], z, slewmax, h);
    (*u)[first] = s.x;
    io_set_state(slot, clip(z + s.y * h, lo, hi));
    return s.y;
}

// (rate, next) of the integral slot (twin of `integrate`).
fn mj_integrate(error: f32, limit: f32, h: f32, lo: f32, hi: f32, slot: u32) -> vec2<f32> {
    let z = io_state(slot);
    let rate = mj_windup(error, z, limit);
    let next = clip(z + rate * h, lo, hi);
    io_set_state(slot, next);
    return vec2<f32>(rate, next);
}

fn mj_first_control(bits: u32) -> u32 {
    if (bits & MJ_IN_POS) != 0u {
        return 0u;
    } else if (bits & MJ_IN_VEL) != 0u {
        return 1u;
    }
    return 2u;
}

fn mj_control(bits: u32, bit: u32, value: f32, lo: f32, hi: f32) -> f32 {
    return select(0.0, clip(value, lo, hi), (bits & bit) != 0u);
}

fn mj_pid_law() -> f32 {
    let bits = u32(io_data(0u));
    let gear = io_param(MJ_PID_GEAR);
    let length = gear * io_pos();
    let velocity = gear * io_vel();
    var u = array<f32, 3>(
        mj_control(bits, MJ_IN_POS, io_target(FIELD_POSITION), io_param(MJ_PID_POS_LO), io_param(MJ_PID_POS_HI)),
        mj_control(bits, MJ_IN_VEL, io_target(FIELD_VELOCITY), io_param(MJ_PID_VEL_LO), io_param(MJ_PID_VEL_HI)),
        mj_control(bits, MJ_IN_FF, io_target(FIELD_EFFORT), io_param(MJ_PID_FF_LO), io_param(MJ_PID_FF_HI)),
    );
    let h = io_param(MJ_PID_TIMESTEP);
    let act_lo = io_param(MJ_PID_ACT_LO);
    let act_hi = io_param(MJ_PID_ACT_HI);
    let slew_dot = mj_slew_first(&u, bits, io_param(MJ_PID_SLEWMAX), h, act_lo, act_hi, MJ_PID_SLEW);
    let ki = io_param(MJ_PID_KI);
    var integral = io_state(MJ_PID_INTEGRAL);
    var int_dot = 0.0;
    if ki > 0.0 {
        let step = mj_integrate(u[0] - length, io_param(MJ_PID_IMAX), h, act_lo, act_hi, MJ_PID_INTEGRAL);
        int_dot = step.x;
        if io_param(MJ_PID_ACT_EARLY) != 0.0 {
            integral = step.y;
        }
    }
    let kp = io_param(MJ_PID_KP);
    let kv = io_param(MJ_PID_KV);
    var f = kp * u[0] + kv * u[1] + u[2];
    if ki > 0.0 {
        f += ki * integral;
    }
    f += io_param(MJ_PID_BIAS0) + (-kp) * length + (-kv) * velocity;
    f = io_saturate(MJ_PID_OUT_RAW_FORCE, f, io_param(MJ_PID_FORCE_LO), io_param(MJ_PID_FORCE_HI));
    io_set_output(MJ_PID_OUT_ACTUATOR_FORCE, f);
    io_set_output(MJ_PID_OUT_ACT_DOT_SLEW, slew_dot);
    io_set_output(MJ_PID_OUT_ACT_DOT_INTEGRAL, int_dot);
    return gear * f;
}

fn mj_dcmotor_law() -> f32 {
    let bits = u32(io_data(0u));
    let gear = io_param(MJ_DCMOTOR_GEAR);
    let length = gear * io_pos();
    let velocity = gear * io_vel();
    let lo = io_param(MJ_DCMOTOR_CTRL_LO);
    let hi = io_param(MJ_DCMOTOR_CTRL_HI);
    var u = array<f32, 3>(
        mj_control(bits, MJ_IN_POS, io_target(FIELD_POSITION), lo, hi),
        mj_control(bits, MJ_IN_VEL, io_target(FIELD_VELOCITY), lo, hi),
        mj_control(bits, MJ_IN_FF, io_target(FIELD_EFFORT), lo, hi),
    );
    let voltage = mj_control(bits, MJ_IN_VOLTAGE, io_input(MJ_DCMOTOR_IN_VOLTAGE), lo, hi);
    let h = io_param(MJ_DCMOTOR_TIMESTEP);
    // No clamp for a finite value (twin of `unlimited`).
    let big = 3.40282347e38;
    let slew_dot = mj_slew_first(&u, bits, io_param(MJ_DCMOTOR_SLEWMAX), h, -big, big, MJ_DCMOTOR_SLEW);
    let ki = io_param(MJ_DCMOTOR_KI);
    let integral = io_state(MJ_DCMOTOR_INTEGRAL);
    var int_dot = 0.0;
    if ki > 0.0 {
        let imax = io_param(MJ_DCMOTOR_IMAX);
        var lo = -big;
        var hi = big;
        if imax > 0.0 {
            lo = -imax;
            hi = imax;
        }
        int_dot = mj_integrate(u[0] - length, imax, h, lo, hi, MJ_DCMOTOR_INTEGRAL).x;
    }
    let r = io_param(MJ_DCMOTOR_RESISTANCE);
    let k = io_param(MJ_DCMOTOR_MOTORCONST);
    let r_th = io_param(MJ_DCMOTOR_THERMAL_RESISTANCE);
    let dtemp = io_state(MJ_DCMOTOR_TEMPERATURE);
    var r_t = r;
    if r_th > 0.0 {
        r_t = r * (1.0 + io_param(MJ_DCMOTOR_ALPHA) * ((dtemp + io_param(MJ_DCMOTOR_AMBIENT)) - io_param(MJ_DCMOTOR_T0)));
    }
    let controller = (bits & (MJ_IN_POS | MJ_IN_VEL | MJ_IN_FF)) != 0u;
    var v = voltage;
    if controller {
        let tau = io_param(MJ_DCMOTOR_KP) * (u[0] - length)
            + io_param(MJ_DCMOTOR_KD) * (u[1] - velocity)
            + ki * integral
            + u[2];
        var vc = fdiv(r, k) * tau + k * velocity;
        let vmax = io_param(MJ_DCMOTOR_VMAX);
        if vmax > 0.0 {
            vc = clip(vc, -vmax, vmax);
        }
        v = vc + voltage;
    }
    let te = io_param(MJ_DCMOTOR_TE);
    let current = io_state(MJ_DCMOTOR_CURRENT);
    var current_dot = 0.0;
    var current_next = current;
    if te > 0.0 {
        current_dot = fdiv(fdiv(v, r_t) - fdiv(k, r_t) * velocity - current, te);
        let didt = io_param(MJ_DCMOTOR_DIDT_MAX);
        if didt > 0.0 {
            current_dot = clip(current_dot, -didt, didt);
        }
        current_next = current + current_dot * te * -mj_expm1(-fdiv(h, te));
        io_set_state(MJ_DCMOTOR_CURRENT, current_next);
    }
    var temp_dot = 0.0;
    if r_th > 0.0 {
        var i_t = fdiv(v - k * velocity, r_t);
        if te > 0.0 {
            i_t = current;
        }
        temp_dot = fdiv(r_t * i_t * i_t - fdiv(dtemp, r_th), io_param(MJ_DCMOTOR_THERMAL_CAPACITANCE));
        io_set_state(MJ_DCMOTOR_TEMPERATURE, dtemp + temp_dot * h);
    }
    let sigma0 = io_param(MJ_DCMOTOR_SIGMA0);
    let z = io_state(MJ_DCMOTOR_BRISTLE);
    var z_dot = 0.0;
    if sigma0 > 0.0 {
        let tau_c = io_param(MJ_DCMOTOR_TAU_C);
        let tau_s = io_param(MJ_DCMOTOR_TAU_S);
        let ratio = fdiv(velocity, max(io_param(MJ_DCMOTOR_OMEGA_S), 1e-15));
        let g = tau_c + (tau_s - tau_c) * fexp(-(ratio * ratio));
        let a = fdiv(-sigma0 * abs(velocity), max(g, 1e-15));
        z_dot = a * z + velocity;
        var c = h;
        if abs(a) > 1e-15 {
            c = fdiv(mj_expm1(a * h), a);
        }
        io_set_state(MJ_DCMOTOR_BRISTLE, fexp(a * h) * z + c * velocity);
    }
    // `DcMotorBias`: 0 dcmotor, 1 none, 2 affine.
    let bias = u32(io_data(1u));
    var f = 0.0;
    if te > 0.0 {
        f = k * current_next;
    } else {
        let gain = fdiv(k, max(r_t, 1e-15));
        if bias == 0u {
            f = gain * v + (0.0 - gain * k * velocity);
        } else {
            f = gain * v;
        }
    }
    if bias == 2u {
        f += io_data(2u) + io_data(3u) * length + io_data(4u) * velocity;
    }
    f = io_saturate(MJ_DCMOTOR_OUT_RAW_FORCE, f, io_param(MJ_DCMOTOR_FORCE_LO), io_param(MJ_DCMOTOR_FORCE_HI));
    if bias == 0u {
        let amplitude = io_param(MJ_DCMOTOR_COGGING_AMPLITUDE);
        if amplitude != 0.0 {
            f += amplitude * sin(io_param(MJ_DCMOTOR_COGGING_POLES) * length + io_param(MJ_DCMOTOR_COGGING_PHASE));
        }
        if sigma0 > 0.0 {
            f -= sigma0 * z + io_param(MJ_DCMOTOR_SIGMA1) * z_dot;
        }
    }
    io_set_output(MJ_DCMOTOR_OUT_ACTUATOR_FORCE, f);
    io_set_output(MJ_DCMOTOR_OUT_ACT_DOT_SLEW, slew_dot);
    io_set_output(MJ_DCMOTOR_OUT_ACT_DOT_INTEGRAL, int_dot);
    io_set_output(MJ_DCMOTOR_OUT_ACT_DOT_TEMPERATURE, temp_dot);
    io_set_output(MJ_DCMOTOR_OUT_ACT_DOT_BRISTLE, z_dot);
    io_set_output(MJ_DCMOTOR_OUT_ACT_DOT_CURRENT, current_dot);
    return gear * f;
}
