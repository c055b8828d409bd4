//! Property tests over random batches (proptest, named ranges).

use proptest::prelude::*;
use sinew::{
    ActuatorCmd, Backend, BuiltinPositionCfg, DcMotorCfg, DelayCfg, EnvIds, GroupCfg, IdealPdCfg,
    Plan, PlanOptions,
};

use crate::support::{backends, joints};

/// Gains as robots use them (N·m/rad, N·m·s/rad).
const KP: std::ops::Range<f32> = 0.0..500.0;
const KD: std::ops::Range<f32> = 0.0..20.0;
/// Effort limits and stall torques (N·m).
const LIMIT: std::ops::Range<f32> = 0.1..200.0;
/// Positions, errors and target values (rad).
const ANGLE: std::ops::Range<f32> = -3.0..3.0;
/// Velocities (rad/s), past the no-load speeds below.
const SPEED: std::ops::Range<f32> = -80.0..80.0;
const NUM_ENVS: usize = 6;
const NUM_TARGETS: usize = 4;

fn cmd_strategy() -> impl Strategy<Value = ActuatorCmd> {
    let n = NUM_ENVS * NUM_TARGETS;
    (
        prop::collection::vec(ANGLE, n),
        prop::collection::vec(SPEED, n),
        prop::collection::vec(-50.0f32..50.0, n),
        prop::collection::vec(ANGLE, n),
        prop::collection::vec(SPEED, n),
    )
        .prop_map(|(pt, vt, et, pos, vel)| {
            let mut cmd = ActuatorCmd::zeros(NUM_ENVS, NUM_TARGETS);
            (
                cmd.position_target,
                cmd.velocity_target,
                cmd.effort_target,
                cmd.pos,
                cmd.vel,
            ) = (pt, vt, et, pos, vel);
            cmd
        })
}

fn stepped(group: GroupCfg, cmd: &ActuatorCmd, setup: impl Fn(&mut dyn Backend)) -> Vec<Vec<f32>> {
    let plan = Plan::new(
        &joints(NUM_TARGETS),
        vec![group],
        NUM_ENVS,
        PlanOptions::default(),
    )
    .unwrap();
    backends()
        .into_iter()
        .map(|(_, make, _)| {
            let mut b = make(plan.clone());
            setup(b.as_mut());
            b.step(cmd).unwrap();
            let mut ctrl = vec![f32::NAN; NUM_ENVS * NUM_TARGETS];
            b.read_ctrl(&mut ctrl).unwrap();
            ctrl
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pd_torque_within_effort_limit(
        kp in KP, kd in KD, limit in LIMIT, cmd in cmd_strategy(),
        per_env in prop::collection::vec(LIMIT, NUM_ENVS),
    ) {
        let group = GroupCfg::new("pd", [".*"], IdealPdCfg { stiffness: kp, damping: kd, effort_limit: limit });
        for ctrl in stepped(group, &cmd, |b| b.set_effort_limit("pd", EnvIds::All, sinew::Values::PerEnv(&per_env)).unwrap()) {
            for (i, tau) in ctrl.iter().enumerate() {
                prop_assert!(tau.abs() <= per_env[i / NUM_TARGETS], "tau {} limit {}", tau, per_env[i / NUM_TARGETS]);
            }
        }
    }

    #[test]
    fn pd_is_linear_in_the_error(kp in KP, err in ANGLE, scale in 0.0f32..4.0) {
        // With kd = 0 and no feed-forward, doubling the error doubles the torque
        // (up to one rounding of the scaled error).
        let one = sinew::ideal_pd_effort(kp, 0.0, f32::INFINITY, err, 0.0, 0.0, 0.0, 0.0);
        let scaled = sinew::ideal_pd_effort(kp, 0.0, f32::INFINITY, err * scale, 0.0, 0.0, 0.0, 0.0);
        prop_assert!((scaled - scale * one).abs() <= 1e-5 * (1.0 + scaled.abs()));
    }

    #[test]
    fn dc_torque_inside_the_speed_curve(
        kp in KP, kd in KD, limit in LIMIT, sat in LIMIT, vmax in 1.0f32..60.0, cmd in cmd_strategy(),
    ) {
        let dc = DcMotorCfg { stiffness: kp, damping: kd, effort_limit: limit, saturation_effort: sat, velocity_limit: vmax };
        for ctrl in stepped(GroupCfg::new("dc", [".*"], dc), &cmd, |_| {}) {
            for (i, &tau) in ctrl.iter().enumerate() {
                let v = cmd.vel[i];
                // The curve is evaluated at the velocity clipped to the corner,
                // so bound with the clipped one; one ulp of slack for f32 rounding.
                let corner = vmax * (1.0 + limit / sat);
                let v = v.clamp(-corner, corner);
                let top = (sat * (1.0 - v / vmax)).min(limit);
                let bot = (sat * (-1.0 - v / vmax)).max(-limit);
                let slack = 4.0 * f32::EPSILON * sat.max(limit);
                prop_assert!(tau <= top.max(bot) + slack && tau >= bot.min(top) - slack,
                    "tau {} outside [{}, {}] at v {}", tau, bot, top, v);
                prop_assert!(tau.abs() <= limit + slack);
            }
        }
    }

    #[test]
    fn fixed_lag_returns_the_command_from_lag_pushes_ago(
        lag in 0u32..6, targets in prop::collection::vec(ANGLE, 1..14),
    ) {
        let group = GroupCfg::new("pos", [".*"], BuiltinPositionCfg { stiffness: 1.0, damping: 0.0, effort_limit: None })
            .with_delay(DelayCfg::constant(lag));
        let plan = Plan::new(&joints(1), vec![group], 1, PlanOptions::default()).unwrap();
        for (_, make, _) in backends() {
            let mut b = make(plan.clone());
            let mut cmd = ActuatorCmd::zeros(1, 1);
            let mut ctrl = [0.0f32];
            for (k, &x) in targets.iter().enumerate() {
                cmd.position_target[0] = x;
                b.step(&cmd).unwrap();
                b.read_ctrl(&mut ctrl).unwrap();
                // Before `lag` pushes exist, the oldest stored (first) frame.
                prop_assert_eq!(ctrl[0], targets[k.saturating_sub(lag as usize)]);
            }
        }
    }

    #[test]
    fn reset_of_some_envs_leaves_the_others_bit_identical(
        seed in any::<u32>(), reset_mask in prop::collection::vec(any::<bool>(), NUM_ENVS),
        reset_at in 1usize..8, cmds in prop::collection::vec(cmd_strategy(), 10),
    ) {
        let group = GroupCfg::new("pd", [".*"], IdealPdCfg::new(30.0, 1.0).with_effort_limit(40.0))
            .with_delay(DelayCfg { hold_prob: 0.3, update_period: 2, ..DelayCfg::new(0, 4) });
        let options = PlanOptions { seed, ..PlanOptions::default() };
        let plan = Plan::new(&joints(NUM_TARGETS), vec![group], NUM_ENVS, options).unwrap();
        let reset: Vec<u32> = (0..NUM_ENVS as u32).filter(|&e| reset_mask[e as usize]).collect();
        for (_, make, _) in backends() {
            let (mut a, mut b) = (make(plan.clone()), make(plan.clone()));
            let (mut ca, mut cb) = (vec![0.0; NUM_ENVS * NUM_TARGETS], vec![0.0; NUM_ENVS * NUM_TARGETS]);
            let (mut la, mut lb) = (vec![0; NUM_ENVS], vec![0; NUM_ENVS]);
            for (k, cmd) in cmds.iter().enumerate() {
                if k == reset_at {
                    a.reset(EnvIds::List(&reset)).unwrap();
                }
                a.step(cmd).unwrap();
                b.step(cmd).unwrap();
                a.read_ctrl(&mut ca).unwrap();
                b.read_ctrl(&mut cb).unwrap();
                a.read_lags("pd", &mut la).unwrap();
                b.read_lags("pd", &mut lb).unwrap();
                for env in (0..NUM_ENVS).filter(|e| !reset_mask[*e]) {
                    let row = env * NUM_TARGETS..(env + 1) * NUM_TARGETS;
                    prop_assert_eq!(
                        ca[row.clone()].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        cb[row].iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                    );
                    prop_assert_eq!(la[env], lb[env]);
                }
            }
        }
    }

    #[test]
    fn identical_seeds_give_identical_lags(seed in any::<u32>(), steps in 1usize..20) {
        let lags = |seed: u32| {
            let group = GroupCfg::new("pd", [".*"], IdealPdCfg::new(1.0, 0.0))
                .with_delay(DelayCfg { hold_prob: 0.5, ..DelayCfg::new(0, 7) });
            let plan = Plan::new(&joints(2), vec![group], 64, PlanOptions { seed, ..PlanOptions::default() }).unwrap();
            let mut b = backends()[0].1(plan);
            let cmd = ActuatorCmd::zeros(64, 2);
            let mut all = Vec::new();
            let mut lags = vec![0; 64];
            for _ in 0..steps {
                b.step(&cmd).unwrap();
                b.read_lags("pd", &mut lags).unwrap();
                all.extend_from_slice(&lags);
            }
            all
        };
        prop_assert_eq!(lags(seed), lags(seed));
        prop_assert_ne!(lags(seed), lags(seed.wrapping_add(1)), "64 envs × {} steps of lags in 0..=7 collide", steps);
    }
}
