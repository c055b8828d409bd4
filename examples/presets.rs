//! The shipped robot presets through the library API: load each scenario
//! file, compile its plan, drive 200 steps of its command source on the
//! best backend, and print what its groups produce.
//!
//! Run: `cargo run --release --example presets`

use sinew::{ActuatorCmd, Backend, Engine};
use sinew_cli::command::CommandGen;
use sinew_cli::presets;

fn main() -> Result<(), sinew_cli::CliError> {
    for (name, _, file, _) in presets::PRESETS {
        let scenario = presets::preset(name).expect("shipped")?;
        let num_envs = 256;
        let mut engine = Engine::auto(
            &scenario.robot,
            scenario.groups.clone(),
            num_envs,
            scenario.options.clone(),
        )?;
        let plan = engine.plan().clone();
        let steps = 200;
        let command = CommandGen::for_scenario(&scenario, num_envs, steps)?;
        let mut cmd = ActuatorCmd::zeros(num_envs, plan.num_targets());
        let mut ctrl = vec![0.0; num_envs * plan.num_ctrl()];
        let mut peak = vec![0.0f32; plan.num_ctrl()];
        for step in 0..steps {
            command.fill(step, &mut cmd, &engine)?;
            engine.step(&cmd)?;
            engine.read_ctrl(&mut ctrl)?;
            for row in ctrl.chunks_exact(plan.num_ctrl()) {
                for (p, &c) in peak.iter_mut().zip(row) {
                    *p = p.max(c.abs());
                }
            }
        }
        println!(
            "{} (presets/{file}) on {}",
            scenario.name,
            engine.description()
        );
        for group in plan.groups() {
            let worst = group
                .ctrl_columns
                .iter()
                .map(|&c| peak[c])
                .fold(0.0f32, f32::max);
            let actuator = &group.cfg.actuator;
            let limit = actuator
                .params()
                .iter()
                .position(|p| p.name == "effort_limit")
                .map_or(f32::INFINITY, |k| actuator.param_value(k));
            println!(
                "  {:10} {:17} {:2} targets, armature {:.6} kg·m², peak |ctrl| {worst:7.3} (limit {limit})",
                group.cfg.name,
                group.cfg.actuator.kind_name(),
                group.targets.len(),
                group.cfg.armature.unwrap_or(0.0),
            );
            assert!(worst <= limit, "{}: {worst} over its limit", group.cfg.name);
        }
        assert!(engine.nonfinite_envs()?.is_empty());
    }
    Ok(())
}
