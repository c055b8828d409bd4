//! [`widest`]: a loop compiled for the widest vector instructions the CPU
//! has, chosen when it runs; [`form`]: which those are.

use std::sync::atomic::{AtomicU8, Ordering};

/// A form of the CPU's loops: the vector instructions they are compiled
/// for. Every form gives the same bits (none enables FMA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Form {
    /// The build's own target (SSE2 on x86-64).
    Baseline,
    /// AVX2: 8 lanes.
    Avx2,
    /// AVX-512F: 16 lanes.
    Avx512,
}

impl Form {
    /// Its name, as `SINEW_SIMD` takes it: `baseline`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Form::Baseline => "baseline",
            Form::Avx2 => "avx2",
            Form::Avx512 => "avx512",
        }
    }
}

/// The form the CPU's loops run in: the widest the CPU has (AVX-512 where
/// it has AVX-512F and AVX2), or a narrower one that the environment
/// variable `SINEW_SIMD` names (`avx2`, `baseline`), so that a narrower
/// CPU's code can be timed and tested on a wider one. A name that is none
/// of those, or a form the CPU lacks, leaves the widest. Read once per
/// process, at the first call; `sinew bench` reports the form it ran.
///
/// ```
/// let form = sinew_core::simd::form();
/// assert!(form >= sinew_core::simd::Form::Baseline);
/// ```
#[inline]
pub fn form() -> Form {
    static FORM: AtomicU8 = AtomicU8::new(0);
    match FORM.load(Ordering::Relaxed) {
        1 => Form::Baseline,
        2 => Form::Avx2,
        3 => Form::Avx512,
        _ => {
            let form = chosen();
            FORM.store(form as u8 + 1, Ordering::Relaxed);
            form
        }
    }
}

/// [`form`]'s choice on this CPU, with `SINEW_SIMD`'s value.
#[cold]
fn chosen() -> Form {
    let has = |form: Form| match form {
        Form::Baseline => true,
        #[cfg(target_arch = "x86_64")]
        Form::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        Form::Avx512 => {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => false,
    };
    choose(std::env::var("SINEW_SIMD").ok().as_deref(), has)
}

/// The widest form a CPU `has`, or the one `asked` names where the CPU
/// has it and it is narrower.
fn choose(asked: Option<&str>, has: impl Fn(Form) -> bool) -> Form {
    let all = [Form::Avx512, Form::Avx2, Form::Baseline];
    let widest = all.into_iter().find(|&f| has(f)).unwrap_or(Form::Baseline);
    match all.into_iter().find(|f| asked == Some(f.name())) {
        Some(form) if form < widest && has(form) => form,
        _ => widest,
    }
}

/// Runs `body` compiled for AVX-512F when the CPU has it, else for AVX2
/// when it has that, else for the build's own target ([`form`]). `body` is
/// inlined into each form, so the loops in it vectorize at that width. No
/// form enables FMA (and Rust never contracts `a·b + c` by itself), so
/// every form gives the same bits.
///
/// ```
/// let values = [1.0f32, 2.0, 3.0];
/// let sum = sinew_core::simd::widest(|| values.iter().sum::<f32>());
/// assert_eq!(sum, 6.0);
/// ```
#[inline(always)]
pub fn widest<R>(body: impl FnOnce() -> R) -> R {
    match form() {
        // SAFETY: `form` is AVX-512 only where the CPU has AVX-512F.
        #[cfg(target_arch = "x86_64")]
        Form::Avx512 => unsafe { avx512(body) },
        // SAFETY: `form` is AVX2 only where the CPU has AVX2.
        #[cfg(target_arch = "x86_64")]
        Form::Avx2 => unsafe { avx2(body) },
        _ => body(),
    }
}

/// [`widest`], but no wider than AVX2: for loops that timed slower in
/// AVX-512's form on a CPU that has both (the MuJoCo stage's lanes).
#[inline(always)]
pub fn up_to_avx2<R>(body: impl FnOnce() -> R) -> R {
    match form() {
        // SAFETY: `form` is AVX-512 or AVX2 only where the CPU has AVX2.
        #[cfg(target_arch = "x86_64")]
        Form::Avx512 | Form::Avx2 => unsafe { avx2(body) },
        _ => body(),
    }
}

/// `body` with AVX-512F enabled.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// `body` with AVX2 enabled.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinew_simd_narrows_the_form_and_never_widens_it() {
        let up_to = |widest: Form| move |f: Form| f <= widest;
        assert_eq!(choose(None, up_to(Form::Avx512)), Form::Avx512);
        assert_eq!(choose(Some("avx2"), up_to(Form::Avx512)), Form::Avx2);
        assert_eq!(
            choose(Some("baseline"), up_to(Form::Avx512)),
            Form::Baseline
        );
        assert_eq!(choose(Some("avx512"), up_to(Form::Avx2)), Form::Avx2);
        assert_eq!(choose(Some("AVX2"), up_to(Form::Avx512)), Form::Avx512);
        assert_eq!(choose(Some("avx2"), up_to(Form::Baseline)), Form::Baseline);
    }
}
