//! Remotized PD: Isaac Lab's `RemotizedPDActuator`, a PD whose torque limit
//! depends on the joint angle (a linkage-driven joint such as Spot's knee).

use super::ideal_pd::{clip, pd_torque, DAMPING, STIFFNESS};
use super::spec::{param_slot, Kind, LawIo, ParamSpec, StateSpec};
use super::{invalid, CommandField};
use crate::error::Error;

/// PD torque clamped by an angle-dependent limit.
///
/// `τ = clamp(kp·(q* − q) + kd·(q̇* − q̇) + τff, ±L(q))`, where `L` linearly
/// interpolates the lookup table's max-torque column over its angle column at
/// the current (undelayed) joint position, holding the end values outside it
/// (Isaac Lab's `LinearInterpolation`: with `n = #{angle_i < q}`, rows
/// `max(n−1, 0)` and `min(n, K−1)`). Isaac Lab's effort limit is forced to
/// `inf`, so the table is the only limit. Isaac Lab delays the targets
/// (`DelayedPDActuator`, lags drawn per reset): give the group a
/// [`DelayCfg`](crate::DelayCfg) with [`Resample::OnReset`](crate::Resample::OnReset).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemotizedPdCfg {
    /// `kp` (N·m/rad). Finite, ≥ 0.
    pub stiffness: f32,
    /// `kd` (N·m·s/rad). Finite, ≥ 0.
    pub damping: f32,
    /// Isaac Lab's `joint_parameter_lookup`: rows `[angle (rad), transmission
    /// ratio (unused, as in Isaac Lab), max torque (N·m)]`, angles strictly
    /// ascending, at least one row.
    pub lookup: Vec<[f32; 3]>,
}

impl RemotizedPdCfg {
    /// A remotized PD with these gains and lookup table.
    pub fn new(stiffness: f32, damping: f32, lookup: impl Into<Vec<[f32; 3]>>) -> Self {
        RemotizedPdCfg {
            stiffness,
            damping,
            lookup: lookup.into(),
        }
    }
}

impl Kind for RemotizedPdCfg {
    const NAME: &'static str = "RemotizedPd";
    const KEY: &'static str = "remotized_pd";
    const PARAMS: &'static [ParamSpec] = &[STIFFNESS, DAMPING];
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const WGSL: &'static str = include_str!("../../../../shaders/remotized_pd.wgsl");
    const COSTLY: bool = true;
    const POS_LOOKUP: bool = true;

    fn param_value(&self, k: usize) -> f32 {
        [self.stiffness, self.damping][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        RemotizedPdCfg::new(
            60.0,
            1.5,
            [[-1.0, 1.0, 20.0], [0.0, 1.0, 45.0], [0.8, 1.0, 30.0]],
        )
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        if self.lookup.is_empty() {
            return Err(Error::InvalidParam {
                group: group.to_owned(),
                field: "lookup".into(),
                value: "[]".into(),
                reason: "the lookup table needs at least one row",
            });
        }
        if self.lookup.len() > MAX_LOOKUP_ROWS {
            return Err(Error::InvalidParam {
                group: group.to_owned(),
                field: "lookup".into(),
                value: format!("{} rows", self.lookup.len()),
                reason: "a lookup table may have at most 1 048 576 rows",
            });
        }
        let mut previous = f32::NEG_INFINITY;
        for (i, row) in self.lookup.iter().enumerate() {
            if let Some(&bad) = row.iter().find(|v| !v.is_finite()) {
                return Err(invalid(
                    group,
                    &format!("lookup[{i}]"),
                    bad,
                    "must be finite",
                ));
            }
            if row[0] <= previous {
                let reason = "the angles must be strictly ascending";
                return Err(invalid(group, &format!("lookup[{i}][0]"), row[0], reason));
            }
            if row[2] < 0.0 {
                let reason = "a max torque must be >= 0";
                return Err(invalid(group, &format!("lookup[{i}][2]"), row[2], reason));
            }
            previous = row[0];
        }
        Ok(())
    }

    /// The lookup table and its buckets ([`lookup_limit`]'s layout).
    fn group_data(&self) -> Vec<f32> {
        lookup_data(&self.lookup)
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const KP: usize = param_slot(RemotizedPdCfg::PARAMS, "stiffness");
        const KD: usize = param_slot(RemotizedPdCfg::PARAMS, "damping");
        let tau = pd_torque(
            io.param(KP),
            io.param(KD),
            io.target(CommandField::Position),
            io.pos(),
            io.target(CommandField::Velocity),
            io.vel(),
            io.target(CommandField::Effort),
        );
        let limit = io.pos_lookup();
        clip(tau, -limit, limit)
    }
}

/// The most rows a lookup table may have: row indices travel as `f32`
/// in the group's data, exact up to 2²⁴.
pub const MAX_LOOKUP_ROWS: usize = 1 << 20;

/// Where [`lookup_data`] keeps each part of a table.
mod at {
    /// 1 when every bucket holds at most [`super::BUCKET_ROWS`] angles
    /// (the bucketed search is exact), else 0 (bisect): which of its two
    /// loops [`super::lookup_limits`] runs.
    pub const BUCKETED: usize = 0;
    /// The number of rows `k`.
    pub const ROWS: usize = 1;
    /// The first angle: where bucket 0 starts.
    pub const FIRST: usize = 2;
    /// Buckets per radian.
    pub const SCALE: usize = 3;
    /// The last bucket's index.
    pub const LAST: usize = 4;
    /// The angles: `k` of them, then [`super::BUCKET_ROWS`] of `+∞`, then
    /// the `k` max torques, then each bucket's first row.
    pub const ANGLES: usize = 5;
}

/// The entries of a table's header ([`lookup_data`]).
pub const LOOKUP_HEAD: usize = at::ANGLES;

/// The most angles any bucket of a bucketed table holds.
const BUCKET_ROWS: usize = 2;

/// The bucket of angle `q`: `(q − first) · scale` clamped to
/// `0..=last` (NaN to 0), rounded to the nearest integer. Non-decreasing
/// in `q`, so an angle in a lower bucket than `q`'s is below `q`, one in
/// a higher bucket above it.
#[inline(always)]
fn bucket(q: f32, first: f32, scale: f32, last: f32) -> usize {
    index(((q - first) * scale).max(0.0).min(last))
}

/// The integer nearest `x`, for `0 ≤ x ≤ 2²²`: the low bits of `x + 2²³`,
/// whose unit is 1. (`as` saturates NaN and the infinities with compares
/// the compiler does one element at a time: 50 scalar conversions in the
/// AVX-512 loop of Spot's knee.)
#[inline(always)]
fn index(x: f32) -> usize {
    (x + 8_388_608.0).to_bits().wrapping_sub(0x4B00_0000) as usize
}

/// A table's group data. A header of [`LOOKUP_HEAD`] entries: 1 when the
/// table has buckets (else 0, and no bucket entries), the row count `k`,
/// the first angle, buckets per radian and the last bucket's index. Then
/// the `k` angles and two of `+∞`, the `k` max torques, and per bucket of
/// equal width from the first angle to the last the number of angles in
/// lower buckets (its first row). With `k` buckets, or failing that `2k`
/// or `4k`, every bucket of a table on a near-uniform grid (Isaac Lab's
/// are) holds at most two angles: the search is then a few loads the loop
/// does for a whole vector of elements at once, not a bisection of
/// branches per element (139 instructions per element, one at a time,
/// for the law on Spot's knee table of 101 rows).
pub fn lookup_data(lookup: &[[f32; 3]]) -> Vec<f32> {
    let k = lookup.len();
    let angles: Vec<f32> = lookup.iter().map(|r| r[0]).collect();
    let (first, span) = match (angles.first(), angles.last()) {
        (Some(&a), Some(&b)) => (a, f64::from(b) - f64::from(a)),
        _ => (0.0, 0.0),
    };
    let fitting = [1, 2, 4].into_iter().find_map(|per_row| {
        let buckets = (k * per_row).max(1);
        let scale = match span > 0.0 {
            true => (buckets as f64 / span) as f32,
            false => 0.0,
        };
        let last = (buckets - 1) as f32;
        // Per bucket the number of angles in lower buckets, and `k` last.
        let mut base = vec![0usize; buckets + 1];
        for &a in &angles {
            base[bucket(a, first, scale, last) + 1] += 1;
        }
        for b in 1..=buckets {
            base[b] += base[b - 1];
        }
        let most = base.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        base.pop();
        (most <= BUCKET_ROWS).then_some((scale, last, base))
    });
    let (scale, last, base, bucketed) = match fitting {
        Some((scale, last, base)) => (scale, last, base, 1.0),
        None => (0.0, 0.0, Vec::new(), 0.0),
    };
    let mut data = vec![bucketed, k as f32, first, scale, last];
    data.extend(&angles);
    data.extend([f32::INFINITY; BUCKET_ROWS]);
    data.extend(lookup.iter().map(|r| r[2]));
    data.extend(base.iter().map(|&b| b as f32));
    data
}

/// Isaac Lab's `LinearInterpolation` at `q` over a table in
/// [`lookup_data`]'s layout, `data(i)` its `i`-th entry and `head` its
/// first [`LOOKUP_HEAD`], searched by bucket when `bucketed` (as entry 0
/// says) and by bisection otherwise (twin of `remotized_pd_limit`). A NaN
/// `q` gives the first value, as in torch.
#[inline(always)]
pub fn lookup_limit(
    q: f32,
    bucketed: bool,
    head: [f32; LOOKUP_HEAD],
    data: impl Fn(usize) -> f32,
) -> f32 {
    let k = head[at::ROWS] as usize;
    let angle = |i: usize| data(at::ANGLES + i);
    let torque = |i: usize| data(at::ANGLES + k + BUCKET_ROWS + i);
    // n = #{angle_i < q}.
    let n = if bucketed {
        // The angles below `q`'s bucket, then those in it below `q` (the
        // padding past the last angle is never below it).
        let b = bucket(q, head[at::FIRST], head[at::SCALE], head[at::LAST]);
        let lower = index(data(at::ANGLES + k + BUCKET_ROWS + k + b));
        (0..BUCKET_ROWS).fold(lower, |n, j| n + usize::from(angle(lower + j) < q))
    } else {
        // The angles ascend, so bisect.
        let (mut lo, mut hi) = (0, k);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if angle(mid) < q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let a = n.saturating_sub(1);
    let b = n.min(k.saturating_sub(1));
    let (xa, xb, ya, yb) = (angle(a), angle(b), torque(a), torque(b));
    let w = if a == b { 0.0 } else { (q - xa) / (xb - xa) };
    ya + w * (yb - ya)
}

/// [`lookup_limit`] at each of `q` into `out` (as long), over the table
/// `data` in [`lookup_data`]'s layout: the pass the CPU runs over a block
/// of elements before their law reads the values
/// ([`LawIo::pos_lookup`]). Where the CPU has AVX2, a bucketed table's
/// search and interpolation run eight elements at a time with vector
/// gathers: the compiler does not emit gathers for AVX2 by itself, and
/// left the search one element at a time there: 98 instructions per
/// element for the remotized PD, 14.9 this way
/// (`benches/kind_instructions.sh`), and about a fifth of the time at
/// 4096 × 29 (BENCHMARKS.md); in the AVX-512 form, as fast as the
/// compiler's own 16-lane gathers. Every value is [`lookup_limit`]'s, bit
/// for bit: the same operations on the same values, and a search that
/// counts the same rows.
#[inline(always)]
pub fn lookup_limits(data: &[f32], q: &[f32], out: &mut [f32]) {
    assert_eq!(q.len(), out.len());
    let entry = |i: usize| data.get(i).copied().unwrap_or(f32::NAN);
    let head = std::array::from_fn(entry);
    let bucketed = head[at::BUCKETED] != 0.0;
    let done = match bucketed {
        true => lookup_limits_vector(data, q, out),
        false => 0,
    };
    // The rest: a tail of fewer than eight, or all without AVX2, in two
    // loops, so that neither branches between the forms per element.
    let (q, out) = (&q[done..], &mut out[done..]);
    if bucketed {
        for (out, &q) in out.iter_mut().zip(q) {
            *out = lookup_limit(q, true, head, entry);
        }
    } else {
        for (out, &q) in out.iter_mut().zip(q) {
            *out = lookup_limit(q, false, head, entry);
        }
    }
}

/// [`lookup_limits`] of a bucketed table where the CPU has AVX2, from the
/// first of `q` in multiples of eight ([`bucketed_avx2`]); returns how many
/// it did: none where the CPU has no AVX2 or `data`'s header does not
/// describe it exactly.
#[inline(always)]
fn lookup_limits_vector(data: &[f32], q: &[f32], out: &mut [f32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::form() >= crate::simd::Form::Avx2 {
        if let Some(layout) = Buckets::of(data) {
            // SAFETY: the CPU has AVX2 ([`crate::simd::form`]); `layout`
            // is `data`'s.
            return unsafe { bucketed_avx2(data, layout, q, out) };
        }
    }
    let _ = (data, q, out);
    0
}

/// A bucketed table's row count `k` and bucket count, where its header
/// describes `data` exactly: every index [`bucketed_avx2`] forms then
/// lies in `data`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Buckets {
    k: usize,
    buckets: usize,
}

#[cfg(target_arch = "x86_64")]
impl Buckets {
    fn of(data: &[f32]) -> Option<Buckets> {
        let whole = |x: f32, most: usize| x >= 0.0 && x < most as f32 && x.fract() == 0.0;
        let (&rows, &last) = (data.get(at::ROWS)?, data.get(at::LAST)?);
        if !(whole(rows, MAX_LOOKUP_ROWS + 1) && rows >= 1.0 && whole(last, 4 * MAX_LOOKUP_ROWS)) {
            return None;
        }
        let (k, buckets) = (rows as usize, last as usize + 1);
        let len = at::ANGLES + k + BUCKET_ROWS + k + buckets;
        (data.len() == len).then_some(Buckets { k, buckets })
    }
}

/// [`lookup_limit`]'s bucketed form at the first multiple of eight of
/// `q`, eight at a time, into `out`; returns how many it did. Each step
/// is the scalar form's: the bucket by the same rounding trick, the
/// angles below it from the bucket's entry, the two angles after them
/// compared with `q`, then the interpolation, each a vector of eight.
/// (`_mm256_max_ps(x, 0)` is 0 for a NaN `x`, as `f32::max` is.)
///
/// # Safety
/// The CPU must have AVX2; `layout` is `data`'s ([`Buckets::of`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bucketed_avx2(data: &[f32], layout: Buckets, q: &[f32], out: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let Buckets { k, buckets } = layout;
    assert!(data.len() >= at::ANGLES + 2 * k + BUCKET_ROWS + buckets);
    let whole = q.len().min(out.len()) / 8 * 8;
    let f = |x: f32| _mm256_set1_ps(x);
    let (first, scale, last) = (f(data[at::FIRST]), f(data[at::SCALE]), f(data[at::LAST]));
    let (zero, magic) = (_mm256_setzero_si256(), f(8_388_608.0));
    let bias = _mm256_set1_epi32(0x4B00_0000);
    let (rows, top, one) = (k as i32, k as i32 - 1, _mm256_set1_epi32(1));
    let (rows, top) = (_mm256_set1_epi32(rows), _mm256_set1_epi32(top));
    let angles = data[at::ANGLES..].as_ptr();
    let torques = data[at::ANGLES + k + BUCKET_ROWS..].as_ptr();
    let firsts = data[at::ANGLES + 2 * k + BUCKET_ROWS..].as_ptr();
    // [`index`] of eight values.
    macro_rules! index {
        ($x:expr) => {
            _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps($x, magic)), bias)
        };
    }
    // Entries `j` (eight indices) from `from`. SAFETY: every bucket is
    // below `buckets` (clamped to `last`), every count of lower angles is
    // clamped to `0..=k`, so the angles read are below `k + BUCKET_ROWS`,
    // and the rows `a` and `b` below `k`: all within `data`, asserted above.
    macro_rules! gather {
        ($from:expr, $j:expr) => {
            unsafe { _mm256_i32gather_ps::<4>($from, $j) }
        };
    }
    for e in (0..whole).step_by(8) {
        // SAFETY: `e + 8 <= whole`, within `q` and `out`.
        let q = unsafe { _mm256_loadu_ps(q.as_ptr().add(e)) };
        let x = _mm256_mul_ps(_mm256_sub_ps(q, first), scale);
        let bucket = index!(_mm256_min_ps(_mm256_max_ps(x, _mm256_setzero_ps()), last));
        let lower = index!(gather!(firsts, bucket));
        let lower = _mm256_min_epi32(_mm256_max_epi32(lower, zero), rows);
        // n = lower + #{the two angles after them below q} (a compare is
        // all ones, -1, where true).
        let below0 = _mm256_cmp_ps::<_CMP_LT_OQ>(gather!(angles, lower), q);
        let next = _mm256_add_epi32(lower, one);
        let below1 = _mm256_cmp_ps::<_CMP_LT_OQ>(gather!(angles, next), q);
        let n = _mm256_sub_epi32(lower, _mm256_castps_si256(below0));
        let n = _mm256_sub_epi32(n, _mm256_castps_si256(below1));
        let a = _mm256_max_epi32(_mm256_sub_epi32(n, one), zero);
        let b = _mm256_min_epi32(n, top);
        let (xa, xb) = (gather!(angles, a), gather!(angles, b));
        let (ya, yb) = (gather!(torques, a), gather!(torques, b));
        let w = _mm256_div_ps(_mm256_sub_ps(q, xa), _mm256_sub_ps(xb, xa));
        // 0 where a == b, as the scalar form's.
        let w = _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)), w);
        let value = _mm256_add_ps(ya, _mm256_mul_ps(w, _mm256_sub_ps(yb, ya)));
        // SAFETY: as the load.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(e), value) };
    }
    whole
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<f32> {
        RemotizedPdCfg::new(
            1.0,
            0.0,
            vec![[-1.0, 0.0, 10.0], [0.0, 0.0, 20.0], [2.0, 0.0, 0.0]],
        )
        .group_data()
    }

    fn at(q: f32) -> f32 {
        let data = table();
        lookup_limit(q, data[0] != 0.0, head(&data), |i| data[i])
    }

    fn head(data: &[f32]) -> [f32; LOOKUP_HEAD] {
        data[..LOOKUP_HEAD].try_into().unwrap()
    }

    /// The definition, written out: `n = #{angle_i < q}`, rows
    /// `max(n−1, 0)` and `min(n, K−1)`.
    fn by_definition(lookup: &[[f32; 3]], q: f32) -> f32 {
        let k = lookup.len();
        let n = lookup.iter().filter(|r| r[0] < q).count();
        let (a, b) = (n.saturating_sub(1), n.min(k - 1));
        let (xa, xb, ya, yb) = (lookup[a][0], lookup[b][0], lookup[a][2], lookup[b][2]);
        let w = if a == b { 0.0 } else { (q - xa) / (xb - xa) };
        ya + w * (yb - ya)
    }

    /// Every angle, the floats on either side of it, points between and
    /// beyond the rows, the infinities and NaN.
    fn probes(lookup: &[[f32; 3]]) -> Vec<f32> {
        let mut q = vec![f32::NEG_INFINITY, f32::INFINITY, f32::NAN, -1e30, 1e30, 0.0];
        for pair in lookup.windows(2) {
            for t in [0.1f32, 0.5, 0.9] {
                q.push(pair[0][0] + t * (pair[1][0] - pair[0][0]));
            }
        }
        for r in lookup {
            q.extend([
                r[0],
                r[0].next_down(),
                r[0].next_up(),
                r[0] - 1.0,
                r[0] + 1.0,
            ]);
        }
        q
    }

    /// The table's group data, whether it took buckets, and a check of
    /// every probe against the definition, bit for bit.
    fn bucketed_and_exact(lookup: &[[f32; 3]]) -> bool {
        let data = lookup_data(lookup);
        let q = probes(lookup);
        // The block pass too: eight at a time where the CPU has AVX2, from
        // each of eight starts, so that each probe falls in every lane and
        // in the tail.
        for start in 0..8.min(q.len()) {
            let mut block = vec![0.0; q.len() - start];
            lookup_limits(&data, &q[start..], &mut block);
            for (&q, ours) in q[start..].iter().zip(block) {
                let theirs = by_definition(lookup, q);
                assert_eq!(ours.to_bits(), theirs.to_bits(), "q = {q:e}, {lookup:?}");
            }
        }
        for &q in &q {
            let ours = lookup_limit(q, data[0] != 0.0, head(&data), |i| data[i]);
            let theirs = by_definition(lookup, q);
            assert_eq!(ours.to_bits(), theirs.to_bits(), "q = {q:e}, {lookup:?}");
        }
        data[at::BUCKETED] == 1.0
    }

    #[test]
    fn the_bucketed_search_finds_the_rows_the_definition_does() {
        // Isaac Lab's grids: Spot's knee, 101 rows 0.025458 rad apart.
        let grid = |k: usize, first: f32, step: f32| -> Vec<[f32; 3]> {
            (0..k)
                .map(|i| [first + step * i as f32, 0.0, (i * 7 % 13) as f32])
                .collect()
        };
        assert!(bucketed_and_exact(&grid(101, -2.7929, 0.025458)));
        assert!(bucketed_and_exact(&grid(3, -1.0, 1.0)));
        assert!(bucketed_and_exact(&grid(1, 0.3, 1.0)));
        assert!(bucketed_and_exact(&grid(2, -1e-30, 1e-30)));
        // Rows on an uneven grid (a drifting step) still fit 2k or 4k buckets.
        let uneven: Vec<[f32; 3]> = (0..40)
            .map(|i| [(i * i) as f32 * 0.01 + i as f32 * 0.1, 0.0, i as f32])
            .collect();
        assert!(bucketed_and_exact(&uneven));
        // Rows crowded at one end do not: the search bisects.
        let crowded: Vec<[f32; 3]> = (0..30)
            .map(|i| [-(0.5f32.powi(i)), 0.0, i as f32])
            .collect();
        assert!(!bucketed_and_exact(&crowded));
    }

    #[test]
    fn interpolates_between_rows_and_holds_outside() {
        assert_eq!(at(-0.5), 15.0);
        assert_eq!(at(1.0), 10.0);
        assert_eq!(at(0.0), 20.0);
        assert_eq!(at(-1.0), 10.0);
        assert_eq!(at(-5.0), 10.0);
        assert_eq!(at(7.0), 0.0);
        assert_eq!(at(f32::NAN), 10.0);
    }

    #[test]
    fn bad_tables_are_errors_naming_the_row() {
        let e = |lookup: Vec<[f32; 3]>| {
            RemotizedPdCfg::new(1.0, 0.0, lookup)
                .validate("knee")
                .unwrap_err()
                .to_string()
        };
        assert!(e(vec![]).contains("at least one row"));
        assert!(e(vec![[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]).contains("lookup[1][0]"));
        assert!(e(vec![[0.0, 0.0, -1.0]]).contains("lookup[0][2]"));
        assert!(e(vec![[f32::NAN, 0.0, 1.0]]).contains("lookup[0]"));
        let rows = (0..=MAX_LOOKUP_ROWS)
            .map(|i| [i as f32, 0.0, 1.0])
            .collect();
        assert!(e(rows).contains("at most 1 048 576 rows"));
    }
}
