//! `sinew verify`: replays golden files made by the real systems on a
//! backend and compares. The schema comes from the file's `schema` field:
//!
//! - `mujoco-actuator-golden/v1` (MuJoCo's own `mj_forward`/`mj_step`,
//!   `tests/golden/mujoco/README.md`): each case compiles to a plan of
//!   [`MjGeneral`](sinew::MjGeneralCfg) groups from the compiled model fields
//!   and runs one step; `actuator_force`, `act_dot`, `act_next` and
//!   `qfrc_actuator` must be within [`MUJOCO_TOLERANCE`]·max(1, |reference|),
//!   plus, for a value past it, its sensitivity to the f32 rounding of the
//!   step's own inputs (printed beside it).
//! - `mjlab-actuator-golden/v1` (mjlab's actuator code,
//!   `tests/golden/mjlab/README.md`): episodes of steps, setters and resets;
//!   ctrl must equal mjlab's float32 bit for bit on the CPU backend (within
//!   the GPU tolerance on the GPU backend), lags exactly.
//!
//! - `bam-actuator-golden/v1` (BAM's own code, `tests/golden/bam/README.md`):
//!   `laws` files replay each testbench step on the servo's bench kind and
//!   each friction budget on [`BamFriction`](sinew::BamFriction); every
//!   recorded quantity within [`BAM_TOLERANCE`]. `rollouts` files replay the
//!   recorded logs closed loop (found as written, else by name in
//!   [`VerifyOptions::logs_dir`]); MAE and RMSE within [`ROLLOUT_RELATIVE`]
//!   or [`ROLLOUT_ABSOLUTE`] of BAM's.
//!
//! - `mujoco-actuator-golden/v2` (MuJoCo 4.0.0's `<pid>` and `<dcmotor>`,
//!   `tests/golden/mujoco-stateful/README.md`): single steps and chained
//!   episodes on joints and fixed tendons, as [`MjPidCfg`](sinew::MjPidCfg) and
//!   [`MjDcMotorCfg`](sinew::MjDcMotorCfg) plans; within [`MUJOCO_TOLERANCE`]
//!   and the same sensitivity rule.
//! - `mimo-actuation-golden/v1` (MIMo's own `MuscleModel`,
//!   `tests/golden/mimo/README.md`): single muscle updates, curve sweeps
//!   and env-step rollouts on a 44-joint
//!   [`MimoMuscleCfg`](sinew::MimoMuscleCfg) plan; every compared value
//!   within [`MIMO_TOLERANCE`]·max(1, |reference|).
//!
//! A case that needs something Sinew does not model is **skipped** with the
//! reason, never counted as passed.

mod bam;
mod mimo;
mod mjlab;
mod mujoco;
mod stateful;

use std::path::Path;

use serde_json::Value;
use sinew::{Backend, Plan};

use crate::CliError;

pub use bam::{BAM_TOLERANCE, ROLLOUT_ABSOLUTE, ROLLOUT_RELATIVE};
pub use mimo::MIMO_TOLERANCE;
pub use mjlab::LEARNED_TOLERANCE;
pub use mujoco::{compiled_general, MUJOCO_TOLERANCE};

/// Makes the backend a case runs on.
pub type MakeBackend<'a> = &'a dyn Fn(Plan) -> Result<Box<dyn Backend>, sinew::Error>;

/// The golden schemas `verify` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// `mujoco-actuator-golden/v1`.
    Mujoco,
    /// `mjlab-actuator-golden/v1`.
    Mjlab,
    /// `bam-actuator-golden/v1` (`laws` and `rollouts` files).
    Bam,
    /// `mimo-actuation-golden/v1`.
    Mimo,
    /// `mujoco-actuator-golden/v2` (MuJoCo 4's stateful actuators).
    MujocoStateful,
}

impl Schema {
    /// The `schema` string of the files.
    pub fn name(self) -> &'static str {
        match self {
            Schema::Mujoco => "mujoco-actuator-golden/v1",
            Schema::Mjlab => "mjlab-actuator-golden/v1",
            Schema::Bam => "bam-actuator-golden/v1",
            Schema::Mimo => "mimo-actuation-golden/v1",
            Schema::MujocoStateful => "mujoco-actuator-golden/v2",
        }
    }
}

/// How strict the comparison is, and where to find what files refer to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VerifyOptions {
    /// mjlab files: ctrl must be bit-equal (the CPU reference) rather than
    /// within the GPU tolerance (1e-4 absolute + 1e-5 relative).
    pub mjlab_bit_exact: bool,
    /// BAM rollout files: where to look for a log, by its file name, when
    /// the path the file records does not exist from the working directory.
    pub logs_dir: Option<std::path::PathBuf>,
}

/// What happened to one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every compared value within tolerance.
    Passed,
    /// The first value out of tolerance, or an error, in words.
    Failed(String),
    /// The case needs something out of scope: why.
    Skipped(String),
}

/// Why a case stopped early: out of scope (skipped) or wrong (failed).
enum Stop {
    Skip(String),
    Fail(String),
}

impl From<String> for Stop {
    fn from(message: String) -> Self {
        Stop::Fail(message)
    }
}

impl From<Stop> for Outcome {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Skip(reason) => Outcome::Skipped(reason),
            Stop::Fail(reason) => Outcome::Failed(reason),
        }
    }
}

/// One compared value, for the "worst cases" list.
#[derive(Debug, Clone, PartialEq)]
pub struct Deviation {
    /// The case.
    pub case: String,
    /// Which value (e.g. `actuator_force[1]`).
    pub what: String,
    /// Sinew's value.
    pub ours: f64,
    /// The reference value.
    pub reference: f64,
    /// `|ours − reference|` over the allowed gap (≤ 1 passes).
    pub ratio: f64,
}

/// The result of one file.
#[derive(Debug, Clone)]
pub struct FileReport {
    /// The schema it was read as.
    pub schema: Schema,
    /// `(case id, outcome)` in file order.
    pub cases: Vec<(String, Outcome)>,
    /// The largest deviations relative to their tolerance, worst first.
    pub worst: Vec<Deviation>,
    /// Values compared.
    pub compared: usize,
    /// Values not bit-equal to the reference (as f32).
    pub inexact: usize,
    /// Differences the comparison accounts for by design, named (e.g.
    /// MIMo's positional model locking two hip joints swapped).
    pub notes: Vec<String>,
}

impl FileReport {
    /// `(passed, failed, skipped)`.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut counts = (0, 0, 0);
        for (_, outcome) in &self.cases {
            match outcome {
                Outcome::Passed => counts.0 += 1,
                Outcome::Failed(_) => counts.1 += 1,
                Outcome::Skipped(_) => counts.2 += 1,
            }
        }
        counts
    }
}

/// Keeps the `n` largest deviations.
#[derive(Debug)]
pub(crate) struct Tally {
    worst: Vec<Deviation>,
    keep: usize,
    compared: usize,
    inexact: usize,
}

impl Tally {
    fn new(keep: usize) -> Tally {
        Tally {
            worst: Vec::new(),
            keep,
            compared: 0,
            inexact: 0,
        }
    }

    /// Records one comparison; true when within `allowed`.
    pub(crate) fn compare(
        &mut self,
        case: &str,
        what: impl FnOnce() -> String,
        ours: f64,
        reference: f64,
        allowed: f64,
    ) -> bool {
        self.compared += 1;
        let gap = (ours - reference).abs();
        if ours as f32 != reference as f32 {
            self.inexact += 1;
        }
        // A non-finite reference passes only an equal value: its tolerance
        // (relative to an infinity) would pass anything.
        let ok = ours == reference || (reference.is_finite() && gap <= allowed);
        let ratio = if ours == reference {
            0.0
        } else if gap.is_nan() || allowed == 0.0 || !reference.is_finite() {
            f64::INFINITY
        } else {
            gap / allowed
        };
        let worse =
            self.worst.len() < self.keep || self.worst.last().is_some_and(|w| ratio > w.ratio);
        if ratio > 0.0 && worse {
            self.worst.push(Deviation {
                case: case.to_owned(),
                what: what(),
                ours,
                reference,
                ratio,
            });
            self.worst.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
            self.worst.truncate(self.keep);
        }
        ok
    }
}

/// The backend a [`BackendChoice`](crate::run::BackendChoice) names, as a
/// constructor per plan, with its description and how strict mjlab
/// comparisons are on it (bit-exact on the CPU reference).
#[allow(clippy::type_complexity, reason = "a boxed constructor")]
pub fn backend_maker(
    choice: crate::run::BackendChoice,
) -> Result<
    (
        String,
        Box<dyn Fn(Plan) -> Result<Box<dyn Backend>, sinew::Error>>,
        VerifyOptions,
    ),
    CliError,
> {
    use crate::run::BackendChoice;
    use sinew::{CpuBackend, GpuContext, WgpuBackend};
    let gpu = match choice {
        BackendChoice::Cpu => None,
        BackendChoice::Wgpu => Some(GpuContext::shared()?),
        BackendChoice::Auto => GpuContext::shared().ok().filter(|c| !c.is_software()),
    };
    Ok(match gpu {
        None => (
            format!("cpu (rayon, {} threads)", rayon::current_num_threads()),
            Box::new(|plan| Ok(Box::new(CpuBackend::new(plan)) as Box<dyn Backend>)),
            VerifyOptions {
                mjlab_bit_exact: true,
                ..VerifyOptions::default()
            },
        ),
        Some(ctx) => (
            format!("wgpu on {}", ctx.description()),
            Box::new(move |plan| Ok(Box::new(WgpuBackend::new(&ctx, plan)?) as Box<dyn Backend>)),
            VerifyOptions::default(),
        ),
    })
}

/// Reads a golden document's schema.
pub fn schema_of(doc: &Value) -> Result<Schema, String> {
    match doc.get("schema").and_then(Value::as_str) {
        Some(s) if s == Schema::Mujoco.name() => Ok(Schema::Mujoco),
        Some(s) if s == Schema::Mjlab.name() => Ok(Schema::Mjlab),
        Some(s) if s == Schema::Bam.name() => Ok(Schema::Bam),
        Some(s) if s == Schema::Mimo.name() => Ok(Schema::Mimo),
        Some(s) if s == Schema::MujocoStateful.name() => Ok(Schema::MujocoStateful),
        Some(s) => Err(format!(
            "unknown schema `{s}`; verify reads `{}`, `{}`, `{}`, `{}` and `{}`",
            Schema::Mujoco.name(),
            Schema::MujocoStateful.name(),
            Schema::Mjlab.name(),
            Schema::Bam.name(),
            Schema::Mimo.name()
        )),
        None => Err("no `schema` field: not a Sinew golden file".into()),
    }
}

/// Replays every case of a parsed golden document.
pub fn verify_doc(
    doc: &Value,
    make: MakeBackend<'_>,
    options: &VerifyOptions,
    keep_worst: usize,
) -> Result<FileReport, String> {
    let schema = schema_of(doc)?;
    let key = match schema {
        Schema::Bam => bam::Verifier::cases_key(doc),
        Schema::Mujoco | Schema::Mjlab | Schema::Mimo | Schema::MujocoStateful => "cases",
    };
    let cases = doc
        .get(key)
        .and_then(Value::as_array)
        .ok_or(format!("no `{key}` array"))?;
    if cases.is_empty() {
        return Err(format!(
            "the `{key}` array is empty: a golden file with nothing to compare proves nothing"
        ));
    }
    let mut bam = bam::Verifier::new(doc, options);
    let mut mimo = mimo::Verifier::new(doc);
    let mut tally = Tally::new(keep_worst);
    let mut results = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        let id = case
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("case {i}"), str::to_owned);
        let before = tally.compared;
        let outcome = match schema {
            Schema::Mujoco => mujoco::run_case(case, &id, make, &mut tally),
            Schema::Mjlab => mjlab::run_case(case, &id, make, options, &mut tally),
            Schema::Bam => bam.run_case(case, &id, make, &mut tally),
            Schema::Mimo => mimo.run_case(case, &id, make, &mut tally),
            Schema::MujocoStateful => stateful::run_case(case, &id, make, &mut tally),
        };
        // A case passes on values compared, not on the absence of any.
        let outcome = match outcome {
            Outcome::Passed if tally.compared == before => {
                Outcome::Failed("no value was compared (no steps or empty expectations)".into())
            }
            other => other,
        };
        results.push((id, outcome));
    }
    Ok(FileReport {
        schema,
        cases: results,
        worst: tally.worst,
        compared: tally.compared,
        inexact: tally.inexact,
        notes: mimo.notes,
    })
}

/// The largest golden file read (bytes).
pub const MAX_GOLDEN_BYTES: u64 = 256 << 20;

/// Reads and replays one golden file.
pub fn verify_file(
    path: &Path,
    make: MakeBackend<'_>,
    options: &VerifyOptions,
    keep_worst: usize,
) -> Result<FileReport, CliError> {
    let bad = |message: String| CliError::Io {
        path: path.to_owned(),
        message,
    };
    let bytes = sinew::memory::read_user_file(path, MAX_GOLDEN_BYTES).map_err(bad)?;
    let text = String::from_utf8(bytes).map_err(|e| bad(format!("is not UTF-8 text: {e}")))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    verify_doc(&doc, make, options, keep_worst).map_err(bad)
}

/// Small checked accessors over golden JSON: a missing or mistyped field is
/// an error naming it, never a panic.
pub(crate) mod json {
    use serde_json::Value;

    /// `v[key]`, present.
    pub fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
        v.get(key).ok_or_else(|| format!("missing field `{key}`"))
    }

    /// A number, or the strings `"inf"` / `"-inf"`.
    pub fn num(v: &Value) -> Result<f64, String> {
        match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("bad number {n}")),
            Value::String(s) if s == "inf" => Ok(f64::INFINITY),
            Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
            other => Err(format!("expected a number, found {other}")),
        }
    }

    /// `v[key]` as a number.
    pub fn num_at(v: &Value, key: &str) -> Result<f64, String> {
        num(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// An array.
    pub fn arr(v: &Value) -> Result<&Vec<Value>, String> {
        v.as_array()
            .ok_or_else(|| format!("expected an array, found {v}"))
    }

    /// `v[key]` as an array.
    pub fn arr_at<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
        arr(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// `v[key]` as a string.
    pub fn str_at<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
        field(v, key)?
            .as_str()
            .ok_or_else(|| format!("`{key}` must be a string"))
    }

    /// A string.
    pub fn string(v: &Value) -> Result<&str, String> {
        v.as_str()
            .ok_or_else(|| format!("expected a string, found {v}"))
    }

    /// `v[key]` as a bool.
    pub fn bool_at(v: &Value, key: &str) -> Result<bool, String> {
        field(v, key)?
            .as_bool()
            .ok_or_else(|| format!("`{key}` must be true or false"))
    }

    /// A non-negative integer.
    pub fn uint(v: &Value) -> Result<u64, String> {
        v.as_u64()
            .ok_or_else(|| format!("expected a non-negative integer, found {v}"))
    }

    /// `v[key]` as a non-negative integer.
    pub fn uint_at(v: &Value, key: &str) -> Result<u64, String> {
        uint(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// A non-negative integer that fits in 32 bits (never truncated).
    pub fn uint32(v: &Value) -> Result<u32, String> {
        let x = uint(v)?;
        u32::try_from(x).map_err(|_| format!("{x} does not fit in 32 bits"))
    }

    /// `v[key]` as a 32-bit non-negative integer.
    pub fn uint32_at(v: &Value, key: &str) -> Result<u32, String> {
        uint32(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// `v[key]` as a count or an index.
    pub fn usize_at(v: &Value, key: &str) -> Result<usize, String> {
        let x = uint_at(v, key)?;
        usize::try_from(x).map_err(|_| format!("`{key}`: {x} is too large"))
    }

    /// An array of numbers.
    pub fn nums(v: &Value) -> Result<Vec<f64>, String> {
        arr(v)?.iter().map(num).collect()
    }

    /// `v[key]` as an array of numbers.
    pub fn nums_at(v: &Value, key: &str) -> Result<Vec<f64>, String> {
        nums(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// A `[lo, hi]` pair, as f32.
    pub fn pair(v: &Value) -> Result<[f32; 2], String> {
        match nums(v)?[..] {
            [lo, hi] => Ok([lo as f32, hi as f32]),
            _ => Err(format!("expected two numbers, found {v}")),
        }
    }

    /// `v[key]` as a `[lo, hi]` pair.
    pub fn pair_at(v: &Value, key: &str) -> Result<[f32; 2], String> {
        pair(field(v, key)?).map_err(|e| format!("`{key}`: {e}"))
    }

    /// `v[key]` as a pair when `v[limited]` is true, else `None`.
    pub fn limited_pair(v: &Value, limited: &str, key: &str) -> Result<Option<[f32; 2]>, String> {
        if bool_at(v, limited)? {
            pair_at(v, key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An array of numbers, as f32.
    pub fn f32s(v: &Value) -> Result<Vec<f32>, String> {
        Ok(nums(v)?.into_iter().map(|x| x as f32).collect())
    }

    /// A 2-D array of numbers, as f32 rows.
    pub fn matrix(v: &Value) -> Result<Vec<Vec<f32>>, String> {
        arr(v)?.iter().map(f32s).collect()
    }
}
