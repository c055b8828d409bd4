//! 1024 MIMo infants (44 muscle-driven joints each) stepped the way MIMo's
//! own env steps them: per env step of two physics substeps, one muscle
//! update whose torque is discarded (MIMo's `action()`), then one update per
//! substep whose torque the physics applies.
//!
//! The body and its muscles are the `mimo` preset (MIMo's own parameters).
//! The physics is a stand-in of a few lines: every joint a free rotor of
//! inertia 0.01 kg·m² with 0.05 N·m·s/rad of damping, clamped to its range.
//! Half of the infants contract the flexors (muscle 1 of every joint, which
//! pulls toward negative angles), the other half the extensors. After one
//! second the activations have reached their targets, the two halves'
//! joints have moved apart, and MIMo's cost follows from the cost planes.
//!
//! Run: `cargo run --release --example mimo_infants`

use sinew::mimo::mimo_muscle_cost;
use sinew::{ActuatorCmd, Backend, Engine};

const FRAME_SKIP: usize = 2;
const DT: f32 = 0.005;
const INERTIA: f32 = 0.01;
const DAMPING: f32 = 0.05;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mimo = sinew_cli::presets::preset("mimo").expect("a shipped preset")?;
    let num_envs = 1024;
    let mut engine = Engine::auto(
        &mimo.robot,
        mimo.groups.clone(),
        num_envs,
        mimo.options.clone(),
    )?;
    let n = mimo.robot.num_targets();
    println!(
        "backend: {}; {num_envs} infants × {n} joints",
        engine.description()
    );

    // Each joint's range and force scales, from the preset.
    let mut ranges = Vec::with_capacity(n);
    let mut fmax = Vec::with_capacity(n);
    for g in &mimo.groups {
        let sinew::ActuatorCfg::MimoMuscle(m) = &g.actuator else {
            unreachable!("the preset is all muscles")
        };
        ranges.push((m.range_lo, m.range_hi));
        fmax.push([m.fmax_neg, m.fmax_pos]);
    }

    // Flexors on in the first half of the envs, extensors in the second.
    let size = num_envs * n;
    let half = |first: f32, second: f32| -> Vec<f32> {
        (0..size)
            .map(|i| if i / n < num_envs / 2 { first } else { second })
            .collect()
    };
    engine.set_input("muscle_target_neg", &half(0.8, 0.0))?;
    engine.set_input("muscle_target_pos", &half(0.0, 0.8))?;

    // Start every joint at its spring reference (0 for MIMo) clamped into range.
    let mut cmd = ActuatorCmd::zeros(num_envs, n);
    for (i, q) in cmd.pos.iter_mut().enumerate() {
        let (lo, hi) = ranges[i % n];
        *q = 0.0f32.clamp(lo, hi);
    }
    let mut tau = vec![0.0; size];
    let env_steps = 100; // 1 s at frame_skip 2
    for _ in 0..env_steps {
        // MIMo's action(): one update, torque discarded.
        engine.step(&cmd)?;
        for _ in 0..FRAME_SKIP {
            engine.step_into(&cmd, &mut tau)?;
            for i in 0..size {
                let (lo, hi) = ranges[i % n];
                let acc = (tau[i] - DAMPING * cmd.vel[i]) / INERTIA;
                cmd.vel[i] += acc * DT;
                cmd.pos[i] = (cmd.pos[i] + cmd.vel[i] * DT).clamp(lo, hi);
                if cmd.pos[i] == lo || cmd.pos[i] == hi {
                    cmd.vel[i] = 0.0;
                }
            }
        }
    }
    assert!(engine.nonfinite_envs()?.is_empty());

    let mut act = vec![0.0; size];
    engine.read_output("muscle_activation_neg", &mut act)?;
    let (flexing, extending) = (act[0], act[size - 1]);
    println!(
        "flexor activation after 1 s: {flexing:.6} (first half), {extending:.6} (second half)"
    );
    // 300 updates halving the gap to the target: there, to f32 rounding.
    approx::assert_abs_diff_eq!(flexing, 0.8, epsilon = 1e-6);
    assert_eq!(extending, 0.0);

    let mean = |range: std::ops::Range<usize>, joint: usize| -> f32 {
        range.clone().map(|e| cmd.pos[e * n + joint]).sum::<f32>() / range.len() as f32
    };
    let mut moved_apart = 0;
    for (j, joint) in mimo.robot.joints.iter().enumerate() {
        let (a, b) = (mean(0..num_envs / 2, j), mean(num_envs / 2..num_envs, j));
        if j < 4 {
            println!("{joint:28} flexing {a:+.3} rad, extending {b:+.3} rad");
        }
        moved_apart += usize::from(a < b);
    }
    println!("joints where the flexing half ends below the extending half: {moved_apart} of {n}");
    assert_eq!(moved_apart, n);

    let mut terms = vec![0.0; size];
    engine.read_output("muscle_cost", &mut terms)?;
    let cost = mimo_muscle_cost(&terms[..n], &fmax);
    let total: f32 = fmax.iter().map(|f| f[0] + f[1]).sum();
    let by_hand = fmax.iter().map(|f| 0.64 * f[0]).sum::<f32>() / (2.0 * n as f32 * total);
    println!("MIMo's cost of infant 0: {cost:.6}");
    approx::assert_relative_eq!(cost, by_hand, max_relative = 1e-5);
    Ok(())
}
