//! Step semantics the golden episodes do not reach: non-finite inputs, the
//! Isaac Lab per-reset lag, explicit buffer sharing, wrapped actuators,
//! update periods with per-env phases, and the ctrl column contract.

use sinew::{
    ActuatorCmd, Backend, BamFriction, BamSts3215Cfg, BamVoltageCfg, BiasType, BuiltinMotorCfg,
    BuiltinPositionCfg, CpuBackend, CtrlMeaning, DcMotorCfg, DelayCfg, DelayShare, DynType, Engine,
    EnvIds, GainType, GroupCfg, IdealPdCfg, Lags, MjGeneralCfg, MjPidCfg, NativeActuator, Plan,
    PlanOptions, RemotizedPdCfg, Robot, Transmission, Values, WrappedCfg,
};

use crate::support::{backends, joints, Rng};
use std::time::Duration;

/// The DC motor the path-agreement tests share.
fn test_dc() -> DcMotorCfg {
    DcMotorCfg {
        stiffness: 30.0,
        damping: 1.0,
        effort_limit: 10.0,
        saturation_effort: 12.0,
        velocity_limit: 8.0,
    }
}

/// Five laws on joints `j0`..`j5`, one group per joint: a PD first, then
/// a DC motor's two groups apart in ctrl order (where the PD's pass leaves
/// unclipped torques), the second behind `dc2_delay`, a delayed builtin
/// position servo, a builtin motor and a costly remotized PD.
fn five_laws(dc2_delay: DelayCfg) -> Vec<GroupCfg> {
    let limits = [[-1.0, 0.0, 2.0], [0.0, 0.0, 6.0], [1.5, 0.0, 3.0]];
    let servo = BuiltinPositionCfg {
        stiffness: 5.0,
        damping: 0.0,
        effort_limit: Some(4.0),
    };
    vec![
        GroupCfg::new("pd", ["j0"], IdealPdCfg::new(7.0, 0.5)),
        GroupCfg::new("dc", ["j1"], test_dc()),
        GroupCfg::new("servo", ["j2"], servo).with_delay(DelayCfg::constant(2)),
        GroupCfg::new("motor", ["j3"], BuiltinMotorCfg::new(0.5)),
        GroupCfg::new("knee", ["j4"], RemotizedPdCfg::new(9.0, 0.3, limits)),
        GroupCfg::new("dc2", ["j5"], test_dc()).with_delay(dc2_delay),
    ]
}

fn ramp(num_envs: usize, num_targets: usize, k: usize) -> ActuatorCmd {
    let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
    for (i, x) in cmd.position_target.iter_mut().enumerate() {
        *x = k as f32 + 0.01 * i as f32;
    }
    cmd
}

#[test]
fn a_nonfinite_env_is_zeroed_reported_and_never_stored() {
    let group = GroupCfg::new(
        "pd",
        [".*"],
        IdealPdCfg::new(10.0, 0.0).with_effort_limit(1e6),
    )
    .with_delay(DelayCfg::constant(2));
    let plan = Plan::new(&joints(3), vec![group], 4, PlanOptions::default()).unwrap();
    for (name, make, _) in backends() {
        let (mut dirty, mut clean) = (make(plan.clone()), make(plan.clone()));
        let (mut cd, mut cc) = (vec![f32::NAN; 12], vec![f32::NAN; 12]);
        for k in 0..8 {
            let cmd = ramp(4, 3, k);
            let mut bad = cmd.clone();
            if k == 3 {
                bad.pos[2 * 3 + 1] = f32::NAN; // env 2
                bad.vel[3] = f32::INFINITY; // env 1, target 0
            }
            dirty.step(&bad).unwrap();
            dirty.read_ctrl(&mut cd).unwrap();
            assert!(
                cd.iter().all(|x| x.is_finite()),
                "[{name}] step {k}: {cd:?}"
            );
            if k == 3 {
                assert_eq!(dirty.nonfinite_envs().unwrap(), &[1, 2], "[{name}]");
                assert_eq!(&cd[3..9], &[0.0; 6], "[{name}] zeroed rows");
                // Envs 0 and 3 are untouched by their neighbours' NaN.
                assert_eq!(&cd[..3], &cc_after(&mut clean, &cmd, &mut cc)[..3]);
                assert_eq!(&cd[9..], &cc[9..]);
                continue;
            }
            assert!(dirty.nonfinite_envs().unwrap().is_empty());
            clean.step(&cmd).unwrap();
            clean.read_ctrl(&mut cc).unwrap();
            if k > 3 {
                // Envs 1 and 2 skipped step 3: their history lacks that frame,
                // and no NaN ever comes out of it.
                for env in 1..3 {
                    let expected: Vec<f32> = (0..3)
                        .map(|t| {
                            let lagged = if k == 4 { 1 } else { k - 2 };
                            let lagged = if lagged == 3 { 2 } else { lagged };
                            10.0 * ramp(4, 3, lagged).position_target[env * 3 + t]
                        })
                        .collect();
                    assert_eq!(
                        &cd[env * 3..env * 3 + 3],
                        &expected[..],
                        "[{name}] step {k} env {env}"
                    );
                }
            }
        }
    }
}

/// An infinite command value whose torque the clamp would bring back to a
/// finite one (a finite effort limit) still zeroes and reports its env, in
/// every field, with either sign and with a gain of 0 on the field (0 · ∞
/// is NaN). On the CPU the law's pass sees it through the kinds' probe
/// (the torque before its clamp), then the env-by-env checks find it.
#[test]
fn an_infinite_command_value_zeroes_its_env_though_the_clamp_is_finite() {
    let kinds: [(&str, sinew::ActuatorCfg); 3] = [
        (
            "pd",
            IdealPdCfg::new(10.0, 2.0).with_effort_limit(5.0).into(),
        ),
        (
            "pd, no damping",
            IdealPdCfg::new(10.0, 0.0).with_effort_limit(5.0).into(),
        ),
        ("dc", test_dc().into()),
    ];
    let (num_envs, num_targets) = (4, 3);
    for (kind, cfg) in kinds {
        let group = GroupCfg::new("g", [".*"], cfg);
        let plan = Plan::new(
            &joints(num_targets),
            vec![group],
            num_envs,
            PlanOptions::default(),
        )
        .unwrap();
        for (name, make, _) in backends() {
            let mut backend = make(plan.clone());
            let clean = ramp(num_envs, num_targets, 1);
            let mut want = vec![0.0; num_envs * num_targets];
            backend.step(&clean).unwrap();
            backend.read_ctrl(&mut want).unwrap();
            assert!(backend.nonfinite_envs().unwrap().is_empty());
            for field in 0..5 {
                for value in [f32::INFINITY, f32::NEG_INFINITY] {
                    let mut bad = clean.clone();
                    bad.fields_mut()[field][num_targets + 2] = value; // env 1
                    let mut got = vec![f32::NAN; num_envs * num_targets];
                    backend.step(&bad).unwrap();
                    backend.read_ctrl(&mut got).unwrap();
                    let at = format!("[{name}] {kind}, field {field} = {value}");
                    assert_eq!(backend.nonfinite_envs().unwrap(), &[1], "{at}");
                    assert_eq!(&got[num_targets..2 * num_targets], &[0.0; 3], "{at}");
                    assert_eq!(&got[..num_targets], &want[..num_targets], "{at}");
                    assert_eq!(&got[2 * num_targets..], &want[2 * num_targets..], "{at}");
                }
            }
        }
    }
}

/// Steps the clean twin with the step-3 command and returns its ctrl.
fn cc_after<'a>(
    clean: &mut Box<dyn Backend>,
    cmd: &ActuatorCmd,
    out: &'a mut Vec<f32>,
) -> &'a [f32] {
    clean.step(cmd).unwrap();
    clean.read_ctrl(out).unwrap();
    out
}

#[test]
fn per_reset_lag_is_constant_within_an_episode() {
    let group = GroupCfg::new("pd", [".*"], IdealPdCfg::new(1.0, 0.0))
        .with_delay(DelayCfg::per_reset(1, 5));
    let plan = Plan::new(
        &joints(1),
        vec![group],
        256,
        PlanOptions {
            seed: 11,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let cmd = ActuatorCmd::zeros(256, 1);
        let mut first = vec![0; 256];
        let mut lags = vec![0; 256];
        b.read_lags("pd", &mut first).unwrap();
        assert!(
            first.iter().all(|l| (1..=5).contains(l)),
            "[{name}] drawn at construction in range"
        );
        for l in 1..=5 {
            assert!(
                first.iter().filter(|&&x| x == l).count() > 20,
                "[{name}] lag {l} is drawn"
            );
        }
        for _ in 0..10 {
            b.step(&cmd).unwrap();
            b.read_lags("pd", &mut lags).unwrap();
            assert_eq!(lags, first, "[{name}] constant between resets");
        }
        let half: Vec<u32> = (0..128).collect();
        b.reset(EnvIds::List(&half)).unwrap();
        b.read_lags("pd", &mut lags).unwrap();
        assert_eq!(
            &lags[128..],
            &first[128..],
            "[{name}] other envs keep theirs"
        );
        assert_ne!(&lags[..128], &first[..128], "[{name}] reset envs draw anew");
    }
}

#[test]
fn a_named_buffer_shares_lags_across_kinds() {
    let share = || DelayCfg {
        hold_prob: 1.0,
        share: DelayShare::Named("legs".into()),
        ..DelayCfg::new(0, 4)
    };
    let dc = DcMotorCfg {
        stiffness: 1.0,
        damping: 0.0,
        effort_limit: 50.0,
        saturation_effort: 60.0,
        velocity_limit: 10.0,
    };
    let groups = vec![
        GroupCfg::new("pd", ["j0"], IdealPdCfg::new(1.0, 0.0)).with_delay(share()),
        GroupCfg::new("dc", ["j1"], dc).with_delay(share()),
        GroupCfg::new("solo", ["j2"], IdealPdCfg::new(1.0, 0.0)).with_delay(DelayCfg {
            share: DelayShare::Own,
            ..share()
        }),
    ];
    let plan = Plan::new(&joints(3), groups, 2, PlanOptions::default()).unwrap();
    assert_eq!(plan.buffers().len(), 2);
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        b.set_lags("dc", EnvIds::All, Lags::PerEnv(&[2, 3]))
            .unwrap();
        let mut lags = [0; 2];
        b.read_lags("pd", &mut lags).unwrap();
        assert_eq!(lags, [2, 3], "[{name}]");
        b.read_lags("solo", &mut lags).unwrap();
        assert_eq!(lags, [0, 0], "[{name}]");
        let mut ctrl = vec![0.0; 6];
        for k in 0..5 {
            b.step(&ramp(2, 3, k)).unwrap();
        }
        b.read_ctrl(&mut ctrl).unwrap();
        // Step 4 with lag 2 (env 0) and 3 (env 1) reads steps 2 and 1.
        assert_eq!(ctrl[0], ramp(2, 3, 2).position_target[0], "[{name}]");
        assert_eq!(ctrl[3 + 1], ramp(2, 3, 1).position_target[4], "[{name}]");
        assert_eq!(
            ctrl[2],
            ramp(2, 3, 4).position_target[2],
            "[{name}] solo keeps lag 0"
        );
    }
}

#[test]
fn the_first_push_after_a_reset_fills_the_history() {
    let group = GroupCfg::new(
        "pos",
        [".*"],
        BuiltinPositionCfg {
            stiffness: 1.0,
            damping: 0.0,
            effort_limit: None,
        },
    )
    .with_delay(DelayCfg::constant(3));
    let plan = Plan::new(&joints(1), vec![group], 2, PlanOptions::default()).unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let mut ctrl = [0.0; 2];
        for k in 0..6 {
            b.step(&ramp(2, 1, k)).unwrap();
        }
        b.reset(EnvIds::List(&[0])).unwrap();
        for k in 6..9 {
            b.step(&ramp(2, 1, k)).unwrap();
            b.read_ctrl(&mut ctrl).unwrap();
            assert_eq!(
                ctrl[0], 6.0,
                "[{name}] step {k}: the post-reset command, not zeros"
            );
            assert_eq!(
                ctrl[1],
                (k - 3) as f32 + 0.01,
                "[{name}] env 1 keeps its lag 3"
            );
        }
    }
}

#[test]
fn update_period_with_per_env_phase_changes_lags_only_on_due_steps() {
    let group = GroupCfg::new("pd", [".*"], IdealPdCfg::new(1.0, 0.0)).with_delay(DelayCfg {
        update_period: 4,
        ..DelayCfg::new(0, 9)
    });
    let plan = Plan::new(
        &joints(1),
        vec![group],
        64,
        PlanOptions {
            seed: 5,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let mut b = CpuBackend::new(plan);
    let cmd = ActuatorCmd::zeros(64, 1);
    let phases: Vec<u32> = (0..64)
        .map(|e| b.delay_state("pd", e).unwrap().phase)
        .collect();
    assert!(
        phases.iter().all(|&p| p < 4) && phases.iter().any(|&p| p != phases[0]),
        "{phases:?}"
    );
    let mut prev = vec![0; 64];
    let mut lags = vec![0; 64];
    for step in 0..40u32 {
        b.step(&cmd).unwrap();
        b.read_lags("pd", &mut lags).unwrap();
        for env in 0..64 {
            if !(step + phases[env]).is_multiple_of(4) {
                assert_eq!(lags[env], prev[env], "env {env} step {step}: not due");
            }
        }
        prev.clone_from(&lags);
    }
}

#[test]
fn wrapped_actuators_forward_their_detected_field() {
    let native = |target: &str, biasprm: [f32; 3]| NativeActuator {
        name: format!("{target}_act"),
        transmission: Transmission::Joint,
        target: target.into(),
        gain: GainType::Fixed,
        bias: BiasType::Affine,
        dyn_type: DynType::None,
        gainprm: [4.0, 0.0, 0.0],
        biasprm,
        general: None,
    };
    let robot = Robot {
        joints: vec!["a".into(), "b".into(), "c".into()],
        native_actuators: vec![native("a", [0.0, 0.0, -4.0]), native("c", [0.0, 0.0, -4.0])],
        ..Robot::default()
    };
    let groups = vec![
        GroupCfg::new("pd", ["b"], IdealPdCfg::new(2.0, 0.0)),
        GroupCfg::new("xml", [".*"], WrappedCfg::default()),
    ];
    // Wrapped groups come first with sort_actuators (mjlab).
    let plan = Plan::new(
        &robot,
        groups,
        1,
        PlanOptions {
            sort_actuators: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let meanings: Vec<(String, CtrlMeaning)> = plan
        .ctrl_columns()
        .iter()
        .map(|c| (c.target.clone(), c.meaning))
        .collect();
    assert_eq!(
        meanings,
        [
            ("a".into(), CtrlMeaning::VelocityTarget),
            ("c".into(), CtrlMeaning::VelocityTarget),
            ("b".into(), CtrlMeaning::Effort)
        ]
    );
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let mut cmd = ActuatorCmd::zeros(1, 3);
        cmd.velocity_target.copy_from_slice(&[1.0, 2.0, 3.0]);
        cmd.position_target.copy_from_slice(&[0.0, 0.5, 0.0]);
        b.step(&cmd).unwrap();
        let mut ctrl = [0.0; 3];
        b.read_ctrl(&mut ctrl).unwrap();
        assert_eq!(ctrl, [1.0, 3.0, 1.0], "[{name}]");
    }
}

#[test]
fn delayed_rows_of_every_width_read_the_frame_their_lag_names() {
    // A delayed group's rows are copied into and out of its ring in a way
    // chosen by their width (up to 7, 8–16 and 16–32 values, more), so
    // each width is checked against an undelayed twin: stepped with each
    // env's targets from the command its lag names (read back after the
    // step) and its feedback from the current one, it must give the same
    // outputs. Random lags in 0–4 resampled every step, and commands that
    // differ in every value, so a stale or half-copied row shows.
    let num_envs = 40;
    for width in [5, 12, 16, 29, 40] {
        let group = |delay: Option<DelayCfg>| {
            let g = GroupCfg::new("dc", [".*"], test_dc());
            vec![match delay {
                Some(d) => g.with_delay(d),
                None => g,
            }]
        };
        let plan = |delay| {
            Plan::new(
                &joints(width),
                group(delay),
                num_envs,
                PlanOptions::default(),
            )
        };
        let delayed = plan(Some(DelayCfg::new(0, 4))).unwrap();
        let undelayed = plan(None).unwrap();
        for (name, make, tol) in backends() {
            let (mut subject, mut twin) = (make(delayed.clone()), make(undelayed.clone()));
            let mut rng = Rng(width as u64);
            let mut history: Vec<ActuatorCmd> = Vec::new();
            let (mut got, mut want) = (vec![0.0; num_envs * width], vec![0.0; num_envs * width]);
            let mut lags = vec![0; num_envs];
            for t in 0..12 {
                let mut cmd = ActuatorCmd::zeros(num_envs, width);
                for field in cmd.fields_mut() {
                    field.iter_mut().for_each(|x| *x = rng.range(-2.0, 2.0));
                }
                subject.step(&cmd).unwrap();
                subject.read_ctrl(&mut got).unwrap();
                subject.read_lags("dc", &mut lags).unwrap();
                history.push(cmd.clone());
                let mut mixed = cmd;
                for (e, &lag) in lags.iter().enumerate() {
                    let old = &history[t - (lag as usize).min(t)];
                    let row = e * width..(e + 1) * width;
                    mixed.position_target[row.clone()]
                        .copy_from_slice(&old.position_target[row.clone()]);
                    mixed.velocity_target[row.clone()]
                        .copy_from_slice(&old.velocity_target[row.clone()]);
                    mixed.effort_target[row.clone()].copy_from_slice(&old.effort_target[row]);
                }
                twin.step(&mixed).unwrap();
                twin.read_ctrl(&mut want).unwrap();
                for (i, (&a, &b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        tol.accepts(a, b),
                        "[{name}] {width} joints, step {t}, env {} joint {}: {a} != {b}",
                        i / width,
                        i % width
                    );
                }
            }
            assert!(
                (0..=4).all(|l| lags.contains(&l)),
                "[{name}] every lag drawn: {lags:?}"
            );
        }
    }
}

#[test]
fn mjlab_fused_ramp_with_lag_three() {
    // mjlab tests/test_fused_group.py: lag 3 over a ramp 0..5 reads back [0, 0, 0, 1, 2]
    // for steps 1..5 (after a first push of 0).
    let group =
        GroupCfg::new("pd", [".*"], IdealPdCfg::new(1.0, 0.0)).with_delay(DelayCfg::constant(3));
    let plan = Plan::new(&joints(2), vec![group], 1, PlanOptions::default()).unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        let mut ctrl = [0.0; 2];
        let mut got = Vec::new();
        for k in 0..=5 {
            let mut cmd = ActuatorCmd::zeros(1, 2);
            cmd.position_target.fill(k as f32);
            b.step(&cmd).unwrap();
            b.read_ctrl(&mut ctrl).unwrap();
            got.push(ctrl[0]);
        }
        assert_eq!(&got[1..], &[0.0, 0.0, 0.0, 1.0, 2.0], "[{name}]");
    }
}

#[test]
fn engine_auto_takes_a_hardware_gpu_and_passes_over_a_software_one() {
    let group = GroupCfg::new("pd", [".*"], IdealPdCfg::new(1.0, 0.0));
    let engine = Engine::auto(&joints(2), vec![group], 3, PlanOptions::default()).unwrap();
    let description = engine.description();
    match (crate::support::gpu(), &engine) {
        (Some(ctx), Engine::Gpu(_)) => {
            assert!(!ctx.is_software(), "auto took the software adapter");
            assert!(description.contains(ctx.description()), "{description}");
        }
        (Some(ctx), Engine::Cpu(_)) => assert!(ctx.is_software(), "auto passed over a GPU"),
        (None, Engine::Cpu(_)) => {}
        (gpu, _) => panic!("auto chose {description} with adapter {gpu:?}"),
    }
    assert!(!sinew::gpu_status().is_empty());
}

#[test]
fn aligned_plans_zero_exactly_the_envs_at_fault() {
    // Ctrl columns = command columns and no delay: the CPU backend runs whole
    // chunks of envs at once and must still zero only the envs at fault.
    let dc = test_dc();
    let servo = BuiltinPositionCfg {
        stiffness: 5.0,
        damping: 0.0,
        effort_limit: None,
    };
    let pd = |c: &ActuatorCmd, i: usize| {
        sinew::ideal_pd_effort(
            7.0,
            0.5,
            f32::INFINITY,
            c.position_target[i],
            c.pos[i],
            c.velocity_target[i],
            c.vel[i],
            c.effort_target[i],
        )
    };
    let motor = |c: &ActuatorCmd, i: usize| {
        sinew::dc_motor_effort(
            30.0,
            1.0,
            10.0,
            12.0,
            8.0,
            c.position_target[i],
            c.pos[i],
            c.velocity_target[i],
            c.vel[i],
            c.effort_target[i],
        )
    };
    type Law = fn(&ActuatorCmd, usize) -> f32;
    // (groups, law per column, a target for env 61 that makes it fault:
    // an overflowing finite one where an unlimited PD reads it).
    let variants: Vec<(Vec<GroupCfg>, [Law; 4], f32)> = vec![
        (
            vec![GroupCfg::new("all", [".*"], IdealPdCfg::new(7.0, 0.5))],
            [pd, pd, pd, pd],
            3e38,
        ),
        (
            vec![
                GroupCfg::new("pd", ["j0", "j1"], IdealPdCfg::new(7.0, 0.5)),
                GroupCfg::new("dc", ["j2", "j3"], dc),
            ],
            [pd, pd, motor, motor],
            3e38,
        ),
        // The servo never reads `vel`: only the input check can catch its NaN.
        (
            vec![GroupCfg::new("servo", [".*"], servo)],
            [|c: &ActuatorCmd, i: usize| c.position_target[i]; 4],
            f32::INFINITY,
        ),
        // A limited PD clamps an infinite target's torque to a finite one:
        // only the input check can catch it.
        (
            vec![GroupCfg::new(
                "limited",
                [".*"],
                IdealPdCfg::new(7.0, 0.5).with_effort_limit(2.0),
            )],
            [|c: &ActuatorCmd, i: usize| {
                sinew::ideal_pd_effort(
                    7.0,
                    0.5,
                    2.0,
                    c.position_target[i],
                    c.pos[i],
                    c.velocity_target[i],
                    c.vel[i],
                    c.effort_target[i],
                )
            }; 4],
            f32::INFINITY,
        ),
    ];
    for (groups, laws, fault) in variants {
        let num_envs = 100;
        let plan = Plan::new(&joints(4), groups, num_envs, PlanOptions::default()).unwrap();
        let mut cmd = ramp(num_envs, 4, 3);
        cmd.vel[37 * 4 + 2] = f32::NAN; // a non-finite input
        cmd.position_target[61 * 4] = fault;
        for (name, make, tol) in backends() {
            let mut b = make(plan.clone());
            b.step(&cmd).unwrap();
            let mut ctrl = vec![f32::NAN; num_envs * 4];
            b.read_ctrl(&mut ctrl).unwrap();
            assert_eq!(b.nonfinite_envs().unwrap(), [37, 61], "[{name}]");
            for env in 0..num_envs {
                for (j, law) in laws.iter().enumerate() {
                    let i = env * 4 + j;
                    let want = if env == 37 || env == 61 {
                        0.0
                    } else {
                        law(&cmd, i)
                    };
                    assert!(
                        tol.accepts(ctrl[i], want),
                        "[{name}] env {env} j{j}: {} vs {want}",
                        ctrl[i]
                    );
                }
            }
        }
    }
}

#[test]
fn huge_finite_commands_are_not_faults() {
    // The whole-chunk path checks a sum of each element's values, which
    // overflows here although every value is finite and so is the torque:
    // the exact check must then clear the env.
    let plan = Plan::new(
        &joints(4),
        vec![GroupCfg::new("pd", [".*"], IdealPdCfg::new(7.0, 0.5))],
        64,
        PlanOptions::default(),
    )
    .unwrap();
    let mut cmd = ramp(64, 4, 1);
    for i in 20 * 4..21 * 4 {
        cmd.position_target[i] = 3e38;
        cmd.pos[i] = 3e38;
        cmd.velocity_target[i] = -3e38;
        cmd.vel[i] = -3e38;
    }
    for (name, make, tol) in backends() {
        let mut b = make(plan.clone());
        b.step(&cmd).unwrap();
        assert!(b.nonfinite_envs().unwrap().is_empty(), "[{name}]");
        let mut ctrl = vec![f32::NAN; 64 * 4];
        b.read_ctrl(&mut ctrl).unwrap();
        for (i, &got) in ctrl.iter().enumerate() {
            let want = sinew::ideal_pd_effort(
                7.0,
                0.5,
                f32::INFINITY,
                cmd.position_target[i],
                cmd.pos[i],
                cmd.velocity_target[i],
                cmd.vel[i],
                cmd.effort_target[i],
            );
            assert!(tol.accepts(got, want), "[{name}] {i}: {got} vs {want}");
        }
    }
}

#[test]
fn the_cpu_paths_agree_on_every_layout() {
    // The same groups on four robots, one per path of the CPU backend: the
    // groups claim every command column in order (whole chunks or tiles
    // run as one law, checked in its pass); a spare, unclaimed column
    // (tiles gathered into ctrl order, so the spare's NaN does not count);
    // joints in another order, so every group's columns are scattered
    // (gathered runs, delayed and not); a MuJoCo motor on a joint of its
    // own (each env's runs one by one, then the MuJoCo stage: the
    // reference); and the first robot stepped from rayon pools of one and
    // three threads, whose chunks are cut otherwise. Every output of the
    // six joints, every report, delay state, state slot and output plane
    // must agree, with non-finite inputs and outputs about.
    let mixed = || {
        vec![
            GroupCfg::new("pd", ["j0", "j1"], IdealPdCfg::new(7.0, 0.5))
                .with_delay(DelayCfg::new(0, 3)),
            GroupCfg::new("dc", ["j2", "j3"], test_dc()),
            GroupCfg::new(
                "servo",
                ["j4"],
                BuiltinPositionCfg {
                    stiffness: 5.0,
                    damping: 0.0,
                    effort_limit: None,
                },
            )
            .with_delay(DelayCfg::constant(2)),
            GroupCfg::new("pd2", ["j5"], IdealPdCfg::new(3.0, 0.1)),
        ]
    };
    // One law over every joint, two groups' gains: scattered, the laws
    // run in command order and their outputs are put in ctrl order.
    let one_law = || {
        vec![
            GroupCfg::new("pd", ["j0", "j1", "j4"], IdealPdCfg::new(7.0, 0.5)),
            GroupCfg::new("pd2", ["j2", "j3", "j5"], IdealPdCfg::new(4.0, 0.25)),
        ]
    };
    // The same, both groups behind one delay buffer (mjlab's sharing):
    // scattered, the ring's columns are in command order too.
    let one_delayed_law = || {
        let delay = DelayCfg {
            hold_prob: 0.3,
            ..DelayCfg::new(0, 3)
        };
        (one_law().into_iter())
            .map(|g| g.with_delay(delay.clone()))
            .collect()
    };
    // One delayed law over every joint: in command order, the tile takes
    // its targets from the ring alone.
    let all_delayed = || {
        let joints = ["j0", "j1", "j2", "j3", "j4", "j5"];
        vec![GroupCfg::new("dc", joints, test_dc()).with_delay(DelayCfg::new(0, 4))]
    };
    // Kinds with state, input planes and output planes beside stateless
    // ones, delayed and not.
    let heavy = || {
        let mut sts = BamSts3215Cfg::new(0.8, 2.0, 0.01);
        sts.max_velocity = 2.0;
        vec![
            GroupCfg::new("pid", ["j0", "j1"], MjPidCfg::new(4.0, 0.2, 0.01))
                .with_delay(DelayCfg::new(0, 3)),
            GroupCfg::new("dc", ["j2"], test_dc()),
            GroupCfg::new("sts", ["j3", "j4"], sts),
            GroupCfg::new(
                "xl",
                ["j5"],
                BamVoltageCfg::xl330(0.6, 2.5).with_friction(BamFriction {
                    friction_base: 0.05,
                    friction_viscous: 0.01,
                    load_friction_external: 0.1,
                    ..BamFriction::default()
                }),
            ),
        ]
    };
    // One stateful law over every joint, delayed: tiles run whole.
    let stateful = || {
        let joints = ["j0", "j1", "j2", "j3", "j4", "j5"];
        let mut pid = MjPidCfg::new(4.0, 0.2, 0.01);
        pid.ki = 3.0;
        vec![GroupCfg::new("pid", joints, pid).with_delay(DelayCfg::new(0, 2))]
    };
    // Five laws (six with the MuJoCo stage's motor), one of them costly,
    // one joint per group: a tile runs a pass of each, and the DC motor's
    // two groups, apart in ctrl order, take their values from its pass
    // piece by piece.
    let many_laws = || five_laws(DelayCfg::new(0, 3));
    // Light laws behind one delay buffer over every joint: on the
    // scattered robot their passes run in command order.
    let delayed_laws = || {
        let delay = DelayCfg {
            share: DelayShare::Named("legs".into()),
            ..DelayCfg::new(0, 3)
        };
        vec![
            GroupCfg::new("dc", ["j0", "j1"], test_dc()),
            GroupCfg::new("pd", ["j2", "j4"], IdealPdCfg::new(7.0, 0.5)),
            GroupCfg::new("motor", ["j3"], BuiltinMotorCfg::new(0.5)),
            GroupCfg::new("dc2", ["j5"], test_dc()),
        ]
        .into_iter()
        .map(|g| g.with_delay(delay.clone()))
        .collect()
    };
    let robot = Robot::from_joints(["j3", "j5", "j0", "j4", "j2", "j1"]);
    let plan = Plan::new(&robot, delayed_laws(), 1, PlanOptions::default()).unwrap();
    assert_eq!(plan.buffers().len(), 1);
    let plan = Plan::new(&robot, one_delayed_law(), 1, PlanOptions::default()).unwrap();
    assert_eq!(plan.buffers().len(), 1);
    // 150 envs of the light kinds step on the caller's thread, of the
    // heavy ones (the MuJoCo stage's layout among them) in one chunk per
    // thread or on the pool in a few chunks per thread (below); 3000 of the
    // light kinds on the caller's thread or in one chunk per thread, of the
    // heavy ones on the pool.
    for num_envs in [150, 3000] {
        paths_agree(&mixed, &["pd", "servo"], num_envs);
        paths_agree(&one_law, &[], num_envs);
        paths_agree(&one_delayed_law, &["pd", "pd2"], num_envs);
        paths_agree(&all_delayed, &["dc"], num_envs);
        paths_agree(&heavy, &["pid"], num_envs);
        paths_agree(&stateful, &["pid"], num_envs);
        paths_agree(&many_laws, &["servo", "dc2"], num_envs);
        paths_agree(&delayed_laws, &["dc"], num_envs);
    }
}

/// Rows of more than 32 values (a humanoid with hands has 40 joints or more)
/// put in ctrl order by the widest vector permutes: two laws on every other
/// joint of 40, their values scattered into ctrl order, and the same beside a
/// spare joint, the command gathered into ctrl order, give each joint, bit
/// for bit, the value it takes on a robot whose joints are in ctrl order
/// already (no permute).
#[test]
fn rows_of_more_than_32_joints_in_another_order_step_as_in_order() {
    let names: Vec<String> = (0..40).map(|j| format!("j{j}")).collect();
    let (even, odd): (Vec<&String>, Vec<&String>) = names
        .iter()
        .partition(|n| n[1..].parse::<usize>().unwrap() % 2 == 0);
    let groups = || {
        vec![
            GroupCfg::new(
                "pd",
                even.iter().map(|n| n.as_str()),
                IdealPdCfg::new(7.0, 0.5),
            ),
            GroupCfg::new("dc", odd.iter().map(|n| n.as_str()), test_dc()),
        ]
    };
    let in_ctrl_order = Robot::from_joints(even.iter().chain(&odd).map(|n| n.as_str()));
    let scattered = Robot::from_joints(names.iter().map(String::as_str));
    let spare = Robot::from_joints(names.iter().map(String::as_str).chain(["spare"]));
    let layouts = [in_ctrl_order, scattered, spare];
    for num_envs in [150, 3000] {
        let mut engines: Vec<CpuBackend> = (layouts.iter())
            .map(|robot| {
                let plan = Plan::new(robot, groups(), num_envs, PlanOptions::default()).unwrap();
                CpuBackend::new(plan)
            })
            .collect();
        // Only the first robot's command columns are its ctrl columns.
        let identity = |e: &CpuBackend| {
            let cols = e.plan().ctrl_columns();
            cols.len() == e.plan().num_targets()
                && cols.iter().enumerate().all(|(c, col)| col.cmd_column == c)
        };
        assert_eq!(
            engines.iter().map(identity).collect::<Vec<_>>(),
            [true, false, false]
        );
        assert!(engines.iter().all(|e| e.plan().num_ctrl() == 40));
        let mut rng = Rng(11);
        for step in 0..6 {
            // Each joint's five values, placed at its column in each robot.
            let values: Vec<[f32; 5]> = (0..num_envs * 40)
                .map(|_| std::array::from_fn(|_| rng.range(-1.5, 1.5)))
                .collect();
            for (e, robot) in engines.iter_mut().zip(&layouts) {
                let t = e.plan().num_targets();
                let mut cmd = ActuatorCmd::zeros(num_envs, t);
                let columns: Vec<usize> = (names.iter())
                    .map(|n| robot.joints.iter().position(|j| j == n).unwrap())
                    .collect();
                for (f, field) in cmd.fields_mut().into_iter().enumerate() {
                    for env in 0..num_envs {
                        for (j, &c) in columns.iter().enumerate() {
                            field[env * t + c] = values[env * 40 + j][f];
                        }
                    }
                }
                e.step(&cmd).unwrap();
                assert!(e.nonfinite_envs().unwrap().is_empty());
            }
            // Each joint's values in every env, by its ctrl column.
            let by_joint = |e: &CpuBackend, name: &str| {
                let cols = e.plan().ctrl_columns();
                let at = cols.iter().position(|c| c.target == name).unwrap();
                (e.ctrl().iter().skip(at).step_by(cols.len()).copied()).collect::<Vec<f32>>()
            };
            for name in &names {
                let want = by_joint(&engines[0], name);
                for (e, layout) in engines[1..].iter().zip(["scattered", "spare"]) {
                    let got = by_joint(e, name);
                    assert_eq!(got, want, "{layout}, {num_envs} envs, step {step}, {name}");
                }
            }
        }
    }
}

#[test]
fn a_tile_of_several_laws_gives_each_group_its_plan_alone_values() {
    // Seven laws on eight joints, one group per joint ([`five_laws`] and
    // two with state): a light law over the tile's whole rows first, three
    // more copied at their own columns (the DC motor's two groups piece by
    // piece), a costly one and two with state over their own gathered
    // columns. Each joint's value, every step, must be its group's in a
    // plan of that group alone, which one law runs over whole tiles: bit
    // for bit.
    let groups = || {
        let mut pid = MjPidCfg::new(4.0, 0.2, 0.01);
        pid.ki = 3.0;
        let mut groups = five_laws(DelayCfg::constant(1));
        groups.push(GroupCfg::new(
            "sts",
            ["j6"],
            BamSts3215Cfg::new(0.8, 2.0, 0.01),
        ));
        groups.push(GroupCfg::new("pid", ["j7"], pid));
        groups
    };
    laws_agree_with_groups_alone(&groups, &["j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7"]);
    // Light laws alone on a robot whose joints come in another order: the
    // passes run over the command's rows in command order, their columns
    // copied in pieces there, and only the values are put in ctrl order.
    let light = || {
        let servo = BuiltinPositionCfg {
            stiffness: 5.0,
            damping: 0.0,
            effort_limit: Some(4.0),
        };
        vec![
            GroupCfg::new("pd", ["j0", "j5"], IdealPdCfg::new(7.0, 0.5)),
            GroupCfg::new("dc", ["j1"], test_dc()),
            GroupCfg::new("servo", ["j2"], servo),
            GroupCfg::new("motor", ["j3", "j6"], BuiltinMotorCfg::new(0.5)),
            GroupCfg::new("dc2", ["j4", "j7"], test_dc()),
        ]
    };
    laws_agree_with_groups_alone(&light, &["j6", "j3", "j0", "j7", "j2", "j5", "j1", "j4"]);
    // Two light laws on legs of three joints, grouped by joint as mjlab's
    // Go1 is: in command order the second law's columns are a piece per
    // leg, each copied from its pass; four legs permute into ctrl order
    // in one 16-lane register, six do not. (The PD first: a DC law's pass
    // over a PD's columns gives the PD's values, its clip open there, and
    // would hide a piece left uncopied.)
    let legs = || {
        vec![
            GroupCfg::new("calf", [".*_calf"], IdealPdCfg::new(9.0, 0.4)),
            GroupCfg::new("hip_thigh", [".*_hip", ".*_thigh"], test_dc()),
        ]
    };
    for count in [4, 6] {
        let joints: Vec<String> = (0..count)
            .flat_map(|leg| ["hip", "thigh", "calf"].map(|j| format!("leg{leg}_{j}")))
            .collect();
        let joints: Vec<&str> = joints.iter().map(String::as_str).collect();
        laws_agree_with_groups_alone(&legs, &joints);
    }
}

/// Steps `groups` together and each alone, on a robot of `joints`, and
/// compares every joint's values, bit for bit.
fn laws_agree_with_groups_alone(groups: &dyn Fn() -> Vec<GroupCfg>, joints: &[&str]) {
    let robot = Robot::from_joints(joints.iter().copied());
    let t = joints.len();
    for num_envs in [150, 3000] {
        let plan = |groups| Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
        let mut all = CpuBackend::new(plan(groups()));
        let mut alone: Vec<CpuBackend> = (groups().into_iter())
            .map(|g| CpuBackend::new(plan(vec![g])))
            .collect();
        let mut rng = Rng(7);
        for step in 0..12 {
            let mut cmd = ActuatorCmd::zeros(num_envs, t);
            for field in cmd.fields_mut() {
                field.fill_with(|| rng.range(-1.5, 1.5));
            }
            if step % 5 == 3 {
                let envs = rng.subset(num_envs, 0.3);
                all.reset(EnvIds::List(&envs)).unwrap();
                for e in &mut alone {
                    e.reset(EnvIds::List(&envs)).unwrap();
                }
            }
            all.step(&cmd).unwrap();
            assert!(all.nonfinite_envs().unwrap().is_empty());
            // Each env's value of `target`.
            let column = |e: &CpuBackend, target: &str| {
                let cols = e.plan().ctrl_columns();
                let at = cols.iter().position(|c| c.target == target).unwrap();
                let values = e.ctrl().iter().skip(at).step_by(cols.len());
                values.copied().collect::<Vec<f32>>()
            };
            for e in &mut alone {
                e.step(&cmd).unwrap();
                for c in e.plan().ctrl_columns() {
                    let target = &c.target;
                    let want = column(e, target);
                    assert_eq!(
                        column(&all, target),
                        want,
                        "{num_envs} envs, step {step}, {target}"
                    );
                }
            }
        }
    }
}

#[test]
fn one_law_over_joints_in_another_order_agrees_with_joints_in_order() {
    // Two PD groups of different gains over every joint, the even joints
    // and the odd ones: on a robot whose joints come in reverse order the
    // ctrl columns are the command columns in another order, and the law
    // runs in command order before its outputs are put in ctrl order. On
    // every row width the vector permutes take (up to 16, up to 32) and
    // past them, each joint's force must be the in-order robot's, bit for
    // bit, a faulty env zeroed in both.
    for width in [1, 5, 12, 16, 17, 29, 32, 33, 40] {
        let names: Vec<String> = (0..width).map(|j| format!("j{j}")).collect();
        let groups = || {
            let pick = |odd: usize| -> Vec<String> {
                let names = names.iter().skip(odd).step_by(2);
                names.map(|n| format!("^{n}$")).collect()
            };
            let mut groups = vec![GroupCfg::new("even", pick(0), IdealPdCfg::new(7.0, 0.5))];
            if width > 1 {
                groups.push(GroupCfg::new("odd", pick(1), IdealPdCfg::new(4.0, 0.25)));
            }
            groups
        };
        let num_envs = 70;
        let robots = [
            Robot::from_joints(names.iter().cloned()),
            Robot::from_joints(names.iter().rev().cloned()),
        ];
        let mut ctrl_by_joint = Vec::new();
        for robot in robots {
            let plan = Plan::new(&robot, groups(), num_envs, PlanOptions::default()).unwrap();
            let targets: Vec<String> = (plan.ctrl_columns().iter())
                .map(|c| c.target.clone())
                .collect();
            let mut cpu = CpuBackend::new(plan);
            let mut cmd = ActuatorCmd::zeros(num_envs, width);
            for env in 0..num_envs {
                for (k, j) in (0..width).map(|j| (env * width + j, j)) {
                    let joint = robot.joint_index(&format!("j{j}")).unwrap();
                    let at = env * width + joint;
                    let v = (k % 23) as f32 * 0.1 - 1.0;
                    cmd.position_target[at] = v;
                    cmd.pos[at] = 0.3 * v;
                    cmd.vel[at] = -v;
                    cmd.velocity_target[at] = 0.5;
                    cmd.effort_target[at] = 0.01 * j as f32;
                }
            }
            let faulty = robot.joint_index(&format!("j{}", width - 1)).unwrap();
            cmd.vel[13 * width + faulty] = f32::NAN;
            cpu.step(&cmd).unwrap();
            assert_eq!(cpu.nonfinite_envs().unwrap(), [13]);
            // Each env's forces by joint name.
            let by_joint: Vec<Vec<(String, f32)>> = (cpu.ctrl().chunks(width))
                .map(|row| {
                    let mut row: Vec<(String, f32)> =
                        (targets.iter().cloned()).zip(row.iter().copied()).collect();
                    row.sort_by(|a, b| a.0.cmp(&b.0));
                    row
                })
                .collect();
            assert!(by_joint[13].iter().all(|(_, v)| *v == 0.0));
            ctrl_by_joint.push(by_joint);
        }
        assert_eq!(ctrl_by_joint[0], ctrl_by_joint[1], "{width} joints");
    }
}

/// Steps `groups` on the robots of `the_cpu_paths_agree_on_every_layout`,
/// `num_envs` envs, and compares them.
fn paths_agree(groups: &dyn Fn() -> Vec<GroupCfg>, delayed: &[&str], num_envs: usize) {
    let robot = |names: &[&str]| Robot::from_joints(names.iter().copied());
    let in_order = || robot(&["j0", "j1", "j2", "j3", "j4", "j5"]);
    // Each layout's robot, and the threads of the rayon pool it is stepped
    // from (0: this thread). From a rayon worker the step runs in the
    // caller's pool, its chunks cut for that pool's threads, not this
    // machine's: the results must not move.
    let layouts: [(&str, Robot, usize); 6] = [
        ("in order", in_order(), 0),
        (
            "spare",
            robot(&["j0", "j1", "j2", "j3", "j4", "j5", "spare"]),
            0,
        ),
        ("scattered", robot(&["j3", "j5", "j0", "j4", "j2", "j1"]), 0),
        ("in order, from a pool of 1 thread", in_order(), 1),
        ("in order, from a pool of 3 threads", in_order(), 3),
        (
            "MuJoCo stage",
            robot(&["j0", "j1", "j2", "j3", "j4", "j5", "j6"]),
            0,
        ),
    ];
    let pools: Vec<Option<rayon::ThreadPool>> = (layouts.iter())
        .map(|&(_, _, threads)| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads);
            (threads > 0).then(|| pool.build().unwrap())
        })
        .collect();
    let mut engines: Vec<(&str, Vec<usize>, CpuBackend)> = layouts
        .into_iter()
        .map(|(name, robot, _)| {
            let column = |j: usize| robot.joints.iter().position(|n| *n == format!("j{j}"));
            let columns = (0..6).map(|j| column(j).unwrap()).collect();
            let mut groups = groups();
            if column(6).is_some() {
                groups.push(GroupCfg::new("mj", ["j6"], MjGeneralCfg::motor()));
            }
            let plan = Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
            (name, columns, CpuBackend::new(plan))
        })
        .collect();
    assert_eq!(engines[0].2.plan().claimed_columns(), [(0, 6)]);
    // With two groups or more, one of several joints, the scattered
    // layout's tiles are gathered (such a group's columns follow command
    // order in every layout).
    let scattered = engines[2].2.plan();
    if scattered.groups().len() > 1 && scattered.groups().iter().any(|g| g.targets.len() > 1) {
        assert!(scattered.gathered_runs().len() < scattered.runs().len());
    }
    assert!(!engines.last().unwrap().2.plan().mj().is_empty());
    let mut seed = 12345u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    let input_names: Vec<&str> = (engines[0].2.plan().input_planes().iter())
        .map(|p| p.name)
        .collect();
    for step in 0..30 {
        let mut cmds: Vec<ActuatorCmd> = engines
            .iter()
            .map(|(_, _, e)| ActuatorCmd::zeros(num_envs, e.plan().num_targets()))
            .collect();
        let set = |cmds: &mut [ActuatorCmd], f: usize, env: usize, j: usize, value: f32| {
            for (cmd, (_, columns, e)) in cmds.iter_mut().zip(&engines) {
                let t = e.plan().num_targets();
                cmd.fields_mut()[f][env * t + columns[j]] = value;
            }
        };
        for env in 0..num_envs {
            for j in 0..6 {
                let v = [
                    next() - 0.5,
                    next() - 0.5,
                    next() - 0.5,
                    next() - 0.5,
                    10.0 * next() - 5.0,
                ];
                for (f, value) in v.into_iter().enumerate() {
                    set(&mut cmds, f, env, j, value);
                }
            }
            let fault = next();
            if fault < 0.03 {
                set(&mut cmds, 3, env, 4, f32::INFINITY);
            } else if fault < 0.06 {
                set(&mut cmds, 0, env, 4, f32::INFINITY);
            } else if fault < 0.09 {
                // Finite, but 7 × 3e38 overflows: an infinite output.
                set(&mut cmds, 0, env, 0, 3e38);
            } else if fault < 0.10 {
                set(&mut cmds, 4, env, 5, f32::NAN);
            }
            // The spare column's NaN must not count.
            cmds[1].vel[env * 7 + 6] = if next() < 0.1 { f32::NAN } else { 0.0 };
        }
        // Every input plane, by joint (a NaN in an env now and then).
        for name in &input_names {
            let values: Vec<[f32; 6]> = (0..num_envs)
                .map(|_| {
                    std::array::from_fn(|_| match next() {
                        x if x < 0.005 => f32::NAN,
                        x if *name == "torque_enable" => f32::from(x < 0.8),
                        x => x - 0.5,
                    })
                })
                .collect();
            for (_, columns, e) in &mut engines {
                let t = e.plan().num_targets();
                let mut plane = vec![0.0; num_envs * t];
                for (row, v) in plane.chunks_exact_mut(t).zip(&values) {
                    for (j, &c) in columns.iter().enumerate() {
                        row[c] = v[j];
                    }
                }
                e.set_input(name, &plane).unwrap();
            }
        }
        if step % 7 == 3 {
            let envs: Vec<u32> = (0..num_envs as u32).filter(|e| e % 5 == step % 5).collect();
            for (_, _, e) in &mut engines {
                e.reset(EnvIds::List(&envs)).unwrap();
            }
        }
        if step % 10 == 5 {
            // Every parameter of every group, per (env, target) for some
            // envs: its value scaled by a factor of the env and the
            // target's name, so every layout gets the same values.
            let envs: Vec<u32> = (0..num_envs as u32).filter(|e| e % 3 != step % 3).collect();
            let factor = |env: u32, target: &str| {
                let j: u32 = target.bytes().map(u32::from).sum();
                0.5 + ((env * 7 + j * 13) % 17) as f32 / 32.0
            };
            for (_, _, e) in &mut engines {
                for g in e.plan().groups().to_vec() {
                    if g.cfg.name == "mj" {
                        continue;
                    }
                    let n = g.targets.len();
                    for spec in g.cfg.actuator.params() {
                        let mut now = vec![f32::NAN; num_envs * n];
                        e.read_param(&g.cfg.name, spec.name, &mut now).unwrap();
                        let values: Vec<f32> = (envs.iter())
                            .flat_map(|&env| {
                                let row = &now[env as usize * n..][..n];
                                (row.iter().zip(&g.targets)).map(move |(&v, t)| v * factor(env, t))
                            })
                            .collect();
                        // A value outside the domain is refused alike everywhere
                        // (the parameters are compared after each step).
                        let ids = EnvIds::List(&envs);
                        let _ =
                            e.set_param(&g.cfg.name, spec.name, ids, Values::PerEnvTarget(&values));
                    }
                }
            }
        }
        let stepped = engines.iter_mut().zip(&cmds).zip(&pools);
        for (k, (((_, _, e), cmd), pool)) in stepped.enumerate() {
            if let Some(pool) = pool {
                pool.install(|| e.step(cmd)).unwrap();
                continue;
            }
            // A step neither tiny nor large runs one chunk per thread while
            // the pool's other workers spin (just after an `install`), else
            // on this thread alone or on the pool (once the spin wait has
            // passed): the layouts take turns.
            if (k + step as usize).is_multiple_of(2) {
                CpuBackend::install(|| ());
            } else {
                std::thread::sleep(CpuBackend::spin_wait() + Duration::from_micros(100));
            }
            e.step(cmd).unwrap();
        }
        // Each engine's values by joint (a group's targets come in the
        // robot's order, so ctrl columns differ between layouts): its ctrl
        // and each output plane. The reference's MuJoCo column on j6 is
        // left out: its `act_dot` plane and `act` state exist there alone.
        let by_joint = |e: &mut CpuBackend| -> Vec<Vec<[f32; 6]>> {
            let cols = e.plan().ctrl_columns().to_vec();
            let at: Vec<usize> = (0..6)
                .map(|j| {
                    cols.iter()
                        .position(|c| c.target == format!("j{j}"))
                        .unwrap()
                })
                .collect();
            let names: Vec<&str> = (e.plan().output_planes().iter())
                .map(|p| p.name)
                .filter(|&name| name != sinew::ACT_DOT.name)
                .collect();
            let mut planes = vec![e.ctrl().to_vec()];
            for name in names {
                let mut out = vec![f32::NAN; num_envs * cols.len()];
                e.read_output(name, &mut out).unwrap();
                planes.push(out);
            }
            (planes.iter())
                .map(|p| {
                    p.chunks(cols.len())
                        .map(|row| std::array::from_fn(|j| row[at[j]]))
                        .collect()
                })
                .collect()
        };
        // Every state slot and parameter of every group, by target name.
        let states = |e: &mut CpuBackend| -> Vec<(String, Vec<f32>)> {
            let groups = e.plan().groups().to_vec();
            let mut all = Vec::new();
            for g in groups {
                let params = g.cfg.actuator.params().iter().map(|p| (p.name, true));
                for (name, param) in g.state().iter().map(|s| (s.name, false)).chain(params) {
                    let n = g.targets.len();
                    let mut out = vec![f32::NAN; num_envs * n];
                    if param {
                        e.read_param(&g.cfg.name, name, &mut out).unwrap();
                    } else {
                        e.read_state(&g.cfg.name, name, &mut out).unwrap();
                    }
                    for (k, target) in g.targets.iter().enumerate() {
                        if target == "j6" {
                            continue;
                        }
                        let column = out.iter().skip(k).step_by(n).copied().collect();
                        all.push((format!("{}: {name} {target}", g.cfg.name), column));
                    }
                }
            }
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        };
        let (reference, rest) = engines.split_last_mut().unwrap();
        let want = reference.2.nonfinite_envs().unwrap().to_vec();
        let want_values = by_joint(&mut reference.2);
        let want_states = states(&mut reference.2);
        for (name, _, e) in rest {
            let values = by_joint(e);
            assert_eq!(values[0], want_values[0], "step {step}: ctrl ({name})");
            assert_eq!(values, want_values, "step {step}: output planes ({name})");
            assert_eq!(states(e), want_states, "step {step}: state ({name})");
            assert_eq!(
                e.nonfinite_envs().unwrap(),
                want,
                "step {step}: non-finite envs ({name})"
            );
            for &group in delayed {
                let (mut sa, mut sb) = (
                    vec![Default::default(); num_envs],
                    vec![Default::default(); num_envs],
                );
                e.read_delay_states(group, &mut sa).unwrap();
                reference.2.read_delay_states(group, &mut sb).unwrap();
                assert_eq!(sa, sb, "step {step}: {group} delay states ({name})");
            }
        }
    }
}

/// A caller's own arrays are stepped without a copy: a [`sinew::CmdRef`]
/// over slices or `ndarray` views gives what the owned command gives, on
/// every backend; `step_into` and `step_into_array` write into the caller's
/// output; a strided view is an error naming the field.
#[test]
fn borrowed_commands_and_caller_outputs_match_the_owned_path() {
    use sinew::ndarray::{s, Array2, Array3};
    use sinew::{CmdRef, Error};
    let (num_envs, t) = (5, 3);
    let group = GroupCfg::new(
        "dc",
        [".*"],
        DcMotorCfg {
            stiffness: 20.0,
            damping: 0.5,
            effort_limit: 10.0,
            saturation_effort: 12.0,
            velocity_limit: 8.0,
        },
    )
    .with_delay(DelayCfg::new(0, 2));
    let plan = Plan::new(&joints(t), vec![group], num_envs, PlanOptions::default()).unwrap();
    // The simulator's state: one (5, num_envs, t) block, as a physics engine keeps it.
    let block = Array3::from_shape_fn((5, num_envs, t), |(f, e, j)| {
        ((f * 31 + e * 7 + j) as f32 * 0.37).sin()
    });
    let views = [0, 1, 2, 3, 4].map(|f| block.slice(s![f, .., ..]));
    for (name, make, _) in backends() {
        let (mut owned, mut borrowed) = (make(plan.clone()), make(plan.clone()));
        let mut cmd = ActuatorCmd::zeros(num_envs, t);
        for (dst, view) in cmd.arrays_mut().iter_mut().zip(&views) {
            dst.assign(view);
        }
        let view = CmdRef::from_arrays(views).unwrap();
        let slices = CmdRef::new(num_envs, t, view.fields()).unwrap();
        let mut out = Array2::<f32>::from_elem((num_envs, t), f32::NAN);
        for _ in 0..3 {
            owned.step(&cmd).unwrap();
            borrowed.step_into_array(&slices, out.view_mut()).unwrap();
            assert_eq!(owned.ctrl_array().unwrap(), out, "[{name}]");
        }
        let mut flat = vec![f32::NAN; num_envs * t];
        owned.step_into(&view, &mut flat).unwrap();
        borrowed.step(&view).unwrap();
        assert_eq!(
            borrowed.ctrl_array().unwrap().as_slice().unwrap(),
            &flat[..],
            "[{name}]"
        );
    }
    // A transposed view is not row-major: no silent copy, an error.
    let transposed = block.slice(s![3, .., ..]).reversed_axes();
    let square = Array2::<f32>::zeros((t, num_envs));
    let err = CmdRef::from_arrays([
        square.view(),
        square.view(),
        square.view(),
        transposed,
        square.view(),
    ])
    .unwrap_err();
    assert_eq!(err, Error::CmdLayout { field: "pos" });
    let err = CmdRef::new(
        num_envs,
        t,
        [&[0.0; 15], &[0.0; 15], &[0.0; 14], &[0.0; 15], &[0.0; 15]],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::CmdShape {
                field: "effort_target",
                ..
            }
        ),
        "{err}"
    );
}

/// `par_rows_mut` hands each env's rows of every table to its `op` once, in
/// parts of whole rows that tile the envs in order (every part but the last
/// a multiple of 16 envs, as the CPU step splits them): at each size of
/// step, with the pool's workers spinning or asleep, on every backend
/// through `Engine`. A tiny step's rows go as one part on the calling
/// thread. A nested call, a panicking `op` and a table that is not whole
/// rows leave the engine stepping as before.
#[test]
fn par_rows_mut_hands_out_every_env_row_once_in_parts_of_whole_rows() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::Mutex;
    let robot = joints(12);
    let pd = IdealPdCfg {
        stiffness: 20.0,
        damping: 0.5,
        effort_limit: 50.0,
    };
    let groups = || vec![GroupCfg::new("pd", [".*"], pd)];
    let options = PlanOptions::default;
    // Tiny, small, placed and large for 12 PD joints (`SERIAL_WORK` and
    // its kin in sinew-cpu), none a multiple of 16 envs.
    for num_envs in [250, 1000, 4000, 16000] {
        let mut engines = vec![Engine::cpu(&robot, groups(), num_envs, options()).unwrap()];
        if crate::support::gpu().is_some() {
            engines.push(Engine::gpu(&robot, groups(), num_envs, options()).unwrap());
        }
        for mut engine in engines {
            let name = format!("{num_envs} envs, {}", engine.description());
            for awake in [true, false] {
                if awake {
                    CpuBackend::install(|| ());
                } else {
                    std::thread::sleep(CpuBackend::spin_wait() + Duration::from_micros(100));
                }
                let mut cmd = ActuatorCmd::zeros(num_envs, 12);
                let (mut narrow, mut empty) = (vec![0.0f32; num_envs * 3], Vec::<f32>::new());
                let [pt, ..] = cmd.fields_mut();
                let parts = Mutex::new(Vec::new());
                let caller = std::thread::current().id();
                engine
                    .par_rows_mut(
                        [pt, &mut narrow, &mut empty],
                        |envs, [pt, narrow, empty]| {
                            assert_eq!((pt.len(), narrow.len()), (12 * envs.len(), 3 * envs.len()));
                            assert!(empty.is_empty());
                            for (env, (pt, narrow)) in envs
                                .clone()
                                .zip(pt.chunks_mut(12).zip(narrow.chunks_mut(3)))
                            {
                                pt.iter_mut().for_each(|v| *v += 1e-4 * env as f32);
                                narrow.iter_mut().for_each(|v| *v += env as f32);
                            }
                            let here = std::thread::current().id() == caller;
                            parts.lock().unwrap().push((envs, here));
                        },
                    )
                    .unwrap();
                let mut parts = parts.into_inner().unwrap();
                parts.sort_by_key(|(envs, _)| envs.start);
                let ends: Vec<usize> = parts.iter().map(|(envs, _)| envs.end).collect();
                let starts: Vec<usize> = parts.iter().map(|(envs, _)| envs.start).collect();
                assert_eq!(starts[0], 0, "{name}");
                assert_eq!(
                    starts[1..],
                    ends[..ends.len() - 1],
                    "{name}: parts tile the envs"
                );
                assert_eq!(ends.last(), Some(&num_envs), "{name}");
                for (envs, _) in &parts[..parts.len() - 1] {
                    assert!(envs.len().is_multiple_of(16), "{name}: {envs:?}");
                }
                if num_envs == 250 && engine.description().starts_with("cpu") {
                    assert_eq!(parts, [(0..250, true)], "{name}: a tiny step's rows");
                }
                for env in 0..num_envs {
                    let want = 1e-4 * env as f32;
                    assert_eq!(cmd.position_target[env * 12..][..12], [want; 12], "{name}");
                    assert_eq!(narrow[env * 3..][..3], [env as f32; 3], "{name}");
                }
                engine.step(&cmd).unwrap();
                let ctrl = engine.ctrl_array().unwrap();
                let last = 20.0 * (1e-4 * (num_envs - 1) as f32);
                approx::assert_relative_eq!(ctrl[[num_envs - 1, 11]], last, max_relative = 1e-6);
            }

            // A nested call runs whole, on its thread.
            let mut outer = vec![0.0f32; num_envs];
            let inner_rows = Mutex::new(0);
            engine
                .par_rows_mut([&mut outer], |envs, [outer]| {
                    outer.fill(1.0);
                    if envs.start == 0 {
                        let mut inner = vec![0.0f32; 2 * num_envs];
                        engine
                            .par_rows_mut([&mut inner], |envs, [inner]| {
                                inner.fill(2.0);
                                *inner_rows.lock().unwrap() += envs.len();
                            })
                            .unwrap();
                        assert!(inner.iter().all(|&v| v == 2.0));
                    }
                })
                .unwrap();
            assert!(outer.iter().all(|&v| v == 1.0));
            assert_eq!(inner_rows.into_inner().unwrap(), num_envs);

            // A panic in `op` comes back here, and the engine steps on.
            let mut rows = vec![0.0f32; num_envs * 12];
            let panicked = catch_unwind(AssertUnwindSafe(|| {
                engine.par_rows_mut([&mut rows], |envs, _| {
                    assert!(envs.end < num_envs, "the last part's op panics");
                })
            }));
            assert!(panicked.is_err(), "{name}");

            // A table that is not whole rows: refused, and `op` not run.
            let (mut whole, mut torn) = (vec![0.0f32; num_envs], vec![0.0f32; num_envs * 3 + 1]);
            let err = engine
                .par_rows_mut([&mut whole, &mut torn], |_, _| panic!("op ran"))
                .unwrap_err();
            assert_eq!(
                err,
                sinew::Error::RowsShape {
                    table: 1,
                    got: num_envs * 3 + 1,
                    num_envs
                }
            );
            let mut cmd = ActuatorCmd::zeros(num_envs, 12);
            cmd.position_target.fill(0.1);
            engine.step(&cmd).unwrap();
            let ctrl = engine.ctrl_array().unwrap();
            for &tau in &ctrl {
                approx::assert_relative_eq!(tau, 2.0, max_relative = 1e-6);
            }
        }
    }
}
