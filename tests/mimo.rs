//! MIMo's muscle model beyond the golden files, on every backend:
//! activations stay in [0, 1], zero activation leaves the passive torque,
//! the torque's sign follows the active muscle, resets, per-env parameter
//! writes, a NaN target leaving only its env's activations unchanged, and
//! errors naming group, field and value.

use proptest::prelude::*;
use sinew::mimo::{self, MimoMuscleCfg};
use sinew::{
    ActuatorCmd, Backend, EnvIds, Error, GroupCfg, MimoPositionalCfg, MimoSpringDamperCfg, Plan,
    PlanOptions, Values,
};

use crate::support::{backends, joints};

const NUM_ENVS: usize = 4;
const NUM_TARGETS: usize = 3;
const N: usize = NUM_ENVS * NUM_TARGETS;

/// MIMo v1's hip_bend, knee and elbow (ranges in rad, `user` data).
fn muscles() -> [MimoMuscleCfg; 3] {
    [
        MimoMuscleCfg::new(-0.296_705_97, 0.532_325_4, 0.8574, [32.93, 22.97], 0.005),
        MimoMuscleCfg::new(-2.617_994, 0.087_266_46, 0.5, [20.0, 18.0], 0.005),
        MimoMuscleCfg::new(-2.443_461, 0.0, 0.6, [8.0, 6.0], 0.005),
    ]
}

/// One group per joint, each its own MIMo actuator.
fn plan() -> Plan {
    let groups = muscles()
        .into_iter()
        .enumerate()
        .map(|(j, m)| GroupCfg::new(format!("m{j}"), [format!("j{j}")], m))
        .collect();
    Plan::new(
        &joints(NUM_TARGETS),
        groups,
        NUM_ENVS,
        PlanOptions::default(),
    )
    .unwrap()
}

fn cmd(q: &[f32], dq: &[f32]) -> ActuatorCmd {
    let mut cmd = ActuatorCmd::zeros(NUM_ENVS, NUM_TARGETS);
    cmd.pos = q.to_vec();
    cmd.vel = dq.to_vec();
    cmd
}

fn read(b: &mut dyn Backend, plane: &str) -> Vec<f32> {
    let mut out = vec![f32::NAN; N];
    b.read_output(plane, &mut out).unwrap();
    out
}

fn ctrl(b: &mut dyn Backend) -> Vec<f32> {
    let mut out = vec![f32::NAN; N];
    b.read_ctrl(&mut out).unwrap();
    out
}

/// The torque the scalar model gives joint `j` at `(q, dq)` with these
/// activations.
fn torque(j: usize, q: f32, dq: f32, a: [f32; 2]) -> f32 {
    let m = muscles()[j];
    let [m1, r1, m2, r2] = mimo::muscle_parametrization(m.range_lo, m.range_hi, m.springref);
    let f1 = mimo::muscle_state(m1, r1, m.vmax, q - m.springref, dq, a[0]).force;
    let f2 = mimo::muscle_state(m2, r2, m.vmax, q - m.springref, dq, a[1]).force;
    -(m1 * f1 * m.fmax_neg + m2 * f2 * m.fmax_pos)
}

/// Angles inside each joint's range (as a share of it) and velocities.
fn state() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    (
        prop::collection::vec(0.0f32..1.0, N),
        prop::collection::vec(-3.0f32..3.0, N),
    )
        .prop_map(|(share, dq)| {
            let q = share
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let m = muscles()[i % NUM_TARGETS];
                    m.range_lo + s * (m.range_hi - m.range_lo)
                })
                .collect();
            (q, dq)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Over several steps of random targets (outside [0, 1] too) and joint
    /// states, the activations stay in [0, 1] and the torque is the scalar
    /// model's at the activations the step reports.
    #[test]
    fn activations_stay_in_the_unit_interval(
        targets in prop::collection::vec(prop::collection::vec(-0.5f32..1.5, 2 * N), 3),
        (q, dq) in state(),
    ) {
        for (name, make, _) in backends() {
            let mut b = make(plan());
            for t in &targets {
                b.set_input("muscle_target_neg", &t[..N]).unwrap();
                b.set_input("muscle_target_pos", &t[N..]).unwrap();
                b.step(&cmd(&q, &dq)).unwrap();
                let (a1, a2) = (read(b.as_mut(), "muscle_activation_neg"), read(b.as_mut(), "muscle_activation_pos"));
                let tau = ctrl(b.as_mut());
                for i in 0..N {
                    prop_assert!((0.0..=1.0).contains(&a1[i]) && (0.0..=1.0).contains(&a2[i]), "{name} [{i}]: {} {}", a1[i], a2[i]);
                    let want = torque(i % NUM_TARGETS, q[i], dq[i], [a1[i], a2[i]]);
                    prop_assert!((tau[i] - want).abs() <= 1e-4 * want.abs().max(1.0), "{name} [{i}]: {} vs {want}", tau[i]);
                }
            }
        }
    }

    /// With both activations at 0 the torque is the passive one; with only
    /// muscle 1 active it is below it (muscle 1 pulls toward negative
    /// angles), with only muscle 2 above it.
    #[test]
    fn the_torque_follows_the_active_muscle((q, dq) in state()) {
        // Slow joints, so that the force–velocity curve is not 0.
        let dq: Vec<f32> = dq.iter().map(|v| 0.1 * v).collect();
        for (name, make, _) in backends() {
            let mut b = make(plan());
            b.step(&cmd(&q, &dq)).unwrap();
            let passive = ctrl(b.as_mut());
            for i in 0..N {
                let want = torque(i % NUM_TARGETS, q[i], dq[i], [0.0, 0.0]);
                prop_assert!((passive[i] - want).abs() <= 1e-4 * want.abs().max(1.0), "{name} [{i}]");
            }
            for (plane, sign) in [("muscle_target_neg", -1.0f32), ("muscle_target_pos", 1.0)] {
                b.reset(EnvIds::All).unwrap();
                b.set_input("muscle_target_neg", &[0.0; N]).unwrap();
                b.set_input("muscle_target_pos", &[0.0; N]).unwrap();
                b.set_input(plane, &[1.0; N]).unwrap();
                b.step(&cmd(&q, &dq)).unwrap();
                let active = ctrl(b.as_mut());
                for i in 0..N {
                    prop_assert!(sign * (active[i] - passive[i]) > 0.0, "{name} {plane} [{i}]: {} vs passive {}", active[i], passive[i]);
                }
            }
        }
    }
}

/// Reset zeroes the activations of the envs it names only; per-env force
/// scales reach the torque; a NaN target leaves its env's activations
/// unchanged (and zeroes its outputs) while the others advance.
#[test]
fn resets_per_env_writes_and_nan_isolation() {
    let q: Vec<f32> = (0..N).map(|i| -0.1 * (i % NUM_TARGETS) as f32).collect();
    let dq = vec![0.0; N];
    for (name, make, _) in backends() {
        let mut b = make(plan());
        b.set_input("muscle_target_neg", &[1.0; N]).unwrap();
        b.set_input("muscle_target_pos", &[0.5; N]).unwrap();
        b.step(&cmd(&q, &dq)).unwrap();
        b.step(&cmd(&q, &dq)).unwrap();
        let mut a = vec![0.0; NUM_ENVS];
        b.read_state("m0", "activation_neg", &mut a).unwrap();
        assert_eq!(a, vec![0.75; NUM_ENVS], "{name}");
        b.reset(EnvIds::List(&[1, 3])).unwrap();
        b.read_state("m0", "activation_neg", &mut a).unwrap();
        assert_eq!(a, vec![0.75, 0.0, 0.75, 0.0], "{name}");

        // fmax per env: env k's muscle 1 at k+1 times MIMo's.
        let scales: Vec<f32> = (0..NUM_ENVS).map(|k| 32.93 * (k + 1) as f32).collect();
        b.set_param("m0", "fmax_neg", EnvIds::All, Values::PerEnv(&scales))
            .unwrap();
        b.step(&cmd(&q, &dq)).unwrap();
        let tau = ctrl(b.as_mut());
        let (a1, a2) = (
            read(b.as_mut(), "muscle_activation_neg"),
            read(b.as_mut(), "muscle_activation_pos"),
        );
        for (env, &scale) in scales.iter().enumerate() {
            let i = env * NUM_TARGETS;
            let m = muscles()[0];
            let [m1, r1, m2, r2] = mimo::muscle_parametrization(m.range_lo, m.range_hi, 0.0);
            let f1 = mimo::muscle_state(m1, r1, m.vmax, q[i], 0.0, a1[i]).force;
            let f2 = mimo::muscle_state(m2, r2, m.vmax, q[i], 0.0, a2[i]).force;
            let want = -(m1 * f1 * scale + m2 * f2 * m.fmax_pos);
            approx::assert_relative_eq!(tau[i], want, max_relative = 1e-5);
        }

        // A NaN target in env 2: its activations stay, the others advance.
        let mut before = [0.0; NUM_ENVS];
        b.read_state("m1", "activation_pos", &mut before).unwrap();
        let mut targets = vec![1.0; N];
        targets[2 * NUM_TARGETS + 1] = f32::NAN;
        b.set_input("muscle_target_pos", &targets).unwrap();
        b.step(&cmd(&q, &dq)).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), &[2], "{name}");
        let mut after = vec![0.0; NUM_ENVS];
        b.read_state("m1", "activation_pos", &mut after).unwrap();
        assert_eq!(
            after[2], before[2],
            "{name}: env 2's activation must not move"
        );
        for env in [0, 1, 3] {
            assert!(after[env] > before[env], "{name}: env {env} advances");
        }
        let tau = ctrl(b.as_mut());
        assert!(tau[2 * NUM_TARGETS..3 * NUM_TARGETS]
            .iter()
            .all(|&t| t == 0.0));
        assert!(
            read(b.as_mut(), "muscle_cost")[2 * NUM_TARGETS..3 * NUM_TARGETS]
                .iter()
                .all(|&c| c == 0.0)
        );
    }
}

/// The spring-damper clips the action into its action space and reports
/// `gear·u`; the positional model clips the target into the joint range.
#[test]
fn spring_damper_and_positional_clip() {
    let sd = MimoSpringDamperCfg {
        gear: 10.58,
        action_lo: -1.0,
        action_hi: 0.765,
    };
    let pos = MimoPositionalCfg {
        range_lo: -0.3,
        range_hi: 0.5,
    };
    let plan = Plan::new(
        &joints(2),
        vec![
            GroupCfg::new("sd", ["j0"], sd),
            GroupCfg::new("lock", ["j1"], pos),
        ],
        3,
        PlanOptions::default(),
    )
    .unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let mut c = ActuatorCmd::zeros(3, 2);
        c.effort_target = vec![2.0, 0.0, -0.5, 0.0, -3.0, 0.0];
        c.position_target = vec![0.0, 1.0, 0.0, 0.2, 0.0, -1.0];
        b.step(&c).unwrap();
        let mut out = vec![0.0; 6];
        b.read_ctrl(&mut out).unwrap();
        assert_eq!(out, vec![0.765, 0.5, -0.5, 0.2, -1.0, -0.3], "{name}");
        let mut torque = vec![0.0; 6];
        b.read_output("mimo_torque", &mut torque).unwrap();
        for env in 0..3 {
            approx::assert_relative_eq!(torque[2 * env], 10.58 * out[2 * env]);
            assert_eq!(
                torque[2 * env + 1],
                0.0,
                "the positional column writes no torque"
            );
        }
    }
}

/// An output plane that overflows while the column's value stays finite
/// (a gear of 3e38 times an action of 4) faults its env alone: its ctrl
/// and output rows are zero, every other env's are the law's.
#[test]
fn an_infinite_output_plane_zeroes_its_env_alone() {
    let sd = MimoSpringDamperCfg {
        gear: 2.0,
        action_lo: -1.0,
        action_hi: 1.0,
    };
    let (num_envs, t) = (200, 3);
    let plan = Plan::new(
        &joints(t),
        vec![GroupCfg::new("sd", [".*"], sd)],
        num_envs,
        PlanOptions::default(),
    )
    .unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let env77 = EnvIds::List(&[77]);
        b.set_param("sd", "gear", env77, Values::Scalar(3e38))
            .unwrap();
        b.set_param("sd", "action_hi", env77, Values::Scalar(10.0))
            .unwrap();
        let mut c = ActuatorCmd::zeros(num_envs, t);
        c.effort_target.fill(0.5);
        c.effort_target[77 * t..78 * t].fill(4.0);
        b.step(&c).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), [77], "{name}");
        let (mut ctrl, mut torque) = (vec![f32::NAN; num_envs * t], vec![f32::NAN; num_envs * t]);
        b.read_ctrl(&mut ctrl).unwrap();
        b.read_output("mimo_torque", &mut torque).unwrap();
        for env in 0..num_envs {
            let row = env * t..(env + 1) * t;
            let (want_u, want_tau) = if env == 77 { (0.0, 0.0) } else { (0.5, 1.0) };
            assert!(
                ctrl[row.clone()].iter().all(|&u| u == want_u),
                "{name} env {env}"
            );
            assert!(
                torque[row].iter().all(|&x| x == want_tau),
                "{name} env {env}"
            );
        }
    }
}

/// Bad settings name the group, the field and the value.
#[test]
fn bad_muscle_settings_name_group_field_and_value() {
    let bad = |cfg: MimoMuscleCfg| {
        Plan::new(
            &joints(1),
            vec![GroupCfg::new("arm", ["j0"], cfg)],
            1,
            PlanOptions::default(),
        )
        .unwrap_err()
    };
    let mut empty = muscles()[0];
    empty.range_hi = empty.range_lo;
    let mut slow = muscles()[0];
    slow.vmax = 0.0;
    let mut nan = muscles()[0];
    nan.fmax_pos = f32::NAN;
    for (cfg, field) in [(empty, "range_hi"), (slow, "vmax"), (nan, "fmax_pos")] {
        match bad(cfg) {
            Error::InvalidParam {
                group, field: f, ..
            } => {
                assert_eq!((group.as_str(), f.as_str()), ("arm", field));
            }
            other => panic!("{field}: {other}"),
        }
    }
    let e = bad(slow).to_string();
    assert!(
        e.contains("arm") && e.contains("vmax") && e.contains('0'),
        "{e}"
    );
}
