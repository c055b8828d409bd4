//! A fixed number of steps of one `sinew bench` workload, or of a preset
//! or scenario file, on the CPU backend, for counting instructions: `benches/instructions.sh` runs it
//! under valgrind's callgrind at two step counts and prints the
//! instructions per step, a figure that does not move with the machine's
//! load as timings do.
//!
//! Run: `cargo bench --bench instructions -- WORKLOAD NUM_ENVS NUM_TARGETS STEPS [IDLE_US]`
//! (defaults: delay_dc 128 29 100 0; flags such as `--bench` are ignored).
//! WORKLOAD `kind:KEY` steps a registered kind's `Kind::example` on every
//! target, `kind:KEY+force` the same with `compute_force` set (the MuJoCo
//! stage computes the force from the forwarded command), and either with
//! `+wide` appended, the group's gear written per env and target (for
//! `mj_general`, a parameter that makes the MuJoCo stage read every
//! parameter from the table; `kind:mj_general+filter` is its example with
//! Euler `filter` dynamics in place of `filterexact`); `kinds` lists the
//! keys, `KEY+force` beside those with a MuJoCo equivalent
//! (`benches/kind_instructions.sh` runs them all).
//! With IDLE_US, a workload's steps each follow that many µs asleep (a
//! caller's steady pace) and the run prints their mean and median times;
//! under `/usr/bin/time`, the process's CPU time is what the pool's workers
//! spend beside the steps.
//! A preset or scenario takes its own targets and its command's first
//! step; NUM_TARGETS is then unused.

use sinew::{
    ActuatorCfg, ActuatorCmd, Backend, CpuBackend, DynType, EnvIds, GroupCfg, KindId, MjGeneralCfg,
    Plan, PlanOptions, Values,
};
use sinew_cli::bench::{randomize, workload};
use sinew_cli::command::CommandGen;
use sinew_cli::{presets, run, Scenario};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let arg = |k: usize, default: &str| args.get(k).cloned().unwrap_or_else(|| default.into());
    let number = |k: usize, default: &str| -> usize {
        let text = arg(k, default);
        text.parse()
            .unwrap_or_else(|_| panic!("argument {}: {text:?} is not a count", k + 1))
    };
    let name = arg(0, "delay_dc");
    let (num_envs, num_targets, steps) = (number(1, "128"), number(2, "29"), number(3, "100"));
    let idle = Duration::from_micros(number(4, "0") as u64);
    if name == "kinds" {
        for kind in KindId::ALL {
            println!("{}", kind.spec().key);
            if let Ok(Some(_)) = kind.example().mujoco_equivalent("g") {
                println!("{}+force", kind.spec().key);
            }
        }
        return;
    }
    // `kind:KEY`: the kind's `Kind::example` on every target, the pd
    // workload's robot and command.
    let mut widen = false;
    let chosen = match name.strip_prefix("kind:") {
        Some(key) => {
            let (key, wide) = match key.strip_suffix("+wide") {
                Some(key) => (key, true),
                None => (key, false),
            };
            let (key, force) = match key.strip_suffix("+force") {
                Some(key) => (key, true),
                None => (key, false),
            };
            widen = wide;
            let (key, euler) = match key.strip_suffix("+filter") {
                Some(key) => (key, true),
                None => (key, false),
            };
            let kind = KindId::from_key(key).unwrap_or_else(|| panic!("no kind {key:?}"));
            let example = match kind.example() {
                ActuatorCfg::MjGeneral(c) if euler => ActuatorCfg::MjGeneral(MjGeneralCfg {
                    dyn_type: DynType::Filter,
                    ..c
                }),
                _ if euler => panic!("+filter is for mj_general"),
                example => example,
            };
            workload("pd", num_envs, num_targets).map(|(robot, _, cmd)| {
                let mut group = GroupCfg::new("g", [".*"], example);
                group.compute_force = force;
                (robot, vec![group], cmd)
            })
        }
        None => workload(&name, num_envs, num_targets),
    };
    if let Some((robot, groups, cmd)) = chosen {
        let plan = Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
        let mut backend = CpuBackend::new(plan);
        randomize(&mut backend);
        if widen {
            // Gears of 0.9..1.1 per (env, target).
            let gears: Vec<f32> = (0..num_envs * num_targets)
                .map(|i| 0.9 + 0.2 * (i % 11) as f32 / 10.0)
                .collect();
            (backend.set_param("g", "gear", EnvIds::All, Values::PerEnvTarget(&gears)))
                .unwrap_or_else(|e| panic!("+wide writes the group's gear: {e}"));
        }
        let mut times = Vec::with_capacity(if idle.is_zero() { 0 } else { steps });
        for _ in 0..steps {
            if idle.is_zero() {
                backend.step(&cmd).unwrap();
            } else {
                std::thread::sleep(idle);
                let start = Instant::now();
                backend.step(&cmd).unwrap();
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        if !times.is_empty() {
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            println!("{name} {num_envs} × {num_targets}, {idle:?} asleep before each step: mean {mean:.1} µs, median {median:.1} µs");
        }
        std::hint::black_box(backend.ctrl());
        return;
    }
    let scenario = presets::preset(&name)
        .unwrap_or_else(|| Scenario::load(name.as_ref()))
        .unwrap_or_else(|e| panic!("{name:?} is no workload, preset or scenario file: {e}"));
    let mut engine = run::engine(&scenario, num_envs, run::BackendChoice::Cpu).unwrap();
    let mut cmd = ActuatorCmd::zeros(num_envs, engine.plan().num_targets());
    CommandGen::for_scenario(&scenario, num_envs, 1)
        .unwrap()
        .fill(0, &mut cmd, &engine)
        .unwrap();
    for _ in 0..steps {
        engine.step(&cmd).unwrap();
    }
    let mut ctrl = vec![0.0; num_envs * engine.plan().num_ctrl()];
    engine.read_ctrl(&mut ctrl).unwrap();
    std::hint::black_box(ctrl);
}
