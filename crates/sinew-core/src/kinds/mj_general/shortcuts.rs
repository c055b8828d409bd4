//! MuJoCo's shortcut elements with settings of their own (`<position>`,
//! `<intvelocity>`, `<muscle>`), compiled into [`MjGeneralCfg`]s as
//! MuJoCo's compiler does.

use super::*;

/// `dampratio` of a `<position>` or `<intvelocity>`: `kv = ratio·2·√(kp·m)`
/// with `m` the reflected inertia at the actuator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DampRatio {
    /// The damping ratio (1 = critical).
    pub ratio: f32,
    /// The reflected inertia `m = (J M⁻¹ Jᵀ)⁻¹` at `qpos0` (MuJoCo ≥ 3.15):
    /// `M0 / gear²` for one hinge, `1 / Σ (gear·coef_k)² / M0_k` for a fixed
    /// tendon over joints with diagonal inertia `M0_k` (armature included).
    pub reflected_inertia: f32,
}

/// `inheritrange`: the control (position) or activation (intvelocity)
/// range is the target's range scaled by `scale` about its middle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InheritRange {
    /// The scale, > 0.
    pub scale: f32,
    /// The range of the joint or tendon the actuator drives.
    pub target_range: [f32; 2],
}

/// MuJoCo's `<position>` and `<intvelocity>` attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjPositionCfg {
    /// `kp` (≥ 0). Default 1.
    pub kp: f32,
    /// `kv` (≥ 0); exclusive with `dampratio`. Default 0.
    pub kv: Option<f32>,
    /// `dampratio` (≥ 0); exclusive with `kv`.
    pub dampratio: Option<DampRatio>,
    /// `timeconst` (≥ 0; position only): > 0 adds an exact first-order
    /// filter on the control. Default 0.
    pub timeconst: f32,
    /// `inheritrange`; exclusive with an explicit `ctrl_range` (position)
    /// or `act_range` (intvelocity).
    pub inheritrange: Option<InheritRange>,
    /// `ctrlrange`.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange`.
    pub force_range: Option<[f32; 2]>,
    /// `actrange` (intvelocity only).
    pub act_range: Option<[f32; 2]>,
    /// `gear[0]`. Default 1.
    pub gear: f32,
}

impl Default for MjPositionCfg {
    fn default() -> Self {
        MjPositionCfg {
            kp: 1.0,
            kv: None,
            dampratio: None,
            timeconst: 0.0,
            inheritrange: None,
            ctrl_range: None,
            force_range: None,
            act_range: None,
            gear: 1.0,
        }
    }
}

fn shortcut_err(
    shortcut: &'static str,
    field: &'static str,
    value: f32,
    reason: &'static str,
) -> Error {
    Error::InvalidShortcut {
        shortcut,
        field,
        value: value.to_string(),
        reason,
    }
}

impl MjPositionCfg {
    /// A position servo with this `kp` and MuJoCo's other defaults.
    pub fn new(kp: f32) -> Self {
        MjPositionCfg {
            kp,
            ..MjPositionCfg::default()
        }
    }

    fn check(&self, shortcut: &'static str) -> Result<f32, Error> {
        if !(self.kp.is_finite() && self.kp >= 0.0) {
            return Err(shortcut_err(
                shortcut,
                "kp",
                self.kp,
                "must be finite and >= 0",
            ));
        }
        if !(self.timeconst.is_finite() && self.timeconst >= 0.0) {
            return Err(shortcut_err(
                shortcut,
                "timeconst",
                self.timeconst,
                "must be finite and >= 0",
            ));
        }
        if !self.gear.is_finite() {
            return Err(shortcut_err(shortcut, "gear", self.gear, "must be finite"));
        }
        let kv = match (self.kv, self.dampratio) {
            (Some(kv), Some(_)) => {
                return Err(shortcut_err(
                    shortcut,
                    "kv",
                    kv,
                    "kv and dampratio cannot both be given",
                ))
            }
            (Some(kv), None) if !(kv.is_finite() && kv >= 0.0) => {
                return Err(shortcut_err(shortcut, "kv", kv, "must be finite and >= 0"))
            }
            (Some(kv), None) => kv,
            (None, Some(d)) => {
                if !(d.ratio.is_finite() && d.ratio >= 0.0) {
                    return Err(shortcut_err(
                        shortcut,
                        "dampratio",
                        d.ratio,
                        "must be finite and >= 0",
                    ));
                }
                if !(d.reflected_inertia.is_finite() && d.reflected_inertia > 0.0) {
                    return Err(shortcut_err(
                        shortcut,
                        "dampratio.reflected_inertia",
                        d.reflected_inertia,
                        "must be finite and > 0",
                    ));
                }
                // MuJoCo: biasprm[2] = −ratio·2·√(kp·m), in f64.
                let (ratio, kp, m) = (
                    f64::from(d.ratio),
                    f64::from(self.kp),
                    f64::from(d.reflected_inertia),
                );
                (ratio * 2.0 * (kp * m).sqrt()) as f32
            }
            (None, None) => 0.0,
        };
        Ok(kv)
    }

    fn inherited(
        &self,
        shortcut: &'static str,
        explicit: Option<[f32; 2]>,
        field: &'static str,
    ) -> Result<Option<[f32; 2]>, Error> {
        let Some(inherit) = self.inheritrange else {
            return Ok(explicit);
        };
        if !(inherit.scale.is_finite() && inherit.scale > 0.0) {
            return Err(shortcut_err(
                shortcut,
                "inheritrange",
                inherit.scale,
                "must be finite and > 0",
            ));
        }
        if explicit.is_some() {
            return Err(shortcut_err(
                shortcut,
                field,
                inherit.scale,
                "inheritrange cannot be combined with an explicit range",
            ));
        }
        let [r0, r1] = inherit.target_range.map(f64::from);
        if r0.partial_cmp(&r1) != Some(std::cmp::Ordering::Less) {
            return Err(shortcut_err(
                shortcut,
                "inheritrange.target_range",
                r0 as f32,
                "the target needs a range with lo < hi",
            ));
        }
        let mid = 0.5 * (r1 + r0);
        let rad = 0.5 * (r1 - r0) * f64::from(inherit.scale);
        Ok(Some([(mid - rad) as f32, (mid + rad) as f32]))
    }

    /// `<position>`: `force = kp·(ctrl − L) − kv·V` on the position target,
    /// with an exact filter on the control when `timeconst > 0`.
    pub fn position(&self) -> Result<MjGeneralCfg, Error> {
        let kv = self.check("position")?;
        if self.act_range.is_some() {
            return Err(shortcut_err(
                "position",
                "act_range",
                0.0,
                "a position servo has no activation range; use timeconst",
            ));
        }
        let filtered = self.timeconst > 0.0;
        Ok(MjGeneralCfg {
            command_field: CommandField::Position,
            dyn_type: if filtered {
                DynType::FilterExact
            } else {
                DynType::None
            },
            dynprm: prm(&[if filtered { self.timeconst } else { 1.0 }]),
            gainprm: prm(&[self.kp]),
            bias_type: BiasType::Affine,
            biasprm: prm(&[0.0, -self.kp, -kv]),
            ctrl_range: self.inherited("position", self.ctrl_range, "ctrl_range")?,
            force_range: self.force_range,
            gear: self.gear,
            ..MjGeneralCfg::default()
        })
    }

    /// `<intvelocity>`: the activation integrates the velocity command into
    /// a position setpoint; `force = kp·(act − L) − kv·V`.
    pub fn intvelocity(&self) -> Result<MjGeneralCfg, Error> {
        let kv = self.check("intvelocity")?;
        if self.timeconst > 0.0 {
            return Err(shortcut_err(
                "intvelocity",
                "timeconst",
                self.timeconst,
                "intvelocity has no timeconst",
            ));
        }
        Ok(MjGeneralCfg {
            command_field: CommandField::Velocity,
            dyn_type: DynType::Integrator,
            gainprm: prm(&[self.kp]),
            bias_type: BiasType::Affine,
            biasprm: prm(&[0.0, -self.kp, -kv]),
            ctrl_range: self.ctrl_range,
            act_range: self.inherited("intvelocity", self.act_range, "act_range")?,
            force_range: self.force_range,
            gear: self.gear,
            ..MjGeneralCfg::default()
        })
    }
}

/// MuJoCo's `<muscle>` attributes, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjMuscleCfg {
    /// Activation and deactivation time constants (s). Default (0.01, 0.04).
    pub timeconst: [f32; 2],
    /// Smoothing width of the time-constant switch. Default 0.
    pub tausmooth: f32,
    /// Operating length range, in optimal lengths. Default (0.75, 1.05).
    pub range: [f32; 2],
    /// Peak force; < 0 means `scale / acc0`. Default −1.
    pub force: f32,
    /// Force scale when `force < 0`. Default 200.
    pub scale: f32,
    /// Lower end of the force–length curve. Default 0.5.
    pub lmin: f32,
    /// Upper end of the force–length curve. Default 1.6.
    pub lmax: f32,
    /// Shortening velocity at zero force (optimal lengths/s). Default 1.5.
    pub vmax: f32,
    /// Passive force at `lmax`, relative to the peak. Default 1.3.
    pub fpmax: f32,
    /// Active force at saturating lengthening, relative. Default 1.2.
    pub fvmax: f32,
    /// The compiled `lengthrange` (required).
    pub length_range: [f32; 2],
    /// The compiled `acc0` (required when `force < 0`).
    pub acc0: f32,
    /// `ctrlrange`.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange`.
    pub force_range: Option<[f32; 2]>,
    /// `gear[0]`. Default 1.
    pub gear: f32,
}

impl Default for MjMuscleCfg {
    fn default() -> Self {
        let d = MJ_MUSCLE_DEFAULTS;
        MjMuscleCfg {
            timeconst: [0.01, 0.04],
            tausmooth: 0.0,
            range: [d[0], d[1]],
            force: d[2],
            scale: d[3],
            lmin: d[4],
            lmax: d[5],
            vmax: d[6],
            fpmax: d[7],
            fvmax: d[8],
            length_range: [0.0, 0.0],
            acc0: 0.0,
            ctrl_range: None,
            force_range: None,
            gear: 1.0,
        }
    }
}

impl MjMuscleCfg {
    /// `<muscle>` after MuJoCo's checks (`range[0] < range[1]`,
    /// `lmin < 1 < lmax`, positive time constants, scale, vmax, fpmax and
    /// fvmax, `tausmooth ≥ 0`), on the effort target (the excitation).
    pub fn compile(&self) -> Result<MjGeneralCfg, Error> {
        let e = |field, value, reason| Err(shortcut_err("muscle", field, value, reason));
        let positive = [
            ("timeconst[0]", self.timeconst[0]),
            ("timeconst[1]", self.timeconst[1]),
            ("scale", self.scale),
            ("vmax", self.vmax),
            ("fpmax", self.fpmax),
            ("fvmax", self.fvmax),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return e(field, value, "must be finite and > 0");
            }
        }
        if !(self.tausmooth.is_finite() && self.tausmooth >= 0.0) {
            return e("tausmooth", self.tausmooth, "must be finite and >= 0");
        }
        if self.range[0].partial_cmp(&self.range[1]) != Some(std::cmp::Ordering::Less) {
            return e("range", self.range[0], "needs range[0] < range[1]");
        }
        if !(self.lmin < 1.0 && 1.0 < self.lmax) {
            return e("lmin", self.lmin, "needs lmin < 1 < lmax");
        }
        if !self.force.is_finite() {
            return e("force", self.force, "must be finite");
        }
        if self.force < 0.0 && !(self.acc0.is_finite() && self.acc0 > 0.0) {
            return e(
                "acc0",
                self.acc0,
                "force < 0 takes the peak force from scale / acc0; give the compiled acc0 (> 0)",
            );
        }
        let p = [
            self.range[0],
            self.range[1],
            self.force,
            self.scale,
            self.lmin,
            self.lmax,
            self.vmax,
            self.fpmax,
            self.fvmax,
        ];
        Ok(MjGeneralCfg {
            command_field: CommandField::Effort,
            dyn_type: DynType::Muscle,
            dynprm: prm(&[self.timeconst[0], self.timeconst[1], self.tausmooth]),
            gain_type: GainType::Muscle,
            gainprm: prm(&p),
            bias_type: BiasType::Muscle,
            biasprm: prm(&p),
            ctrl_range: self.ctrl_range,
            force_range: self.force_range,
            act_range: None,
            act_early: false,
            gear: self.gear,
            length_range: self.length_range,
            acc0: self.acc0,
        })
    }
}
