//! The MuJoCo stage's rules beyond one golden step, on every backend:
//! activations over many steps, the non-finite rule, resets, MuJoCo's
//! bad-control guard, shared targets, computed builtin and wrapped forces,
//! and the typed errors of its configuration.

use sinew::{
    ActuatorCmd, BiasType, BuiltinMotorCfg, BuiltinMuscleCfg, BuiltinPositionCfg,
    BuiltinVelocityCfg, DynType, EnvIds, Error, FixedTendon, GainType, GroupCfg, IdealPdCfg,
    KindId, MjDcMotorCfg, MjGeneralCfg, MjPidCfg, MjPositionCfg, NativeActuator, Plan, PlanOptions,
    Robot, Transmission, Values, WrappedCfg,
};

use crate::support::{backends, joints};

fn plan(robot: &Robot, groups: Vec<GroupCfg>, num_envs: usize, timestep: f32) -> Plan {
    let options = PlanOptions {
        timestep,
        ..PlanOptions::default()
    };
    Plan::new(robot, groups, num_envs, options).expect("the plan compiles")
}

/// A filterexact servo held at one control for 200 steps lands on
/// `u + (a0 − u)·e^{−n·h/τ}`, the filter's closed form: the exact step
/// does not drift the way repeated Euler would.
#[test]
fn filterexact_activation_follows_the_closed_form() {
    let (h, tau, u, a0) = (0.002f32, 0.05f32, 0.7f32, -0.2f32);
    let servo = MjPositionCfg {
        kp: 10.0,
        timeconst: tau,
        ..MjPositionCfg::default()
    }
    .position()
    .unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan(
            &joints(1),
            vec![GroupCfg::new("s", ["j0"], servo)],
            2,
            h,
        ));
        b.set_state("s", "act", EnvIds::All, Values::Scalar(a0))
            .unwrap();
        let mut cmd = ActuatorCmd::zeros(2, 1);
        cmd.position_target.fill(u);
        for _ in 0..200 {
            b.step(&cmd).unwrap();
        }
        let mut act = [0.0f32; 2];
        b.read_state("s", "act", &mut act).unwrap();
        let exact = f64::from(u)
            + (f64::from(a0) - f64::from(u)) * (-200.0 * f64::from(h) / f64::from(tau)).exp();
        for a in act {
            assert!(
                (f64::from(a) - exact).abs() < 2e-6,
                "[{name}] activation {a}, closed form {exact}"
            );
        }
        // The force reads the activation (actearly off): kp·(act − q).
        let mut ctrl = [0.0f32; 2];
        b.read_ctrl(&mut ctrl).unwrap();
        assert!((f64::from(ctrl[0]) - 10.0 * exact).abs() < 1e-3, "[{name}]");
    }
}

/// An env with a non-finite command is zeroed (force, joint effort and
/// act_dot) and its activation stays; the other envs step normally.
#[test]
fn nonfinite_env_keeps_its_activation_and_spares_the_others() {
    let cylinder = MjGeneralCfg::cylinder(0.1, 2.0, [0.0; 3]);
    for (name, make, _) in backends() {
        let mut b = make(plan(
            &joints(1),
            vec![GroupCfg::new("c", ["j0"], cylinder)],
            3,
            0.01,
        ));
        b.set_state("c", "act", EnvIds::All, Values::PerEnv(&[0.5, 0.5, 0.5]))
            .unwrap();
        let mut cmd = ActuatorCmd::zeros(3, 1);
        cmd.effort_target.copy_from_slice(&[1.0, f32::NAN, 1.0]);
        b.step(&cmd).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), [1], "[{name}]");
        let (mut act, mut act_dot, mut effort, mut ctrl) = ([0.0; 3], [0.0; 3], [9.0; 3], [9.0; 3]);
        b.read_state("c", "act", &mut act).unwrap();
        b.read_output("act_dot", &mut act_dot).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        b.read_ctrl(&mut ctrl).unwrap();
        // act_dot = (1 − 0.5)/0.1 = 5; Euler: 0.5 + 5·0.01 = 0.55.
        assert_eq!(act_dot, [5.0, 0.0, 5.0], "[{name}]");
        assert_eq!(act, [0.55, 0.5, 0.55], "[{name}]");
        assert_eq!(ctrl, [1.0, 0.0, 1.0], "[{name}] force = area·act");
        assert_eq!(effort, ctrl, "[{name}]");
        // A reset zeroes the selected envs' activations only.
        b.reset(EnvIds::List(&[2])).unwrap();
        b.read_state("c", "act", &mut act).unwrap();
        assert_eq!(act, [0.55, 0.5, 0.0], "[{name}]");
    }
}

/// MuJoCo zeroes every control when one exceeds 1e10; Sinew does so per
/// env: the position servo's bias −kp·q still acts.
#[test]
fn a_wild_control_zeroes_the_env_controls_as_mujoco_does() {
    let servo = MjPositionCfg::new(5.0).position().unwrap();
    let groups = vec![
        GroupCfg::new("servo", ["j0"], servo),
        GroupCfg::new("motor", ["j1"], MjGeneralCfg::motor()),
    ];
    for (name, make, _) in backends() {
        let mut b = make(plan(&joints(2), groups.clone(), 2, 0.002));
        let mut cmd = ActuatorCmd::zeros(2, 2);
        cmd.position_target.copy_from_slice(&[0.5, 0.0, 0.5, 0.0]);
        cmd.pos.copy_from_slice(&[0.1, 0.0, 0.1, 0.0]);
        cmd.effort_target.copy_from_slice(&[0.0, 3.0, 0.0, 2e10]);
        b.step(&cmd).unwrap();
        let mut ctrl = [0.0f32; 4];
        b.read_ctrl(&mut ctrl).unwrap();
        assert!(b.nonfinite_envs().unwrap().is_empty(), "[{name}]");
        assert_eq!(ctrl[1], 3.0, "[{name}]");
        assert!(
            (ctrl[0] - 5.0 * (0.5 - 0.1)).abs() < 1e-6,
            "[{name}] {ctrl:?}"
        );
        assert_eq!(ctrl[3], 0.0, "[{name}] the wild motor control is zeroed");
        assert!(
            (ctrl[2] - -0.5).abs() < 1e-6,
            "[{name}] only the bias −kp·q: {ctrl:?}"
        );
    }
}

/// The MuJoCo stage that runs for a tile of envs at once checks their
/// outputs at once too; an env whose finite command gives a non-finite
/// force is still zeroed alone, its activations kept, every other env's
/// outputs those of a twin that never saw the bad value.
#[test]
fn a_tile_of_the_mujoco_stage_zeroes_only_the_env_whose_force_overflows() {
    let servo = MjPositionCfg {
        kp: 40.0,
        kv: Some(1.0),
        timeconst: 0.02,
        ..MjPositionCfg::default()
    }
    .position()
    .unwrap();
    let (num_envs, nj, bad) = (40, 5, 17);
    let p = plan(
        &joints(nj),
        vec![GroupCfg::new("s", [".*"], servo)],
        num_envs,
        0.002,
    );
    assert!(p.mj().tiles(), "the stage runs for a tile of envs at once");
    let command = |step: usize| {
        let mut cmd = ActuatorCmd::zeros(num_envs, nj);
        for i in 0..num_envs * nj {
            cmd.position_target[i] = ((step * 13 + i) as f32 * 0.37).sin();
            cmd.pos[i] = 0.5 * ((step * 7 + i) as f32 * 0.61).cos();
            cmd.vel[i] = 2.0 * ((step * 5 + i) as f32 * 0.29).sin();
        }
        cmd
    };
    for (name, make, tol) in backends() {
        let (mut b, mut twin) = (make(p.clone()), make(p.clone()));
        for b in [&mut b, &mut twin] {
            b.step(&command(0)).unwrap();
        }
        let mut kept = vec![0.0; num_envs * nj];
        b.read_state("s", "act", &mut kept).unwrap();
        let mut cmd = command(1);
        // Finite, but −kp·q is not.
        cmd.pos[bad * nj + 2] = f32::MAX;
        b.step(&cmd).unwrap();
        twin.step(&command(1)).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), [bad as u32], "[{name}]");
        let (mut got, mut want) = (vec![0.0; num_envs * nj], vec![0.0; num_envs * nj]);
        b.read_ctrl(&mut got).unwrap();
        twin.read_ctrl(&mut want).unwrap();
        for e in 0..num_envs {
            for j in e * nj..(e + 1) * nj {
                let expected = if e == bad { 0.0 } else { want[j] };
                assert!(
                    tol.accepts(got[j], expected),
                    "[{name}] env {e}: {} vs {expected}",
                    got[j]
                );
            }
        }
        let mut act = vec![0.0; num_envs * nj];
        b.read_state("s", "act", &mut act).unwrap();
        assert_eq!(&act[bad * nj..][..nj], &kept[bad * nj..][..nj], "[{name}]");
    }
}

/// Two motors on joint `j0`: `a` (effort target, gear `gear`) and `b`
/// (position target).
fn two_motors_on_j0(gear: f32) -> Vec<GroupCfg> {
    vec![
        GroupCfg::new("a", ["j0"], MjGeneralCfg::motor().with_gear(gear)),
        GroupCfg::new(
            "b",
            ["j0"],
            MjGeneralCfg::motor().with_command_field(sinew::CommandField::Position),
        ),
    ]
}

/// An env whose actuator forces are finite but whose joint effort
/// overflows (a huge gear) is zeroed, on the per-env MuJoCo stage too (two
/// groups share the joint).
#[test]
fn an_env_whose_joint_effort_overflows_is_zeroed() {
    for (name, make, _) in backends() {
        let mut b = make(plan(&joints(1), two_motors_on_j0(1e30), 2, 0.002));
        let mut cmd = ActuatorCmd::zeros(2, 1);
        cmd.effort_target.copy_from_slice(&[1e-30, 1e9]);
        cmd.position_target.copy_from_slice(&[0.5, 0.5]);
        b.step(&cmd).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), [1], "[{name}]");
        let (mut ctrl, mut effort) = ([0.0f32; 4], [0.0f32; 2]);
        b.read_ctrl(&mut ctrl).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        assert_eq!((&ctrl[2..], effort[1]), (&[0.0, 0.0][..], 0.0), "[{name}]");
        assert!((effort[0] - 1.5).abs() < 1e-6, "[{name}] {effort:?}");
    }
}

/// MuJoCo-law groups may share a target (their efforts add, then the joint
/// range clamps the sum); pass-through groups may not.
#[test]
fn mujoco_groups_share_targets_and_the_joint_range_clamps_the_sum() {
    let mut robot = joints(1);
    robot.joint_actuator_force_ranges = vec![("j0".into(), [-1.0, 2.5])];
    for (name, make, _) in backends() {
        let mut b = make(plan(&robot, two_motors_on_j0(2.0), 1, 0.002));
        let mut cmd = ActuatorCmd::zeros(1, 1);
        cmd.effort_target[0] = 1.0;
        cmd.position_target[0] = 0.25;
        b.step(&cmd).unwrap();
        let (mut ctrl, mut effort) = ([0.0f32; 2], [0.0f32; 1]);
        b.read_ctrl(&mut ctrl).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        // actuator_force is left unclamped; 2·1 + 0.25 = 2.25 fits; then
        // a larger command is clamped at the joint.
        assert_eq!((ctrl, effort), ([1.0, 0.25], [2.25]), "[{name}]");
        cmd.effort_target[0] = 3.0;
        b.step(&cmd).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        assert_eq!(effort, [2.5], "[{name}]");
    }
    let err = Plan::new(
        &joints(1),
        vec![
            GroupCfg::new("pd", ["j0"], IdealPdCfg::new(1.0, 0.0)),
            GroupCfg::new("m", ["j0"], MjGeneralCfg::motor()),
        ],
        1,
        PlanOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::TargetClaimed { .. }), "{err}");
}

/// A builtin muscle with `compute_force` equals the MuJoCo muscle shortcut
/// with mjlab's `ctrlrange [0, 1]`; a wrapped group computes from its
/// native actuators' `general` description, through a fixed tendon.
#[test]
fn builtin_and_wrapped_groups_compute_their_force() {
    let builtin = BuiltinMuscleCfg {
        length_range: (-0.5, 0.5),
        acc0: 4.0,
        ..BuiltinMuscleCfg::default()
    };
    let shortcut = sinew::MjMuscleCfg {
        length_range: [-0.5, 0.5],
        acc0: 4.0,
        ctrl_range: Some([0.0, 1.0]),
        ..sinew::MjMuscleCfg::default()
    }
    .compile()
    .unwrap();
    let mut robot = joints(3);
    robot.tendons = vec!["t".into()];
    robot.fixed_tendons = vec![FixedTendon {
        name: "t".into(),
        joints: vec![("j1".into(), 1.0), ("j2".into(), -0.5)],
        actuator_force_range: None,
    }];
    let velocity = MjGeneralCfg::velocity(3.0);
    robot.native_actuators = vec![NativeActuator {
        name: "t_vel".into(),
        transmission: Transmission::Tendon,
        target: "t".into(),
        gain: GainType::Fixed,
        bias: BiasType::Affine,
        dyn_type: DynType::None,
        gainprm: [3.0, 0.0, 0.0],
        biasprm: [0.0, 0.0, -3.0],
        general: Some(velocity),
    }];
    for (name, make, _) in backends() {
        let computed = vec![
            GroupCfg::new("m", ["j0"], builtin).with_computed_force(),
            GroupCfg::new("w", ["t"], WrappedCfg::default())
                .with_transmission(Transmission::Tendon)
                .with_computed_force(),
        ];
        let reference = vec![
            GroupCfg::new("m", ["j0"], shortcut),
            GroupCfg::new("w", ["t"], velocity).with_transmission(Transmission::Tendon),
        ];
        let mut a = make(plan(&robot, computed, 1, 0.002));
        let mut b = make(plan(&robot, reference, 1, 0.002));
        let mut cmd = ActuatorCmd::zeros(1, 4);
        cmd.effort_target[0] = 1.7;
        cmd.velocity_target[3] = 0.4;
        cmd.pos.copy_from_slice(&[0.2, 0.3, -0.1, 0.0]);
        cmd.vel.copy_from_slice(&[-0.5, 0.25, 0.5, 0.0]);
        let mut out = [[0.0f32; 2]; 2];
        let mut effort = [[0.0f32; 3]; 2];
        for (i, backend) in [&mut a, &mut b].into_iter().enumerate() {
            backend
                .set_state("m", "act", EnvIds::All, Values::Scalar(0.6))
                .unwrap();
            backend.step(&cmd).unwrap();
            backend.read_ctrl(&mut out[i]).unwrap();
            backend.read_joint_effort(&mut effort[i]).unwrap();
        }
        assert_eq!(out[0], out[1], "[{name}]");
        assert_eq!(effort[0], effort[1], "[{name}]");
        // The tendon velocity is 0.25 − 0.5·0.5 = 0: force = 3·0.4.
        assert!((out[0][1] - 1.2).abs() < 1e-6, "[{name}] {:?}", out[0]);
        assert_eq!(&effort[0][1..], &[out[0][1], -0.5 * out[0][1]], "[{name}]");
        assert!(out[0][0] < 0.0, "[{name}] a muscle pulls");
    }
}

/// Builtin groups that compute their force, each alone on its joint (the
/// MuJoCo stage's plain form, which the GPU computes per actuator inside
/// its law stage), give MuJoCo's position, velocity and motor forces on
/// every backend, not the command their own law forwards.
#[test]
fn builtin_groups_alone_on_joints_compute_their_force() {
    let position = BuiltinPositionCfg {
        stiffness: 10.0,
        damping: 1.0,
        effort_limit: Some(3.0),
    };
    let velocity = BuiltinVelocityCfg {
        damping: 2.0,
        effort_limit: None,
    };
    let motor = BuiltinMotorCfg::new(1.5);
    let groups = || {
        vec![
            GroupCfg::new("p", ["j0"], position).with_computed_force(),
            GroupCfg::new("v", ["j1"], velocity).with_computed_force(),
            GroupCfg::new("m", ["j2"], motor).with_computed_force(),
        ]
    };
    let mut cmd = ActuatorCmd::zeros(2, 3);
    cmd.position_target
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.2, 0.0, 0.0]);
    cmd.velocity_target
        .copy_from_slice(&[0.0, 0.5, 0.0, 0.0, -1.0, 0.0]);
    cmd.effort_target
        .copy_from_slice(&[0.0, 0.0, 1.7, 0.0, 0.0, -0.3]);
    cmd.pos.copy_from_slice(&[0.1, 0.0, 0.0, 0.1, 0.0, 0.0]);
    cmd.vel.copy_from_slice(&[0.5, -0.5, 0.0, 0.4, 0.25, 0.0]);
    // kp·(target − q) − kd·q̇ within ±3; kv·(target − q̇); the motor's
    // control within ±1.5.
    let want = [3.0, 2.0, 1.5, 0.6, -2.5, -0.3];
    for (name, make, _) in backends() {
        let mut b = make(plan(&joints(3), groups(), 2, 0.002));
        b.step(&cmd).unwrap();
        let mut ctrl = [0.0f32; 6];
        let mut effort = [0.0f32; 6];
        b.read_ctrl(&mut ctrl).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        for (k, (&got, &want)) in ctrl.iter().zip(&want).enumerate() {
            assert!(
                approx::abs_diff_eq!(got, want, epsilon = 1e-6),
                "[{name}] column {k}: {got}, MuJoCo's force {want}"
            );
            assert_eq!(effort[k], got, "[{name}] joint {k} of env {}", k / 3);
        }
    }
}

#[test]
fn mujoco_configuration_errors_name_the_field() {
    let one = |groups: Vec<GroupCfg>, robot: &Robot| {
        Plan::new(robot, groups, 1, PlanOptions::default()).unwrap_err()
    };
    let robot = joints(2);
    let err = one(
        vec![GroupCfg::new("pd", ["j0"], IdealPdCfg::new(1.0, 0.0)).with_computed_force()],
        &robot,
    );
    assert!(err.to_string().contains("compute_force"), "{err}");
    let muscle = MjGeneralCfg {
        gain_type: GainType::Muscle,
        ..MjGeneralCfg::motor()
    };
    let err = one(vec![GroupCfg::new("m", ["j0"], muscle)], &robot);
    assert!(err.to_string().contains("length_range"), "{err}");
    let err = one(
        vec![GroupCfg::new(
            "m",
            ["j0"],
            MjGeneralCfg::motor().with_ctrl_range([1.0, -1.0]),
        )],
        &robot,
    );
    assert!(err.to_string().contains("ctrl_range"), "{err}");
    let err = one(
        vec![GroupCfg::new(
            "m",
            ["j0"],
            MjGeneralCfg::motor().with_act_range([0.0, 1.0]),
        )],
        &robot,
    );
    assert!(err.to_string().contains("act_range"), "{err}");
    let err = one(
        vec![GroupCfg::new("m", ["j0"], BuiltinMuscleCfg::default()).with_computed_force()],
        &robot,
    );
    assert!(err.to_string().contains("length_range"), "{err}");
    let mut bad_robot = joints(2);
    bad_robot.tendons = vec!["t".into()];
    bad_robot.fixed_tendons = vec![FixedTendon {
        name: "t".into(),
        joints: vec![("j7".into(), 1.0)],
        actuator_force_range: None,
    }];
    let err = one(
        vec![GroupCfg::new("m", ["j0"], MjGeneralCfg::motor())],
        &bad_robot,
    );
    assert!(
        matches!(err, Error::InvalidMechanics { .. }) && err.to_string().contains("j7"),
        "{err}"
    );
    let err = Plan::new(
        &robot,
        vec![GroupCfg::new("m", ["j0"], MjGeneralCfg::motor())],
        1,
        PlanOptions {
            timestep: 0.0,
            ..PlanOptions::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("timestep"), "{err}");
    // Shortcuts check what MuJoCo's compiler checks.
    let err = MjPositionCfg {
        kp: -1.0,
        ..MjPositionCfg::default()
    }
    .position()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "<position>: kp = -1 is invalid: must be finite and >= 0"
    );
    // Activations: only MuJoCo-law groups have them, and they must be finite.
    for (name, make, _) in backends() {
        let groups = vec![
            GroupCfg::new("pd", ["j0"], IdealPdCfg::new(1.0, 0.0)),
            GroupCfg::new("m", ["j1"], MjGeneralCfg::cylinder(1.0, 1.0, [0.0; 3])),
        ];
        let mut b = make(plan(&robot, groups, 2, 0.002));
        let err = b
            .set_state("pd", "act", EnvIds::All, Values::Scalar(1.0))
            .unwrap_err();
        assert!(matches!(err, Error::NoActivation { .. }), "[{name}] {err}");
        let err = b
            .set_state("m", "act", EnvIds::All, Values::PerEnv(&[0.0, f32::NAN]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "group `m`: act = NaN is invalid: must be finite",
            "[{name}]"
        );
        // A MuJoCo-law group's other state names are refused by name.
        let err = b
            .set_state("m", "bristle", EnvIds::All, Values::Scalar(0.0))
            .unwrap_err();
        assert!(matches!(err, Error::UnknownState { .. }), "[{name}] {err}");
        let mut act = [7.0f32; 2];
        b.read_state("m", "act", &mut act).unwrap();
        assert_eq!(act, [0.0, 0.0], "[{name}] nothing was written");
        let mut short = [0.0f32; 1];
        assert!(b.read_joint_effort(&mut short).is_err(), "[{name}]");
    }
}

/// `values`, zero-padded to one of MuJoCo's ten-entry parameter arrays.
fn prm10(values: &[f32]) -> [f32; 10] {
    let mut out = [0.0; 10];
    out[..values.len()].copy_from_slice(values);
    out
}

/// Every parameter of an `MjGeneralCfg` group is per env: env 1's force
/// range clamps where env 0's does not, env 2's filter time constant moves
/// its activation by the exact filter step for that τ, env 3's gear scales
/// its length and its joint effort. The others keep the compiled values.
#[test]
fn mujoco_ranges_dynamics_and_gear_are_randomized_per_env() {
    let servo = MjGeneralCfg {
        dyn_type: DynType::FilterExact,
        dynprm: prm10(&[0.05]),
        gainprm: prm10(&[10.0]),
        bias_type: BiasType::Affine,
        biasprm: prm10(&[0.0, -10.0, -1.0]),
        force_range: Some([-4.0, 4.0]),
        ..MjGeneralCfg::default()
    };
    let groups = vec![GroupCfg::new("servo", ["j0"], servo)];
    let h = 0.002f64;
    for (name, make, tol) in backends() {
        let mut b = make(plan(&joints(1), groups.clone(), 4, h as f32));
        for (field, env, v) in [
            ("forcerange[1]", 1, 0.5),
            ("dynprm[0]", 2, 0.2),
            ("gear", 3, 2.0),
        ] {
            b.set_param("servo", field, EnvIds::List(&[env]), Values::Scalar(v))
                .unwrap();
        }
        b.set_state("servo", "act", EnvIds::All, Values::Scalar(0.3))
            .unwrap();
        let mut cmd = ActuatorCmd::zeros(4, 1);
        cmd.effort_target.fill(1.0);
        cmd.pos.fill(0.1);
        cmd.vel.fill(-0.2);
        b.step(&cmd).unwrap();
        let (mut force, mut act, mut effort) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        b.read_ctrl(&mut force).unwrap();
        b.read_state("servo", "act", &mut act).unwrap();
        b.read_joint_effort(&mut effort).unwrap();
        for env in 0..4 {
            let (gear, tau, hi): (f64, f64, f64) = match env {
                1 => (1.0, 0.05, 0.5),
                2 => (1.0, 0.2, 4.0),
                3 => (2.0, 0.05, 4.0),
                _ => (1.0, 0.05, 4.0),
            };
            let (length, velocity) = (gear * 0.1, gear * -0.2);
            let f = (10.0 * 0.3 - 10.0 * length - velocity).clamp(-4.0, hi);
            let act_next = 0.3 + (1.0 - 0.3) / tau * (tau * -(-h / tau).exp_m1());
            for (what, ours, want) in [
                ("force", force[env], f),
                ("activation", act[env], act_next),
                ("joint effort", effort[env], gear * f),
            ] {
                assert!(
                    tol.accepts(ours, want as f32) || (f64::from(ours) - want).abs() < 1e-6,
                    "[{name}] env {env} {what}: {ours} vs {want}"
                );
            }
        }
        let mut hi = [0.0; 4];
        b.read_param("servo", "force_hi", &mut hi).unwrap();
        assert_eq!(hi, [4.0, 0.5, 4.0, 4.0], "[{name}]");
        let mut lo = [0.0; 4];
        b.read_param("servo", "ctrlrange[0]", &mut lo).unwrap();
        assert_eq!(lo, [f32::NEG_INFINITY; 4], "[{name}] unlimited");
    }
}

/// An `MjGeneralCfg` group's `gainprm[0..3]` and `biasprm[0..3]` are per-env
/// parameters: a position servo's kp written for one env moves that env's
/// force by MuJoCo's affine law (`gain·ctrl + b0 + b1·q + b2·q̇`) and no
/// other env's, on every backend; the joint effort follows.
#[test]
fn mujoco_gain_and_bias_are_randomized_per_env() {
    let servo = MjPositionCfg {
        kp: 10.0,
        kv: Some(1.0),
        ..MjPositionCfg::default()
    }
    .position()
    .unwrap();
    let groups = vec![GroupCfg::new("servo", ["j0"], servo)];
    for (name, make, tol) in backends() {
        let mut b = make(plan(&joints(1), groups.clone(), 3, 0.002));
        // Env 1: kp 25 (gain and −bias together, as mjlab's set_gains does).
        b.set_param(
            "servo",
            "gainprm0",
            EnvIds::List(&[1]),
            Values::Scalar(25.0),
        )
        .unwrap();
        b.set_param(
            "servo",
            "biasprm[1]",
            EnvIds::List(&[1]),
            Values::Scalar(-25.0),
        )
        .unwrap();
        let mut cmd = ActuatorCmd::zeros(3, 1);
        cmd.position_target.fill(0.5);
        cmd.pos.fill(0.1);
        cmd.vel.fill(-0.2);
        b.step(&cmd).unwrap();
        let mut ctrl = [0.0; 3];
        b.read_ctrl(&mut ctrl).unwrap();
        let force = |kp: f32| kp * 0.5 - kp * 0.1 - 1.0 * -0.2;
        for (env, kp) in [(0, 10.0), (1, 25.0), (2, 10.0)] {
            assert!(
                tol.accepts(ctrl[env], force(kp)),
                "[{name}] env {env}: {ctrl:?}"
            );
        }
        let mut effort = [0.0; 3];
        b.read_joint_effort(&mut effort).unwrap();
        assert_eq!(effort, ctrl, "[{name}]");
        let mut kp = [0.0; 3];
        b.read_param("servo", "gainprm[0]", &mut kp).unwrap();
        assert_eq!(kp, [10.0, 25.0, 10.0], "[{name}]");
        let err = b
            .set_param("servo", "biasprm2", EnvIds::All, Values::Scalar(f32::NAN))
            .unwrap_err();
        assert!(matches!(err, Error::InvalidParam { .. }), "[{name}] {err}");
    }
}

/// A stage whose actuators act on one joint each (tendon ranges aside)
/// runs one pass per actuator, consecutive actuators of one law a vector
/// lane each, before and after a wide parameter is written. It must give the general
/// loop's bits: every actuator type of `<general>`, a shared joint with a
/// range, a stretch wider than a vector (21 joints), a stretch of muscles
/// of two configurations, wild controls and NaN.
#[test]
fn the_one_pass_mujoco_stage_matches_the_general_path_bit_for_bit() {
    let nj = 32;
    let mut robot = joints(nj);
    robot.joint_actuator_force_ranges = vec![("j4".into(), [-3.0, 2.0])];
    let servo = MjPositionCfg {
        kp: 30.0,
        kv: Some(2.0),
        timeconst: 0.03,
        force_range: Some([-8.0, 8.0]),
        ..MjPositionCfg::default()
    };
    let wide_joints: Vec<String> = (5..26).map(|j| format!("j{j}")).collect();
    let groups = vec![
        GroupCfg::new("servo", ["j0", "j1"], servo.position().unwrap()),
        GroupCfg::new("filters", wide_joints, filter_servo()),
        GroupCfg::new("muscles", ["j26", "j27", "j28"], muscle(false)),
        GroupCfg::new("smooth_muscles", ["j29", "j30", "j31"], muscle(true)),
        GroupCfg::new("integrator", ["j2"], integrator()),
        GroupCfg::new("dcmotor", ["j3"], cogging_dcmotor()),
        GroupCfg::new("a", ["j4"], MjGeneralCfg::motor().with_gear(2.0)),
        GroupCfg::new(
            "b",
            ["j4"],
            MjGeneralCfg::velocity(3.0).with_command_field(sinew::CommandField::Velocity),
        ),
    ];
    let p = plan(&robot, groups, 24, 0.002);
    assert!(p.mj().plain && !p.mj().tiles());
    let acts = [
        ("servo", 2),
        ("filters", 21),
        ("muscles", 3),
        ("smooth_muscles", 3),
    ];
    one_pass_matches_general_path(&p, &acts);
}

/// The same when one law covers every joint: the CPU computes the stage
/// for a tile of envs at once (here 40 envs: a partial tile, and blocks of
/// 16 envs), a joint range included.
#[test]
fn the_tiled_mujoco_stage_matches_the_general_path_bit_for_bit() {
    let nj = 21;
    let mut robot = joints(nj);
    robot.joint_actuator_force_ranges = vec![("j4".into(), [-3.0, 2.0])];
    let servo = MjGeneralCfg {
        ctrl_range: None,
        ..filter_servo()
    };
    let groups = vec![GroupCfg::new("filters", [".*"], servo)];
    let p = plan(&robot, groups, 40, 0.002);
    assert!(p.mj().tiles());
    one_pass_matches_general_path(&p, &[("filters", nj)]);
}

/// [`one_pass_matches_general_path`] for `groups`, as many actuators as
/// `robot` has joints, each on one joint (`acts` names the groups whose
/// activations it compares), in six forms: tiled (40 envs: a partial
/// tile, and blocks of 16 envs); tiled with two joints no column drives
/// added to the robot (joint rows wider than the ctrl rows); tiled with a
/// tendon and a site no column drives (command rows wider than the joint
/// rows: the lanes read the command gathered into ctrl order); tiled with
/// actuators outside the lanes of joints (on a tendon of two joints of its
/// own, first among the columns, then a position servo on a joint of its
/// own; on a site: lanes of their paths where their laws have room; and a
/// `dcmotor` with an electrical time constant on a joint of its own, which
/// the tile computes one at a time after its passes); and env by env (24
/// envs), with an actuator on a tendon that shares the first actuator's
/// joint, and with one on a tendon of one joint (in lanes, but not on its
/// column's target, where the lanes read the command in ctrl order).
fn matches_tiled_and_env_by_env(robot: &Robot, groups: Vec<GroupCfg>, acts: &[(&str, usize)]) {
    let p = plan(robot, groups.clone(), 40, 0.002);
    assert!(p.mj().tiles());
    one_pass_matches_general_path(&p, acts);
    // The first actuator's joint.
    let mj = p.mj();
    let first = &robot.joints[mj.path_of(&mj.actuators[0])[0].column as usize];
    let mut passive = robot.clone();
    passive
        .joints
        .extend(["passive".into(), "passive_end".into()]);
    let p = plan(&passive, groups.clone(), 40, 0.002);
    assert!(p.mj().tiles());
    one_pass_matches_general_path(&p, acts);
    let mut targets = robot.clone();
    targets.sites.push("tip".into());
    add_tendon(&mut targets, "t", &[("j0", 0.5), ("j1", -0.5)]);
    let p = plan(&targets, groups.clone(), 40, 0.002);
    assert!(p.mj().tiles());
    one_pass_matches_general_path(&p, acts);
    // (No control range: its wild controls reach MuJoCo's guard.)
    let grip = MjGeneralCfg {
        ctrl_range: None,
        ..filter_servo()
    };
    // (A control range no lane's holds.)
    let thrust = MjGeneralCfg {
        ctrl_range: Some([0.2, 3.0]),
        ..MjGeneralCfg::motor().with_gear(2.0)
    };
    let mut apart = robot.clone();
    apart
        .joints
        .extend(["f1".into(), "f2".into(), "d".into(), "r".into()]);
    apart.sites.push("tip".into());
    add_tendon(&mut apart, "split", &[("f1", 0.5), ("f2", -0.7)]);
    // (The first pass's law with a control range, which is not the
    // others' to clamp: most layouts' law.)
    let ranged = MjGeneralCfg {
        ctrl_range: Some([-1.0, 1.0]),
        ..timeconst_servo(20.0, 0.05)
    };
    let mut each = vec![
        GroupCfg::new("grip", ["split"], grip).with_transmission(Transmission::Tendon),
        GroupCfg::new("ranged", ["r"], ranged),
    ];
    each.extend(groups.iter().cloned());
    each.push(GroupCfg::new("thrust", ["tip"], thrust).with_transmission(Transmission::Site));
    // (A `dcmotor` with an electrical time constant: a law outside lanes.)
    let coil = MjGeneralCfg {
        dyn_type: DynType::Filter,
        dynprm: prm10(&[0.01]),
        ..cogging_dcmotor()
    };
    each.push(GroupCfg::new("coil", ["d"], coil));
    let p = plan(&apart, each, 40, 0.002);
    assert!(p.mj().tiles());
    let mut each_acts = vec![("grip", 1), ("ranged", 1), ("coil", 1)];
    each_acts.extend(acts);
    one_pass_matches_general_path(&p, &each_acts);
    let mut shared = robot.clone();
    shared.joints.push("g".into());
    add_tendon(&mut shared, "couple", &[("g", 1.5), (first.as_str(), 0.5)]);
    let mut coupled = groups.clone();
    coupled.push(GroupCfg::new("couple", ["couple"], grip).with_transmission(Transmission::Tendon));
    let p = plan(&shared, coupled, 24, 0.002);
    assert!(p.mj().plain && !p.mj().tiles());
    one_pass_matches_general_path(&p, acts);
    let mut solo = robot.clone();
    solo.joints.push("h".into());
    add_tendon(&mut solo, "solo", &[("h", -2.0)]);
    let mut single = groups;
    single.push(GroupCfg::new("solo", ["solo"], grip).with_transmission(Transmission::Tendon));
    let p = plan(&solo, single, 24, 0.002);
    assert!(p.mj().plain && !p.mj().tiles());
    one_pass_matches_general_path(&p, acts);
}

/// The same for `filterexact` servos (MuJoCo's `<position timeconst>`) of
/// two configurations on every joint, whose steps follow each env's time
/// constant once it is written, and with `filter` servos of the same law
/// between them (whose steps do not follow it): three stretches.
#[test]
fn the_filterexact_mujoco_stage_matches_the_general_path_bit_for_bit() {
    let nj = 21;
    let robot = joints(nj);
    let targets = |r: std::ops::Range<usize>| r.map(|j| format!("j{j}")).collect::<Vec<_>>();
    let exact = vec![
        GroupCfg::new("exact_a", targets(0..10), timeconst_servo(30.0, 0.03)),
        GroupCfg::new("exact_b", targets(10..21), timeconst_servo(12.0, 0.08)),
    ];
    matches_tiled_and_env_by_env(&robot, exact, &[("exact_a", 10), ("exact_b", 11)]);
    // The same law but for its step: `filter` dynamics.
    let filter = MjGeneralCfg {
        dyn_type: DynType::Filter,
        ..timeconst_servo(20.0, 0.05)
    };
    let mixed = vec![
        GroupCfg::new("exact_a", targets(0..8), timeconst_servo(30.0, 0.03)),
        GroupCfg::new("filters", targets(8..14), filter),
        GroupCfg::new("exact_b", targets(14..21), timeconst_servo(12.0, 0.08)),
    ];
    let acts = [("exact_a", 8), ("filters", 6), ("exact_b", 7)];
    matches_tiled_and_env_by_env(&robot, mixed, &acts);
}

/// The same when each group drives joints spread over the robot, as
/// mjlab's G1 groups its motors (ctrl order is then group order, not joint
/// order): one law on every joint, and a third group of another law
/// between two (the lanes of a tile read positions and velocities the CPU
/// step gathered into ctrl order and scatter their joint efforts, one pass
/// per law; env by env they gather both).
#[test]
fn the_mujoco_stage_in_group_order_matches_the_general_path_bit_for_bit() {
    let nj = 12;
    let mut robot = joints(nj);
    robot.joint_actuator_force_ranges = vec![("j4".into(), [-3.0, 2.0])];
    let named = |js: &[usize]| js.iter().map(|j| format!("j{j}")).collect::<Vec<_>>();
    let (even, odd) = (named(&[0, 2, 4, 6, 8, 10]), named(&[1, 3, 5, 7, 9, 11]));
    let one_law = vec![
        GroupCfg::new("odd", odd, timeconst_servo(12.0, 0.08)),
        GroupCfg::new("even", even.clone(), timeconst_servo(30.0, 0.03)),
    ];
    matches_tiled_and_env_by_env(&robot, one_law, &[("odd", 6), ("even", 6)]);
    let mixed = vec![
        GroupCfg::new("even", even, timeconst_servo(30.0, 0.03)),
        GroupCfg::new("motors", named(&[9, 1, 11]), MjGeneralCfg::motor()),
        GroupCfg::new("odd", named(&[3, 5, 7]), timeconst_servo(12.0, 0.08)),
    ];
    matches_tiled_and_env_by_env(&robot, mixed, &[("even", 6), ("odd", 3)]);
}

/// The same beside columns the stage computes no force for: a PD group
/// (not in the stage) and MuJoCo 4's `pid` and `dcmotor` (law members,
/// whose values reach their own joints), in three layouts, the last with
/// one actuator among PDs. The tile's lanes of those columns are computed
/// and written by none, and MuJoCo's guard zeroes the actuators' controls
/// alone (column 2, where the guard's huge targets go, is a PD's in the
/// first and last layouts and an actuator's in the second).
#[test]
fn the_mujoco_stage_beside_other_laws_matches_the_general_path_bit_for_bit() {
    let nj = 12;
    let mut robot = joints(nj);
    robot.joint_actuator_force_ranges =
        vec![("j4".into(), [-3.0, 2.0]), ("j7".into(), [-1.0, 1.0])];
    let named = |js: &[usize]| js.iter().map(|j| format!("j{j}")).collect::<Vec<_>>();
    let others = |pd: usize, pid: usize, motor: usize| {
        [
            GroupCfg::new("pd", named(&[pd]), IdealPdCfg::new(30.0, 1.0)),
            GroupCfg::new("pid", named(&[pid]), <MjPidCfg as sinew::Kind>::example()),
            GroupCfg::new(
                "motor",
                named(&[motor]),
                <MjDcMotorCfg as sinew::Kind>::example(),
            ),
        ]
    };
    let in_order = [
        vec![GroupCfg::new(
            "servos",
            named(&[0, 1]),
            timeconst_servo(30.0, 0.03),
        )],
        others(2, 7, 11).to_vec(),
        vec![GroupCfg::new(
            "rest",
            named(&[3, 4, 5, 6, 8, 9, 10]),
            timeconst_servo(12.0, 0.08),
        )],
    ]
    .concat();
    matches_tiled_and_env_by_env(&robot, in_order, &[("servos", 2), ("rest", 7)]);
    let group_order = [
        vec![GroupCfg::new(
            "even",
            named(&[0, 2, 4, 6, 8]),
            timeconst_servo(30.0, 0.03),
        )],
        others(9, 1, 5).to_vec(),
        vec![GroupCfg::new(
            "odd",
            named(&[3, 7, 11, 10]),
            MjGeneralCfg::motor(),
        )],
    ]
    .concat();
    matches_tiled_and_env_by_env(&robot, group_order, &[("even", 5)]);
    let lone = vec![
        GroupCfg::new(
            "pd",
            named(&[0, 1, 2, 3, 4, 6, 8, 9, 10, 11]),
            IdealPdCfg::new(30.0, 1.0),
        ),
        GroupCfg::new("pid", named(&[7]), <MjPidCfg as sinew::Kind>::example()),
        GroupCfg::new("servo", named(&[5]), timeconst_servo(30.0, 0.03)),
    ];
    matches_tiled_and_env_by_env(&robot, lone, &[("servo", 1)]);
}

/// The same for actuators of several laws in ctrl columns of any order:
/// the tile runs one pass per law over its whole rows, each writing its
/// own columns. Three `<general>` laws with a second actuator on one
/// joint (its efforts summed in ctrl order across the passes); mjlab's
/// builtin position, velocity and motor actuators computing their forces;
/// builtin ones beside `<general>` ones (each pass clamps its own controls,
/// from the parameter table or the compiled ranges). Five laws are more
/// than a tile takes: env by env.
#[test]
fn a_tiled_mujoco_stage_of_several_laws_matches_the_general_path_bit_for_bit() {
    let robot = joints(8);
    let named = |js: &[usize]| js.iter().map(|j| format!("j{j}")).collect::<Vec<_>>();
    let general = vec![
        GroupCfg::new("servo", named(&[3, 0, 5, 2]), timeconst_servo(30.0, 0.03)),
        GroupCfg::new(
            "motor",
            named(&[1, 6]),
            MjGeneralCfg::motor().with_gear(2.0),
        ),
        GroupCfg::new(
            "damper",
            named(&[3, 4]),
            MjGeneralCfg::velocity(3.0).with_command_field(sinew::CommandField::Velocity),
        ),
    ];
    let acts = [("servo", 4), ("motor", 2), ("damper", 2)];
    matches_tiled_and_env_by_env(&robot, general, &acts);
    let builtin = vec![
        GroupCfg::new(
            "position",
            named(&[5, 0, 2, 7]),
            sinew::BuiltinPositionCfg {
                stiffness: 40.0,
                damping: 2.0,
                effort_limit: Some(9.0),
            },
        ),
        GroupCfg::new(
            "velocity",
            named(&[4, 1]),
            sinew::BuiltinVelocityCfg {
                damping: 3.0,
                effort_limit: None,
            },
        ),
        GroupCfg::new("motor", named(&[6, 3]), sinew::BuiltinMotorCfg::new(5.0)),
    ];
    let builtin: Vec<GroupCfg> = builtin
        .into_iter()
        .map(GroupCfg::with_computed_force)
        .collect();
    matches_tiled_and_env_by_env(&robot, builtin.clone(), &[]);
    let both = vec![
        builtin[0].clone(),
        GroupCfg::new("servo", named(&[4, 1]), filter_servo()),
        GroupCfg::new(
            "motor",
            named(&[6, 3]),
            MjGeneralCfg::motor().with_gear(2.0),
        ),
    ];
    matches_tiled_and_env_by_env(&robot, both, &[("servo", 2)]);
    let five = vec![
        GroupCfg::new("servo", named(&[0, 1]), timeconst_servo(30.0, 0.03)),
        GroupCfg::new("filters", named(&[2, 3]), filter_servo()),
        GroupCfg::new("motor", named(&[4]), MjGeneralCfg::motor()),
        GroupCfg::new("integrator", named(&[5]), integrator()),
        GroupCfg::new("dcmotor", named(&[6, 7]), cogging_dcmotor()),
    ];
    let p = plan(&robot, five, 24, 0.002);
    assert!(p.mj().plain && !p.mj().tiles());
    one_pass_matches_general_path(&p, &[("servo", 2), ("filters", 2), ("integrator", 1)]);
}

/// A tile of several laws clamps each control by its own law's range: a
/// `<general>` motor's per-env control range (the parameter table) holds a
/// 2e10 command below MuJoCo's bad-control bound, though its compiled range
/// (none) would not, so the env keeps its other controls (the builtin
/// motors'), as in the general loop.
#[test]
fn each_law_of_a_tile_clamps_its_own_controls() {
    use sinew::{Backend, CpuBackend};
    let robot = joints(4);
    let groups = vec![
        GroupCfg::new("push", ["j1", "j3"], sinew::BuiltinMotorCfg::new(5.0)).with_computed_force(),
        GroupCfg::new("motor", ["j2", "j0"], MjGeneralCfg::motor()),
    ];
    let num_envs = 20;
    let p = plan(&robot, groups, num_envs, 0.002);
    assert!(p.mj().tiles());
    let mut out = Vec::new();
    for p in [p.clone(), p.without_mj_lanes()] {
        let mut b = CpuBackend::new(p);
        for (name, value) in [("ctrl_lo", -1.0), ("ctrl_hi", 1.0)] {
            b.set_param("motor", name, EnvIds::All, Values::Scalar(value))
                .unwrap();
        }
        let mut cmd = ActuatorCmd::zeros(num_envs, 4);
        cmd.effort_target.fill(0.5);
        // Env 3's `<general>` motors: far beyond 1e10, within their range.
        cmd.effort_target[3 * 4] = 2e10;
        cmd.effort_target[3 * 4 + 2] = -2e10;
        b.step(&cmd).unwrap();
        let mut ctrl = vec![0.0; num_envs * 4];
        b.read_ctrl(&mut ctrl).unwrap();
        out.push(ctrl);
    }
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&out[0]), bits(&out[1]));
    // Ctrl order: the builtin motors' j1 and j3, then the `<general>` j0 and j2.
    assert_eq!(out[0][3 * 4..3 * 4 + 4], [0.5, 0.5, 1.0, -1.0]);
}

/// The same for a tile of muscles on every joint, two configurations side
/// by side: each curve's every region, and activations that rise and fall.
#[test]
fn the_tiled_muscle_stage_matches_the_general_path_bit_for_bit() {
    let nj = 19;
    let mut robot = joints(nj);
    robot.joint_actuator_force_ranges = vec![("j4".into(), [-3.0, 2.0])];
    let (first, rest): (Vec<String>, Vec<String>) =
        (0..nj).map(|j| format!("j{j}")).partition(|j| j.len() == 2);
    let groups = vec![
        GroupCfg::new("muscles", first, muscle(false)),
        GroupCfg::new("smooth_muscles", rest, muscle(true)),
    ];
    let p = plan(&robot, groups, 40, 0.002);
    assert!(p.mj().tiles());
    let acts = [("muscles", 10), ("smooth_muscles", 9)];
    one_pass_matches_general_path(&p, &acts);
}

/// The same for a tile of stateless dcmotors, with cogging and without,
/// and one with a force range.
#[test]
fn the_tiled_dcmotor_stage_matches_the_general_path_bit_for_bit() {
    let nj = 13;
    let robot = joints(nj);
    let plain = MjGeneralCfg {
        biasprm: prm10(&[0.0, 6.0, 0.3]),
        force_range: None,
        ..cogging_dcmotor()
    };
    let targets = |r: std::ops::Range<usize>| r.map(|j| format!("j{j}")).collect::<Vec<_>>();
    let groups = vec![
        GroupCfg::new("cogging", targets(0..5), cogging_dcmotor()),
        GroupCfg::new("plain", targets(5..13), plain),
    ];
    let p = plan(&robot, groups, 40, 0.002);
    assert!(p.mj().tiles());
    one_pass_matches_general_path(&p, &[]);
}

/// A `<muscle>` whose normalized length spans 0.15..1.65 over positions
/// in −1..1 (each force–length and passive region) and whose velocity
/// spans −5..5 normalized (each force–velocity region); `smooth` gives
/// it a smoothed time-constant switch, a control range, a peak force of
/// its own, a force range, and curves and a length range of their own
/// (every `gainprm` and `biasprm` term differs).
fn muscle(smooth: bool) -> MjGeneralCfg {
    let base = sinew::MjMuscleCfg {
        length_range: [-0.2, 0.2],
        acc0: 3.0,
        lmin: 0.4,
        lmax: 1.2,
        ..sinew::MjMuscleCfg::default()
    };
    let cfg = if smooth {
        sinew::MjMuscleCfg {
            tausmooth: 0.3,
            ctrl_range: Some([0.0, 1.0]),
            force: 40.0,
            force_range: Some([-30.0, 0.0]),
            lmin: 0.3,
            lmax: 1.4,
            vmax: 2.0,
            fpmax: 1.1,
            fvmax: 1.5,
            length_range: [-0.25, 0.2],
            ..base
        }
    } else {
        base
    };
    cfg.compile().unwrap()
}

/// On the GPU, a stage whose actuators' paths reach joints no other's
/// reaches is computed by each actuator's own thread of the law stage, and
/// an env with a wild control by the per-env stage. Both must match the
/// CPU: filters with every range, a dcmotor with cogging, an integrator, a
/// filter on a tendon of two joints, a motor on a site, two joint ranges, a
/// joint no actuator drives, wild controls and non-finite values.
#[test]
fn the_gpu_per_actuator_mujoco_stage_matches_the_cpu() {
    use sinew::{Backend, CpuBackend, WgpuBackend};
    let Some(ctx) = crate::support::gpu() else {
        return;
    };
    let (joints_n, num_envs) = (14, 24);
    let mut robot = joints(joints_n);
    robot.joint_actuator_force_ranges =
        vec![("j4".into(), [-3.0, 2.0]), ("j9".into(), [-0.5, 0.4])];
    robot.sites.push("tip".into());
    add_tendon(&mut robot, "split", &[("j12", 0.5), ("j13", -0.7)]);
    let filters: Vec<String> = (0..9).map(|j| format!("j{j}")).collect();
    let groups = vec![
        GroupCfg::new("filters", filters, filter_servo()),
        GroupCfg::new("dcmotor", ["j9"], cogging_dcmotor()),
        GroupCfg::new("integrator", ["j11"], integrator()),
        GroupCfg::new("grip", ["split"], filter_servo()).with_transmission(Transmission::Tendon),
        GroupCfg::new("thrust", ["tip"], MjGeneralCfg::motor().with_gear(2.0))
            .with_transmission(Transmission::Site),
    ];
    let p = plan(&robot, groups, num_envs, 0.002);
    assert!(p.mj().plain);
    let (nc, nj) = (p.num_ctrl(), p.num_targets());
    let mut cpu = CpuBackend::new(p.clone());
    let mut gpu = WgpuBackend::new(&ctx, p).unwrap();
    let mut rng = crate::support::Rng(11);
    for step in 0..40 {
        let mut cmd = ActuatorCmd::zeros(num_envs, nj);
        for i in 0..num_envs * nj {
            cmd.position_target[i] = rng.range(-2.0, 2.0);
            cmd.velocity_target[i] = rng.range(-3.0, 3.0);
            cmd.effort_target[i] = rng.range(-2.0, 2.0);
            cmd.pos[i] = rng.range(-1.0, 1.0);
            cmd.vel[i] = rng.range(-10.0, 10.0);
        }
        // A wild control in one env (the dcmotor's, which has no control
        // range), a NaN and an infinity in two others.
        let wild = (step % num_envs) * nj + 9;
        cmd.effort_target[wild] = 2e10;
        cmd.vel[((step + 5) % num_envs) * nj + 1] = f32::NAN;
        cmd.pos[((step + 9) % num_envs) * nj + 3] = f32::INFINITY;
        let mut out: Vec<[Vec<f32>; 6]> = Vec::new();
        for b in [&mut cpu as &mut dyn Backend, &mut gpu] {
            b.step(&cmd).unwrap();
            let mut o = [nc, joints_n, nc, 9, 1, 1].map(|w| vec![f32::NAN; num_envs * w]);
            b.read_ctrl(&mut o[0]).unwrap();
            b.read_joint_effort(&mut o[1]).unwrap();
            b.read_output("act_dot", &mut o[2]).unwrap();
            b.read_state("filters", "act", &mut o[3]).unwrap();
            b.read_state("integrator", "act", &mut o[4]).unwrap();
            b.read_state("grip", "act", &mut o[5]).unwrap();
            out.push(o);
        }
        for (k, what) in [
            "ctrl",
            "joint efforts",
            "act_dot",
            "filter acts",
            "integrator acts",
            "tendon filter acts",
        ]
        .into_iter()
        .enumerate()
        {
            let (want, got) = (&out[0][k], &out[1][k]);
            assert!(want.iter().all(|x| x.is_finite()), "{what}, step {step}");
            approx::assert_relative_eq!(
                want.as_slice(),
                got.as_slice(),
                epsilon = 1e-4,
                max_relative = 1e-5
            );
        }
        let faults = cpu.nonfinite_envs().unwrap();
        assert_eq!(faults.len(), 2, "step {step}");
        assert_eq!(gpu.nonfinite_envs().unwrap(), faults, "step {step}");
    }
}

/// An integrator with an affine gain, an activation range and `actearly`.
fn integrator() -> MjGeneralCfg {
    MjGeneralCfg {
        dyn_type: DynType::Integrator,
        gain_type: GainType::Affine,
        gainprm: prm10(&[4.0, -0.5, 0.25]),
        act_range: Some([-1.5, 1.5]),
        act_early: true,
        ..MjGeneralCfg::motor()
    }
}

/// A stateless dcmotor with cogging and a force range, and no control
/// range.
pub(crate) fn cogging_dcmotor() -> MjGeneralCfg {
    MjGeneralCfg {
        gain_type: GainType::DcMotor,
        gainprm: prm10(&[2.0, 0.05]),
        bias_type: BiasType::DcMotor,
        biasprm: prm10(&[0.01, 6.0, 0.3]),
        force_range: Some([-1.0, 1.0]),
        ..MjGeneralCfg::motor()
    }
}

/// MuJoCo's `<position timeconst>` (`filterexact` dynamics) with kp `kp`,
/// kv `kp/10` and a force range.
fn timeconst_servo(kp: f32, timeconst: f32) -> MjGeneralCfg {
    MjPositionCfg {
        kp,
        kv: Some(kp / 10.0),
        timeconst,
        force_range: Some([-8.0, 8.0]),
        ..MjPositionCfg::default()
    }
    .position()
    .unwrap()
}

/// Adds a fixed tendon `name` over `joints` (`(joint, coefficient)`), no
/// force range, to `robot`.
fn add_tendon(robot: &mut Robot, name: &str, joints: &[(&str, f32)]) {
    robot.tendons.push(name.into());
    robot.fixed_tendons.push(FixedTendon {
        name: name.into(),
        joints: (joints.iter()).map(|&(j, coef)| (j.into(), coef)).collect(),
        actuator_force_range: None,
    });
}

/// A filter servo with every range: a stretch of lanes.
fn filter_servo() -> MjGeneralCfg {
    MjGeneralCfg {
        dyn_type: DynType::Filter,
        dynprm: prm10(&[0.05]),
        gain_type: GainType::Affine,
        gainprm: prm10(&[20.0, -1.0, 0.5]),
        bias_type: BiasType::Affine,
        biasprm: prm10(&[0.5, -20.0, -1.5]),
        ctrl_range: Some([-1.5, 1.5]),
        force_range: Some([-15.0, 15.0]),
        ..MjGeneralCfg::motor()
    }
}

/// Steps plan `p` on two CPU backends, the second with its MuJoCo stage
/// computed one actuator at a time in the general loop
/// ([`Plan::without_mj_lanes`]), with random commands, wild controls and
/// non-finite values; compares ctrl, joint efforts, `act_dot` and the
/// activations of `acts` (group, width) bit for bit, and the envs at
/// fault. From step 30 on, every group's gear, upper force range and
/// `dynprm[0]` differ per env and target: wide parameters, after which
/// every parameter comes from the table.
fn one_pass_matches_general_path(p: &Plan, acts: &[(&str, usize)]) {
    use sinew::{Backend, CpuBackend};
    let (num_envs, nj, nc) = (p.num_envs(), p.num_targets(), p.num_ctrl());
    // The first and last ctrl columns' targets (the last a joint some
    // column reads).
    let first = p.ctrl_columns()[0].cmd_column;
    let last = p.ctrl_columns().last().unwrap().cmd_column;
    let mut one_pass = CpuBackend::new(p.clone());
    let mut general = CpuBackend::new(p.clone().without_mj_lanes());
    let mut seed = 7u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
    };
    for step in 0..60 {
        if step == 30 {
            // The parameters of `<general>` groups (builtin ones have none).
            for g in p.groups().iter().filter(|g| g.kind() == KindId::MjGeneral) {
                let n = num_envs * g.targets.len();
                for (name, mid, spread) in [
                    ("gear", 1.0, 0.2),
                    ("force_hi", 12.0, 8.0),
                    ("dynprm0", 0.05, 0.03),
                ] {
                    let values: Vec<f32> = (0..n).map(|_| mid + spread * next()).collect();
                    for b in [&mut one_pass, &mut general] {
                        b.set_param(
                            &g.cfg.name,
                            name,
                            EnvIds::All,
                            Values::PerEnvTarget(&values),
                        )
                        .unwrap();
                    }
                }
            }
        }
        let mut cmd = ActuatorCmd::zeros(num_envs, nj);
        for i in 0..num_envs * nj {
            cmd.position_target[i] = 2.0 * next();
            cmd.velocity_target[i] = 3.0 * next();
            cmd.effort_target[i] = 2.0 * next();
            cmd.pos[i] = next();
            cmd.vel[i] = 10.0 * next();
        }
        // MuJoCo's guard, whichever target a column reads (column 2 has no
        // control range).
        let wild = (step % num_envs) * nj + 2;
        // And at the first ctrl column's target, in another env.
        let first = ((step + 3) % num_envs) * nj + first;
        for wild in [wild, first] {
            cmd.position_target[wild] = 2e10;
            cmd.velocity_target[wild] = 2e10;
            cmd.effort_target[wild] = 2e10;
        }
        cmd.vel[((step + 5) % num_envs) * nj + 1] = f32::NAN;
        cmd.pos[((step + 9) % num_envs) * nj + last] = f32::INFINITY;
        // ctrl, joint efforts, act_dot and the activations, per backend
        // (filled with different values, so a value not written differs).
        let mut out = [0.0f32, 1.0].map(|v| {
            let states: Vec<Vec<f32>> = acts.iter().map(|&(_, w)| vec![v; num_envs * w]).collect();
            (
                vec![v; num_envs * nc],
                vec![v; num_envs * p.mj().effort_width()],
                vec![v; num_envs * nc],
                states,
            )
        });
        for (b, (ctrl, effort, act_dot, states)) in
            [&mut one_pass, &mut general].into_iter().zip(&mut out)
        {
            b.step(&cmd).unwrap();
            b.read_ctrl(ctrl).unwrap();
            b.read_joint_effort(effort).unwrap();
            b.read_output("act_dot", act_dot).unwrap();
            for ((group, _), state) in acts.iter().zip(states) {
                b.read_state(group, "act", state).unwrap();
            }
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let [(c0, e0, d0, s0), (c1, e1, d1, s1)] = &out;
        assert_eq!(bits(c0), bits(c1), "ctrl, step {step}");
        assert_eq!(bits(e0), bits(e1), "joint efforts, step {step}");
        assert_eq!(bits(d0), bits(d1), "act_dot, step {step}");
        for ((group, _), (a0, a1)) in acts.iter().zip(s0.iter().zip(s1)) {
            assert_eq!(bits(a0), bits(a1), "{group} activations, step {step}");
        }
        assert_eq!(
            one_pass.nonfinite_envs().unwrap(),
            general.nonfinite_envs().unwrap()
        );
        assert!(!one_pass.nonfinite_envs().unwrap().is_empty());
    }
}
