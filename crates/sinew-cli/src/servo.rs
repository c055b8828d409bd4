//! Servo logs and BAM parameter files, and the closed-loop replay of logs on
//! BAM's pendulum testbench ([`sinew::BamBenchCfg`]), every log one env.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sinew::bam::{BamFamily, BamFit, BamSettings};
use sinew::{ActuatorCmd, Backend, EnvIds, GroupCfg, Pendulum, Plan, PlanOptions, Robot, Values};

use crate::svg::{line_plot, Series};
use crate::verify::MakeBackend;

/// The largest log or parameter file read (bytes).
pub const MAX_SERVO_FILE_BYTES: u64 = 64 << 20;

/// A fit in BAM's parameter-file layout (`bam/params/<motor>/m<k>.json`):
/// the parameters by BAM's names, the model and the actuator family.
#[derive(Debug, Clone, PartialEq)]
pub struct BamParams {
    /// The actuator family (`"actuator"`).
    pub family: BamFamily,
    /// The friction model, `m1` … `m6` (`"model"`), when given.
    pub model: Option<String>,
    /// Every numeric entry.
    pub values: BTreeMap<String, f64>,
}

impl BamParams {
    /// Reads BAM's layout from parsed JSON; `family` overrides (or stands
    /// in for) the file's `"actuator"`.
    pub fn from_value(v: &Value, family: Option<BamFamily>) -> Result<BamParams, String> {
        let map = v
            .as_object()
            .ok_or("a BAM parameter file is a JSON object of parameters")?;
        let mut values = BTreeMap::new();
        let mut model = None;
        let mut named = None;
        for (key, value) in map {
            match (key.as_str(), value) {
                ("model", Value::String(m)) => model = Some(m.clone()),
                ("actuator", Value::String(a)) => named = Some(a.clone()),
                (_, Value::Number(n)) => {
                    let x = n.as_f64().filter(|x| x.is_finite());
                    values.insert(
                        key.clone(),
                        x.ok_or(format!("`{key}` = {n} is not finite"))?,
                    );
                }
                (_, other) => return Err(format!("`{key}` = {other} is not a number")),
            }
        }
        let family = match (family, named) {
            (Some(f), _) => f,
            (None, Some(name)) => BamFamily::from_name(&name).ok_or_else(|| {
                format!(
                    "`actuator` = \"{name}\" is not one of BAM's families ({})",
                    family_names()
                )
            })?,
            (None, None) => {
                return Err(format!(
                    "no `actuator` field: say which family ({})",
                    family_names()
                ))
            }
        };
        Ok(BamParams {
            family,
            model,
            values,
        })
    }

    /// Reads a parameter file.
    pub fn read(path: &Path, family: Option<BamFamily>) -> Result<BamParams, String> {
        BamParams::from_value(&read_json(path)?, family)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A parameter by BAM's name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }

    /// One of BAM's shipped fits.
    pub fn from_fit(fit: &BamFit) -> BamParams {
        BamParams {
            family: fit.family,
            model: Some(fit.model.to_owned()),
            values: fit.params.iter().map(|&(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    /// A shipped fit by name (`xl330/m6`) or a parameter file, for
    /// `family` when given.
    pub fn from_preset_or_file(spec: &str, family: Option<BamFamily>) -> Result<BamParams, String> {
        if let Some(fit) = sinew::bam::bam_fit(spec) {
            match family {
                Some(f) if f != fit.family => Err(format!(
                    "`{spec}` is a fit of {}, not of {}",
                    fit.family.name(),
                    f.name()
                )),
                _ => Ok(BamParams::from_fit(fit)),
            }
        } else if Path::new(spec).is_file() {
            let v = read_json(Path::new(spec))?;
            let named = v.get("actuator").and_then(Value::as_str);
            if let (Some(named), Some(f)) = (named, family) {
                if named != f.name() {
                    return Err(format!("{spec} is a fit of {named}, not of {}", f.name()));
                }
            }
            BamParams::from_value(&v, family).map_err(|e| format!("{spec}: {e}"))
        } else {
            Err(format!(
                "`{spec}` is neither a shipped fit (`sinew presets` lists them) nor a file"
            ))
        }
    }
}

/// The families' registry names, for messages.
pub fn family_names() -> String {
    BamFamily::ALL.map(BamFamily::name).join(", ")
}

/// Reads a JSON file of at most [`MAX_SERVO_FILE_BYTES`].
fn read_json(path: &Path) -> Result<Value, String> {
    let bytes = sinew::memory::read_user_file(path, MAX_SERVO_FILE_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

/// One entry of a servo log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogEntry {
    /// Measured position (rad).
    pub position: f64,
    /// Measured velocity (rad/s).
    pub speed: f64,
    /// The goal sent (rad).
    pub goal_position: f64,
    /// Torque enable.
    pub torque_enable: bool,
}

/// A recorded servo log in BAM's format (`../shared/data/bam-xl330/`): the
/// bench (`mass`, `length`, `arm_mass`), the firmware settings (`kp`,
/// `vin`, `damping`), `dt` and the entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ServoLog {
    /// Where it came from (for messages).
    pub name: String,
    /// Pendulum end mass (kg).
    pub mass: f64,
    /// Pendulum length (m).
    pub length: f64,
    /// Arm mass (kg; 0 when absent, as BAM's loader says).
    pub arm_mass: f64,
    /// The firmware gain.
    pub kp: f64,
    /// The supply voltage, when recorded.
    pub vin: Option<f64>,
    /// eRob/Go1 derivative gain, when recorded.
    pub damping: Option<f64>,
    /// The step (s).
    pub dt: f64,
    /// The entries, every `dt`.
    pub entries: Vec<LogEntry>,
}

impl ServoLog {
    /// Reads a log from parsed JSON; `name` names it in errors.
    pub fn from_value(v: &Value, name: &str) -> Result<ServoLog, String> {
        let not = |why: String| format!("{name} is not a servo log: {why}");
        let number = |key: &str| -> Result<Option<f64>, String> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(x) => x
                    .as_f64()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| not(format!("`{key}` = {x} is not a finite number"))),
            }
        };
        let required = |key: &str| number(key)?.ok_or_else(|| not(format!("no `{key}`")));
        let positive = |key: &str| {
            let x = required(key)?;
            if x > 0.0 {
                Ok(x)
            } else {
                Err(not(format!("`{key}` = {x} must be > 0")))
            }
        };
        let entries = v
            .get("entries")
            .and_then(Value::as_array)
            .ok_or_else(|| not("no `entries` array".into()))?;
        if entries.is_empty() {
            return Err(not("its `entries` array is empty".into()));
        }
        let entries = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let at = |key: &str| {
                    e.get(key)
                        .and_then(Value::as_f64)
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| not(format!("entries[{i}].{key} is missing or not finite")))
                };
                Ok(LogEntry {
                    position: at("position")?,
                    speed: at("speed")?,
                    goal_position: at("goal_position")?,
                    torque_enable: match e.get("torque_enable") {
                        Some(Value::Bool(b)) => *b,
                        None => true,
                        Some(other) => {
                            return Err(not(format!(
                                "entries[{i}].torque_enable = {other} is not true or false"
                            )))
                        }
                    },
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ServoLog {
            name: name.to_owned(),
            mass: required("mass")?,
            length: required("length")?,
            arm_mass: number("arm_mass")?.unwrap_or(0.0),
            kp: required("kp")?,
            vin: number("vin")?,
            damping: number("damping")?,
            dt: positive("dt")?,
            entries,
        })
    }

    /// Reads a log file.
    pub fn read(path: &Path) -> Result<ServoLog, String> {
        ServoLog::from_value(&read_json(path)?, &path.display().to_string())
    }
}

/// One log replayed: BAM's simulated position before each entry, and its
/// errors against the recorded positions (rad).
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// `positions[k]`: the simulated `q` before entry `k`'s step.
    pub positions: Vec<f64>,
    /// Mean absolute error (BAM's score).
    pub mae: f64,
    /// Root mean square error.
    pub rmse: f64,
    /// Largest absolute error.
    pub max_abs_error: f64,
    /// The entry at whose step the replay went non-finite, if it did (the
    /// positions after it are infinite).
    pub diverged_at: Option<usize>,
}

impl Rollout {
    fn new(positions: Vec<f64>, log: &ServoLog, diverged_at: Option<usize>) -> Rollout {
        let errors: Vec<f64> = positions
            .iter()
            .zip(&log.entries)
            .map(|(p, e)| p - e.position)
            .collect();
        let n = errors.len() as f64;
        Rollout {
            mae: errors.iter().map(|e| e.abs()).sum::<f64>() / n,
            rmse: (errors.iter().map(|e| e * e).sum::<f64>() / n).sqrt(),
            max_abs_error: errors.iter().fold(0.0, |m, e| m.max(e.abs())),
            positions,
            diverged_at,
        }
    }
}

/// The group every replay plan holds.
pub const REPLAY_GROUP: &str = "servo";

/// Replays `logs` closed loop with `params` on one backend, every log an
/// env (see [`Testbench`]). A replay that goes non-finite is an error
/// naming the log and the entry.
pub fn replay(
    logs: &[ServoLog],
    params: &BamParams,
    make: MakeBackend<'_>,
) -> Result<Vec<Rollout>, String> {
    let mut bench = Testbench::new(logs, params.family, 1, make)?;
    let rollouts = bench.run(std::slice::from_ref(params))?;
    for (log, r) in logs.iter().zip(&rollouts) {
        if let Some(k) = r.diverged_at {
            return Err(format!(
                "{}: the replay went non-finite at entry {k}",
                log.name
            ));
        }
    }
    Ok(rollouts)
}

/// BAM's pendulum testbench over many parameter sets at once: `sets ×
/// logs` envs of one plan, env `s·logs + l` replaying log `l` with
/// parameter set `s`, each with its own bench and firmware settings from
/// its log, the goal and torque enable of each entry, and BAM's
/// `rollout_log` order (the position is recorded, then the step). Logs of
/// different lengths hold their last entry after their end; only their own
/// entries count. The backend is built once and reused by every
/// [`run`](Testbench::run).
pub struct Testbench<'a> {
    logs: &'a [ServoLog],
    family: BamFamily,
    sets: usize,
    backend: Box<dyn Backend>,
}

impl<'a> Testbench<'a> {
    /// A testbench for `sets` parameter sets of `family` replaying `logs`.
    pub fn new(
        logs: &'a [ServoLog],
        family: BamFamily,
        sets: usize,
        make: MakeBackend<'_>,
    ) -> Result<Testbench<'a>, String> {
        if logs.is_empty() {
            return Err("no logs to replay".into());
        }
        if sets == 0 {
            return Err("no parameter sets to replay".into());
        }
        // BAM's starting values stand in until `run` sets each env's own.
        let defaults = BamParams {
            family,
            model: None,
            values: family
                .param_ranges()
                .iter()
                .map(|r| (r.name.to_owned(), r.default))
                .collect(),
        };
        let template = bench_cfg(&logs[0], &defaults)?;
        let robot = Robot::from_joints(["servo"]);
        let group = GroupCfg::new(REPLAY_GROUP, ["servo"], template);
        let plan = Plan::new(
            &robot,
            vec![group],
            sets * logs.len(),
            PlanOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        let backend = make(plan).map_err(|e| e.to_string())?;
        Ok(Testbench {
            logs,
            family,
            sets,
            backend,
        })
    }

    /// Replays every log with every parameter set (at most the `sets` the
    /// testbench was built for; fewer leave the other envs idle) and
    /// returns one [`Rollout`] per (set, log), set-major. An env that goes
    /// non-finite stops there: its rollout says where, and its errors count
    /// the entries after it as infinite.
    pub fn run(&mut self, params: &[BamParams]) -> Result<Vec<Rollout>, String> {
        if params.len() > self.sets {
            return Err(format!(
                "{} parameter sets for a testbench of {}",
                params.len(),
                self.sets
            ));
        }
        let (logs, num_logs) = (self.logs, self.logs.len());
        let n = self.sets * num_logs;
        let mut cfgs = Vec::with_capacity(n);
        for p in params {
            if p.family != self.family {
                return Err(format!(
                    "parameters of {} on a {} testbench",
                    p.family.name(),
                    self.family.name()
                ));
            }
            for log in logs {
                cfgs.push(bench_cfg(log, p)?);
            }
        }
        // Idle envs repeat the last set.
        while cfgs.len() < n {
            cfgs.push(cfgs[cfgs.len() - num_logs].clone());
        }
        let backend = self.backend.as_mut();
        let error = |e: sinew::Error| e.to_string();
        backend.reset(EnvIds::All).map_err(error)?;
        for (k, spec) in cfgs[0].params().iter().enumerate() {
            let values: Vec<f32> = cfgs.iter().map(|c| c.param_value(k)).collect();
            backend
                .set_param(
                    REPLAY_GROUP,
                    spec.name,
                    EnvIds::All,
                    Values::PerEnv(&values),
                )
                .map_err(error)?;
        }
        let log_of = |env: usize| &logs[env % num_logs];
        let first = |f: fn(&LogEntry) -> f64| -> Vec<f32> {
            (0..n)
                .map(|env| f(&log_of(env).entries[0]) as f32)
                .collect()
        };
        for (name, values) in [("q", first(|e| e.position)), ("dq", first(|e| e.speed))] {
            backend
                .set_state(REPLAY_GROUP, name, EnvIds::All, Values::PerEnv(&values))
                .map_err(error)?;
        }
        let steps = logs.iter().map(|l| l.entries.len()).max().unwrap_or(0);
        let used = params.len() * num_logs;
        let mut positions: Vec<Vec<f64>> = (0..used)
            .map(|env| Vec::with_capacity(log_of(env).entries.len()))
            .collect();
        let mut diverged = vec![None; used];
        let mut cmd = ActuatorCmd::zeros(n, 1);
        let (mut q, mut enable) = (vec![0.0f32; n], vec![0.0f32; n]);
        for k in 0..steps {
            backend
                .read_state(REPLAY_GROUP, "q", &mut q)
                .map_err(error)?;
            for env in 0..n {
                let log = log_of(env);
                let entry = &log.entries[k.min(log.entries.len() - 1)];
                if env < used && k < log.entries.len() {
                    let q = if diverged[env].is_some() {
                        f64::INFINITY
                    } else {
                        f64::from(q[env])
                    };
                    positions[env].push(q);
                }
                cmd.position_target[env] = entry.goal_position as f32;
                enable[env] = f32::from(u8::from(entry.torque_enable));
            }
            backend.set_input("torque_enable", &enable).map_err(error)?;
            backend.step(&cmd).map_err(error)?;
            for &env in backend.nonfinite_envs().map_err(error)? {
                if let Some(d) = diverged.get_mut(env as usize) {
                    d.get_or_insert(k);
                }
            }
        }
        Ok(positions
            .into_iter()
            .zip(diverged)
            .enumerate()
            .map(|(env, (p, d))| Rollout::new(p, log_of(env), d))
            .collect())
    }
}

/// The bench config of `log` replayed with `params`: the servo from the
/// parameters and the log's firmware settings, the pendulum from the log,
/// the rotor inertia and encoder offset from the parameters.
fn bench_cfg(log: &ServoLog, params: &BamParams) -> Result<sinew::ActuatorCfg, String> {
    let settings = BamSettings {
        kp: Some(log.kp as f32),
        vin: log.vin.map(|v| v as f32),
        damping: log.damping.map(|v| v as f32),
    };
    let dt = log.dt as f32;
    let servo = params
        .family
        .servo(REPLAY_GROUP, &|name| params.get(name), settings, dt)
        .map_err(|e| format!("{}: {e}", log.name))?;
    Ok(servo.bench(Pendulum {
        mass: log.mass as f32,
        length: log.length as f32,
        arm_mass: log.arm_mass as f32,
        armature: params.get("armature").unwrap_or(0.0) as f32,
        q_offset: params.get("q_offset").unwrap_or(0.0) as f32,
        dt,
    }))
}

/// An SVG of one log: the recorded and the simulated position over time,
/// with the goal, axes in seconds and radians, and the errors in the title.
pub fn plot_svg(log: &ServoLog, rollout: &Rollout, title: &str) -> String {
    let timed = |values: &mut dyn Iterator<Item = f64>| -> Vec<(f64, f64)> {
        values
            .enumerate()
            .map(|(i, v)| (i as f64 * log.dt, v))
            .collect()
    };
    let series = [
        Series {
            name: "goal",
            color: "#bbbbbb",
            points: timed(&mut log.entries.iter().map(|e| e.goal_position)),
        },
        Series {
            name: "recorded",
            color: "#1f77b4",
            points: timed(&mut log.entries.iter().map(|e| e.position)),
        },
        Series {
            name: "simulated",
            color: "#d62728",
            points: timed(&mut rollout.positions.iter().copied()),
        },
    ];
    line_plot(title, "time (s)", "position (rad)", &series)
}
