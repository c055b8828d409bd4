// Index helpers and the counter-based lag RNG.
// Twin of `hash_u32`, `rng_u32` and `rng_unit` in crates/sinew-core/src/delay.rs:
// wrapping 32-bit integer operations only, so both sides draw the same bits.

// Threads per workgroup of every kernel but env_stage
// (sinew_wgpu::WORKGROUP_SIZE).
const WORKGROUP_SIZE: u32 = 64u;
// Threads per workgroup of env_stage, which holds whole envs
// (sinew_wgpu::ENV_WORKGROUP_SIZE): the most WebGPU's default limits allow.
const ENV_WORKGROUP_SIZE: u32 = 256u;

// A thread's index in a dispatch that may spill from x into y, since one
// dimension holds at most 65535 workgroups.
fn thread_index(gid: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return gid.y * num_workgroups.x * WORKGROUP_SIZE + gid.x;
}

// 1 when `x` is NaN or ±inf (all exponent bits set), tested on the bits so
// that no fast-math assumption about NaN can remove the test.
fn nonfinite_bits(x: f32) -> u32 {
    return u32((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u);
}

// Wellons' lowbias32 finalizer.
fn hash_u32(x0: u32) -> u32 {
    var x = x0;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

// A uniform u32 for (seed, stream, env, counter), with no state.
fn rng_u32(seed: u32, stream: u32, env: u32, counter: u32) -> u32 {
    var h = hash_u32(seed ^ 0x9e3779b9u);
    h = hash_u32(h ^ stream);
    h = hash_u32(h ^ env);
    return hash_u32(h ^ counter);
}

// A uniform f32 in [0, 1) with 24 random bits.
fn rng_unit(seed: u32, stream: u32, env: u32, counter: u32) -> f32 {
    return f32(rng_u32(seed, stream, env, counter) >> 8u) * (1.0 / 16777216.0);
}

// 1 when `x` is NaN, tested on the bits.
fn nan_bits(x: f32) -> u32 {
    return u32((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);
}

// torch's clamp as two selects: lo > hi gives hi, a NaN x stays NaN
// (twin of `clip` in crates/sinew-core/src/kinds/ideal_pd.rs). A driver may
// turn the selects into min and max, which drop a NaN (NVIDIA's did), so a
// NaN is kept by a test on its bits.
fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let y = select(x, lo, x < lo);
    return select(select(y, hi, y > hi), x, nan_bits(x) != 0u);
}

// a / b rounded to nearest, as the CPU divides. WGSL's `/` may be 2.5 ulp
// off (NVIDIA's was up to 2), which a law that cancels or clamps at a
// bound amplifies: on an H200, MuJoCo 4 dcmotor's current left the golden
// tolerance and Isaac Lab's DC table gave −59.999977 for −60. The builtin's
// quotient is corrected in integers, which no fast-math rewrite can touch
// (a float correction through a − (a/b)·b was folded to 0 on NVIDIA).
fn fdiv(a: f32, b: f32) -> f32 {
    return fdiv_from(a, b, a / b);
}

// a / b rounded to nearest from an estimate q within 3.5 ulp of it: the
// exact remainder of the significands, A·2^s − Q·B, is small (|R| < 3.5·B),
// so its low 32 bits, which wrapping u32 arithmetic gives, are all of it;
// R/B is the quotient's distance from q in ulps, and q moves by that
// rounded (a quotient of normals is never halfway between two floats: a
// halfway value has 25 significant bits, and b times it at least as many,
// more than a's 24). Anything else (an operand or q not normal, q 3.5 to
// 128 ulp off, a move across a power of two, where the ulp changes) takes
// `fdiv_long`; past 128 ulp the remainder no longer fits 32 bits, which
// WGSL's bound on `/` rules out.
fn fdiv_from(a: f32, b: f32, q: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let uq = bitcast<u32>(q);
    let ea = (ua >> 23u) & 0xffu;
    let eb = (ub >> 23u) & 0xffu;
    let eq = (uq >> 23u) & 0xffu;
    let s = i32(ea) - i32(eq) - i32(eb) + 150;
    let normal = ea - 1u < 254u && eb - 1u < 254u && eq - 1u < 254u;
    if normal && s >= 0 && s < 32 && ((ua ^ ub ^ uq) & 0x80000000u) == 0u {
        let ma = (ua & 0x7fffffu) | 0x800000u;
        let mb = (ub & 0x7fffffu) | 0x800000u;
        let mq = (uq & 0x7fffffu) | 0x800000u;
        let r = bitcast<i32>((ma << u32(s)) - mq * mb);
        let size = select(u32(r), u32(-r), r < 0);
        if size < (7u * mb) / 2u {
            let twice = 2u * size;
            let k = u32(twice > mb) + u32(twice > 3u * mb) + u32(twice > 5u * mb);
            let m = select(mq + k, mq - k, r < 0);
            if m >= 0x800000u && m < 0x1000000u {
                return bitcast<f32>(select(uq + k, uq - k, r < 0));
            }
        }
    }
    return fdiv_long(a, b);
}

// a / b rounded to nearest by a long division of the significands: 24
// quotient bits and a guard bit (see `fdiv_from` for why there is no tie).
// Zero, subnormal, infinite and NaN operands, and quotients past the
// normal range, take the builtin: it is exact or special there, and
// adapters may flush subnormals.
fn fdiv_long(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let ea = (ua >> 23u) & 0xffu;
    let eb = (ub >> 23u) & 0xffu;
    if ea == 0u || ea == 255u || eb == 0u || eb == 255u {
        return a / b;
    }
    var r = (ua & 0x7fffffu) | 0x800000u;
    let d = (ub & 0x7fffffu) | 0x800000u;
    // The quotient's biased exponent, with r/d brought into [1, 2).
    var e = i32(ea) - i32(eb) + 127;
    if r < d {
        r <<= 1u;
        e -= 1;
    }
    // 25 quotient bits: 24 significant and the guard bit; r < 2^25 throughout.
    var m = 0u;
    for (var i = 0u; i < 25u; i++) {
        let take = r >= d;
        m = (m << 1u) | u32(take);
        r = (r - select(0u, d, take)) << 1u;
    }
    // Rounded up when the guard bit is set (no ties). Nor does it round up
    // to 2: the largest r/d below 2, (2^24 − 1)/2^23, is a float, so the
    // significand stays below 2^24.
    let significand = (m >> 1u) + (m & 1u);
    if e <= 0 || e >= 255 {
        return a / b;
    }
    let sign = (ua ^ ub) & 0x80000000u;
    return bitcast<f32>(sign | ((u32(e - 1) << 23u) + significand));
}

// 2^k for k in [-126, 127], exactly.
fn pow2(k: i32) -> f32 {
    return bitcast<f32>(u32(k + 127) << 23u);
}

// e^x within about 1 ulp, for the CPU's f32::exp: WGSL's builtin exp may be
// 3 + 2·|x| ulp off, and both NVIDIA's and lavapipe's were up to 15-17 ulp
// off. Its CPU twin, operation for operation, is `sinew_core::math::fexp`
// (the learned networks' e^x on both backends). x = k·ln 2 + r with
// |r| ≤ ln 2 / 2 (ln 2 split so that k·LN2_HI is exact), e^r by its Taylor
// series to r^7, then scaled by 2^k.
fn fexp(x: f32) -> f32 {
    const LN2_HI = 0.693145751953125;
    const LN2_LO = 1.428606765330187e-6;
    // Past ±104 the result is 0 or inf either way; NaN is kept below.
    let xc = clamp(x, -104.0, 89.0);
    let k = round(xc * 1.4426950408889634);
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0
        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^k as two exact factors (k is in [-150, 128]), so that the product
    // rounds once to inf, a subnormal or 0 (ldexp's range is the driver's).
    let k1 = i32(k) / 2;
    return select(p * pow2(k1) * pow2(i32(k) - k1), x, nan_bits(x) != 0u);
}

// The unclamped PD torque, in mjlab's operation order (twin of `pd_torque`).
fn pd_torque(
    stiffness: f32,
    damping: f32,
    position_target: f32,
    pos: f32,
    velocity_target: f32,
    vel: f32,
    effort_target: f32,
) -> f32 {
    var tau = stiffness * (position_target - pos);
    tau += damping * (velocity_target - vel);
    tau += effort_target;
    return tau;
}
