//! The `<dcmotor>` and `<pid>` elements as written in MJCF, compiled as MuJoCo 4.0 compiles them (Part 5.9).

use super::*;

/// A `<dcmotor>` element as written in MJCF (MuJoCo 4.0), for
/// [`DcMotorMjcf::compile`]: every attribute optional, lists as in the XML.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcMotorMjcf {
    /// `motorconst="Kt [Ke]"` (N·m/A, V·s/rad).
    #[serde(default)]
    pub motorconst: Vec<f64>,
    /// `resistance` (Ω).
    #[serde(default)]
    pub resistance: f64,
    /// `nominal="V τ_stall ω_noload"`.
    #[serde(default)]
    pub nominal: Vec<f64>,
    /// `saturation="τ_max i_max (di/dt)_max"`.
    #[serde(default)]
    pub saturation: Vec<f64>,
    /// `inductance="L t_e"`.
    #[serde(default)]
    pub inductance: Vec<f64>,
    /// `cogging="A N_p φ"`.
    #[serde(default)]
    pub cogging: Vec<f64>,
    /// `controller="kp ki kd slewmax Imax Vmax"`.
    #[serde(default)]
    pub controller: Vec<f64>,
    /// `thermal="R_T C t_T α T_0 T_a"`.
    #[serde(default)]
    pub thermal: Vec<f64>,
    /// `lugre="σ0 σ1 τ_C τ_S ω_S"`.
    #[serde(default)]
    pub lugre: Vec<f64>,
    /// `input` (default `voltage`).
    #[serde(default)]
    pub input: Option<String>,
    /// `ctrlrange`, broadcast to every control.
    #[serde(default)]
    pub ctrlrange: Option<[f64; 2]>,
    /// `ctrllimited` (`true`, `false` or `auto`; default auto: limited when
    /// `ctrlrange` is given with lo < hi).
    #[serde(default, deserialize_with = "limited")]
    pub ctrllimited: Option<bool>,
    /// `gear` (its first entry).
    #[serde(default)]
    pub gear: Vec<f64>,
    /// `damping`: LuGre's viscous σ2, a passive force the simulator applies;
    /// read here for the no-load-speed motor constant.
    #[serde(default)]
    pub damping: f64,
    /// `armature` (the simulator's).
    #[serde(default)]
    pub armature: f64,
}

/// MJCF's `true`/`false`/`auto` (or a JSON boolean); `auto` is `None`.
fn limited<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Text(String),
    }
    match <Flag as serde::Deserialize>::deserialize(d)? {
        Flag::Bool(b) => Ok(Some(b)),
        Flag::Text(t) => match t.as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            "auto" => Ok(None),
            other => Err(serde::de::Error::custom(format!(
                "`{other}`: give true, false or auto"
            ))),
        },
    }
}

impl DcMotorMjcf {
    /// MuJoCo 4.0's compile-time mapping (`mjs_setToDCMotor` and the 4.0
    /// rules, Part 5.9 of the reference), in f64: the motor constant from
    /// `motorconst` or the no-load speed (corrected for `damping`), the
    /// resistance from the stall torque, `t_e = L/R` (else the given one),
    /// the saturation torque and current rate, the thermal triple (C from
    /// `t_T/R_T` whenever both are given), LuGre, cogging and the controller.
    pub fn compile(&self, timestep: f32) -> Result<MjDcMotorCfg, Error> {
        let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0);
        let group = "dcmotor";
        let inputs = match &self.input {
            None => voltage_only(),
            Some(text) => CtrlInputs::parse(text).ok_or_else(|| {
                invalid(
                    group,
                    "input",
                    f32::NAN,
                    "give any of pos, vel, ff, voltage, or none",
                )
            })?,
        };
        let (kt, mut ke) = (at(&self.motorconst, 0), at(&self.motorconst, 1));
        if kt < 0.0 || ke < 0.0 {
            return Err(invalid(
                group,
                "motorconst",
                kt.min(ke) as f32,
                "motor constants must be >= 0",
            ));
        }
        let mut r = self.resistance;
        let (v_n, tau_0, omega_0) = (
            at(&self.nominal, 0),
            at(&self.nominal, 1),
            at(&self.nominal, 2),
        );
        let b = self.damping;
        if v_n > 0.0 && ke <= 0.0 && omega_0 > 0.0 {
            ke = if b > 0.0 && r > 0.0 {
                let disc = v_n * v_n - 4.0 * r * b * omega_0 * omega_0;
                if disc > 0.0 {
                    (v_n + disc.sqrt()) / (2.0 * omega_0)
                } else {
                    v_n / omega_0
                }
            } else if b > 0.0 && tau_0 > 0.0 {
                let k = v_n / omega_0 - v_n * b / tau_0;
                if k > 0.0 {
                    k
                } else {
                    v_n / omega_0
                }
            } else {
                v_n / omega_0
            };
        }
        let k = if kt > 0.0 && ke > 0.0 {
            (kt * ke).sqrt()
        } else if kt > 0.0 {
            kt
        } else {
            ke
        };
        if r == 0.0 && v_n > 0.0 && tau_0 > 0.0 && k > 0.0 {
            r = k * v_n / tau_0;
        }
        if k <= 0.0 && inputs.0 != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "motorconst",
                k as f32,
                "a driven motor needs K > 0",
            ));
        }
        if r <= 0.0 {
            return Err(invalid(group, "resistance", r as f32, "must be > 0"));
        }
        let (inductance, te_given) = (at(&self.inductance, 0), at(&self.inductance, 1));
        if inductance < 0.0 || te_given < 0.0 {
            return Err(invalid(
                group,
                "inductance",
                inductance.min(te_given) as f32,
                "must be >= 0",
            ));
        }
        let mut m = MjDcMotorCfg::new(r as f32, k as f32, timestep);
        m.inputs = inputs;
        m.te = if inductance > 0.0 {
            inductance / r
        } else {
            te_given
        } as f32;
        let (sat_tau, sat_i, sat_didt) = (
            at(&self.saturation, 0),
            at(&self.saturation, 1),
            at(&self.saturation, 2),
        );
        let tau_max = if sat_tau != 0.0 { sat_tau } else { k * sat_i };
        if sat_tau > 0.0 || sat_i > 0.0 {
            m.force_range = [-tau_max as f32, tau_max as f32];
        }
        if sat_didt > 0.0 {
            m.didt_max = sat_didt as f32;
        }
        let (mut r_th, mut c_th, t_th) = (
            at(&self.thermal, 0),
            at(&self.thermal, 1),
            at(&self.thermal, 2),
        );
        if r_th > 0.0 || c_th > 0.0 || t_th > 0.0 {
            if t_th > 0.0 && r_th > 0.0 {
                c_th = t_th / r_th;
            } else if t_th > 0.0 && c_th > 0.0 && r_th == 0.0 {
                r_th = t_th / c_th;
            }
            if r_th <= 0.0 || c_th <= 0.0 {
                return Err(invalid(
                    group,
                    "thermal",
                    r_th.min(c_th) as f32,
                    "a thermal model needs R_T > 0 and C > 0",
                ));
            }
            m.thermal_resistance = r_th as f32;
            m.thermal_capacitance = c_th as f32;
            m.alpha = at(&self.thermal, 3) as f32;
            m.t0 = at(&self.thermal, 4) as f32;
            m.ambient = at(&self.thermal, 5) as f32;
        }
        if at(&self.lugre, 0) > 0.0 {
            m.sigma0 = at(&self.lugre, 0) as f32;
            m.sigma1 = at(&self.lugre, 1) as f32;
            m.tau_c = at(&self.lugre, 2) as f32;
            m.tau_s = at(&self.lugre, 3) as f32;
            m.omega_s = at(&self.lugre, 4) as f32;
        }
        m.cogging_amplitude = at(&self.cogging, 0) as f32;
        m.cogging_poles = at(&self.cogging, 1) as f32;
        m.cogging_phase = at(&self.cogging, 2) as f32;
        let c = &self.controller;
        (m.kp, m.ki, m.kd) = (at(c, 0) as f32, at(c, 1) as f32, at(c, 2) as f32);
        m.slewmax = at(c, 3) as f32;
        m.imax = at(c, 4) as f32;
        m.vmax = at(c, 5).max(0.0) as f32;
        // `input="none"` has no control to limit.
        if let (Some([lo, hi]), false) = (self.ctrlrange, inputs.0 == CtrlInputs::NONE) {
            if self.ctrllimited.unwrap_or(lo < hi) {
                m.ctrl_range = [lo as f32, hi as f32];
            }
        }
        m.gear = self.gear.first().copied().unwrap_or(1.0) as f32;
        Ok(m)
    }
}

/// A `<pid>` element as written in MJCF (MuJoCo 4.0), for
/// [`PidMjcf::compile`].
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PidMjcf {
    /// `kp` (default 1).
    #[serde(default)]
    pub kp: Option<f64>,
    /// `kv`.
    #[serde(default)]
    pub kv: Option<f64>,
    /// `dampratio` (instead of `kv`): of the reflected mass.
    #[serde(default)]
    pub dampratio: Option<f64>,
    /// `ki`.
    #[serde(default)]
    pub ki: f64,
    /// `imax` (kept only with `ki`).
    #[serde(default)]
    pub imax: f64,
    /// `slewmax`.
    #[serde(default)]
    pub slewmax: f64,
    /// `input` (default `pos vel`).
    #[serde(default)]
    pub input: Option<String>,
    /// `posrange`.
    #[serde(default)]
    pub posrange: Option<[f64; 2]>,
    /// `ctrlrange` (an alias of `posrange`).
    #[serde(default)]
    pub ctrlrange: Option<[f64; 2]>,
    /// `ctrllimited` (for the pos control; `true`, `false` or `auto`).
    #[serde(default, deserialize_with = "limited")]
    pub ctrllimited: Option<bool>,
    /// `inheritrange`: the pos range as `mid ± s·half` of the joint range.
    #[serde(default)]
    pub inheritrange: f64,
    /// `velrange` (limited iff lo < hi).
    #[serde(default)]
    pub velrange: Option<[f64; 2]>,
    /// `ffrange` (limited iff lo < hi).
    #[serde(default)]
    pub ffrange: Option<[f64; 2]>,
    /// `forcerange`.
    #[serde(default)]
    pub forcerange: Option<[f64; 2]>,
    /// `gear` (its first entry).
    #[serde(default)]
    pub gear: Vec<f64>,
    /// `armature`: part of the reflected mass the caller gives.
    #[serde(default)]
    pub armature: f64,
}

impl PidMjcf {
    /// MuJoCo 4.0's compile-time mapping (`mjs_setToPID`, Part 5.9):
    /// `reflected_mass` is `1/Σ (gear·coef)²/dof_M0` (for `dampratio`),
    /// `joint_range` the joint's range (for `inheritrange`).
    pub fn compile(
        &self,
        timestep: f32,
        reflected_mass: f64,
        joint_range: [f64; 2],
    ) -> Result<MjPidCfg, Error> {
        let group = "pid";
        let inputs = match &self.input {
            None => pos_vel(),
            Some(text) => CtrlInputs::parse(text)
                .ok_or_else(|| invalid(group, "input", f32::NAN, "give any of pos, vel and ff"))?,
        };
        let kp = self.kp.unwrap_or(1.0);
        let kv = match (self.kv, self.dampratio) {
            (Some(kv), _) => kv,
            (None, Some(ratio)) => ratio * 2.0 * (kp * reflected_mass).sqrt(),
            (None, None) => 0.0,
        };
        let mut pid = MjPidCfg::new(kp as f32, kv as f32, timestep);
        pid.inputs = inputs;
        pid.ki = self.ki as f32;
        pid.imax = if self.ki != 0.0 {
            self.imax as f32
        } else {
            0.0
        };
        pid.slewmax = self.slewmax as f32;
        pid.gear = self.gear.first().copied().unwrap_or(1.0) as f32;
        let f32s = |[lo, hi]: [f64; 2]| [lo as f32, hi as f32];
        if self.inheritrange > 0.0 {
            let (mid, half) = (
                0.5 * (joint_range[0] + joint_range[1]),
                0.5 * (joint_range[1] - joint_range[0]),
            );
            pid.pos_range = f32s([
                mid - self.inheritrange * half,
                mid + self.inheritrange * half,
            ]);
        } else if let Some([lo, hi]) = self.posrange.or(self.ctrlrange) {
            if self.ctrllimited.unwrap_or(lo < hi) {
                pid.pos_range = f32s([lo, hi]);
            }
        }
        for (range, out) in [
            (self.velrange, &mut pid.vel_range),
            (self.ffrange, &mut pid.ff_range),
        ] {
            if let Some([lo, hi]) = range {
                if lo < hi {
                    *out = f32s([lo, hi]);
                }
            }
        }
        if let Some([lo, hi]) = self.forcerange {
            if lo < hi {
                pid.force_range = f32s([lo, hi]);
            }
        }
        pid.validate(group)?;
        Ok(pid)
    }
}
