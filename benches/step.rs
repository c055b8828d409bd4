//! `step/{kind}/cpu` over num_envs × {12, 29} targets, hot (inputs in cache)
//! and cold (caches evicted between steps), plus a triad that measures this
//! machine's memory bandwidth in the same run. Every parameter is a full
//! (num_envs, num_targets) table with per-(env, target) values.
//!
//! `step/{kind}/wgpu/{part}` on the process's GPU adapter, in three parts:
//! `submit` (record the step over a device-resident command, submit, wait),
//! `step` (the same from a host command, as `Backend::step` takes it: its
//! upload, submit, wait) and `readback` (copy ctrl to the host); and `gpu`, the GPU's own time for
//! the step's compute pass from timestamp queries, without the host's
//! submit and wait (where the device has timestamp queries). `copy/wgpu`
//! measures the device's buffer-copy bandwidth in the same run.
//!
//! Run: `cargo bench --bench step` (add `-- hot/`, `-- wgpu` or `-- 4096` to filter).
//! After the run a summary table with % of triad bandwidth is printed from
//! criterion's estimates (`target/criterion`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;
use sinew::{ActuatorCmd, Backend, CpuBackend, EnvIds, GpuContext, Plan, PlanOptions, WgpuBackend};
use sinew_cli::bench::{bytes_per_element, randomize, triad_pass, workload, KINDS, TRIAD_LEN};

const SIZES: [usize; 4] = [1024, 4096, 16384, 65536];
const TARGETS: [usize; 2] = [12, 29];
/// Larger than any last-level cache here: evicts everything between cold steps.
const EVICT_BYTES: usize = 256 << 20;

/// One workload of `sinew bench` (the same groups, command and per-(env,
/// target) parameters) on the backend `make` builds.
fn setup<B: Backend>(
    kind: &str,
    num_envs: usize,
    num_targets: usize,
    make: impl FnOnce(Plan) -> Result<B, sinew::Error>,
) -> Option<(B, ActuatorCmd)> {
    let (robot, groups, cmd) = workload(kind, num_envs, num_targets).expect("a known kind");
    let plan = Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
    let mut backend = match make(plan) {
        Ok(b) => b,
        // A device that cannot hold the plan (lavapipe binds 128 MiB).
        Err(e) => {
            eprintln!("step/{kind} {num_envs} × {num_targets} skipped: {e}");
            return None;
        }
    };
    randomize(&mut backend);
    Some((backend, cmd))
}

/// The learned networks, compute-bound, run at the size that matters for
/// comparison with mjlab and Isaac Lab (Go1 and ANYmal: 12 joints, 4096
/// envs); every other kind at every size.
fn measured(kind: &str, num_envs: usize, num_targets: usize) -> bool {
    !kind.starts_with("learned_") || (num_envs, num_targets) == (4096, 12)
}

/// `a = b + s·c` over arrays far larger than the caches, on all rayon threads.
fn triad(c: &mut Criterion) {
    let n = TRIAD_LEN;
    let (mut a, b, d) = (vec![0.5f32; n], vec![1.0f32; n], vec![2.0f32; n]);
    let mut group = c.benchmark_group("triad");
    group
        .throughput(Throughput::Bytes(12 * n as u64))
        .sample_size(20);
    group.bench_function("cpu", |bench| {
        bench.iter(|| {
            triad_pass(&mut a, &b, &d);
            black_box(&a);
        })
    });
    group.finish();
}

fn steps(c: &mut Criterion) {
    let mut evict = vec![0u8; EVICT_BYTES];
    for mode in ["hot", "cold"] {
        for kind in KINDS {
            for num_targets in TARGETS {
                let mut group = c.benchmark_group(format!("step/{kind}/cpu/{mode}/{num_targets}"));
                group
                    .sample_size(20)
                    .warm_up_time(Duration::from_millis(500))
                    .measurement_time(Duration::from_secs(2));
                for num_envs in SIZES {
                    if !measured(kind, num_envs, num_targets) {
                        continue;
                    }
                    let (mut backend, cmd) = setup(kind, num_envs, num_targets, |plan| {
                        Ok(CpuBackend::new(plan))
                    })
                    .expect("the CPU holds every workload");
                    group.throughput(Throughput::Elements((num_envs * num_targets) as u64));
                    group.bench_function(BenchmarkId::from_parameter(num_envs), |bench| {
                        if mode == "hot" {
                            bench.iter(|| backend.step(black_box(&cmd)).unwrap());
                        } else {
                            bench.iter_custom(|iters| {
                                let mut total = Duration::ZERO;
                                for i in 0..iters {
                                    evict.par_chunks_mut(1 << 16).for_each(|c| c.fill(i as u8));
                                    let start = Instant::now();
                                    backend.step(black_box(&cmd)).unwrap();
                                    total += start.elapsed();
                                }
                                total
                            });
                        }
                    });
                }
                group.finish();
            }
        }
    }
}

fn wait(ctx: &GpuContext) {
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
}

/// Device-to-device copy of 256 MiB: the device's memory bandwidth, counted
/// as bytes read + bytes written.
fn gpu_copy(c: &mut Criterion, ctx: &GpuContext) {
    let bytes = 256u64 << 20;
    let buffer = |usage| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (
        buffer(wgpu::BufferUsages::COPY_SRC),
        buffer(wgpu::BufferUsages::COPY_DST),
    );
    let mut group = c.benchmark_group("copy");
    group
        .throughput(Throughput::Bytes(2 * bytes))
        .sample_size(10);
    group.bench_function("wgpu", |bench| {
        bench.iter(|| {
            let mut encoder = ctx.device().create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
            ctx.queue().submit([encoder.finish()]);
            wait(ctx);
        })
    });
    group.finish();
}

fn gpu_steps(c: &mut Criterion, ctx: &GpuContext) {
    for kind in KINDS {
        for num_targets in TARGETS {
            for part in ["submit", "gpu", "step", "readback"] {
                if part == "gpu" && !ctx.has_timestamps() {
                    continue;
                }
                let mut group = c.benchmark_group(format!("step/{kind}/wgpu/{part}/{num_targets}"));
                group
                    .sample_size(10)
                    .warm_up_time(Duration::from_millis(300))
                    .measurement_time(Duration::from_secs(2));
                for num_envs in SIZES {
                    if !measured(kind, num_envs, num_targets) {
                        continue;
                    }
                    let Some((mut backend, cmd)) = setup(kind, num_envs, num_targets, |plan| {
                        WgpuBackend::new(ctx, plan)
                    }) else {
                        continue;
                    };
                    backend.step(&cmd).unwrap();
                    let mut ctrl = vec![0.0f32; num_envs * backend.plan().num_ctrl()];
                    let out = ctx.device().create_buffer(&wgpu::BufferDescriptor {
                        label: None,
                        size: backend.ctrl_bytes(),
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    });
                    // A device buffer of zeros stands in for a simulator's
                    // resident command.
                    let resident = ctx.device().create_buffer(&wgpu::BufferDescriptor {
                        label: None,
                        size: backend.cmd_bytes(),
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    });
                    group.throughput(Throughput::Elements((num_envs * num_targets) as u64));
                    group.bench_function(
                        BenchmarkId::from_parameter(num_envs),
                        |bench| match part {
                            "submit" => bench.iter(|| {
                                let mut encoder =
                                    ctx.device().create_command_encoder(&Default::default());
                                backend.encode_step(&mut encoder, &resident, &out).unwrap();
                                ctx.queue().submit([encoder.finish()]);
                                wait(ctx);
                            }),
                            "gpu" => bench.iter_custom(|iters| {
                                let times = backend
                                    .gpu_step_times(&cmd, iters as usize)
                                    .unwrap()
                                    .expect("the device has timestamp queries");
                                Duration::from_secs_f64(times.iter().sum::<f64>() / 1e6)
                            }),
                            "step" => bench.iter(|| {
                                backend.step(&cmd).unwrap();
                                wait(ctx);
                            }),
                            _ => bench.iter(|| backend.read_ctrl(black_box(&mut ctrl)).unwrap()),
                        },
                    );
                }
                group.finish();
            }
        }
    }
}

/// Median ns of one benchmark from criterion's saved estimates.
fn median_ns(id: &str) -> Option<f64> {
    let path = format!(
        "{}/target/criterion/{id}/new/estimates.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn summary() {
    let Some(triad_ns) = median_ns("triad/cpu") else {
        return;
    };
    let triad_gbs = 12.0 * TRIAD_LEN as f64 / triad_ns;
    println!(
        "\ntriad: {triad_gbs:.1} GB/s ({} threads)",
        rayon::current_num_threads()
    );
    println!("| kind | mode | num_envs × targets | µs/step | Melem/s | GB/s moved | % of triad |");
    println!("|---|---|---|---:|---:|---:|---:|");
    for mode in ["hot", "cold"] {
        for kind in KINDS {
            for num_targets in TARGETS {
                for num_envs in SIZES {
                    let Some(ns) =
                        median_ns(&format!("step_{kind}_cpu_{mode}_{num_targets}/{num_envs}"))
                    else {
                        continue;
                    };
                    let elements = (num_envs * num_targets) as f64;
                    let gbs = elements * bytes_per_element(kind, num_targets) / ns;
                    println!(
                        "| {kind} | {mode} | {num_envs} × {num_targets} | {:.1} | {:.0} | {gbs:.1} | {:.0}% |",
                        ns / 1e3,
                        elements / ns * 1e3,
                        100.0 * gbs / triad_gbs
                    );
                }
            }
        }
    }
}

fn gpu_summary() {
    let Some(copy_ns) = median_ns("copy/wgpu") else {
        return;
    };
    let copy_gbs = 2.0 * (256u64 << 20) as f64 / copy_ns;
    let adapter = GpuContext::shared()
        .map(|c| c.description().to_owned())
        .unwrap_or_default();
    println!("\nwgpu on {adapter}: device copy {copy_gbs:.1} GB/s");
    println!("| kind | num_envs × targets | submit+wait µs | Melem/s | % of copy | GPU µs | host-command step µs | readback µs |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for kind in KINDS {
        for num_targets in TARGETS {
            for num_envs in SIZES {
                let part =
                    |p: &str| median_ns(&format!("step_{kind}_wgpu_{p}_{num_targets}/{num_envs}"));
                let Some(ns) = part("submit") else { continue };
                let elements = (num_envs * num_targets) as f64;
                let gbs = elements * bytes_per_element(kind, num_targets) / ns;
                let us = |p: Option<f64>| p.map_or("–".into(), |ns| format!("{:.1}", ns / 1e3));
                println!(
                    "| {kind} | {num_envs} × {num_targets} | {:.1} | {:.0} | {:.0}% | {} | {} | {} |",
                    ns / 1e3,
                    elements / ns * 1e3,
                    100.0 * gbs / copy_gbs,
                    us(part("gpu")),
                    us(part("step")),
                    us(part("readback")),
                );
            }
        }
    }
}

/// A partial reset, as a training loop does every step for the envs whose
/// episode ended: `reset/{backend}/delay_dc/29/{listed envs}` of 4096 envs
/// (delay rings and lags re-drawn per env), followed by the step that
/// flushes it on the GPU.
fn resets(c: &mut Criterion, ctx: Option<&GpuContext>) {
    let num_envs = 4096;
    let listed: Vec<u32> = (0..num_envs as u32).step_by(16).collect();
    let backends: Vec<(&str, Box<dyn Backend>)> = {
        let mut all = Vec::new();
        let make = |plan| Ok(CpuBackend::new(plan));
        let (b, _) = setup("delay_dc", num_envs, 29, make).expect("the CPU holds it");
        all.push(("cpu", Box::new(b) as Box<dyn Backend>));
        if let Some(ctx) = ctx {
            if let Some((b, _)) = setup("delay_dc", num_envs, 29, |p| WgpuBackend::new(ctx, p)) {
                all.push(("wgpu", Box::new(b)));
            }
        }
        all
    };
    let (_, _, cmd) = workload("delay_dc", num_envs, 29).expect("a known kind");
    for (name, mut backend) in backends {
        let mut group = c.benchmark_group(format!("reset/{name}/delay_dc/29"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        group.bench_function(BenchmarkId::from_parameter(listed.len()), |bench| {
            bench.iter(|| {
                backend.reset(EnvIds::List(black_box(&listed))).unwrap();
                backend.step(&cmd).unwrap();
            })
        });
        group.bench_function("step alone", |bench| {
            bench.iter(|| backend.step(&cmd).unwrap())
        });
        group.finish();
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    triad(&mut c);
    steps(&mut c);
    let ctx = GpuContext::shared();
    resets(&mut c, ctx.as_ref().ok());
    match ctx {
        Ok(ctx) => {
            gpu_copy(&mut c, &ctx);
            gpu_steps(&mut c, &ctx);
        }
        Err(e) => println!("wgpu benches skipped: {e}"),
    }
    c.final_summary();
    summary();
    gpu_summary();
}
