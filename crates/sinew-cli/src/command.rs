//! Command sources of a scenario: what every step hands the engine.
//!
//! Each source gives a signal `x(t)` per (env, target), `t = step·dt`:
//! `position_target = x(t)`, `velocity_target = ẋ(t)` (0 for `step`,
//! `uniform` and a one-field `.npy`), `effort_target = 0`. With
//! `state = "lagging"` (the default) the joint state trails the target:
//! `pos = x(t − state_delay)`, `vel = ẋ(t − state_delay)` (held at the first
//! step before that); with `state = "zero"` the joints sit at rest. Sine and
//! chirp give every (env, target) its own phase, `2π·(env/num_envs +
//! target/num_targets)`, so the envs differ.

use std::f64::consts::TAU;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sinew::{ActuatorCmd, Engine, Error};

use crate::npy;
use crate::CliError;

/// Which signal drives the targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `offset + amplitude·sin(2π·frequency·t + phase)`.
    #[default]
    Sine,
    /// A linear chirp from `f0` to `f1` Hz over the run.
    Chirp,
    /// `offset` before `at` seconds, `offset + amplitude` after.
    Step,
    /// Uniform in `[low, high)`, drawn per (env, target, step) from `seed`.
    Uniform,
    /// Read from `path`: `(steps, targets)` (every env alike), `(steps, envs,
    /// targets)` (position targets), or `(steps, 5, envs, targets)` (all five
    /// fields in `CMD_FIELDS` order, state included).
    Npy,
}

/// What `pos` and `vel` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// The signal `state_delay` seconds ago.
    #[default]
    Lagging,
    /// At rest at 0.
    Zero,
}

/// The `[command]` table.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// The source (default `sine`).
    #[serde(default)]
    pub source: Source,
    /// Amplitude (rad or m; default 0.3) for sine, chirp, step.
    pub amplitude: Option<f64>,
    /// Offset (default 0) for sine, chirp, step.
    pub offset: Option<f64>,
    /// Sine frequency (Hz, default 1).
    pub frequency: Option<f64>,
    /// Chirp start frequency (Hz, default 0.1).
    pub f0: Option<f64>,
    /// Chirp end frequency (Hz, default 5).
    pub f1: Option<f64>,
    /// Step time (s, default 0).
    pub at: Option<f64>,
    /// Uniform lower bound (default −1).
    pub low: Option<f64>,
    /// Uniform upper bound (default 1).
    pub high: Option<f64>,
    /// Uniform seed (default 0).
    pub seed: Option<u32>,
    /// The `.npy` file, relative to the scenario file.
    pub path: Option<PathBuf>,
    /// What `pos`/`vel` are (default `lagging`).
    pub state: Option<State>,
    /// How far the state trails (s, default 0.02).
    pub state_delay: Option<f64>,
}

impl CommandSpec {
    /// Checks that every field set belongs to the source and every value is usable.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let takes: &[&str] = match self.source {
            Source::Sine => &["amplitude", "offset", "frequency", "state", "state_delay"],
            Source::Chirp => &["amplitude", "offset", "f0", "f1", "state", "state_delay"],
            Source::Step => &["amplitude", "offset", "at", "state", "state_delay"],
            Source::Uniform => &["low", "high", "seed", "state", "state_delay"],
            Source::Npy => &["path", "state", "state_delay"],
        };
        let set = [
            ("amplitude", self.amplitude.is_some()),
            ("offset", self.offset.is_some()),
            ("frequency", self.frequency.is_some()),
            ("f0", self.f0.is_some()),
            ("f1", self.f1.is_some()),
            ("at", self.at.is_some()),
            ("low", self.low.is_some()),
            ("high", self.high.is_some()),
            ("seed", self.seed.is_some()),
            ("path", self.path.is_some()),
            ("state", self.state.is_some()),
            ("state_delay", self.state_delay.is_some()),
        ];
        if let Some((field, _)) = set.iter().find(|(f, s)| *s && !takes.contains(f)) {
            return Err(format!(
                "command: field `{field}` does not apply to source {:?}; it takes {}",
                self.source,
                takes.join(", ")
            ));
        }
        for (field, v) in [
            ("amplitude", self.amplitude),
            ("offset", self.offset),
            ("frequency", self.frequency),
            ("f0", self.f0),
            ("f1", self.f1),
            ("at", self.at),
            ("low", self.low),
            ("high", self.high),
            ("state_delay", self.state_delay),
        ] {
            if let Some(v) = v.filter(|v| !v.is_finite()) {
                return Err(format!("command: field `{field}` must be finite, got {v}"));
            }
        }
        if self.state_delay.is_some_and(|d| d < 0.0) {
            return Err("command: field `state_delay` must be ≥ 0".into());
        }
        if self.source == Source::Uniform && self.low.unwrap_or(-1.0) > self.high.unwrap_or(1.0) {
            return Err("command: `low` must be ≤ `high`".into());
        }
        if self.source == Source::Npy && self.path.is_none() {
            return Err("command: source npy needs field `path`".into());
        }
        Ok(())
    }

    pub(crate) fn resolve_paths(&mut self, base: &Path) {
        if let Some(p) = &self.path {
            self.path = Some(crate::scenario::relative_to(base, p));
        }
    }
}

/// The command of every step of one run.
pub struct CommandGen {
    spec: CommandSpec,
    num_envs: usize,
    num_targets: usize,
    dt: f64,
    duration: f64,
    lag_steps: usize,
    /// The sines and cosines of each target's share of a sine's or chirp's
    /// phase, `2π·target / num_targets` ([`turns`]).
    turns: (Vec<f64>, Vec<f64>),
    /// The same of each env's share, `2π·env / num_envs`.
    env_turns: (Vec<f64>, Vec<f64>),
    /// Loaded `.npy` values, their field count (1 or 5), and `shared` when
    /// one row serves every env.
    npy: Option<NpyCommand>,
}

/// The sines and cosines of `2π·i / n` for `i` in `0..n`.
fn turns(n: usize) -> (Vec<f64>, Vec<f64>) {
    (0..n)
        .map(|i| (TAU * i as f64 / n as f64).sin_cos())
        .unzip()
}

/// A block of env rows of a sine's or chirp's `(x, ẋ)` ([`WaveBlock`]):
/// `offset + a·sin(A + B)` and `b·cos(A + B)` for each env's angle `A`
/// and each target's `B` (`turns`, sines then cosines), by the
/// angle-addition rule, compiled for the widest vectors the CPU has (no
/// FMA: the same bits in every form). Written out rather than through
/// `sinew::simd::widest`, whose closure here stayed a function of its own,
/// compiled for the baseline target; one call per block.
fn wave_block(block: WaveBlock<'_>) {
    match sinew::simd::form() {
        // SAFETY: `form` is AVX-512 only where the CPU has AVX-512F.
        #[cfg(target_arch = "x86_64")]
        sinew::simd::Form::Avx512 => unsafe { wave_block_avx512(block) },
        // SAFETY: `form` is AVX2 only where the CPU has AVX2.
        #[cfg(target_arch = "x86_64")]
        sinew::simd::Form::Avx2 => unsafe { wave_block_avx2(block) },
        _ => wave_block_lanes(block),
    }
}

/// [`wave_block`] with AVX-512F.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn wave_block_avx512(block: WaveBlock<'_>) {
    wave_block_lanes(block);
}

/// [`wave_block`] with AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn wave_block_avx2(block: WaveBlock<'_>) {
    wave_block_lanes(block);
}

/// [`wave_block`]'s work: its targets' rows, then its pos and vel rows.
#[inline(always)]
fn wave_block_lanes(block: WaveBlock<'_>) {
    let WaveBlock {
        env_turns,
        turns,
        now,
        past,
    } = block;
    wave_rows(now, env_turns, turns);
    if let Some(past) = past {
        wave_rows(past, env_turns, turns);
    }
}

/// Rows `(x, dx)` of `row` ([`wave_row_lanes`]), each turned by its env's
/// share of the phase (`env_turns`, one per row).
#[inline(always)]
fn wave_rows(
    (x, dx, row): (&mut [f32], &mut [f32], WaveRow),
    (sin_e, cos_e): (&[f64], &[f64]),
    turns: (&[f64], &[f64]),
) {
    let t = turns.0.len();
    let rows = x.chunks_exact_mut(t).zip(dx.chunks_exact_mut(t));
    for ((x, dx), env) in rows.zip(sin_e.iter().copied().zip(cos_e.iter().copied())) {
        wave_row_lanes(x, dx, turns, row.turned(env));
    }
}

/// Env rows per block of [`CommandGen::fill_rows`]'s loop (a part of the
/// CPU step's split is a multiple of 16 envs).
const BLOCK: usize = 16;

/// Targets per group in [`wave_row_lanes`]'s loop: one vector of `f64` with
/// AVX-512.
const GROUP: usize = 8;

/// A row of [`wave_block`], in groups of eight targets; where the row ends
/// inside a group, its last group is the last eight targets, overlapping
/// the group before (which wrote the same values there). A plain loop over
/// 12 targets stayed scalar, short of its unrolled vector loop's 16; at
/// 12 targets a loop over chunk iterators with a scalar remainder took 1.7
/// times the instructions (callgrind), and a last group computed into
/// scratch and copied 1.5 times (the compiler made its used lanes scalar).
#[inline(always)]
fn wave_row_lanes(x: &mut [f32], dx: &mut [f32], (sin_b, cos_b): (&[f64], &[f64]), row: WaveRow) {
    let WaveRow {
        sin,
        cos,
        offset,
        a,
        b,
    } = row;
    let t = x.len();
    let (dx, sin_b, cos_b) = (&mut dx[..t], &sin_b[..t], &cos_b[..t]);
    // A macro, not a closure: a closure stays a function of its own,
    // compiled for the baseline target.
    macro_rules! targets {
        ($x:expr, $dx:expr, $sin_b:expr, $cos_b:expr) => {
            let (x, dx, sin_b, cos_b) = ($x, $dx, $sin_b, $cos_b);
            for i in 0..x.len() {
                x[i] = (offset + a * (sin * cos_b[i] + cos * sin_b[i])) as f32;
                dx[i] = (b * (cos * cos_b[i] - sin * sin_b[i])) as f32;
            }
        };
    }
    // The eight targets from `g`, as arrays: a loop of a length known here.
    macro_rules! group {
        ($g:expr) => {
            let g = $g;
            let x: &mut [f32; GROUP] = (&mut x[g..g + GROUP]).try_into().unwrap();
            let dx: &mut [f32; GROUP] = (&mut dx[g..g + GROUP]).try_into().unwrap();
            let sin_b: &[f64; GROUP] = sin_b[g..g + GROUP].try_into().unwrap();
            let cos_b: &[f64; GROUP] = cos_b[g..g + GROUP].try_into().unwrap();
            targets!(x, dx, sin_b, cos_b);
        };
    }
    if t < GROUP {
        targets!(x, dx, sin_b, cos_b);
        return;
    }
    let mut g = 0;
    while g + GROUP < t {
        group!(g);
        g += GROUP;
    }
    group!(t - GROUP);
}

/// A row of a wave ([`wave_row_lanes`]): the sine and cosine of its
/// angle, the offset, the amplitude `a` and the rate's `b = a·θ'(t)`.
#[derive(Clone, Copy)]
struct WaveRow {
    sin: f64,
    cos: f64,
    offset: f64,
    a: f64,
    b: f64,
}

impl WaveRow {
    /// The row with its angle turned by one whose sine and cosine are
    /// `(sin, cos)` (an env's share of the phase).
    #[inline(always)]
    fn turned(self, (sin_e, cos_e): (f64, f64)) -> WaveRow {
        let (sin, cos) = (self.sin, self.cos);
        WaveRow {
            sin: sin * cos_e + cos * sin_e,
            cos: cos * cos_e - sin * sin_e,
            ..self
        }
    }
}

/// A block of env rows of a wave step ([`wave_block`]): its targets'
/// `(x, ẋ)` and, for a lagging state, its pos and vel, each with its row
/// at env 0; the sines and cosines of its envs' shares of the phase; the
/// targets' ([`CommandGen::turns`]).
struct WaveBlock<'a> {
    now: (&'a mut [f32], &'a mut [f32], WaveRow),
    past: Option<(&'a mut [f32], &'a mut [f32], WaveRow)>,
    env_turns: (&'a [f64], &'a [f64]),
    turns: (&'a [f64], &'a [f64]),
}

struct NpyCommand {
    values: Vec<f32>,
    fields: usize,
    shared: bool,
}

impl CommandGen {
    /// Prepares the command of a `steps`-step run (loads the `.npy`, if any).
    pub fn new(
        spec: &CommandSpec,
        num_envs: usize,
        num_targets: usize,
        dt: f64,
        steps: usize,
    ) -> Result<CommandGen, CliError> {
        let npy = match (spec.source, &spec.path) {
            (Source::Npy, Some(path)) => Some(load_npy(path, num_envs, num_targets, steps)?),
            _ => None,
        };
        if npy.as_ref().is_some_and(|n| n.fields == 5) && spec.state.is_some() {
            return Err(CliError::Scenario {
                origin: path_text(spec.path.as_deref()),
                line: None,
                message: "command: a five-field .npy carries pos and vel; drop `state`".into(),
            });
        }
        Ok(CommandGen {
            lag_steps: (spec.state_delay.unwrap_or(0.02) / dt).round() as usize,
            spec: spec.clone(),
            num_envs,
            num_targets,
            dt,
            duration: steps as f64 * dt,
            turns: turns(num_targets),
            env_turns: turns(num_envs),
            npy,
        })
    }

    /// The command of a `steps`-step run of `scenario` with `num_envs` envs.
    pub fn for_scenario(
        scenario: &crate::Scenario,
        num_envs: usize,
        steps: usize,
    ) -> Result<CommandGen, CliError> {
        CommandGen::new(
            &scenario.command,
            num_envs,
            scenario.robot.num_targets(),
            scenario.dt,
            steps,
        )
    }

    /// The row at env 0 ([`WaveRow`]) of a sine's or chirp's step `step`:
    /// its angle before the phase, as its sine and cosine, and the rate's
    /// factor; `None` for another source.
    fn wave(&self, step: usize) -> Option<WaveRow> {
        let s = &self.spec;
        let t = step as f64 * self.dt;
        let (angle, rate) = match s.source {
            Source::Sine => {
                let w = TAU * s.frequency.unwrap_or(1.0);
                (w * t, w)
            }
            Source::Chirp => {
                let (f0, f1) = (s.f0.unwrap_or(0.1), s.f1.unwrap_or(5.0));
                let k = (f1 - f0) / self.duration;
                (TAU * (f0 * t + 0.5 * k * t * t), TAU * (f0 + k * t))
            }
            Source::Step | Source::Uniform | Source::Npy => return None,
        };
        let (sin, cos) = angle.sin_cos();
        let a = s.amplitude.unwrap_or(0.3);
        Some(WaveRow {
            sin,
            cos,
            offset: s.offset.unwrap_or(0.0),
            a,
            b: a * rate,
        })
    }

    /// `(x, ẋ)` of every target of env `env` at `step`, into `x` and `dx`,
    /// for a source other than a wave ([`CommandGen::fill`]).
    fn row(&self, step: usize, env: usize, x: &mut [f32], dx: &mut [f32]) {
        let s = &self.spec;
        let (amplitude, offset) = (s.amplitude.unwrap_or(0.3), s.offset.unwrap_or(0.0));
        let t = step as f64 * self.dt;
        for (target, (x, dx)) in x.iter_mut().zip(dx.iter_mut()).enumerate() {
            (*x, *dx) = match s.source {
                Source::Step => {
                    let on = t >= s.at.unwrap_or(0.0);
                    ((offset + if on { amplitude } else { 0.0 }) as f32, 0.0)
                }
                Source::Uniform => {
                    let (lo, hi) = (s.low.unwrap_or(-1.0), s.high.unwrap_or(1.0));
                    let u = sinew::delay::rng_unit(
                        s.seed.unwrap_or(0),
                        target as u32,
                        env as u32,
                        step as u32,
                    );
                    ((lo + (hi - lo) * f64::from(u)) as f32, 0.0)
                }
                Source::Npy => {
                    let n = self.npy.as_ref().expect("loaded with the source");
                    let row = if n.shared { 0 } else { env };
                    let per_step =
                        n.fields * if n.shared { 1 } else { self.num_envs } * self.num_targets;
                    (
                        n.values[step * per_step + row * self.num_targets + target],
                        0.0,
                    )
                }
                Source::Sine | Source::Chirp => unreachable!("a wave: `fill`'s own loop"),
            };
        }
    }

    /// Writes step `step`'s command into `cmd`, on `engine`'s threads as
    /// its next step splits the envs ([`Engine::par_rows_mut`]): on the
    /// CPU each row then waits in the cache of the core that steps it.
    ///
    /// # Errors
    /// [`sinew::Error::RowsShape`] when `cmd` is not the engine's
    /// `num_envs` rows.
    pub fn fill(&self, step: usize, cmd: &mut ActuatorCmd, engine: &Engine) -> Result<(), Error> {
        engine.par_rows_mut(cmd.fields_mut(), |envs, rows| {
            self.fill_rows(step, envs, rows)
        })
    }

    /// Writes step `step`'s command of the envs `envs` into `rows` (their
    /// rows of the five fields in [`sinew::CMD_FIELDS`] order).
    ///
    /// A sine or a chirp is `offset + amplitude·sin(θ(t) + φ)` with the
    /// phase `φ = 2π·(env / num_envs + target / num_targets)`. Its sine and
    /// cosine come by the angle-addition rule from those of `θ(t)` (once a
    /// step), of the env's share of `φ` and of the target's (each computed
    /// once), the targets' in vector lanes, in blocks of 16 env rows. That
    /// is the direct formula to `f64` rounding: the `f32` command differs
    /// from it in rare elements, by one ulp or, at a zero crossing, by under
    /// 1e-12 (30 of 409 million values at 65536 × 29; 560 of 10 million at
    /// 1000 × 29 and 2 244 of 4.3 million at 1000 × 12, all at zero
    /// crossings), and it takes no sine or cosine per element (two of each
    /// per element before, 16–18 times PD's step at 65536 × 29;
    /// BENCHMARKS.md).
    pub fn fill_rows(&self, step: usize, envs: Range<usize>, rows: [&mut [f32]; 5]) {
        let t = self.num_targets;
        if t == 0 {
            // A robot with no targets has an empty command.
            return;
        }
        if let Some(n) = self.npy.as_ref().filter(|n| n.fields == 5) {
            let plane = self.num_envs * t;
            let frame = &n.values[step * 5 * plane..(step + 1) * 5 * plane];
            for (f, field) in rows.into_iter().enumerate() {
                let at = f * plane + envs.start * t;
                field.copy_from_slice(&frame[at..at + field.len()]);
            }
            return;
        }
        let lagging = self.spec.state.unwrap_or_default() == State::Lagging;
        let past = step.saturating_sub(self.lag_steps);
        let waves = self.wave(step).zip(self.wave(past));
        let turns = (&self.turns.0[..], &self.turns.1[..]);
        let [pt, vt, et, pos, vel] = rows;
        let block = BLOCK * t;
        let blocks = pt
            .chunks_mut(block)
            .zip(vt.chunks_mut(block))
            .zip(et.chunks_mut(block))
            .zip(pos.chunks_mut(block))
            .zip(vel.chunks_mut(block));
        for (k, ((((pt, vt), et), pos), vel)) in blocks.enumerate() {
            let first = envs.start + k * BLOCK;
            let envs = first..first + pt.len() / t;
            et.fill(0.0);
            if !lagging {
                pos.fill(0.0);
                vel.fill(0.0);
            }
            if let Some((now, then)) = waves {
                wave_block(WaveBlock {
                    now: (pt, vt, now),
                    past: lagging.then_some((pos, vel, then)),
                    env_turns: (&self.env_turns.0[envs.clone()], &self.env_turns.1[envs]),
                    turns,
                });
                continue;
            }
            let rows = pt.chunks_mut(t).zip(vt.chunks_mut(t));
            for (env, (pt, vt)) in envs.clone().zip(rows) {
                self.row(step, env, pt, vt);
            }
            if lagging {
                for (env, (pos, vel)) in envs.zip(pos.chunks_mut(t).zip(vel.chunks_mut(t))) {
                    self.row(past, env, pos, vel);
                }
            }
        }
    }
}

fn path_text(path: Option<&Path>) -> String {
    path.map(|p| p.display().to_string()).unwrap_or_default()
}

fn load_npy(
    path: &Path,
    num_envs: usize,
    num_targets: usize,
    steps: usize,
) -> Result<NpyCommand, CliError> {
    let (shape, values) = npy::read_f32(path)?;
    let bad = |message: String| CliError::Npy {
        path: path.to_owned(),
        message,
    };
    let (file_steps, fields, shared) = match shape[..] {
        [s, t] if t == num_targets => (s, 1, true),
        [s, e, t] if e == num_envs && t == num_targets => (s, 1, false),
        [s, 5, e, t] if e == num_envs && t == num_targets => (s, 5, false),
        _ => {
            return Err(bad(format!(
                "shape {shape:?} is none of (steps, {num_targets}), (steps, {num_envs}, \
                 {num_targets}) or (steps, 5, {num_envs}, {num_targets})"
            )))
        }
    };
    if file_steps < steps {
        return Err(bad(format!(
            "holds {file_steps} steps; the scenario runs {steps}"
        )));
    }
    Ok(NpyCommand {
        values,
        fields,
        shared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated sine and chirp, lagging state included, against the
    /// direct formula in `f64` (`offset + amplitude·sin(θ(t) + φ)` and its
    /// rate), on row widths below, at and past a group of eight targets,
    /// over envs in two whole blocks of rows and a part of one.
    #[test]
    fn waves_follow_the_direct_formula() {
        let (dt, steps, num_envs) = (0.01, 40, 37);
        for source in [Source::Sine, Source::Chirp] {
            for num_targets in [1, 5, 8, 12, 29] {
                let spec = CommandSpec {
                    source,
                    amplitude: Some(0.4),
                    offset: Some(0.1),
                    frequency: Some(1.7),
                    f0: Some(0.5),
                    f1: Some(3.0),
                    ..CommandSpec::default()
                };
                let command = CommandGen::new(&spec, num_envs, num_targets, dt, steps).unwrap();
                let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
                let direct = |step: usize, env: usize, target: usize| -> (f64, f64) {
                    let t = step as f64 * dt;
                    let phase =
                        TAU * (env as f64 / num_envs as f64 + target as f64 / num_targets as f64);
                    let (angle, rate) = match source {
                        Source::Sine => (TAU * 1.7 * t, TAU * 1.7),
                        _ => {
                            let k = (3.0 - 0.5) / (steps as f64 * dt);
                            (TAU * (0.5 * t + 0.5 * k * t * t), TAU * (0.5 + k * t))
                        }
                    };
                    let a = angle + phase;
                    (0.1 + 0.4 * a.sin(), 0.4 * rate * a.cos())
                };
                for step in [0, 1, 9, 39] {
                    command.fill_rows(step, 0..num_envs, cmd.fields_mut());
                    let past = step.saturating_sub(2);
                    for env in 0..num_envs {
                        for target in 0..num_targets {
                            let i = env * num_targets + target;
                            let (x, dx) = direct(step, env, target);
                            let (q, dq) = direct(past, env, target);
                            let at = format!(
                                "{source:?}, {num_targets} targets, step {step}, env {env}, \
                                 target {target}"
                            );
                            for (got, want) in [
                                (cmd.position_target[i], x),
                                (cmd.velocity_target[i], dx),
                                (cmd.pos[i], q),
                                (cmd.vel[i], dq),
                            ] {
                                assert!(
                                    approx::relative_eq!(
                                        got,
                                        want as f32,
                                        epsilon = 1e-12,
                                        max_relative = f32::EPSILON
                                    ),
                                    "{at}: {got} against {want}"
                                );
                            }
                            assert_eq!(cmd.effort_target[i], 0.0, "{at}");
                        }
                    }
                }
            }
        }
    }
}
