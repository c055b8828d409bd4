//! Property tests over random batches (proptest, named ranges).

use proptest::prelude::*;
use sinew::{
    ActuatorCmd, Backend, BuiltinPositionCfg, DcMotorCfg, DelayCfg, EnvIds, GroupCfg, IdealPdCfg,
    Plan, PlanOptions, RemotizedPdCfg,
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

/// Isaac Lab's Spot knee `joint_parameter_lookup` (data collected by the
/// Boston Dynamics AI Institute; rows `[angle rad, transmission ratio, max
/// torque N·m]`, 101 rows on a 0.025458 rad grid).
#[allow(
    clippy::excessive_precision,
    reason = "Isaac Lab's table, digits as published"
)]
const SPOT_KNEE_LOOKUP: [[f32; 3]; 101] = [
    [-2.792900, -24.776718, 37.165077],
    [-2.767442, -26.290108, 39.435162],
    [-2.741984, -27.793369, 41.690054],
    [-2.716526, -29.285997, 43.928996],
    [-2.691068, -30.767536, 46.151304],
    [-2.665610, -32.237423, 48.356134],
    [-2.640152, -33.695168, 50.542751],
    [-2.614694, -35.140221, 52.710331],
    [-2.589236, -36.572052, 54.858078],
    [-2.563778, -37.990086, 56.985128],
    [-2.538320, -39.393730, 59.090595],
    [-2.512862, -40.782406, 61.173609],
    [-2.487404, -42.155487, 63.233231],
    [-2.461946, -43.512371, 65.268557],
    [-2.436488, -44.852371, 67.278557],
    [-2.411030, -46.174873, 69.262310],
    [-2.385572, -47.479156, 71.218735],
    [-2.360114, -48.764549, 73.146824],
    [-2.334656, -50.030334, 75.045502],
    [-2.309198, -51.275761, 76.913641],
    [-2.283740, -52.500103, 78.750154],
    [-2.258282, -53.702587, 80.000000],
    [-2.232824, -54.882442, 80.000000],
    [-2.207366, -56.038860, 80.000000],
    [-2.181908, -57.171028, 80.000000],
    [-2.156450, -58.278133, 80.000000],
    [-2.130992, -59.359314, 80.000000],
    [-2.105534, -60.413738, 80.000000],
    [-2.080076, -61.440529, 80.000000],
    [-2.054618, -62.438812, 80.000000],
    [-2.029160, -63.407692, 80.000000],
    [-2.003702, -64.346268, 80.000000],
    [-1.978244, -65.253670, 80.000000],
    [-1.952786, -66.128944, 80.000000],
    [-1.927328, -66.971176, 80.000000],
    [-1.901870, -67.779457, 80.000000],
    [-1.876412, -68.552864, 80.000000],
    [-1.850954, -69.290451, 80.000000],
    [-1.825496, -69.991325, 80.000000],
    [-1.800038, -70.654541, 80.000000],
    [-1.774580, -71.279190, 80.000000],
    [-1.749122, -71.864319, 80.000000],
    [-1.723664, -72.409088, 80.000000],
    [-1.698206, -72.912567, 80.000000],
    [-1.672748, -73.373871, 80.000000],
    [-1.647290, -73.792130, 80.000000],
    [-1.621832, -74.166512, 80.000000],
    [-1.596374, -74.496147, 80.000000],
    [-1.570916, -74.780251, 80.000000],
    [-1.545458, -75.017998, 80.000000],
    [-1.520000, -75.208656, 80.000000],
    [-1.494542, -75.351448, 80.000000],
    [-1.469084, -75.445686, 80.000000],
    [-1.443626, -75.490677, 80.000000],
    [-1.418168, -75.485771, 80.000000],
    [-1.392710, -75.430344, 80.000000],
    [-1.367252, -75.323830, 80.000000],
    [-1.341794, -75.165688, 80.000000],
    [-1.316336, -74.955406, 80.000000],
    [-1.290878, -74.692551, 80.000000],
    [-1.265420, -74.376694, 80.000000],
    [-1.239962, -74.007477, 80.000000],
    [-1.214504, -73.584579, 80.000000],
    [-1.189046, -73.107742, 80.000000],
    [-1.163588, -72.576752, 80.000000],
    [-1.138130, -71.991455, 80.000000],
    [-1.112672, -71.351707, 80.000000],
    [-1.087214, -70.657486, 80.000000],
    [-1.061756, -69.908813, 80.000000],
    [-1.036298, -69.105721, 80.000000],
    [-1.010840, -68.248337, 80.000000],
    [-0.985382, -67.336861, 80.000000],
    [-0.959924, -66.371513, 80.000000],
    [-0.934466, -65.352615, 80.000000],
    [-0.909008, -64.280533, 80.000000],
    [-0.883550, -63.155693, 80.000000],
    [-0.858092, -61.978588, 80.000000],
    [-0.832634, -60.749775, 80.000000],
    [-0.807176, -59.469845, 80.000000],
    [-0.781718, -58.139503, 80.000000],
    [-0.756260, -56.759487, 80.000000],
    [-0.730802, -55.330616, 80.000000],
    [-0.705344, -53.853729, 80.000000],
    [-0.679886, -52.329796, 78.494694],
    [-0.654428, -50.759762, 76.139643],
    [-0.628970, -49.144699, 73.717049],
    [-0.603512, -47.485737, 71.228605],
    [-0.578054, -45.784004, 68.676006],
    [-0.552596, -44.040764, 66.061146],
    [-0.527138, -42.257267, 63.385900],
    [-0.501680, -40.434883, 60.652325],
    [-0.476222, -38.574947, 57.862421],
    [-0.450764, -36.678982, 55.018473],
    [-0.425306, -34.748432, 52.122648],
    [-0.399848, -32.784836, 49.177254],
    [-0.374390, -30.789810, 46.184715],
    [-0.348932, -28.764952, 43.147428],
    [-0.323474, -26.711969, 40.067954],
    [-0.298016, -24.632576, 36.948864],
    [-0.272558, -22.528547, 33.792821],
    [-0.247100, -20.401667, 30.602500],
];

/// Isaac Lab's `LinearInterpolation` over `table` written out in f64 from
/// its definition: `n = #{x_i < q}`, rows `max(n−1, 0)` and `min(n, K−1)`,
/// weight 0 when they coincide.
fn isaac_interpolation(table: &[[f32; 3]], q: f64) -> f64 {
    let k = table.len();
    let n = table.iter().filter(|r| f64::from(r[0]) < q).count();
    let (a, b) = (n.saturating_sub(1), n.min(k - 1));
    let (xa, xb) = (f64::from(table[a][0]), f64::from(table[b][0]));
    let (ya, yb) = (f64::from(table[a][2]), f64::from(table[b][2]));
    let w = if a == b { 0.0 } else { (q - xa) / (xb - xa) };
    ya + w * (yb - ya)
}

/// Every backend's remotized PD over `table` (kp per env, kd 2) at
/// `cmd`, against Isaac Lab's rule in f64 (so also against each other);
/// returns how many (env, target)s the table's limit clamped.
fn remotized_against_isaac(table: &[[f32; 3]], cmd: &ActuatorCmd) -> usize {
    let group = GroupCfg::new(
        "knee",
        [".*"],
        RemotizedPdCfg::new(400.0, 2.0, table.to_vec()),
    );
    let kp_per_env: Vec<f32> = (0..NUM_ENVS).map(|e| 100.0 + 150.0 * e as f32).collect();
    let per_env_kp = |b: &mut dyn Backend| {
        b.set_param(
            "knee",
            "kp",
            EnvIds::All,
            sinew::Values::PerEnv(&kp_per_env),
        )
        .unwrap()
    };
    let mut saturated = 0;
    for ctrl in stepped(group, cmd, per_env_kp) {
        for (i, &tau) in ctrl.iter().enumerate() {
            let (q, kp) = (
                f64::from(cmd.pos[i]),
                f64::from(kp_per_env[i / NUM_TARGETS]),
            );
            let pd =
                kp * f64::from(cmd.position_target[i] - cmd.pos[i]) - 2.0 * f64::from(cmd.vel[i]);
            let limit = isaac_interpolation(table, q);
            saturated += usize::from(pd.abs() > limit);
            let expected = pd.clamp(-limit, limit);
            approx::assert_relative_eq!(
                f64::from(tau),
                expected,
                epsilon = 1e-4,
                max_relative = 1e-5
            );
        }
    }
    saturated
}

#[test]
fn remotized_pd_clamps_by_the_spot_knee_table() {
    // The table's own figures: flat at 80 N·m from -2.258 to -0.705 rad,
    // 60.47 at -0.5 and 37.19 at -0.3, the end values held outside.
    for (q, limit) in [
        (-1.0f64, 80.0),
        (-0.5, 60.47),
        (-0.3, 37.19),
        (-3.5, 37.165077),
        (0.5, 30.6025),
    ] {
        approx::assert_abs_diff_eq!(
            isaac_interpolation(&SPOT_KNEE_LOOKUP, q),
            limit,
            epsilon = 0.005
        );
    }
    let mut cmd = ActuatorCmd::zeros(NUM_ENVS, NUM_TARGETS);
    // Positions across and beyond the table, targets far enough to saturate
    // some (env, target)s and not others.
    let n = NUM_ENVS * NUM_TARGETS;
    for i in 0..n {
        let t = i as f32 / (n - 1) as f32;
        cmd.pos[i] = -3.2 + 3.4 * t;
        cmd.position_target[i] = cmd.pos[i] + if i % 2 == 0 { 0.5 } else { -0.01 };
        cmd.vel[i] = 0.3 - t;
    }
    let saturated = remotized_against_isaac(&SPOT_KNEE_LOOKUP, &cmd);
    assert!(saturated > 0, "no (env, target) reached the table's limit");
}

/// A table whose rows crowd towards one end (each angle half as far from
/// 0 as the one before) fits no buckets of equal width: the CPU's law
/// bisects it instead, with the same rows as the rule.
#[test]
fn remotized_pd_clamps_by_a_table_too_uneven_for_buckets() {
    let table: Vec<[f32; 3]> = (0..20)
        .map(|i| [-(0.5f32.powi(i)), 0.0, 10.0 + (3 * i * i % 17) as f32])
        .collect();
    let mut cmd = ActuatorCmd::zeros(NUM_ENVS, NUM_TARGETS);
    // Positions among the crowded rows and beyond both ends.
    let n = NUM_ENVS * NUM_TARGETS;
    for i in 0..n {
        cmd.pos[i] =
            -(0.5f32.powf(i as f32 * 22.0 / n as f32)) * 1.1 + 0.05 * f32::from(i == n - 1);
        cmd.position_target[i] = cmd.pos[i] + if i % 2 == 0 { 0.5 } else { -0.001 };
        cmd.vel[i] = 0.1;
    }
    let saturated = remotized_against_isaac(&table, &cmd);
    assert!(saturated > 0, "no (env, target) reached the table's limit");
}

/// Spot's layout, remotized-PD knees beside ideal-PD hips, on every
/// backend: the CPU's tiles run the knees' costly law over their own
/// columns alone, gathered into rows of their own (`Kind::COSTLY`), and
/// the hips' law over every column. Whether the knees' columns are one
/// stretch of 4 or of 9 (ctrl columns follow the groups), two stretches
/// (two knee groups of one table, a hip group between them), scattered
/// over the command's columns, or behind delay buffers as Spot's are, each
/// (env, joint) follows its own law with its own gains: Isaac Lab's rule in
/// f64, with different gains at every element so that a value gathered
/// from another column or env shows.
#[test]
fn remotized_knees_beside_pd_hips_follow_each_joints_own_law() {
    let (num_envs, nt) = (70, 12);
    type Layout = (&'static [(&'static str, &'static [usize])], bool);
    let layouts: [Layout; 5] = [
        (
            &[
                ("hip", &[0, 1, 2, 3, 4, 5, 6, 7]),
                ("knee", &[8, 9, 10, 11]),
            ],
            false,
        ),
        (
            &[
                ("hip", &[0, 1, 2, 3, 4, 5, 6, 7]),
                ("knee", &[8, 9, 10, 11]),
            ],
            true,
        ),
        (
            &[
                ("knee", &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
                ("hip", &[9, 10, 11]),
            ],
            false,
        ),
        (
            &[
                ("knee", &[0, 1]),
                ("hip", &[2, 3, 4, 5, 6, 7, 8, 9]),
                ("knee_hind", &[10, 11]),
            ],
            false,
        ),
        (
            &[
                ("knee", &[0, 3, 4]),
                ("hip", &[1, 2, 5, 6, 7, 8, 9]),
                ("knee_hind", &[10, 11]),
            ],
            true,
        ),
    ];
    let mut cmd = ActuatorCmd::zeros(num_envs, nt);
    let n = num_envs * nt;
    for i in 0..n {
        let t = ((i * 37) % n) as f32 / (n - 1) as f32;
        cmd.pos[i] = -3.2 + 3.4 * t;
        cmd.position_target[i] = cmd.pos[i] + if i % 3 == 0 { 0.5 } else { -0.01 };
        cmd.velocity_target[i] = 0.2 - 0.1 * t;
        cmd.vel[i] = 0.3 - t;
        cmd.effort_target[i] = (i % 7) as f32 - 3.0;
    }
    // Gains of every (env, joint) their own.
    let gains = |knee: bool, e: usize, j: usize| match knee {
        true => (
            100.0 + 7.0 * e as f32 + 30.0 * j as f32,
            1.0 + 0.1 * j as f32,
        ),
        false => (50.0 + e as f32 + 3.0 * j as f32, 0.5 + 0.01 * e as f32),
    };
    for (groups, delayed) in layouts {
        let cfg = |(name, joints): (&str, &[usize])| {
            let targets = joints.iter().map(|j| format!("j{j}"));
            let group = match name.starts_with("knee") {
                true => GroupCfg::new(
                    name,
                    targets,
                    RemotizedPdCfg::new(60.0, 1.5, SPOT_KNEE_LOOKUP.to_vec()),
                ),
                false => GroupCfg::new(
                    name,
                    targets,
                    IdealPdCfg::new(60.0, 1.5).with_effort_limit(45.0),
                ),
            };
            match delayed {
                true => group.with_delay(DelayCfg::constant(2)),
                false => group,
            }
        };
        let cfgs = groups.iter().map(|&group| cfg(group)).collect();
        let plan = Plan::new(&joints(nt), cfgs, num_envs, PlanOptions::default()).unwrap();
        for (name, make, _) in backends() {
            let mut b = make(plan.clone());
            for &(group, joints) in groups {
                for (k, param) in ["kp", "kd"].into_iter().enumerate() {
                    let values: Vec<f32> = (0..num_envs)
                        .flat_map(|e| joints.iter().map(move |&j| (e, j)))
                        .map(|(e, j)| {
                            let (kp, kd) = gains(group.starts_with("knee"), e, j);
                            [kp, kd][k]
                        })
                        .collect();
                    let values = sinew::Values::PerEnvTarget(&values);
                    b.set_param(group, param, EnvIds::All, values).unwrap();
                }
            }
            // Behind a constant delay of 2, the third step's targets are its own.
            for _ in 0..if delayed { 3 } else { 1 } {
                b.step(&cmd).unwrap();
            }
            let mut ctrl = vec![f32::NAN; n];
            b.read_ctrl(&mut ctrl).unwrap();
            for (k, &tau) in ctrl.iter().enumerate() {
                let (e, column) = (k / nt, &plan.ctrl_columns()[k % nt]);
                let (j, i) = (column.cmd_column, e * nt + column.cmd_column);
                let knee = plan.groups()[column.group].cfg.name.starts_with("knee");
                let (kp, kd) = gains(knee, e, j);
                let q = f64::from(cmd.pos[i]);
                let pd = f64::from(kp) * (f64::from(cmd.position_target[i]) - q)
                    + f64::from(kd) * f64::from(cmd.velocity_target[i] - cmd.vel[i])
                    + f64::from(cmd.effort_target[i]);
                let limit = match knee {
                    true => isaac_interpolation(&SPOT_KNEE_LOOKUP, q),
                    false => 45.0,
                };
                let expected = pd.clamp(-limit, limit);
                assert!(
                    approx::relative_eq!(
                        f64::from(tau),
                        expected,
                        epsilon = 1e-3,
                        max_relative = 1e-5
                    ),
                    "{name}, {groups:?}, delayed {delayed}: env {e}, joint {j}: \
                     {tau} against {expected}"
                );
            }
        }
    }
}
