//! `sinew run`: steps a scenario and writes what it asks for as `.npy`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use sinew::{ActuatorCmd, Backend, Engine};

use crate::command::CommandGen;
use crate::npy;
use crate::scenario::Scenario;
use crate::CliError;

/// Which backend to run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BackendChoice {
    /// A hardware GPU if there is one, else the CPU.
    #[default]
    Auto,
    /// The rayon CPU backend.
    Cpu,
    /// The wgpu backend (software adapters included).
    Wgpu,
}

/// An engine for a scenario's plan.
pub fn engine(
    scenario: &Scenario,
    num_envs: usize,
    choice: BackendChoice,
) -> Result<Engine, CliError> {
    let (robot, groups, options) = (&scenario.robot, scenario.groups.clone(), &scenario.options);
    let made = match choice {
        BackendChoice::Auto => Engine::auto(robot, groups, num_envs, options.clone()),
        BackendChoice::Cpu => Engine::cpu(robot, groups, num_envs, options.clone()),
        BackendChoice::Wgpu => Engine::gpu(robot, groups, num_envs, options.clone()),
    };
    let mut engine = made.map_err(|e| scenario.locate(e))?;
    let len = num_envs * engine.plan().num_targets();
    for (name, &value) in &scenario.inputs {
        engine
            .set_input(name, &vec![value; len])
            .map_err(|e| scenario.field_error("inputs", e.to_string()))?;
    }
    Ok(engine)
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The backend, in words.
    pub backend: String,
    /// Steps taken.
    pub steps: usize,
    /// Envs per step.
    pub num_envs: usize,
    /// Ctrl columns per env.
    pub num_ctrl: usize,
    /// Time inside `step` (and, on the GPU, waiting for it), excluding
    /// command generation and file writing.
    pub step_time: Duration,
    /// Env-steps zeroed for a non-finite input or output.
    pub nonfinite_env_steps: usize,
    /// Envs zeroed at least once.
    pub nonfinite_envs: usize,
    /// Files written.
    pub files: Vec<PathBuf>,
}

impl RunSummary {
    /// Steps per second of step time.
    pub fn steps_per_second(&self) -> f64 {
        self.steps as f64 / self.step_time.as_secs_f64()
    }

    /// (env, ctrl column) efforts per second of step time.
    pub fn elements_per_second(&self) -> f64 {
        self.steps_per_second() * (self.num_envs * self.num_ctrl) as f64
    }
}

/// Steps `scenario` on `choice` (with `num_envs`/`steps` overrides) and
/// writes its outputs into `out` when given.
pub fn run(
    scenario: &Scenario,
    choice: BackendChoice,
    num_envs: Option<usize>,
    steps: Option<usize>,
    out: Option<&Path>,
    progress: bool,
) -> Result<RunSummary, CliError> {
    for (flag, value) in [("--envs", num_envs), ("--steps", steps)] {
        if value == Some(0) {
            return Err(CliError::Usage(format!("{flag} must be at least 1")));
        }
    }
    let num_envs = num_envs.unwrap_or(scenario.num_envs);
    let steps = steps.unwrap_or(scenario.steps);
    let mut engine = engine(scenario, num_envs, choice)?;
    let plan = engine.plan().clone();
    let num_ctrl = plan.num_ctrl();
    let command = CommandGen::for_scenario(scenario, num_envs, steps)?;
    let spec = &scenario.output;
    let envs: Vec<u32> = match &spec.envs {
        Some(list) => {
            if let Some(&bad) = list.iter().find(|&&e| e as usize >= num_envs) {
                return Err(scenario.field_error(
                    "output",
                    format!(
                        "`output.envs` lists env {bad}, but this run has {num_envs} envs (--envs)"
                    ),
                ));
            }
            list.clone()
        }
        None => (0..num_envs as u32).collect(),
    };
    let written = steps.div_ceil(spec.every);
    let mut outputs = match out {
        Some(dir) => Some(Outputs::create(dir, scenario, &plan, &envs, written)?),
        None => None,
    };

    let bar = if progress && steps >= 100 {
        let bar = ProgressBar::new(steps as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} steps, {eta} left")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_message(scenario.name.clone());
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut cmd = ActuatorCmd::zeros(num_envs, plan.num_targets());
    let mut ctrl = vec![0.0f32; num_envs * num_ctrl];
    let mut step_time = Duration::ZERO;
    let (mut bad_steps, mut ever_bad) = (0usize, vec![false; num_envs]);
    for step in 0..steps {
        command.fill(step, &mut cmd, &engine)?;
        let start = Instant::now();
        engine.step(&cmd).map_err(|e| scenario.locate(e))?;
        // The non-finite report waits for the step on the GPU.
        let bad = engine.nonfinite_envs().map_err(|e| scenario.locate(e))?;
        step_time += start.elapsed();
        bad_steps += bad.len();
        for &e in bad {
            ever_bad[e as usize] = true;
        }
        if step % spec.every == 0 {
            if let Some(o) = outputs.as_mut() {
                o.write(&mut engine, &mut ctrl, &envs)?;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let files = match outputs {
        Some(o) => o.finish()?,
        None => Vec::new(),
    };
    Ok(RunSummary {
        backend: engine.description(),
        steps,
        num_envs,
        num_ctrl,
        step_time,
        nonfinite_env_steps: bad_steps,
        nonfinite_envs: ever_bad.iter().filter(|&&b| b).count(),
        files,
    })
}

/// The `.npy` files of one run, written as it goes.
struct Outputs {
    ctrl: Option<npy::Writer<f32>>,
    nonfinite: Option<npy::Writer<u8>>,
    lags: Vec<(String, npy::Writer<u32>)>,
    other: Vec<PathBuf>,
}

impl Outputs {
    fn create(
        dir: &Path,
        scenario: &Scenario,
        plan: &sinew::Plan,
        envs: &[u32],
        written: usize,
    ) -> Result<Outputs, CliError> {
        let io = |path: &Path, message: String| CliError::Io {
            path: path.to_owned(),
            message,
        };
        if dir.exists() && !dir.is_dir() {
            return Err(io(dir, "--out must name a folder; this is a file".into()));
        }
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e.to_string()))?;
        let spec = &scenario.output;
        let n = envs.len();
        // What each ctrl column is, for whoever loads ctrl.npy.
        let mut columns = String::from("# column\tgroup\ttarget\tmeaning\n");
        for (i, c) in plan.ctrl_columns().iter().enumerate() {
            columns.push_str(&format!(
                "{i}\t{}\t{}\t{:?}\n",
                tsv_cell(&plan.groups()[c.group].cfg.name),
                tsv_cell(&c.target),
                c.meaning
            ));
        }
        let columns_path = dir.join("ctrl_columns.tsv");
        std::fs::write(&columns_path, columns).map_err(|e| CliError::Io {
            path: columns_path.clone(),
            message: e.to_string(),
        })?;
        let mut lags = Vec::new();
        if spec.lags {
            for buffer in plan.buffers() {
                let group = &plan.groups()[buffer.groups[0]].cfg.name;
                let path = dir.join(format!("lags_{group}.npy"));
                lags.push((group.clone(), npy::Writer::create(&path, &[written, n])?));
            }
        }
        Ok(Outputs {
            ctrl: spec
                .ctrl
                .then(|| npy::Writer::create(&dir.join("ctrl.npy"), &[written, n, plan.num_ctrl()]))
                .transpose()?,
            nonfinite: spec
                .nonfinite
                .then(|| npy::Writer::create(&dir.join("nonfinite.npy"), &[written, n]))
                .transpose()?,
            lags,
            other: vec![columns_path],
        })
    }

    fn write(
        &mut self,
        engine: &mut Engine,
        ctrl: &mut [f32],
        envs: &[u32],
    ) -> Result<(), CliError> {
        let all = envs.len() == engine.plan().num_envs();
        if let Some(w) = self.ctrl.as_mut() {
            engine.read_ctrl(ctrl)?;
            let num_ctrl = engine.plan().num_ctrl();
            if all {
                w.write(ctrl)?;
            } else {
                for &e in envs {
                    w.write(&ctrl[e as usize * num_ctrl..(e as usize + 1) * num_ctrl])?;
                }
            }
        }
        if let Some(w) = self.nonfinite.as_mut() {
            let bad = engine.nonfinite_envs()?;
            let row: Vec<u8> = envs
                .iter()
                .map(|e| u8::from(bad.binary_search(e).is_ok()))
                .collect();
            w.write(&row)?;
        }
        if !self.lags.is_empty() {
            let mut lags = vec![0u32; engine.plan().num_envs()];
            for (group, w) in &mut self.lags {
                engine.read_lags(group, &mut lags)?;
                let row: Vec<u32> = envs.iter().map(|&e| lags[e as usize]).collect();
                w.write(&row)?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<PathBuf>, CliError> {
        let mut files = self.other;
        if let Some(w) = self.ctrl {
            files.push(w.finish()?);
        }
        if let Some(w) = self.nonfinite {
            files.push(w.finish()?);
        }
        for (_, w) in self.lags {
            files.push(w.finish()?);
        }
        Ok(files)
    }
}

/// A TSV cell: tab, newline, carriage return and backslash escaped as
/// `\t`, `\n`, `\r` and `\\` (the convention of PostgreSQL's and
/// MySQL's text formats), so that any name stays in its cell.
fn tsv_cell(text: &str) -> String {
    let mut cell = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => cell.push_str("\\t"),
            '\n' => cell.push_str("\\n"),
            '\r' => cell.push_str("\\r"),
            '\\' => cell.push_str("\\\\"),
            c => cell.push(c),
        }
    }
    cell
}

/// CPU and GPU on the same scenario: the largest |Δ| of ctrl over `steps`
/// steps, or `None` when this machine has no GPU adapter.
pub fn agreement(
    scenario: &Scenario,
    num_envs: usize,
    steps: usize,
) -> Result<Option<(String, f32, usize)>, CliError> {
    if sinew::GpuContext::shared().is_err() {
        return Ok(None);
    }
    let mut cpu = engine(scenario, num_envs, BackendChoice::Cpu)?;
    let mut gpu = engine(scenario, num_envs, BackendChoice::Wgpu)?;
    let plan = cpu.plan().clone();
    let command = CommandGen::for_scenario(scenario, num_envs, steps)?;
    let mut cmd = ActuatorCmd::zeros(num_envs, plan.num_targets());
    let n = num_envs * plan.num_ctrl();
    let (mut a, mut b) = (vec![0.0f32; n], vec![0.0f32; n]);
    let mut worst = 0.0f32;
    for step in 0..steps {
        command.fill(step, &mut cmd, &cpu)?;
        cpu.step(&cmd)?;
        gpu.step(&cmd)?;
        cpu.read_ctrl(&mut a)?;
        gpu.read_ctrl(&mut b)?;
        for (x, y) in a.iter().zip(&b) {
            let d = (x - y).abs();
            // NaN never agrees.
            worst = if d.is_nan() || worst.is_nan() {
                f32::NAN
            } else {
                worst.max(d)
            };
        }
    }
    Ok(Some((gpu.description(), worst, n * steps)))
}
