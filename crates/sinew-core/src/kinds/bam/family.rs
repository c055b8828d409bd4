//! BAM's actuator registry (`bam/actuators.py`) and its parameter files
//! (`bam/params/<motor>/m<k>.json`) read into Sinew's servo configs.

use super::{
    BamBenchCfg, BamCurrentCfg, BamErobCfg, BamFriction, BamGo1Cfg, BamSts3215Cfg, BamVoltageCfg,
    Pendulum,
};
use crate::error::Error;
use crate::kinds::ActuatorCfg;

/// One actuator family of BAM's registry, by its registry name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BamFamily {
    /// Dynamixel MX-64 (`mx64`).
    Mx64,
    /// Dynamixel MX-106 (`mx106`).
    Mx106,
    /// Dynamixel XL-320 (`xl320`).
    Xl320,
    /// Dynamixel XL-330 in position mode (`xl330`).
    Xl330,
    /// Dynamixel XL-330 in current mode (`xl330i`).
    Xl330i,
    /// eRob80:100 (`erob80_100`).
    Erob80x100,
    /// eRob80:50 (`erob80_50`).
    Erob80x50,
    /// Feetech STS3215 (`sts3215`).
    Sts3215,
    /// Unitree Go1 (`unitree_go1`).
    UnitreeGo1,
}

/// A servo config of any BAM family. It serializes as the config it holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum BamServo {
    /// [`BamVoltageCfg`].
    Voltage(BamVoltageCfg),
    /// [`BamSts3215Cfg`].
    Sts3215(BamSts3215Cfg),
    /// [`BamCurrentCfg`].
    Current(BamCurrentCfg),
    /// [`BamErobCfg`].
    Erob(BamErobCfg),
    /// [`BamGo1Cfg`].
    Go1(BamGo1Cfg),
}

impl BamServo {
    /// The servo kind.
    pub fn actuator(self) -> ActuatorCfg {
        match self {
            BamServo::Voltage(c) => c.into(),
            BamServo::Sts3215(c) => c.into(),
            BamServo::Current(c) => c.into(),
            BamServo::Erob(c) => c.into(),
            BamServo::Go1(c) => c.into(),
        }
    }

    /// Its testbench twin on `pendulum`.
    pub fn bench(self, pendulum: Pendulum) -> ActuatorCfg {
        match self {
            BamServo::Voltage(servo) => BamBenchCfg { servo, pendulum }.into(),
            BamServo::Sts3215(servo) => BamBenchCfg { servo, pendulum }.into(),
            BamServo::Current(servo) => BamBenchCfg { servo, pendulum }.into(),
            BamServo::Erob(servo) => BamBenchCfg { servo, pendulum }.into(),
            BamServo::Go1(servo) => BamBenchCfg { servo, pendulum }.into(),
        }
    }

    /// The friction budget.
    pub fn friction(&self) -> &BamFriction {
        match self {
            BamServo::Voltage(c) => &c.friction,
            BamServo::Sts3215(c) => &c.friction,
            BamServo::Current(c) => &c.friction,
            BamServo::Erob(c) => &c.friction,
            BamServo::Go1(c) => &c.friction,
        }
    }
}

/// Per-log firmware settings BAM's `load_log` applies over a family's
/// defaults: `kp` always comes from the log; `vin` and `damping` only when
/// the log has them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BamSettings {
    /// The firmware gain; required by eRob and Go1, which have no default.
    pub kp: Option<f32>,
    /// The supply voltage.
    pub vin: Option<f32>,
    /// eRob and Go1's derivative gain.
    pub damping: Option<f32>,
}

impl BamFamily {
    /// Every family, in BAM's registry order.
    pub const ALL: [BamFamily; 9] = [
        BamFamily::Mx64,
        BamFamily::Mx106,
        BamFamily::Xl320,
        BamFamily::Xl330,
        BamFamily::Xl330i,
        BamFamily::Erob80x100,
        BamFamily::Erob80x50,
        BamFamily::Sts3215,
        BamFamily::UnitreeGo1,
    ];

    /// Its registry name (`xl330`, `erob80_100`, …).
    pub fn name(self) -> &'static str {
        match self {
            BamFamily::Mx64 => "mx64",
            BamFamily::Mx106 => "mx106",
            BamFamily::Xl320 => "xl320",
            BamFamily::Xl330 => "xl330",
            BamFamily::Xl330i => "xl330i",
            BamFamily::Erob80x100 => "erob80_100",
            BamFamily::Erob80x50 => "erob80_50",
            BamFamily::Sts3215 => "sts3215",
            BamFamily::UnitreeGo1 => "unitree_go1",
        }
    }

    /// The family of a registry name.
    pub fn from_name(name: &str) -> Option<BamFamily> {
        BamFamily::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The servo for one fit: `param(name)` reads the fit's parameters by
    /// BAM's names (`kt`, `R`, `friction_base`, …; a missing one takes
    /// BAM's default: `R` 2 Ω for the eRob80:100, `error_gain_ratio` 1 and
    /// `max_velocity` 3400·2π/4096 for the STS3215, `current_limit` 1.5 A,
    /// Go1's `ratio` 1 and `max_torque` 23.7 N·m, 0 for friction
    /// coefficients, 1 for `dtheta_stribeck` and `alpha`), `settings` the
    /// log's firmware settings, `dt` the physics step (read by the
    /// STS3215's rate limit). `group` names the errors.
    pub fn servo(
        self,
        group: &str,
        param: &dyn Fn(&str) -> Option<f64>,
        settings: BamSettings,
        dt: f32,
    ) -> Result<BamServo, Error> {
        let get = |name: &str, default: Option<f32>| -> Result<f32, Error> {
            match param(name) {
                Some(v) => Ok(v as f32),
                None => default.ok_or_else(|| missing(group, name)),
            }
        };
        let kt = get("kt", None);
        let resistance = || {
            let default = matches!(self, BamFamily::Erob80x100).then_some(2.0);
            get("R", default)
        };
        let defaults = BamFriction::default();
        let friction = BamFriction {
            friction_base: get("friction_base", Some(0.0))?,
            friction_viscous: get("friction_viscous", Some(0.0))?,
            friction_stribeck: get("friction_stribeck", Some(0.0))?,
            dtheta_stribeck: get("dtheta_stribeck", Some(defaults.dtheta_stribeck))?,
            alpha: get("alpha", Some(defaults.alpha))?,
            load_friction_base: get("load_friction_base", Some(0.0))?,
            load_friction_stribeck: get("load_friction_stribeck", Some(0.0))?,
            load_friction_motor: get("load_friction_motor", Some(0.0))?,
            load_friction_external: get("load_friction_external", Some(0.0))?,
            load_friction_motor_stribeck: get("load_friction_motor_stribeck", Some(0.0))?,
            load_friction_external_stribeck: get("load_friction_external_stribeck", Some(0.0))?,
            load_friction_motor_quad: get("load_friction_motor_quad", Some(0.0))?,
            load_friction_external_quad: get("load_friction_external_quad", Some(0.0))?,
        };
        let need_kp = || settings.kp.ok_or_else(|| missing(group, "kp"));
        let voltage = |mut cfg: BamVoltageCfg| {
            cfg.kp = settings.kp.unwrap_or(cfg.kp);
            cfg.vin = settings.vin.unwrap_or(cfg.vin);
            BamServo::Voltage(cfg.with_friction(friction))
        };
        Ok(match self {
            BamFamily::Mx64 | BamFamily::Mx106 => voltage(BamVoltageCfg::mx(kt?, resistance()?)),
            BamFamily::Xl320 => voltage(BamVoltageCfg::xl320(kt?, resistance()?)),
            BamFamily::Xl330 => voltage(BamVoltageCfg::xl330(kt?, resistance()?)),
            BamFamily::Xl330i => {
                let mut cfg = BamCurrentCfg::xl330(kt?, resistance()?);
                cfg.kp = settings.kp.unwrap_or(cfg.kp);
                cfg.vin = settings.vin.unwrap_or(cfg.vin);
                cfg.current_limit = get("current_limit", Some(cfg.current_limit))?;
                BamServo::Current(cfg.with_friction(friction))
            }
            BamFamily::Sts3215 => {
                let mut cfg = BamSts3215Cfg::new(kt?, resistance()?, dt);
                cfg.kp = settings.kp.unwrap_or(cfg.kp);
                cfg.vin = settings.vin.unwrap_or(cfg.vin);
                cfg.error_gain_ratio = get("error_gain_ratio", Some(cfg.error_gain_ratio))?;
                cfg.max_velocity = get("max_velocity", Some(cfg.max_velocity))?;
                cfg.friction = friction;
                BamServo::Sts3215(cfg)
            }
            BamFamily::Erob80x100 | BamFamily::Erob80x50 => {
                let default_damping = if self == BamFamily::Erob80x100 {
                    2.0
                } else {
                    1.0
                };
                let damping = settings.damping.unwrap_or(default_damping);
                let mut cfg = BamErobCfg::new(need_kp()?, damping, kt?, resistance()?);
                cfg.friction = friction;
                BamServo::Erob(cfg)
            }
            BamFamily::UnitreeGo1 => {
                let mut cfg = BamGo1Cfg::new(need_kp()?);
                cfg.damping = settings.damping.unwrap_or(cfg.damping);
                cfg.ratio = get("ratio", Some(cfg.ratio))?;
                cfg.max_torque = get("max_torque", Some(cfg.max_torque))?;
                cfg.friction = friction;
                BamServo::Go1(cfg)
            }
        })
    }
}

fn missing(group: &str, name: &str) -> Error {
    Error::InvalidParam {
        group: group.to_owned(),
        field: name.to_owned(),
        value: "(missing)".into(),
        reason: "BAM's parameters for this family need it",
    }
}

/// One parameter BAM's optimizer fits ([`BamFamily::param_ranges`]): the
/// bounds it searches (BAM's `suggest_float(name, min, max)`, linear) and
/// the value BAM's model starts at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BamParamRange {
    /// BAM's name (`kt`, `friction_base`, …).
    pub name: &'static str,
    /// Lower bound.
    pub min: f64,
    /// Upper bound.
    pub max: f64,
    /// BAM's starting value.
    pub default: f64,
}

/// BAM's friction models, by name.
pub const BAM_MODELS: [&str; 6] = ["m1", "m2", "m3", "m4", "m5", "m6"];

/// The friction coefficients friction model `model` (`m1` … `m6`) creates,
/// in [`FRICTION_PARAMS`](super::FRICTION_PARAMS) order, from the model's
/// flags as BAM's `Model.set_actuator` does: M1 Coulomb and viscous; M2
/// adds Stribeck; M3 is M1 with load-dependent `K_l`; M4 is M3 with
/// Stribeck; M5 is directional (`K_m`, `K_e` and their Stribeck terms)
/// with Stribeck; M6 adds the quadratic terms. `None` for an unknown name.
pub fn model_friction_params(model: &str) -> Option<Vec<&'static str>> {
    // (load_dependent, directional, stribeck, quadratic), BAM's `models`.
    let (load, directional, stribeck, quadratic) = match model {
        "m1" => (false, false, false, false),
        "m2" => (false, false, true, false),
        "m3" => (true, false, false, false),
        "m4" => (true, false, true, false),
        "m5" => (true, true, true, false),
        "m6" => (true, true, true, true),
        _ => return None,
    };
    let created = |name: &str| match name {
        "friction_base" | "friction_viscous" => true,
        "friction_stribeck" | "dtheta_stribeck" | "alpha" => stribeck,
        "load_friction_base" => load && !directional,
        "load_friction_stribeck" => load && !directional && stribeck,
        "load_friction_motor" | "load_friction_external" => load && directional,
        "load_friction_motor_stribeck" | "load_friction_external_stribeck" => {
            load && directional && stribeck
        }
        _ => quadratic,
    };
    Some(
        super::FRICTION_PARAMS
            .iter()
            .map(|p| p.name)
            .filter(|name| created(name))
            .collect(),
    )
}

impl BamFamily {
    /// The parameters BAM's optimizer fits for this family under friction
    /// model `model`: the actuator's own (`kt`, `R`, `armature`,
    /// `q_offset`, and the family's extras such as the STS3215's
    /// `error_gain_ratio` and `max_velocity`), then the model's friction
    /// coefficients ([`model_friction_params`]). `None` for an unknown model.
    pub fn fitted_params(self, model: &str) -> Option<Vec<BamParamRange>> {
        let friction = model_friction_params(model)?;
        let all = self.param_ranges();
        let motor = all
            .iter()
            .filter(|r| !super::FRICTION_PARAMS.iter().any(|p| p.name == r.name));
        let friction = friction
            .iter()
            .filter_map(|name| all.iter().find(|r| r.name == *name));
        Some(motor.chain(friction).copied().collect())
    }

    /// BAM's starting value of parameter `name` for this family, if the
    /// family has it.
    pub fn param_default(self, name: &str) -> Option<f64> {
        self.param_ranges()
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.default)
    }
}

/// One of BAM's shipped fits ([`BAM_FITS`](super::BAM_FITS)): the
/// parameters of `bam/params/<motor>/m<k>.json` as data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BamFit {
    /// The family.
    pub family: BamFamily,
    /// The friction model, `m1` … `m6`.
    pub model: &'static str,
    /// The file in BAM's repository it comes from.
    pub file: &'static str,
    /// Its parameters, by BAM's names.
    pub params: &'static [(&'static str, f64)],
}

impl BamFit {
    /// `<family>/<model>`, e.g. `xl330/m6`: the name presets go by.
    pub fn name(&self) -> String {
        format!("{}/{}", self.family.name(), self.model)
    }

    /// A parameter by BAM's name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
    }

    /// The servo of this fit (see [`BamFamily::servo`]).
    pub fn servo(&self, group: &str, settings: BamSettings, dt: f32) -> Result<BamServo, Error> {
        self.family
            .servo(group, &|name| self.get(name), settings, dt)
    }

    /// The fitted rotor inertia (kg·m²; 0 when the file has none).
    pub fn armature(&self) -> f32 {
        self.get("armature").unwrap_or(0.0) as f32
    }

    /// The fitted encoder offset (rad; BAM's default 0).
    pub fn q_offset(&self) -> f32 {
        self.get("q_offset").unwrap_or(0.0) as f32
    }
}

/// The shipped fit named `<family>/<model>` (`xl330/m6`).
pub fn bam_fit(name: &str) -> Option<&'static BamFit> {
    super::BAM_FITS.iter().find(|f| f.name() == name)
}
