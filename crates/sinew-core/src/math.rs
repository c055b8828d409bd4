//! `exp`, `pow` and `sin` for the laws' loops: branch-free and inlined, so a
//! loop that calls them still compiles to vector instructions (a call to
//! the C library's `expf` keeps the whole loop one element at a time).
//! [`fexp`], e^x in `f32` arithmetic (the GPU kernels' own), is the
//! learned networks'.
//!
//! Each is computed in `f64` and rounded once to `f32`; the error before
//! that rounding is below 1e-12 relative. So they return the exact value
//! rounded to the nearest `f32` but where it lies that close to a midpoint
//! between two: in a sweep of 7·10⁷ inputs `exp` always did, and of
//! 1.2·10⁸ `pow` in all but 4, never more than one step off. glibc's `expf`
//! and `powf` were one step off for 1 input in 13 000 and 1 in 3 800 of
//! the same sweeps, so the two differ there. No FMA is used (and Rust
//! never contracts `a·b + c`), so the bits are the same on every CPU and in
//! every vector width, where glibc picks other code on CPUs with FMA.
//!
//! ```
//! use sinew_core::math;
//! assert_eq!(math::exp(0.0), 1.0);
//! assert_eq!(math::pow(2.0, 10.0), 1024.0);
//! assert_eq!(math::sin(0.0), 0.0);
//! ```

/// 1.5 · 2⁵²: added to and taken from an `f64` of magnitude below 2⁵¹, it
/// rounds it to the nearest integer (ties to even), whose value is then
/// also the low bits of the sum.
const ROUND: f64 = 6_755_399_441_055_744.0;

/// `x` rounded to the nearest integer, and that integer (`|x| < 2⁵¹`).
#[inline(always)]
fn round(x: f64) -> (f64, i64) {
    let shifted = x + ROUND;
    (
        shifted - ROUND,
        shifted.to_bits() as i64 - ROUND.to_bits() as i64,
    )
}

/// The polynomial with coefficients `c` (highest power first) at `x`.
#[inline(always)]
fn horner<const N: usize>(x: f64, c: [f64; N]) -> f64 {
    // A plain loop over constants, which the compiler unrolls before it
    // vectorizes the caller's loop (`reduce` kept the servo loop scalar).
    let mut p = c[0];
    for &c in &c[1..] {
        p = p * x + c;
    }
    p
}

/// 1/k! for k from `low + N − 1` down to `low`: Taylor coefficients of
/// e^x, highest power first (as [`horner`] takes them). Each k! is exact
/// in an `f64`, so each is the division rounded once.
const fn inv_factorials<const N: usize>(low: u64) -> [f64; N] {
    let mut out = [0.0; N];
    let mut i = 0;
    while i < N {
        let k = low + (N - 1 - i) as u64;
        let (mut factorial, mut j) = (1u64, 2u64);
        while j <= k {
            factorial *= j;
            j += 1;
        }
        out[i] = 1.0 / factorial as f64;
        i += 1;
    }
    out
}

/// 2^x for `x` in [−200, 200] (beyond that, the nearer end: an `f32`
/// overflows or underflows either way); NaN stays NaN.
#[inline(always)]
fn exp2_f64(x: f64) -> f64 {
    // `clamp` keeps a NaN (`min`/`max` would turn it into the bound).
    let x = x.clamp(-200.0, 200.0);
    let (k, ki) = round(x);
    // e^t for t = (x − k)·ln 2 in [−0.35, 0.35]: its Taylor series to
    // t¹¹ (the next term is below 7e-15).
    let t = (x - k) * std::f64::consts::LN_2;
    let p = horner(t, const { inv_factorials::<12>(0) });
    // 2^k as an f64's exponent field (k is within f64's normal range).
    p * f64::from_bits(((ki + 1023) as u64) << 52)
}

/// e^x − 1 for an `f64` `x`, within 1e-15 of it relative (near 0 too,
/// where `e^x − 1` would cancel); −1 below about −138, NaN for NaN. Both
/// forms are computed and one kept, so a loop over it stays in vector
/// lanes.
#[inline(always)]
pub(crate) fn expm1_f64(x: f64) -> f64 {
    // |x| < 0.35 (about ln 2 / 2): x times the Taylor series of
    // (e^x − 1)/x to x¹² (the next term is below 2e-17 of the sum).
    let near = x * horner(x, const { inv_factorials::<13>(1) });
    // Beyond, e^x is below 0.71 or above 1.41: subtracting 1 loses nothing.
    let far = exp2_f64(x * std::f64::consts::LOG2_E) - 1.0;
    if x.abs() < 0.35 {
        near
    } else {
        far
    }
}

/// log₂ `x` for a positive, finite, normal `x`.
#[inline(always)]
fn log2_f64(x: f64) -> f64 {
    let bits = x.to_bits();
    // The exponent field as an f64 through the bits of 2⁵² + field (an
    // integer-to-float conversion of 64-bit lanes has no AVX2 instruction).
    let e =
        f64::from_bits((bits >> 52) | 0x4330_0000_0000_0000) - (4_503_599_627_370_496.0 + 1023.0);
    let m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    // m in [√½, √2): ln m = 2·atanh(s) with s = (m − 1)/(m + 1), |s| < 0.172.
    let big = m > std::f64::consts::SQRT_2;
    let (m, e) = if big { (0.5 * m, e + 1.0) } else { (m, e) };
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // 2·(s + s³/3 + … + s¹⁹/19): the next term is below 3e-17 of the sum.
    let p = horner(
        s2,
        [
            1.0 / 19.0,
            1.0 / 17.0,
            1.0 / 15.0,
            1.0 / 13.0,
            1.0 / 11.0,
            1.0 / 9.0,
            1.0 / 7.0,
            1.0 / 5.0,
            1.0 / 3.0,
            1.0,
        ],
    );
    e + (2.0 * s * p) * std::f64::consts::LOG2_E
}

/// e^x (NaN for NaN; +∞ above about 88.72, 0 below about −103.97).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    exp2_f64(f64::from(x) * std::f64::consts::LOG2_E) as f32
}

/// e^x in `f32` arithmetic, within 1.5 ulp of the exact value wherever
/// that is a normal `f32` (+∞ above about 88.72, 0 or a subnormal below
/// about −87.34; NaN for NaN): the twin of the GPU kernels' `fexp`
/// (`shaders/common.wgsl`), the same operations in the same order, in
/// `f32` lanes (16 to an AVX-512 vector, where [`exp`] has 8). The learned
/// networks' sigmoid, tanh and ELU take it, where neither torch nor the GPU
/// rounds e^x exactly: [`exp`] was a third of the LSTM's time, and with
/// this the LSTM step took a quarter less (BENCHMARKS.md).
///
/// ```
/// use sinew_core::math;
/// assert_eq!(math::fexp(0.0), 1.0);
/// assert_eq!(math::fexp(-200.0), 0.0);
/// assert_eq!(math::fexp(100.0), f32::INFINITY);
/// assert!(math::fexp(f32::NAN).is_nan());
/// assert!((math::fexp(1.0) - std::f32::consts::E).abs() <= f32::EPSILON * 3.0);
/// ```
#[inline(always)]
pub fn fexp(x: f32) -> f32 {
    // ln 2 in two parts: k·LN2_HI is exact for |k| < 2¹².
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // 1.5 · 2²³: added to and taken from an `f32` of magnitude below 2²²,
    // it rounds it to the nearest integer (ties to even, as WGSL's
    // `round`), whose value is then also the low bits of the sum.
    const ROUND_F32: f32 = 12_582_912.0;
    // The Taylor coefficients as WGSL evaluates `1.0 / 6.0` and the like:
    // in f64, then rounded to f32.
    const C: [f32; 8] = [
        (1.0 / 5040.0f64) as f32,
        (1.0 / 720.0f64) as f32,
        (1.0 / 120.0f64) as f32,
        (1.0 / 24.0f64) as f32,
        (1.0 / 6.0f64) as f32,
        0.5,
        1.0,
        1.0,
    ];
    // Past the ends the result is 0 or +∞ either way; `clamp` keeps NaN.
    let xc = x.clamp(-104.0, 89.0);
    let shifted = xc * std::f32::consts::LOG2_E + ROUND_F32;
    let k = shifted - ROUND_F32;
    let ki = (shifted.to_bits() as i32).wrapping_sub(ROUND_F32.to_bits() as i32);
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    // e^r by its Taylor series to r⁷ (|r| ≤ ln 2 / 2).
    let mut p = C[0];
    for &c in &C[1..] {
        p = p * r + c;
    }
    // 2^k as two exact factors (k is in [−150, 128]), so that the product
    // rounds once, to +∞, a subnormal or 0. (A NaN `x` left `ki` arbitrary
    // and `p` NaN: the product is NaN.)
    let pow2 = |k: i32| f32::from_bits((k.wrapping_add(127) as u32) << 23);
    let k1 = ki / 2;
    p * pow2(k1) * pow2(ki.wrapping_sub(k1))
}

/// The largest `|x|` for which [`sin`] reduces its argument exactly:
/// 2²⁰ quarter turns, about 1.6·10⁶ (where an `f32` steps by 0.125).
pub const SIN_EXACT_BELOW: f32 = 1_647_099.3;

/// sin `x`: the exact value rounded once to `f32` (but at rare
/// midpoints, one step off) for `|x|` below [`SIN_EXACT_BELOW`]; beyond,
/// a value in [−1, 1] from an argument reduced with less care; NaN for
/// NaN and ±∞.
#[inline(always)]
pub fn sin(x: f32) -> f32 {
    // π/2 in three parts (33, 33 and the next 53 bits): for |k| < 2²⁰
    // the first two products are exact, so the remainder is too, to 2⁻⁹⁰.
    const PIO2_1: f64 = 1.570_796_326_734_125_6;
    const PIO2_2: f64 = 6.077_100_506_303_966e-11;
    const PIO2_2T: f64 = 2.022_266_248_795_950_6e-21;
    let xd = f64::from(x);
    let (k, q) = round((xd * std::f64::consts::FRAC_2_PI).clamp(-1e15, 1e15));
    let r = ((xd - k * PIO2_1) - k * PIO2_2) - k * PIO2_2T;
    // |r| ≤ π/4 but for a huge `x`; `x · 0` is NaN for ±∞ and NaN (and
    // the product keeps the sign of a zero).
    let r = r.clamp(-1.0, 1.0) * (xd * 0.0 + 1.0);
    let r2 = r * r;
    // Taylor series to r¹³ and r¹⁴: the next terms are below 3e-14.
    let sin_r = r * horner(
        r2,
        [
            1.0 / 6_227_020_800.0,
            -1.0 / 39_916_800.0,
            1.0 / 362_880.0,
            -1.0 / 5_040.0,
            1.0 / 120.0,
            -1.0 / 6.0,
            1.0,
        ],
    );
    let cos_r = horner(
        r2,
        [
            -1.0 / 87_178_291_200.0,
            1.0 / 479_001_600.0,
            -1.0 / 3_628_800.0,
            1.0 / 40_320.0,
            -1.0 / 720.0,
            1.0 / 24.0,
            -0.5,
            1.0,
        ],
    );
    // Quarter turn q: sin, cos, −sin, −cos of the remainder.
    let v = if q & 1 == 0 { sin_r } else { cos_r };
    (if q & 2 == 0 { v } else { -v }) as f32
}

/// `x^y` for `x ≥ 0` (any `y`), as C's `powf` gives it there: `x^0` is 1
/// for every `x` (NaN too) and `1^y` is 1 for every `y`; 0 and +∞ raised to
/// a positive power give 0 and +∞, to a negative one +∞ and 0. A negative
/// `x` gives NaN (unlike `powf`, which has an answer for an integer `y`).
#[inline(always)]
pub fn pow(x: f32, y: f32) -> f32 {
    let (xd, yd) = (f64::from(x), f64::from(y));
    // Any positive finite f32 is a normal f64.
    let inner = exp2_f64(yd * log2_f64(xd)) as f32;
    let edge = if x == 0.0 { y < 0.0 } else { y > 0.0 };
    let at_edges = if edge { f32::INFINITY } else { 0.0 };
    if y == 0.0 || x == 1.0 {
        1.0
    } else if x == 0.0 || x == f32::INFINITY {
        at_edges
    } else if x > 0.0 {
        inner
    } else {
        // x < 0, or NaN.
        f32::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 4001st `f32` bit pattern from `lo` to `hi` (both of one sign).
    fn sweep(lo: f32, hi: f32) -> impl Iterator<Item = f32> {
        let (a, b) = (
            lo.to_bits().min(hi.to_bits()),
            lo.to_bits().max(hi.to_bits()),
        );
        (a..=b).step_by(4001).map(f32::from_bits)
    }

    /// How many of `inputs` `f` gives other than the exact value rounded
    /// once (as `f64`'s own function, rounded to `f32`, gives it), and
    /// how many inputs there were.
    fn misrounded(
        inputs: impl Iterator<Item = f32>,
        f: impl Fn(f32) -> (f32, f64),
    ) -> (usize, usize) {
        inputs.fold((0, 0), |(bad, n), x| {
            let (got, want) = f(x);
            let want = want as f32;
            let off = got != want && !(got.is_nan() && want.is_nan());
            if off {
                // Never more than one step away.
                assert_eq!(
                    got.to_bits().abs_diff(want.to_bits()),
                    1,
                    "at {x}: {got} against {want}"
                );
            }
            (bad + usize::from(off), n + 1)
        })
    }

    /// Within 1.5 ulp of e^x over the normal range (every 4001st `f32`
    /// from −110 to 95); +∞ where e^x rounds to it, 0 or a subnormal
    /// below the normal range, NaN for NaN.
    #[test]
    fn fexp_is_within_one_and_a_half_ulp_of_e_to_the_x() {
        let mut worst = (0.0f64, 0.0f32);
        let inputs = sweep(-0.0, -110.0).chain(sweep(0.0, 95.0));
        for x in inputs.chain([f32::INFINITY, f32::NEG_INFINITY]) {
            let (got, exact) = (fexp(x), f64::from(x).exp());
            let rounded = exact as f32;
            if rounded.is_infinite() {
                assert_eq!(got, rounded, "fexp({x:e})");
                continue;
            }
            if exact < f64::from(f32::MIN_POSITIVE) {
                assert!(got < f32::MIN_POSITIVE, "fexp({x:e}) = {got:e}");
                continue;
            }
            let spacing = f64::from(f32::from_bits(rounded.to_bits() + 1) - rounded);
            let ulps = (f64::from(got) - exact).abs() / spacing;
            if ulps > worst.0 {
                worst = (ulps, x);
            }
        }
        println!("fexp: worst {:.2} ulp at x = {:e}", worst.0, worst.1);
        assert!(worst.0 <= 1.5, "{:.2} ulp off at {:e}", worst.0, worst.1);
        assert!(fexp(f32::NAN).is_nan());
        assert_eq!(fexp(-104.5), 0.0);
    }

    #[test]
    fn exp_is_the_exact_value_rounded_once_over_its_range() {
        let inputs = sweep(-0.0, -104.0).chain(sweep(0.0, 88.8));
        let (bad, n) = misrounded(inputs, |x| (exp(x), f64::from(x).exp()));
        assert!(bad == 0 && n > 500_000, "{bad} of {n}");
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(-110.0), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert!(exp(f32::NAN).is_nan());
        // Below f32's smallest normal the result is rounded once too.
        assert_eq!(exp(-100.0), (-100.0f64).exp() as f32);
    }

    #[test]
    fn sin_is_the_exact_value_rounded_once_but_for_rare_midpoints() {
        let limit = SIN_EXACT_BELOW;
        let inputs = sweep(-0.0, -limit).chain(sweep(0.0, limit));
        let (bad, n) = misrounded(inputs, |x| (sin(x), f64::from(x).sin()));
        assert!(bad * 100_000 < n && n > 500_000, "{bad} of {n}");
        for x in [0.0f32, -0.0, 1e-30, 0.5, 1.0, 3.0, 100.0, 1e5] {
            assert_eq!(sin(x), (f64::from(x).sin()) as f32, "sin({x})");
        }
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        for x in [2e6f32, -3e9, 1e20, f32::MAX, f32::MIN] {
            assert!((-1.0..=1.0).contains(&sin(x)), "sin({x}) = {}", sin(x));
        }
        assert!(sin(f32::INFINITY).is_nan() && sin(f32::NEG_INFINITY).is_nan());
        assert!(sin(f32::NAN).is_nan());
    }

    #[test]
    fn pow_is_the_exact_value_rounded_once_but_for_rare_midpoints() {
        let (mut bad, mut n) = (0, 0);
        for y in [-3.7f32, -1.0, -0.25, 0.3, 0.5, 1.0, 1.4, 2.0, 2.7, 9.0] {
            let (b, m) = misrounded(sweep(1e-30, 1e30), |x| {
                (pow(x, y), f64::from(x).powf(f64::from(y)))
            });
            (bad, n) = (bad + b, n + m);
        }
        assert!(bad * 100_000 < n, "{bad} of {n}");
        assert_eq!(pow(3.0, 2.0), 9.0);
        assert_eq!(pow(2.0, -1.0), 0.5);
    }

    #[test]
    fn pow_follows_powf_at_zero_one_infinity_and_nan() {
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        for (x, y, want) in [
            (0.0, 2.0, 0.0),
            (0.0, -2.0, inf),
            (0.0, 0.0, 1.0),
            (inf, 0.5, inf),
            (inf, -0.5, 0.0),
            (inf, 0.0, 1.0),
            (nan, 0.0, 1.0),
            (1.0, nan, 1.0),
            (1.0, inf, 1.0),
            (2.0, inf, inf),
            (0.5, inf, 0.0),
            (1e30, 2.0, inf),
            (1e-30, 2.0, 0.0),
        ] {
            assert_eq!(pow(x, y), want, "pow({x}, {y})");
            assert_eq!(x.powf(y), want, "powf({x}, {y})");
        }
        assert!(pow(nan, 2.0).is_nan());
        assert!(pow(2.0, nan).is_nan());
        assert!(pow(-2.0, 0.5).is_nan());
    }
}
