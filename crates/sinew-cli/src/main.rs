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
        /// A scenario file, or a preset: unitree_g1, unitree_go1, so_arm100 (see `sinew presets`).
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
    },
    /// The benchmark suite: µs per step per backend × kind × size, against measured bandwidth.
    Bench {
        /// Which backends to measure.
        #[arg(long, value_enum, default_value_t = BenchBackends::All)]
        backend: BenchBackends,
        /// Env counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1024,4096,16384,65536")]
        envs: Vec<usize>,
        /// Workloads, comma-separated: pd, dc, delayed_dc, delay_dc, passthrough, mujoco,
        /// learned_mlp (default all).
        #[arg(long, value_delimiter = ',')]
        kinds: Vec<String>,
        /// Targets per env.
        #[arg(long, default_value_t = 29)]
        targets: usize,
        /// Also write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// List the shipped robot presets.
    Presets,
    /// Replay golden files made by MuJoCo or mjlab (schema read from each file) and compare.
    Verify {
        /// Golden JSON files (tests/golden/{mujoco,mjlab,bam}/*.json).
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
        }) => {
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
            json,
        }) => {
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
            if envs.contains(&0) || targets == 0 {
                return Err(CliError::Usage(
                    "--envs and --targets must be at least 1".into(),
                ));
            }
            let report = bench::bench(&backends, &kinds, &envs, targets, true)?;
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
        }
    }
    Ok(ExitCode::SUCCESS)
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

fn main() -> ExitCode {
    match main_result() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
