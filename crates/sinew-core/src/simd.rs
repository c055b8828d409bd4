//! [`widest`]: a loop compiled for the widest vector instructions the CPU
//! has, chosen when it runs.

/// Runs `body` compiled for AVX-512F when the CPU has it, else for AVX2
/// when it has that, else for the build's own target. `body` is inlined
/// into each form, so the loops in it vectorize at that width. No form
/// enables FMA (and Rust never contracts `a·b + c` by itself), so every
/// form gives the same bits.
///
/// ```
/// let values = [1.0f32, 2.0, 3.0];
/// let sum = sinew_core::simd::widest(|| values.iter().sum::<f32>());
/// assert_eq!(sum, 6.0);
/// ```
#[inline(always)]
pub fn widest<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { avx512(body) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2(body) };
        }
    }
    body()
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
