//! `sinew`: run actuator scenarios and benchmarks from the command line.
//!
//! With no arguments it runs the Unitree G1 preset (29 joints) at 4096 envs on
//! the best backend and compares CPU and GPU when both exist.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use sinew_cli::run::{self, BackendChoice};
use sinew_cli::{bench, presets, verify, CliError, Scenario};

#[derive(Parser)]
#[command(
    name = "sinew",
    version,
    about = "Batched robot actuator models on the CPU and the GPU",
    long_about = "Batched robot actuator models on the CPU and the GPU.\n\n\
                  With no command, runs the Unitree G1 preset at 4096 envs on the best backend."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Step a scenario (a TOML file or a preset name) and write its outputs as .npy.
    Run {
        /// A scenario file, or a preset: unitree_g1, unitree_go1, so_arm100, mimo (see `sinew presets`).
        scenario: String,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// Folder for ctrl.npy, nonfinite.npy, lags_GROUP.npy and ctrl_columns.tsv.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override the scenario's num_envs.
        #[arg(long)]
        envs: Option<usize>,
        /// Override the scenario's steps.
        #[arg(long)]
        steps: Option<usize>,
        /// Also run 20 steps on both the CPU and the GPU and report how far apart they are.
        #[arg(long)]
        compare: bool,
        /// How long the CPU step's other threads keep looking for work after
        /// a step before they sleep, in µs (default 200; 0 lets them sleep at
        /// once, with no timed wake before a steadily paced step).
        #[arg(long, value_name = "MICROSECONDS")]
        spin_wait_us: Option<u64>,
    },
    /// The benchmark suite: µs per step per backend × kind × size (a mean per batch of steps,
    /// and the single steps' median and 90th percentile), against measured bandwidth (and, on a
    /// GPU with timestamp queries, the GPU's own time per step apart from the host's upload,
    /// submit and wait, and each of its dispatches' time).
    Bench {
        /// Which backends to measure.
        #[arg(long, value_enum, default_value_t = BenchBackends::All)]
        backend: BenchBackends,
        /// Env counts, comma-separated (default 1024,4096,16384,65536; with
        /// --scenario, the scenario's num_envs).
        #[arg(long, value_delimiter = ',')]
        envs: Option<Vec<usize>>,
        /// Workloads, comma-separated: pd, dc, delayed_dc, delay_dc, passthrough, mujoco,
        /// learned_mlp, learned_lstm, servo, muscle_pair, mj_dcmotor (default all).
        #[arg(long, value_delimiter = ',', conflicts_with = "scenario")]
        kinds: Vec<String>,
        /// Targets per env.
        #[arg(long, default_value_t = 29, conflicts_with = "scenario")]
        targets: usize,
        /// Time a scenario file or preset instead of the workloads: each step
        /// hot (the same command again), after the caller's own work (the
        /// scenario's next command generated between steps on the step's
        /// threads, as `sinew run` does, or on the calling thread alone;
        /// only the step is timed) and after 1 ms asleep.
        #[arg(long, value_name = "FILE|PRESET")]
        scenario: Option<String>,
        /// Also write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// How long the CPU step's other threads keep looking for work after
        /// a step before they sleep, in µs (default 200; 0 lets them sleep at
        /// once, with no timed wake before a steadily paced step).
        #[arg(long, value_name = "MICROSECONDS")]
        spin_wait_us: Option<u64>,
        /// How the GPU's steps dispatch their kernels (the same operations
        /// either way; to compare their times on one device).
        #[arg(long, value_enum, default_value_t = GpuDispatches::Auto)]
        gpu_dispatches: GpuDispatches,
    },
    /// List the shipped robot presets and BAM's servo fits.
    Presets,
    /// Replay recorded servo logs closed loop on BAM's pendulum testbench and
    /// print each log's error against the recorded positions.
    Replay {
        /// Servo logs in BAM's JSON format (e.g. data/bam-xl330/*.json).
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// BAM's actuator family: mx64, mx106, xl320, xl330, xl330i, erob80_100,
        /// erob80_50, sts3215, unitree_go1.
        #[arg(long)]
        servo: Option<String>,
        /// The shipped fit of that family to use: m1 … m6.
        #[arg(long)]
        model: Option<String>,
        /// A fit in BAM's parameter-file layout instead of a shipped one.
        #[arg(long, value_name = "FILE")]
        params: Option<PathBuf>,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// Folder for each log's simulated positions, <log>.npy (f32).
        #[arg(long)]
        out: Option<PathBuf>,
        /// An SVG of the worst log (largest RMSE): recorded vs simulated position.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
    },
    /// Fit a servo model to recorded logs: a population of candidate parameter
    /// sets replayed at once per generation (CMA-ES), BAM's loss (mean
    /// absolute position error over all logs).
    Fit {
        /// Servo logs to fit on, in BAM's JSON format.
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// BAM's actuator family: mx64, mx106, xl320, xl330, xl330i, erob80_100,
        /// erob80_50, sts3215, unitree_go1.
        #[arg(long)]
        servo: String,
        /// The friction model to fit: m1 … m6.
        #[arg(long)]
        model: String,
        /// Where to start: a shipped fit (xl330/m1) or a parameter file; BAM's
        /// own starting values when absent.
        #[arg(long, value_name = "PRESET|FILE")]
        init: Option<String>,
        /// The most loss evaluations (candidate × all fitted logs).
        #[arg(long, default_value_t = 20_000)]
        budget: usize,
        /// Candidates per generation (default max(32, 4 + 3 ln n)).
        #[arg(long)]
        population: Option<usize>,
        /// Seed: the same seed and inputs give the same fit.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Held-out logs: evaluated before and after, never fitted on.
        #[arg(long, num_args = 1.., value_name = "LOG")]
        validate: Vec<PathBuf>,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// The fitted parameters in BAM's parameter-file layout; FIT.report.json
        /// (loss history, per-log errors before and after), FIT.loss.svg and
        /// FIT.worst.svg are written beside it.
        #[arg(long, value_name = "FIT.json")]
        out: PathBuf,
    },
    /// Replay golden files made by MuJoCo, mjlab, BAM or MIMo (schema read from each file) and compare.
    Verify {
        /// Golden JSON files (tests/golden/{mujoco,mjlab,bam,mimo}/*.json).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
        /// How many of the largest deviations to list per file.
        #[arg(long, default_value_t = 3)]
        worst: usize,
        /// BAM rollout files: where to find a log (by file name) when the
        /// path the file records does not exist from here.
        #[arg(long, value_name = "DIR")]
        logs: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchBackends {
    /// The CPU, and the GPU when any adapter exists.
    All,
    /// The backend `run --backend auto` would take.
    Auto,
    /// The rayon CPU backend.
    Cpu,
    /// The wgpu backend.
    Wgpu,
}

#[derive(Clone, Copy, ValueEnum)]
enum GpuDispatches {
    /// One dispatch where the plan allows it on a hardware GPU, two on a
    /// software adapter (the library's default).
    Auto,
    /// One dispatch wherever the plan and the device allow it.
    One,
    /// A law stage and an output stage every step.
    Two,
}

fn load(scenario: &str) -> Result<Scenario, CliError> {
    let path = Path::new(scenario);
    if path.exists() {
        return Scenario::load(path);
    }
    presets::preset(scenario).unwrap_or_else(|| {
        Err(CliError::Usage(format!(
            "`{scenario}` is neither a file nor a preset; the presets are {}",
            presets::names()
        )))
    })
}

fn print_run(scenario: &Scenario, summary: &run::RunSummary) {
    println!(
        "{}: {} steps × {} envs × {} ctrl on {}",
        scenario.name, summary.steps, summary.num_envs, summary.num_ctrl, summary.backend
    );
    println!(
        "  {:.0} steps/s, {:.1} M efforts/s ({:.3} s of stepping)",
        summary.steps_per_second(),
        summary.elements_per_second() / 1e6,
        summary.step_time.as_secs_f64()
    );
    println!(
        "  non-finite: {} env-steps zeroed, {} envs affected",
        summary.nonfinite_env_steps, summary.nonfinite_envs
    );
    for file in &summary.files {
        println!("  wrote {}", file.display());
    }
}

fn compare(scenario: &Scenario, num_envs: usize) -> Result<(), CliError> {
    const STEPS: usize = 20;
    match run::agreement(scenario, num_envs, STEPS)? {
        Some((gpu, worst, n)) => {
            println!("  cpu vs {gpu}: max |Δ| {worst:e} over {n} efforts ({STEPS} steps)")
        }
        None => println!("  cpu vs gpu: not compared ({})", sinew::gpu_status()),
    }
    Ok(())
}

fn main_result() -> Result<ExitCode, CliError> {
    let cli = Cli::parse();
    match cli.command {
        None => {
            let scenario = presets::preset("unitree_g1").expect("shipped")?;
            let summary = run::run(&scenario, BackendChoice::Auto, None, None, None, true)?;
            print_run(&scenario, &summary);
            compare(&scenario, scenario.num_envs)?;
            println!("\nNext: `sinew run go1 --out out/`, `sinew bench`, `sinew presets`, `sinew --help`.");
        }
        Some(Command::Run {
            scenario,
            backend,
            out,
            envs,
            steps,
            compare: check,
            spin_wait_us,
        }) => {
            set_spin_wait(spin_wait_us);
            let scenario = load(&scenario)?;
            let summary = run::run(&scenario, backend, envs, steps, out.as_deref(), true)?;
            print_run(&scenario, &summary);
            if check {
                compare(&scenario, envs.unwrap_or(scenario.num_envs))?;
            }
        }
        Some(Command::Bench {
            backend,
            envs,
            kinds,
            targets,
            scenario,
            json,
            spin_wait_us,
            gpu_dispatches,
        }) => {
            set_spin_wait(spin_wait_us);
            let dispatches = match gpu_dispatches {
                GpuDispatches::Auto => sinew::Dispatches::Auto,
                GpuDispatches::One => sinew::Dispatches::One,
                GpuDispatches::Two => sinew::Dispatches::Two,
            };
            let gpu = sinew::GpuContext::shared();
            let backends: Vec<&str> = match backend {
                BenchBackends::Cpu => vec!["cpu"],
                BenchBackends::Wgpu => vec!["wgpu"],
                BenchBackends::All if gpu.is_ok() => vec!["cpu", "wgpu"],
                BenchBackends::All => vec!["cpu"],
                BenchBackends::Auto => match &gpu {
                    Ok(ctx) if !ctx.is_software() => vec!["wgpu"],
                    _ => vec!["cpu"],
                },
            };
            if let (Err(e), false) = (&gpu, backends.contains(&"wgpu")) {
                println!("wgpu not measured: {e}");
            }
            let kinds = if kinds.is_empty() {
                bench::KINDS.iter().map(|k| k.to_string()).collect()
            } else {
                kinds
            };
            if envs.as_ref().is_some_and(|e| e.contains(&0)) || targets == 0 {
                return Err(CliError::Usage(
                    "--envs and --targets must be at least 1".into(),
                ));
            }
            let report = match scenario {
                Some(scenario) => {
                    let scenario = load(&scenario)?;
                    let envs = envs.unwrap_or_else(|| vec![scenario.num_envs]);
                    bench::bench_scenario(&scenario, &backends, &envs, dispatches, true)?
                }
                None => {
                    let envs = envs.unwrap_or_else(|| vec![1024, 4096, 16384, 65536]);
                    bench::bench(&backends, &kinds, &envs, targets, dispatches, true)?
                }
            };
            print!("{}", report.table());
            if let Some(path) = json {
                let text = serde_json::to_string_pretty(&report).expect("plain data");
                std::fs::write(&path, text).map_err(|e| CliError::Io {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                println!("\nwrote {}", path.display());
            }
        }
        Some(Command::Verify {
            files,
            backend,
            worst,
            logs,
        }) => return verify_files(&files, backend, worst, logs),
        Some(Command::Replay {
            logs,
            servo,
            model,
            params,
            backend,
            out,
            plot,
        }) => replay(&logs, servo, model, params, backend, out, plot)?,
        Some(Command::Fit {
            logs,
            servo,
            model,
            init,
            budget,
            population,
            seed,
            validate,
            backend,
            out,
        }) => fit(
            &logs,
            &validate,
            &servo,
            &model,
            init.as_deref(),
            (budget, population, seed),
            backend,
            &out,
        )?,
        Some(Command::Presets) => {
            for (name, aliases, file, text) in presets::PRESETS {
                let title = text
                    .lines()
                    .find(|l| l.starts_with("name = "))
                    .map(|l| l.trim_start_matches("name = ").trim_matches('"'))
                    .unwrap_or(name);
                println!(
                    "{name:12} {title} (presets/{file}; also {})",
                    aliases.join(", ")
                );
            }
            println!(
                "\nBAM servo fits (a group's `preset = \"xl330/m6\"`; `sinew replay --servo xl330 --model m6`):"
            );
            for fit in sinew::bam::BAM_FITS {
                let servo = fit.servo(
                    "",
                    sinew::bam::BamSettings {
                        kp: Some(1.0),
                        ..Default::default()
                    },
                    0.005,
                );
                let kind = servo.map_or("?", |s| s.actuator().kind_id().spec().key);
                println!("{:16} {kind:12} (BAM's {})", fit.name(), fit.file);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `sinew replay`: per-log MAE, RMSE and max error in mrad, their means,
/// and the optional outputs.
fn replay(
    paths: &[PathBuf],
    servo: Option<String>,
    model: Option<String>,
    params: Option<PathBuf>,
    choice: BackendChoice,
    out: Option<PathBuf>,
    plot: Option<PathBuf>,
) -> Result<(), CliError> {
    use sinew_cli::servo::{self, BamParams, ServoLog};
    let usage = |m: String| CliError::Usage(m);
    let family = servo
        .as_deref()
        .map(|name| {
            sinew::bam::BamFamily::from_name(name).ok_or_else(|| {
                usage(format!(
                    "--servo {name}: the families are {}",
                    servo::family_names()
                ))
            })
        })
        .transpose()?;
    let params = match (params, family, model) {
        (Some(path), family, None) => BamParams::read(&path, family).map_err(usage)?,
        (Some(_), _, Some(_)) => return Err(usage("give --params or --model, not both".into())),
        (None, Some(family), Some(model)) => {
            let name = format!("{}/{model}", family.name());
            let fit = sinew::bam::bam_fit(&name).ok_or_else(|| {
                usage(format!(
                    "BAM ships no fit `{name}`; `sinew presets` lists them"
                ))
            })?;
            BamParams::from_fit(fit)
        }
        (None, _, _) => {
            return Err(usage(
                "say which fit: --servo FAMILY --model mK, or --params FILE".into(),
            ))
        }
    };
    let logs = paths
        .iter()
        .map(|p| ServoLog::read(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let (description, make, _) = verify::backend_maker(choice)?;
    let started = std::time::Instant::now();
    let rollouts = servo::replay(&logs, &params, make.as_ref()).map_err(usage)?;
    let elapsed = started.elapsed();
    println!(
        "{} log(s), {} with {} on {description} in {:.3} s",
        logs.len(),
        params.family.name(),
        params.model.as_deref().unwrap_or("the given parameters"),
        elapsed.as_secs_f64()
    );
    println!(
        "{:32} {:>8} {:>10} {:>10} {:>10}",
        "log", "entries", "MAE mrad", "RMSE mrad", "max mrad"
    );
    for ((path, log), r) in paths.iter().zip(&logs).zip(&rollouts) {
        let name = path
            .file_stem()
            .map_or_else(|| log.name.clone(), |s| s.to_string_lossy().into_owned());
        println!(
            "{name:32} {:>8} {:>10.1} {:>10.1} {:>10.1}",
            log.entries.len(),
            1e3 * r.mae,
            1e3 * r.rmse,
            1e3 * r.max_abs_error
        );
    }
    let n = rollouts.len() as f64;
    let mean = |f: fn(&servo::Rollout) -> f64| 1e3 * rollouts.iter().map(f).sum::<f64>() / n;
    println!(
        "{:32} {:>8} {:>10.1} {:>10.1}",
        "mean",
        "",
        mean(|r| r.mae),
        mean(|r| r.rmse)
    );
    if let Some(dir) = out {
        std::fs::create_dir_all(&dir).map_err(|e| CliError::Io {
            path: dir.clone(),
            message: e.to_string(),
        })?;
        for (path, r) in paths.iter().zip(&rollouts) {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let values: Vec<f32> = r.positions.iter().map(|&p| p as f32).collect();
            let file =
                sinew_cli::npy::write(&dir.join(format!("{stem}.npy")), &[values.len()], &values)?;
            println!("  wrote {}", file.display());
        }
    }
    if let Some(file) = plot {
        let worst = (0..rollouts.len())
            .max_by(|&a, &b| rollouts[a].rmse.total_cmp(&rollouts[b].rmse))
            .expect("at least one log");
        let title = format!(
            "{}: {} {} — RMSE {:.1} mrad, MAE {:.1} mrad",
            paths[worst].display(),
            params.family.name(),
            params.model.as_deref().unwrap_or(""),
            1e3 * rollouts[worst].rmse,
            1e3 * rollouts[worst].mae
        );
        let svg = servo::plot_svg(&logs[worst], &rollouts[worst], &title);
        std::fs::write(&file, svg).map_err(|e| CliError::Io {
            path: file.clone(),
            message: e.to_string(),
        })?;
        println!("  wrote {}", file.display());
    }
    Ok(())
}

/// `sinew fit`: the search with a progress bar, then each log's errors
/// before (the starting parameters) and after, and the files.
#[allow(clippy::too_many_arguments)]
fn fit(
    paths: &[PathBuf],
    validate: &[PathBuf],
    servo: &str,
    model: &str,
    init: Option<&str>,
    (budget, population, seed): (usize, Option<usize>, u64),
    choice: BackendChoice,
    out: &Path,
) -> Result<(), CliError> {
    use sinew_cli::fit::{self, FitOptions};
    use sinew_cli::servo::{BamParams, ServoLog};
    let usage = |m: String| CliError::Usage(m);
    let family = sinew::bam::BamFamily::from_name(servo).ok_or_else(|| {
        usage(format!(
            "--servo {servo}: the families are {}",
            sinew_cli::servo::family_names()
        ))
    })?;
    let init = match init {
        Some(spec) => BamParams::from_preset_or_file(spec, Some(family)).map_err(usage)?,
        None => fit::bam_start(family, model).map_err(usage)?,
    };
    let mut options = FitOptions::new(family, model, init.clone()).map_err(usage)?;
    options.budget = budget;
    options.seed = seed;
    if let Some(p) = population {
        options.population = p;
    }
    let read = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| ServoLog::read(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(usage)
    };
    let (logs, held_out) = (read(paths)?, read(validate)?);
    let (description, make, _) = verify::backend_maker(choice)?;
    println!(
        "fitting {} {model} to {} log(s) ({} held out) on {description}: {} candidates per generation, budget {budget}",
        family.name(),
        logs.len(),
        held_out.len(),
        options.population
    );
    let bar = indicatif::ProgressBar::new(budget as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} evaluations, {per_sec}, best {msg}",
        )
        .expect("a valid template"),
    );
    let result = fit::fit(&logs, &options, make.as_ref(), &mut |p| {
        bar.set_position(p.evaluations as u64);
        bar.set_message(format!("{:.2} mrad", 1e3 * p.best_loss));
    })
    .map_err(usage)?;
    bar.finish_and_clear();
    println!(
        "{} evaluations in {:.2} s ({:.0} per second), stopped: {}; loss {:.2} mrad",
        result.evaluations,
        result.seconds,
        result.evaluations as f64 / result.seconds,
        result.stop.name(),
        1e3 * result.loss
    );
    let report =
        fit::Report::new(&logs, &held_out, &init, &result, make.as_ref()).map_err(usage)?;
    report.print(paths, validate);
    let write = |path: PathBuf, text: String| {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        parent
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| CliError::Io {
                path: path.clone(),
                message: e.to_string(),
            })?;
        println!("  wrote {}", path.display());
        Ok::<(), CliError>(())
    };
    let pretty =
        |v: &serde_json::Value| serde_json::to_string_pretty(v).expect("JSON values print");
    write(out.to_path_buf(), pretty(&fit::params_json(&result.params)))?;
    let beside = |suffix: &str| out.with_extension(suffix);
    write(
        beside("report.json"),
        pretty(&report.json(paths, validate, &options, &result, &description)),
    )?;
    write(
        beside("loss.svg"),
        fit::loss_curve_svg(
            &result.history,
            &format!("sinew fit {} {model}: best loss", family.name()),
        ),
    )?;
    let (path, log, rollout) = report.worst(paths, validate);
    let title = format!(
        "{}: fitted {} {model} — RMSE {:.1} mrad, MAE {:.1} mrad",
        path.display(),
        family.name(),
        1e3 * rollout.rmse,
        1e3 * rollout.mae
    );
    write(
        beside("worst.svg"),
        sinew_cli::servo::plot_svg(log, rollout, &title),
    )
}

/// `sinew verify`: per-file counts, the worst deviations, skips with their
/// reasons, failures, and the closing `N passed, M failed` line.
fn verify_files(
    files: &[PathBuf],
    choice: BackendChoice,
    worst: usize,
    logs_dir: Option<PathBuf>,
) -> Result<ExitCode, CliError> {
    let (description, make, mut options) = verify::backend_maker(choice)?;
    options.logs_dir = logs_dir;
    println!("verifying on {description}");
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for path in files {
        let report = verify::verify_file(path, make.as_ref(), &options, worst)?;
        let (p, f, s) = report.counts();
        println!(
            "{}: {p} passed, {f} failed, {s} skipped ({}; {} values compared, {} not bit-equal as f32)",
            path.display(),
            report.schema.name(),
            report.compared,
            report.inexact
        );
        for d in &report.worst {
            println!(
                "  worst: {} {}: sinew {:e}, reference {:e}, |Δ| {:.2e} ({:.3} of the tolerance)",
                d.case,
                d.what,
                d.ours,
                d.reference,
                (d.ours - d.reference).abs(),
                d.ratio
            );
        }
        for note in &report.notes {
            println!("  note: {note}");
        }
        let mut reasons: Vec<&str> = Vec::new();
        for (id, outcome) in &report.cases {
            match outcome {
                verify::Outcome::Failed(why) => println!("  FAILED {id}: {why}"),
                verify::Outcome::Skipped(why) if !reasons.contains(&why.as_str()) => {
                    reasons.push(why);
                    println!("  skipped {id} (and others like it): {why}");
                }
                _ => {}
            }
        }
        (passed, failed, skipped) = (passed + p, failed + f, skipped + s);
    }
    if skipped > 0 {
        println!("{skipped} skipped (not counted as passed)");
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `--spin-wait-us`, where given: the CPU step's spin wait.
fn set_spin_wait(us: Option<u64>) {
    if let Some(us) = us {
        sinew::CpuBackend::set_spin_wait(std::time::Duration::from_micros(us));
    }
}

fn main() -> ExitCode {
    match main_result() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
