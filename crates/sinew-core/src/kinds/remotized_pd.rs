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

    /// The angles, then the max torques.
    fn group_data(&self) -> Vec<f32> {
        let angles = self.lookup.iter().map(|r| r[0]);
        angles.chain(self.lookup.iter().map(|r| r[2])).collect()
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
        let limit = lookup_limit(io.pos(), io.data_len() / 2, |i| io.data(i));
        clip(tau, -limit, limit)
    }
}

/// Isaac Lab's `LinearInterpolation` at `q` over `k` rows, `data(i)` the
/// `i`-th angle and `data(k + i)` the `i`-th value (twin of
/// `remotized_pd_limit`). A NaN `q` gives the first value, as in torch.
#[inline(always)]
pub fn lookup_limit(q: f32, k: usize, data: impl Fn(usize) -> f32) -> f32 {
    // n = #{angle_i < q}: the angles ascend, so bisect.
    let (mut lo, mut hi) = (0, k);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if data(mid) < q {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let a = lo.saturating_sub(1);
    let b = lo.min(k - 1);
    let (xa, xb, ya, yb) = (data(a), data(b), data(k + a), data(k + b));
    let w = if a == b { 0.0 } else { (q - xa) / (xb - xa) };
    ya + w * (yb - ya)
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
        lookup_limit(q, 3, |i| data[i])
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
    }
}
