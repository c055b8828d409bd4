//! Servo logs and BAM parameter files, and the closed-loop replay of logs on
//! BAM's pendulum testbench ([`sinew::BamBenchCfg`]), every log one env.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sinew::bam::{BamFamily, BamSettings};
use sinew::{ActuatorCmd, EnvIds, GroupCfg, Pendulum, Plan, PlanOptions, Robot, Values};

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
}

impl Rollout {
    fn new(positions: Vec<f64>, log: &ServoLog) -> Rollout {
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
        }
    }
}

/// The group every replay plan holds.
pub const REPLAY_GROUP: &str = "servo";

/// Replays `logs` closed loop with `params` on one backend, every log an
/// env: each env's bench and firmware settings from its log, the goal and
/// torque enable of each entry, BAM's `rollout_log` order (the position is
/// recorded, then the step). Logs of different lengths hold their last
/// entry after their end; only their own entries count.
pub fn replay(
    logs: &[ServoLog],
    params: &BamParams,
    make: MakeBackend<'_>,
) -> Result<Vec<Rollout>, String> {
    if logs.is_empty() {
        return Err("no logs to replay".into());
    }
    let armature = params.get("armature").unwrap_or(0.0) as f32;
    let q_offset = params.get("q_offset").unwrap_or(0.0) as f32;
    let lookup = |name: &str| params.get(name);
    let cfgs = logs
        .iter()
        .map(|log| {
            let settings = BamSettings {
                kp: Some(log.kp as f32),
                vin: log.vin.map(|v| v as f32),
                damping: log.damping.map(|v| v as f32),
            };
            let dt = log.dt as f32;
            let servo = params
                .family
                .servo(REPLAY_GROUP, &lookup, settings, dt)
                .map_err(|e| format!("{}: {e}", log.name))?;
            Ok(servo.bench(Pendulum {
                mass: log.mass as f32,
                length: log.length as f32,
                arm_mass: log.arm_mass as f32,
                armature,
                q_offset,
                dt,
            }))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let robot = Robot::from_joints(["servo"]);
    let group = GroupCfg::new(REPLAY_GROUP, ["servo"], cfgs[0].clone());
    let n = logs.len();
    let plan =
        Plan::new(&robot, vec![group], n, PlanOptions::default()).map_err(|e| e.to_string())?;
    let mut backend = make(plan).map_err(|e| e.to_string())?;
    let backend = backend.as_mut();
    let error = |e: sinew::Error| e.to_string();
    // Each env's own parameters.
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
    let first = |f: fn(&LogEntry) -> f64| -> Vec<f32> {
        logs.iter().map(|l| f(&l.entries[0]) as f32).collect()
    };
    for (name, values) in [("q", first(|e| e.position)), ("dq", first(|e| e.speed))] {
        backend
            .set_state(REPLAY_GROUP, name, EnvIds::All, Values::PerEnv(&values))
            .map_err(error)?;
    }
    let steps = logs.iter().map(|l| l.entries.len()).max().unwrap_or(0);
    let mut positions: Vec<Vec<f64>> = logs
        .iter()
        .map(|l| Vec::with_capacity(l.entries.len()))
        .collect();
    let mut cmd = ActuatorCmd::zeros(n, 1);
    let (mut q, mut enable) = (vec![0.0f32; n], vec![0.0f32; n]);
    for k in 0..steps {
        backend
            .read_state(REPLAY_GROUP, "q", &mut q)
            .map_err(error)?;
        for (env, log) in logs.iter().enumerate() {
            let entry = &log.entries[k.min(log.entries.len() - 1)];
            if k < log.entries.len() {
                positions[env].push(f64::from(q[env]));
            }
            cmd.position_target[env] = entry.goal_position as f32;
            enable[env] = f32::from(u8::from(entry.torque_enable));
        }
        backend.set_input("torque_enable", &enable).map_err(error)?;
        backend.step(&cmd).map_err(error)?;
        if let Some(&env) = backend.nonfinite_envs().map_err(error)?.first() {
            return Err(format!(
                "{}: the replay went non-finite at entry {k}",
                logs[env as usize].name
            ));
        }
    }
    Ok(positions
        .into_iter()
        .zip(logs)
        .map(|(p, log)| Rollout::new(p, log))
        .collect())
}

/// An SVG of one log: the recorded and the simulated position over time,
/// with the goal, axes in seconds and radians, and the errors in the title.
pub fn plot_svg(log: &ServoLog, rollout: &Rollout, title: &str) -> String {
    // Width, height and the left, right, top and bottom margins.
    const W: f64 = 900.0;
    const H: f64 = 420.0;
    const L: f64 = 60.0;
    const R: f64 = 20.0;
    const T: f64 = 40.0;
    const B: f64 = 40.0;
    let n = log.entries.len();
    let duration = (n.saturating_sub(1)).max(1) as f64 * log.dt;
    let series: [(&str, &str, Vec<f64>); 3] = [
        (
            "goal",
            "#bbbbbb",
            log.entries.iter().map(|e| e.goal_position).collect(),
        ),
        (
            "recorded",
            "#1f77b4",
            log.entries.iter().map(|e| e.position).collect(),
        ),
        ("simulated", "#d62728", rollout.positions.clone()),
    ];
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (_, _, values) in &series {
        for &v in values.iter().filter(|v| v.is_finite()) {
            (lo, hi) = (lo.min(v), hi.max(v));
        }
    }
    if lo >= hi || !lo.is_finite() {
        let mid = if lo.is_finite() { lo } else { 0.0 };
        (lo, hi) = (mid - 1.0, mid + 1.0);
    }
    let pad = 0.05 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |t: f64| L + (W - L - R) * t / duration;
    let y = |q: f64| T + (H - T - B) * (hi - q) / (hi - lo);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{L}\" y=\"20\" font-size=\"14\">{}</text>\n",
        xml_escape(title)
    );
    // Axes and ticks.
    svg += &format!(
        "<path d=\"M{L},{T} V{} H{}\" stroke=\"black\" fill=\"none\"/>\n",
        H - B,
        W - R
    );
    for i in 0..=5 {
        let q = lo + (hi - lo) * f64::from(i) / 5.0;
        svg += &format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{q:.2}</text>\n",
            L - 6.0,
            y(q) + 4.0
        );
        let t = duration * f64::from(i) / 5.0;
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t:.1}</text>\n",
            x(t),
            H - B + 16.0
        );
    }
    svg += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time (s)</text>\n\
         <text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">position (rad)</text>\n",
        (L + W - R) / 2.0,
        H - 6.0,
        H / 2.0,
        H / 2.0
    );
    for (k, (name, color, values)) in series.iter().enumerate() {
        let mut d = String::new();
        for (i, &v) in values.iter().enumerate() {
            let cmd = if i == 0 { 'M' } else { 'L' };
            d += &format!("{cmd}{:.1},{:.1} ", x(i as f64 * log.dt), y(v));
        }
        svg +=
            &format!("<path d=\"{d}\" stroke=\"{color}\" fill=\"none\" stroke-width=\"1.5\"/>\n");
        let ly = T + 14.0 * k as f64 + 8.0;
        svg += &format!(
            "<path d=\"M{},{ly} h20\" stroke=\"{color}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{name}</text>\n",
            W - R - 120.0,
            W - R - 94.0,
            ly + 4.0
        );
    }
    svg + "</svg>\n"
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
