//! A fixed number of steps of one `sinew bench` workload on the CPU
//! backend, for counting instructions: `benches/instructions.sh` runs it
//! under valgrind's callgrind at two step counts and prints the
//! instructions per step, a figure that does not move with the machine's
//! load as timings do.
//!
//! Run: `cargo bench --bench instructions -- KIND NUM_ENVS NUM_TARGETS STEPS`
//! (defaults: delay_dc 128 29 100; flags such as `--bench` are ignored).

use sinew::{Backend, CpuBackend, Plan, PlanOptions};
use sinew_cli::bench::{randomize, workload};

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
    let kind = arg(0, "delay_dc");
    let (num_envs, num_targets, steps) = (number(1, "128"), number(2, "29"), number(3, "100"));
    let (robot, groups, cmd) = workload(&kind, num_envs, num_targets)
        .unwrap_or_else(|| panic!("{kind:?} is not a `sinew bench` workload"));
    let plan = Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
    let mut backend = CpuBackend::new(plan);
    randomize(&mut backend);
    for _ in 0..steps {
        backend.step(&cmd).unwrap();
    }
    std::hint::black_box(backend.ctrl());
}
