//! BAM golden files (`bam-actuator-golden/v1`, made by running BAM's own
//! code): `laws` (single testbench steps, STS3215 sequences and friction
//! budgets) and `rollouts` (the XL-330 logs replayed closed loop).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sinew::bam::{BamFamily, BamSettings};
use sinew::{ActuatorCmd, Backend, EnvIds, GroupCfg, Pendulum, Plan, PlanOptions, Robot, Values};

use super::json::{arr_at, bool_at, field, num_at, str_at};
use super::{MakeBackend, Outcome, Stop, Tally, VerifyOptions};
use crate::servo::{replay, BamParams, Rollout, ServoLog};

/// The laws' bar: `|ours − BAM| ≤ 5e-5 · max(1, |BAM|)` on every compared
/// quantity, Sinew in f32 against BAM's f64 (the worst seen is 5e-6: the
/// f32 rounding of `q` and the goal, amplified by the firmware gain). The testbench's `q̈` is
/// compared against `max(1, |q̈|, |τ_stop|/I)`: when friction holds the
/// joint it is a difference of torques of size `|τ_stop|`, so its error is
/// relative to those.
pub const BAM_TOLERANCE: f64 = 5e-5;

/// The rollouts' bar: Sinew's MAE and RMSE against the recorded positions
/// within 1% (or 0.5 mrad, whichever is larger) of BAM's own.
pub const ROLLOUT_RELATIVE: f64 = 0.01;
/// See [`ROLLOUT_RELATIVE`] (rad).
pub const ROLLOUT_ABSOLUTE: f64 = 5e-4;

/// The group of every plan built here.
const GROUP: &str = "servo";

/// State across the cases of one file: the header and, for rollouts, the
/// replays already run (one per fit, every log an env).
pub(super) struct Verifier<'a> {
    doc: &'a Value,
    logs_dir: Option<PathBuf>,
    replays: HashMap<String, Result<HashMap<String, Rollout>, String>>,
}

impl<'a> Verifier<'a> {
    pub fn new(doc: &'a Value, options: &VerifyOptions) -> Verifier<'a> {
        Verifier {
            doc,
            logs_dir: options.logs_dir.clone(),
            replays: HashMap::new(),
        }
    }

    /// The array of cases: `cases` for laws, `rollouts` for rollouts.
    pub fn cases_key(doc: &Value) -> &'static str {
        match doc.get("file").and_then(Value::as_str) {
            Some("rollouts") => "rollouts",
            _ => "cases",
        }
    }

    pub fn run_case(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Outcome {
        let result = match Self::cases_key(self.doc) {
            "rollouts" => self.rollout(case, id, make, tally),
            _ => match str_at(case, "kind") {
                Ok("step") => self.step_case(case, id, make, tally),
                Ok("frictions") => self.friction_case(case, id, make, tally),
                Ok(other) => Err(Stop::Fail(format!("unknown case kind `{other}`"))),
                Err(e) => Err(Stop::Fail(e)),
            },
        };
        match result {
            Ok(()) => Outcome::Passed,
            Err(stop) => stop.into(),
        }
    }

    /// The fit a case names, with its family.
    fn fit(&self, case: &Value) -> Result<BamParams, Stop> {
        let name = str_at(case, "fit")?;
        let fit = field(field(self.doc, "fits")?, name)
            .map_err(|_| format!("no fit `{name}` in the header's `fits`"))?;
        let family = str_at(case, "actuator").or_else(|_| str_at(fit, "actuator"))?;
        let family = BamFamily::from_name(family)
            .ok_or_else(|| Stop::Skip(format!("actuator family `{family}` is not modelled")))?;
        Ok(BamParams::from_value(field(fit, "params")?, Some(family))?)
    }

    /// One testbench step (or an STS3215 sequence of them): each step from
    /// the state BAM recorded before it; the STS3215's smoothed target
    /// chained from step to step as the kind's own state.
    fn step_case(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        let params = self.fit(case)?;
        let settings = field(case, "actuator_settings")?;
        let opt = |key: &str| -> Result<Option<f32>, String> {
            settings
                .get(key)
                .map(|_| num_at(settings, key).map(|v| v as f32))
                .transpose()
        };
        let settings = BamSettings {
            kp: opt("kp")?,
            vin: opt("vin")?,
            damping: opt("damping")?,
        };
        let dt = num_at(case, "dt")? as f32;
        let log = field(case, "log")?;
        let arm_mass = log
            .get("arm_mass")
            .map_or(Ok(0.0), |_| num_at(log, "arm_mass"))?;
        let lookup = |name: &str| params.get(name);
        let servo = params
            .family
            .servo(GROUP, &lookup, settings, dt)
            .map_err(|e| e.to_string())?;
        let bench = servo.bench(Pendulum {
            mass: num_at(log, "mass")? as f32,
            length: num_at(log, "length")? as f32,
            arm_mass: arm_mass as f32,
            armature: params.get("armature").unwrap_or(0.0) as f32,
            q_offset: params.get("q_offset").unwrap_or(0.0) as f32,
            dt,
        });
        let sts = params.family == BamFamily::Sts3215;
        let mut backend = backend_for(bench, make)?;
        let backend = backend.as_mut();
        let mut cmd = ActuatorCmd::zeros(1, 1);
        for (i, step) in arr_at(case, "steps")?.iter().enumerate() {
            let (inputs, outputs) = (field(step, "inputs")?, field(step, "outputs")?);
            for (state, key) in [("q", "q"), ("dq", "dq")] {
                set_state(backend, state, num_at(inputs, key)?)?;
            }
            let mut check = |what: &str, ours: f64, reference: f64, scale: f64| {
                let allowed = BAM_TOLERANCE * reference.abs().max(scale).max(1.0);
                let label = || format!("steps[{i}].{what}");
                if tally.compare(id, label, ours, reference, allowed) {
                    Ok(())
                } else {
                    Err(Stop::Fail(format!(
                        "steps[{i}].{what}: sinew {ours:e}, BAM {reference:e}"
                    )))
                }
            };
            if sts {
                let before = num_at(inputs, "q_target_smooth")?;
                check(
                    "inputs.q_target_smooth",
                    read_state(backend, "target_smooth")?,
                    before,
                    0.0,
                )?;
            }
            cmd.position_target[0] = num_at(inputs, "goal_position")? as f32;
            let enable = f32::from(u8::from(bool_at(inputs, "torque_enable")?));
            backend
                .set_input("torque_enable", &[enable])
                .map_err(sinew_error)?;
            backend.step(&cmd).map_err(sinew_error)?;
            let mut tau_m = [0.0f32];
            backend.read_ctrl(&mut tau_m).map_err(sinew_error)?;
            check("tau_m", f64::from(tau_m[0]), num_at(outputs, "tau_m")?, 0.0)?;
            for (plane, key) in [
                ("command", "control"),
                ("gravity_torque", "tau_e"),
                ("frictionloss", "frictionloss"),
                ("damping", "damping"),
            ] {
                check(
                    key,
                    read_output(backend, plane)?,
                    num_at(outputs, key)?,
                    0.0,
                )?;
            }
            let scale = num_at(outputs, "tau_stop")?.abs() / num_at(outputs, "inertia")?;
            check(
                "ddq",
                read_output(backend, "acceleration")?,
                num_at(outputs, "ddq")?,
                scale,
            )?;
            check(
                "q_next",
                read_state(backend, "q")?,
                num_at(outputs, "q_next")?,
                0.0,
            )?;
            check(
                "dq_next",
                read_state(backend, "dq")?,
                num_at(outputs, "dq_next")?,
                0.0,
            )?;
            if sts {
                let after = num_at(outputs, "q_target_smooth")?;
                check(
                    "q_target_smooth",
                    read_state(backend, "target_smooth")?,
                    after,
                    0.0,
                )?;
            }
        }
        Ok(())
    }

    /// A friction budget alone: the [`sinew::BamFriction`] kind with τ_m
    /// as the effort target and τ_e as the external torque.
    fn friction_case(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        let params = self.fit(case)?;
        let lookup = |name: &str| params.get(name);
        // The friction does not depend on the firmware settings.
        let settings = BamSettings {
            kp: Some(1.0),
            ..BamSettings::default()
        };
        let servo = params
            .family
            .servo(GROUP, &lookup, settings, 0.005)
            .map_err(|e| e.to_string())?;
        let mut backend = backend_for((*servo.friction()).into(), make)?;
        let backend = backend.as_mut();
        let (inputs, outputs) = (field(case, "inputs")?, field(case, "outputs")?);
        let mut cmd = ActuatorCmd::zeros(1, 1);
        cmd.effort_target[0] = num_at(inputs, "tau_m")? as f32;
        cmd.vel[0] = num_at(inputs, "dq")? as f32;
        let tau_e = num_at(inputs, "tau_e")? as f32;
        backend
            .set_input("external_torque", &[tau_e])
            .map_err(sinew_error)?;
        backend.step(&cmd).map_err(sinew_error)?;
        for key in ["frictionloss", "damping"] {
            let (ours, reference) = (read_output(backend, key)?, num_at(outputs, key)?);
            let allowed = BAM_TOLERANCE * reference.abs().max(1.0);
            if !tally.compare(id, || key.to_owned(), ours, reference, allowed) {
                return Err(Stop::Fail(format!(
                    "{key}: sinew {ours:e}, BAM {reference:e}"
                )));
            }
        }
        Ok(())
    }

    /// One rollout: its fit's replay of every log of the file (run once),
    /// MAE and RMSE against BAM's.
    fn rollout(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        let fit = str_at(case, "fit")?.to_owned();
        let log = str_at(case, "log")?.to_owned();
        if !self.replays.contains_key(&fit) {
            let result = self.replay_fit(&fit, make);
            self.replays.insert(fit.clone(), result);
        }
        let replays = self.replays[&fit]
            .as_ref()
            .map_err(|e| Stop::Fail(e.clone()))?;
        let ours = replays
            .get(&log)
            .ok_or_else(|| format!("log `{log}` is not among the header's `logs`"))?;
        for (key, value) in [("mae", ours.mae), ("rmse", ours.rmse)] {
            let reference = num_at(case, key)?;
            let allowed = (ROLLOUT_RELATIVE * reference.abs()).max(ROLLOUT_ABSOLUTE);
            if !tally.compare(id, || key.to_owned(), value, reference, allowed) {
                return Err(Stop::Fail(format!(
                    "{key}: sinew {value:.6} rad, BAM {reference:.6} rad"
                )));
            }
        }
        Ok(())
    }

    /// Replays every log of the header with fit `fit` (from the header's
    /// `fits`), keyed by the log's path as the file writes it.
    fn replay_fit(
        &self,
        fit: &str,
        make: MakeBackend<'_>,
    ) -> Result<HashMap<String, Rollout>, String> {
        let header = field(field(self.doc, "fits")?, fit)?;
        let family = str_at(header, "actuator")
            .ok()
            .and_then(BamFamily::from_name)
            .unwrap_or(BamFamily::Xl330);
        let params = BamParams::from_value(field(header, "params")?, Some(family))?;
        let entries = arr_at(self.doc, "logs")?;
        let mut names = Vec::with_capacity(entries.len());
        let mut logs = Vec::with_capacity(entries.len());
        for entry in entries {
            let written = str_at(entry, "log")?;
            let path = self.find_log(written)?;
            logs.push(ServoLog::read(&path)?);
            names.push(written.to_owned());
        }
        let rollouts = replay(&logs, &params, make)?;
        Ok(names.into_iter().zip(rollouts).collect())
    }

    /// A log as the file writes it, relative to the working directory; else
    /// its file name in `--logs`.
    fn find_log(&self, written: &str) -> Result<PathBuf, String> {
        let direct = PathBuf::from(written);
        if direct.is_file() {
            return Ok(direct);
        }
        let file_name = Path::new(written).file_name().unwrap_or_default();
        match &self.logs_dir {
            Some(dir) if dir.join(file_name).is_file() => Ok(dir.join(file_name)),
            Some(dir) => Err(format!(
                "log `{written}` is neither there nor in {}",
                dir.display()
            )),
            None => Err(format!(
                "log `{written}` is not there from the working directory; give its folder with --logs DIR"
            )),
        }
    }
}

fn sinew_error(e: sinew::Error) -> Stop {
    Stop::Fail(e.to_string())
}

/// A one-env, one-joint plan of `actuator` on a backend.
fn backend_for(
    actuator: sinew::ActuatorCfg,
    make: MakeBackend<'_>,
) -> Result<Box<dyn Backend>, Stop> {
    let robot = Robot::from_joints(["servo"]);
    let group = GroupCfg::new(GROUP, ["servo"], actuator);
    let plan = Plan::new(&robot, vec![group], 1, PlanOptions::default()).map_err(sinew_error)?;
    make(plan).map_err(sinew_error)
}

fn set_state(backend: &mut dyn Backend, name: &str, value: f64) -> Result<(), Stop> {
    backend
        .set_state(GROUP, name, EnvIds::All, Values::Scalar(value as f32))
        .map_err(sinew_error)
}

fn read_state(backend: &mut dyn Backend, name: &str) -> Result<f64, Stop> {
    let mut out = [0.0f32];
    backend
        .read_state(GROUP, name, &mut out)
        .map_err(sinew_error)?;
    Ok(f64::from(out[0]))
}

fn read_output(backend: &mut dyn Backend, name: &str) -> Result<f64, Stop> {
    let mut out = [0.0f32];
    backend.read_output(name, &mut out).map_err(sinew_error)?;
    Ok(f64::from(out[0]))
}
