//! Learned networks: Isaac Lab's MLP and LSTM actuators against torch, the
//! safetensors reader's typed errors, and the state rules (history
//! initialisation, resets, non-finite envs) on every backend.
//!
//! The mjlab LearnedMlp episodes run in `golden.rs` with the other mjlab files.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use sinew::{
    Activation, ActuatorCfg, ActuatorCmd, Dense, EnvIds, Error, GroupCfg, HistoryInit,
    LearnedMlpCfg, LstmNet, LstmNetCfg, Mlp, NetSpec, Plan, PlanOptions, Robot, Values,
};
use sinew_cli::verify::LEARNED_TOLERANCE;

use crate::support::{backends, safetensors};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/learned")
}

fn f32_rows(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("rows")
        .iter()
        .flat_map(|r| r.as_array().expect("a row").iter())
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect()
}

/// `tests/golden/learned/cases.json` (torch 2.15, `gen_learned.py`): Isaac
/// Lab's `ActuatorNetMLP` with taps [0, 2, 4] and a zero-initialized
/// history, and `ActuatorNetLSTM` (2 layers, hidden 8, a Linear head), both
/// read from the safetensors files PyTorch wrote, with partial resets.
/// Tolerance: `|Δ| ≤ 1e-5·(1 + |torch|)`.
#[test]
fn isaac_lab_learned_networks_match_torch() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "sinew-learned-golden/v1");
    let num = |v: &Value| v.as_f64().unwrap() as f32;
    let (el, sat, vlim) = (
        num(&doc["effort_limit"]),
        num(&doc["saturation_effort"]),
        num(&doc["velocity_limit"]),
    );
    let num_envs = doc["num_envs"].as_u64().unwrap() as usize;
    let robot = Robot::from_joints(["a", "b"]);
    for case in doc["cases"].as_array().unwrap() {
        let file = dir().join(case["network"].as_str().unwrap());
        let actuator: ActuatorCfg = match case["kind"].as_str().unwrap() {
            "mlp" => {
                let taps: Vec<u32> = case["taps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_u64().unwrap() as u32)
                    .collect();
                let net = Mlp::load(&file, &NetSpec::default()).unwrap();
                assert_eq!(case["history_init"], "zeros");
                LearnedMlpCfg::new(net, el, sat, vlim)
                    .with_taps(taps)
                    .with_scales(
                        num(&case["pos_scale"]),
                        num(&case["vel_scale"]),
                        num(&case["torque_scale"]),
                    )
                    .with_history_init(HistoryInit::Zeros)
                    .into()
            }
            _ => {
                let net = LstmNet::load(&file, &NetSpec::default()).unwrap();
                assert_eq!(
                    (net.layers().len(), net.hidden(), net.head().len()),
                    (2, 8, 1)
                );
                LstmNetCfg::new(net, el, sat, vlim).into()
            }
        };
        for (backend, make, _) in backends() {
            let groups = vec![GroupCfg::new("net", [".*"], actuator.clone())];
            let plan = Plan::new(&robot, groups, num_envs, PlanOptions::default()).unwrap();
            let mut b = make(plan);
            let mut ctrl = vec![0.0f32; num_envs * 2];
            let mut worst = 0.0f64;
            for (k, step) in case["steps"].as_array().unwrap().iter().enumerate() {
                let resets: Vec<u32> = step["reset"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_u64().unwrap() as u32)
                    .collect();
                if !resets.is_empty() {
                    b.reset(EnvIds::List(&resets)).unwrap();
                }
                let mut cmd = ActuatorCmd::zeros(num_envs, 2);
                cmd.position_target = f32_rows(&step["position_target"]);
                cmd.pos = f32_rows(&step["pos"]);
                cmd.vel = f32_rows(&step["vel"]);
                b.step(&cmd).unwrap();
                b.read_ctrl(&mut ctrl).unwrap();
                for (i, (&ours, want)) in ctrl.iter().zip(f32_rows(&step["expected"])).enumerate() {
                    let delta = f64::from((ours - want).abs());
                    worst = worst.max(delta);
                    assert!(
                        delta <= LEARNED_TOLERANCE * (1.0 + f64::from(want.abs())),
                        "{} [{backend}] step {k}, env {}, joint {}: sinew {ours}, torch {want}",
                        case["id"],
                        i / 2,
                        i % 2
                    );
                }
            }
            println!(
                "{} [{backend}]: worst |Δ| against torch {worst:e}",
                case["id"]
            );
        }
    }
}

// ---- The safetensors reader.

const W0: [f32; 12] = [
    0.5, -0.25, 0.125, 1.0, -0.5, 0.75, 0.25, -1.0, 0.3, 0.2, -0.1, 0.6,
];
const B0: [f32; 3] = [0.1, -0.2, 0.05];
const W2: [f32; 3] = [1.5, -0.5, 2.0];
const B2: [f32; 1] = [0.25];

/// A 4 → 3 (tanh) → 1 network as `nn.Sequential(Linear, Tanh, Linear)` saves it.
fn sequential(
    edit: impl Fn(&mut Vec<(&'static str, Vec<usize>, Vec<f32>)>),
    metadata: &[(&str, &str)],
) -> Result<Mlp, Error> {
    let mut tensors = vec![
        ("0.weight", vec![3, 4], W0.to_vec()),
        ("0.bias", vec![3], B0.to_vec()),
        ("2.weight", vec![1, 3], W2.to_vec()),
        ("2.bias", vec![1], B2.to_vec()),
    ];
    edit(&mut tensors);
    let refs: Vec<(&str, &[usize], &[f32])> = tensors
        .iter()
        .map(|(n, s, v)| (*n, s.as_slice(), v.as_slice()))
        .collect();
    Mlp::from_safetensors(
        &safetensors(&refs, metadata),
        "net.safetensors",
        &NetSpec::default(),
    )
}

const ACTIVATIONS: (&str, &str) = ("activations", "tanh,identity");

#[test]
fn a_pytorch_sequential_file_reads_as_its_layers() {
    let net = sequential(|_| {}, &[ACTIVATIONS]).unwrap();
    let want = Mlp::new(
        "code",
        vec![
            Dense::new("0", 3, 4, W0.to_vec(), B0.to_vec(), Activation::Tanh),
            Dense::new("2", 1, 3, W2.to_vec(), B2.to_vec(), Activation::Identity),
        ],
    )
    .unwrap();
    assert_eq!(net.layers(), want.layers());
    let x = [0.3, -0.7, 1.1, 0.05];
    assert_eq!(net.forward(&x), want.forward(&x));
    // An explicit layer list in the metadata, and activations given beside
    // the file (a scenario's TOML) override the metadata.
    let spec = NetSpec {
        layers: None,
        activations: Some(vec![Activation::Relu, Activation::Identity]),
    };
    let refs: Vec<(&str, &[usize], &[f32])> = vec![
        ("fc_out.weight", &[1, 3], &W2),
        ("fc_out.bias", &[1], &B2),
        ("fc_in.weight", &[3, 4], &W0),
        ("fc_in.bias", &[3], &B0),
    ];
    let bytes = safetensors(&refs, &[("layers", "fc_in, fc_out"), ACTIVATIONS]);
    let net = Mlp::from_safetensors(&bytes, "named.safetensors", &spec).unwrap();
    assert_eq!(net.layers()[0].activation, Activation::Relu);
    assert_eq!(net.layers()[1].name, "fc_out");
}

/// Asserts an `InvalidNetwork` error naming `tensor`, whose message holds `needle`.
fn assert_names(result: Result<Mlp, Error>, tensor: &str, needle: &str) {
    match result {
        Err(e @ Error::InvalidNetwork { .. }) => {
            let Error::InvalidNetwork { tensor: got, .. } = &e else {
                unreachable!()
            };
            let text = e.to_string();
            assert_eq!(got, tensor, "{text}");
            assert!(text.contains(needle), "`{needle}` not in: {text}");
        }
        other => panic!("expected an InvalidNetwork error naming `{tensor}`, got {other:?}"),
    }
}

#[test]
fn bad_weight_files_are_typed_errors_naming_the_tensor() {
    let drop = |name: &'static str| {
        move |t: &mut Vec<(&'static str, Vec<usize>, Vec<f32>)>| t.retain(|x| x.0 != name)
    };
    assert_names(
        sequential(drop("2.bias"), &[ACTIVATIONS]),
        "2.bias",
        "missing",
    );
    assert_names(
        sequential(
            |t| t[1] = ("0.bias", vec![2], vec![0.0, 0.0]),
            &[ACTIVATIONS],
        ),
        "0.bias",
        "[2]",
    );
    assert_names(
        sequential(
            |t| t[2] = ("2.weight", vec![1, 2], vec![1.0, 1.0]),
            &[ACTIVATIONS],
        ),
        "2.weight",
        "takes 2 inputs but the layer before gives 3",
    );
    assert_names(
        sequential(|t| t[0].2[5] = f32::NAN, &[ACTIVATIONS]),
        "0.weight",
        "element 5 is NaN",
    );
    assert_names(
        sequential(
            |t| {
                t[2] = ("2.weight", vec![2, 3], vec![1.0; 6]);
                t[3] = ("2.bias", vec![2], vec![0.0; 2]);
            },
            &[ACTIVATIONS],
        ),
        "2.weight",
        "the last layer gives 2 outputs",
    );
    assert_names(
        sequential(|_| {}, &[("activations", "tanh,gelu")]),
        "(metadata activations)",
        "unknown activation `gelu`",
    );
    assert_names(sequential(|_| {}, &[]), "(metadata activations)", "missing");
    assert_names(
        sequential(
            |t| t.push(("norm.scale", vec![3], vec![1.0; 3])),
            &[ACTIVATIONS],
        ),
        "norm.scale",
        "belongs to no layer",
    );
    assert_names(
        sequential(|_| {}, &[("layers", "2,0"), ACTIVATIONS]),
        "0.weight",
        "takes 4 inputs but the layer before gives 1",
    );
    assert_names(
        Mlp::from_safetensors(b"not a tensor file", "junk.bin", &NetSpec::default()),
        "(file)",
        "junk.bin",
    );
    assert_names(
        Mlp::load("/no/such/net.safetensors", &NetSpec::default()),
        "(file)",
        "cannot read",
    );
    // The input width must be 2 × taps; the plan says which tensor and group.
    let net = sequential(|_| {}, &[ACTIVATIONS]).unwrap();
    let robot = Robot::from_joints(["a"]);
    let cfg = LearnedMlpCfg::new(net, 10.0, 20.0, 30.0).with_history_length(3);
    let err = Plan::new(
        &robot,
        vec![GroupCfg::new("leg", ["a"], cfg)],
        1,
        PlanOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidNetwork { tensor, .. } if tensor == "0.weight"),
        "{err:?}"
    );
    assert!(err.to_string().contains("group `leg`") && err.to_string().contains("2·3 = 6"));
    // An LSTM file missing one of torch's tensors.
    let bytes = std::fs::read(dir().join("lstm.safetensors")).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let kept: Vec<(String, Vec<usize>, Vec<f32>)> = file
        .tensors()
        .into_iter()
        .filter(|(n, _)| n != "lstm.bias_hh_l1")
        .map(|(n, v)| {
            let values = v
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            (n, v.shape().to_vec(), values)
        })
        .collect();
    let refs: Vec<(&str, &[usize], &[f32])> = kept
        .iter()
        .map(|(n, s, v)| (n.as_str(), s.as_slice(), v.as_slice()))
        .collect();
    let err = LstmNet::from_safetensors(&safetensors(&refs, &[]), "lstm", &NetSpec::default())
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidNetwork { tensor, .. } if tensor == "lstm.bias_hh_l1"),
        "{err:?}"
    );
}

// ---- State rules, on every backend.

/// Σ of the first `n` inputs (the position-error half), for history checks.
fn sum_net(n: usize) -> Arc<Mlp> {
    let mut weight = vec![0.0; 2 * n];
    weight[..n].fill(1.0);
    Arc::new(
        Mlp::new(
            "sum",
            vec![Dense::new(
                "0",
                1,
                2 * n,
                weight,
                vec![0.0],
                Activation::Identity,
            )],
        )
        .unwrap(),
    )
}

#[test]
fn histories_backfill_or_start_from_zeros_after_a_reset() {
    let robot = Robot::from_joints(["a"]);
    for (backend, make, _) in backends() {
        for (init, want) in [
            // e = 1, 2, then a reset and e = 5: taps 0..3 summed.
            (HistoryInit::Backfill, [3.0, 4.0, 15.0]),
            (HistoryInit::Zeros, [1.0, 3.0, 5.0]),
        ] {
            let cfg = LearnedMlpCfg::new(sum_net(3), 1e3, 1e4, 1e3)
                .with_history_length(3)
                .with_history_init(init);
            let plan = Plan::new(
                &robot,
                vec![GroupCfg::new("m", ["a"], cfg)],
                2,
                PlanOptions::default(),
            )
            .unwrap();
            let mut b = make(plan);
            let mut got = Vec::new();
            for (k, e) in [1.0, 2.0, 5.0].into_iter().enumerate() {
                if k == 2 {
                    b.reset(EnvIds::List(&[1])).unwrap();
                }
                let mut cmd = ActuatorCmd::zeros(2, 1);
                cmd.position_target.fill(e);
                b.step(&cmd).unwrap();
                let mut ctrl = [0.0; 2];
                b.read_ctrl(&mut ctrl).unwrap();
                got.push(ctrl[1]);
                if k == 2 {
                    // Env 0 was not reset: 5 + 2 + 1.
                    assert_eq!(ctrl[0], 8.0, "[{backend}] {init:?}");
                }
            }
            assert_eq!(got, want, "[{backend}] {init:?}");
        }
    }
}

/// A learned group's history and recurrent state are its state slots:
/// read, written and reset by name like any kind's.
#[test]
fn learned_state_is_read_and_written_by_name() {
    let robot = Robot::from_joints(["a"]);
    for (backend, make, tol) in backends() {
        // An MLP over taps 0..3 summing the errors: state `fresh`, then the
        // errors and velocities one and two steps back.
        let cfg = LearnedMlpCfg::new(sum_net(3), 1e3, 1e4, 1e3).with_history_length(3);
        let groups = vec![GroupCfg::new("m", ["a"], cfg)];
        let mut b = make(Plan::new(&robot, groups, 2, PlanOptions::default()).unwrap());
        let names: Vec<&str> = b.plan().groups()[0]
            .state()
            .iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["fresh", "error_1", "error_2", "vel_1", "vel_2"]);
        let read = |b: &mut Box<dyn sinew::Backend>, name: &str| {
            let mut out = [f32::NAN; 2];
            b.read_state("m", name, &mut out).unwrap();
            out
        };
        assert_eq!(read(&mut b, "fresh"), [1.0, 1.0], "[{backend}]");
        let mut cmd = ActuatorCmd::zeros(2, 1);
        cmd.position_target.fill(1.0);
        cmd.vel.fill(0.5);
        b.step(&cmd).unwrap();
        // The first frame backfilled the history.
        assert_eq!(read(&mut b, "fresh"), [0.0, 0.0], "[{backend}]");
        assert_eq!(read(&mut b, "error_2"), [1.0, 1.0], "[{backend}]");
        assert_eq!(read(&mut b, "vel_1"), [0.5, 0.5], "[{backend}]");
        // Env 1's last error, rewritten: e = 2, then 10 and 1 back.
        b.set_state("m", "error_1", EnvIds::List(&[1]), Values::Scalar(10.0))
            .unwrap();
        cmd.position_target.fill(2.0);
        b.step(&cmd).unwrap();
        let mut ctrl = [0.0; 2];
        b.read_ctrl(&mut ctrl).unwrap();
        assert_eq!(ctrl, [4.0, 13.0], "[{backend}] 2 + 1 + 1, 2 + 10 + 1");
        assert_eq!(read(&mut b, "error_2"), [1.0, 10.0], "[{backend}]");
        b.reset(EnvIds::List(&[0])).unwrap();
        assert_eq!(read(&mut b, "fresh"), [1.0, 0.0], "[{backend}]");
        assert_eq!(read(&mut b, "error_1"), [0.0, 2.0], "[{backend}]");

        // An LSTM: its hidden and cell states, read from one backend and
        // written into a fresh one, carry the whole recurrence.
        let cfg = LstmNetCfg::new(small_lstm(), 50.0, 80.0, 30.0);
        let plan = Plan::new(
            &robot,
            vec![GroupCfg::new("l", ["a"], cfg)],
            2,
            PlanOptions::default(),
        )
        .unwrap();
        let names: Vec<&str> = plan.groups()[0].state().iter().map(|s| s.name).collect();
        assert_eq!(names, ["h0_0", "h0_1", "c0_0", "c0_1"]);
        let (mut first, mut second) = (make(plan.clone()), make(plan));
        let mut cmd = ActuatorCmd::zeros(2, 1);
        for (k, target) in [0.4, -0.7, 0.2].into_iter().enumerate() {
            cmd.position_target.fill(target);
            cmd.vel.fill(0.3 * k as f32);
            first.step(&cmd).unwrap();
        }
        for name in &names {
            let mut values = [f32::NAN; 2];
            first.read_state("l", name, &mut values).unwrap();
            assert!(values.iter().all(|v| *v != 0.0), "[{backend}] {name}");
            (second.set_state("l", name, EnvIds::All, Values::PerEnv(&values))).unwrap();
        }
        cmd.position_target.fill(0.9);
        let (mut want, mut got) = ([0.0; 2], [0.0; 2]);
        for (b, out) in [(&mut first, &mut want), (&mut second, &mut got)] {
            b.step(&cmd).unwrap();
            b.read_ctrl(out).unwrap();
        }
        assert!(
            want.iter().zip(&got).all(|(w, g)| tol.accepts(*g, *w)),
            "[{backend}] {got:?} vs {want:?}"
        );
        // A reset zeroes them.
        first.reset(EnvIds::All).unwrap();
        let mut h = [f32::NAN; 2];
        first.read_state("l", "c0_1", &mut h).unwrap();
        assert_eq!(h, [0.0, 0.0], "[{backend}]");
    }
}

/// A tiny LSTM: 1 layer, hidden 2, a Linear head.
fn small_lstm() -> Arc<LstmNet> {
    let layer = sinew::LstmLayer {
        name: ("lstm.".into(), "_l0".into()),
        inputs: 2,
        hidden: 2,
        weight_ih: (0..16).map(|i| (i as f32 * 0.37).sin()).collect(),
        weight_hh: (0..16).map(|i| (i as f32 * 0.53).cos() * 0.8).collect(),
        bias_ih: (0..8).map(|i| 0.1 * i as f32 - 0.3).collect(),
        bias_hh: vec![0.05; 8],
    };
    let head = Dense::new(
        "head",
        1,
        2,
        vec![2.0, -1.5],
        vec![0.1],
        Activation::Identity,
    );
    Arc::new(LstmNet::new("small", vec![layer], vec![head]).unwrap())
}

/// `10·e(t−1)` for finite errors, NaN when `e(t)` is infinite:
/// `(x₀ + x₁) + (−x₀)` over the scaled error taps.
fn nan_prone() -> Arc<Mlp> {
    let layers = vec![
        Dense::new(
            "0",
            2,
            4,
            vec![1.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0],
            vec![0.0; 2],
            Activation::Identity,
        ),
        Dense::new("1", 1, 2, vec![1.0, 1.0], vec![0.0], Activation::Identity),
    ];
    Arc::new(Mlp::new("nan-prone", layers).unwrap())
}

/// An env zeroed for a non-finite input or output keeps its history and
/// recurrent state as they were: its later efforts equal those of a twin
/// that never saw the bad step. Other envs are untouched.
#[test]
fn a_zeroed_env_keeps_its_learned_state() {
    let robot = Robot::from_joints(["a", "b"]);
    let groups = || {
        vec![
            GroupCfg::new(
                "mlp",
                ["a"],
                LearnedMlpCfg::new(nan_prone(), 50.0, 80.0, 30.0)
                    .with_taps([0, 1])
                    .with_scales(10.0, 1.0, 1.0),
            ),
            GroupCfg::new(
                "lstm",
                ["b"],
                LstmNetCfg::new(small_lstm(), 50.0, 80.0, 30.0),
            ),
        ]
    };
    let step_cmd = |k: usize| {
        let mut cmd = ActuatorCmd::zeros(3, 2);
        for (i, v) in cmd.position_target.iter_mut().enumerate() {
            *v = ((k * 7 + i) as f32 * 0.61).sin();
        }
        for (i, v) in cmd.vel.iter_mut().enumerate() {
            *v = ((k * 5 + i) as f32 * 0.83).cos() * 3.0;
        }
        cmd
    };
    for (backend, make, _) in backends() {
        let plan = || Plan::new(&robot, groups(), 3, PlanOptions::default()).unwrap();
        let (mut a, mut twin) = (make(plan()), make(plan()));
        let mut bad = step_cmd(99);
        bad.position_target[2] = 3e38; // env 1: 10·e overflows, the MLP gives NaN
        bad.vel[5] = f32::NAN; // env 2: a NaN input
        let mut ctrl = vec![0.0; 6];
        a.step(&step_cmd(0)).unwrap();
        twin.step(&step_cmd(0)).unwrap();
        a.step(&bad).unwrap();
        assert_eq!(a.nonfinite_envs().unwrap(), [1, 2], "[{backend}]");
        a.read_ctrl(&mut ctrl).unwrap();
        assert_eq!(&ctrl[2..], [0.0; 4], "[{backend}]");
        for k in 1..4 {
            a.step(&step_cmd(k)).unwrap();
            twin.step(&step_cmd(k)).unwrap();
            let mut want = vec![0.0; 6];
            a.read_ctrl(&mut ctrl).unwrap();
            twin.read_ctrl(&mut want).unwrap();
            assert_eq!(&ctrl[2..], &want[2..], "[{backend}] step {k}");
            assert!(ctrl.iter().all(|v| v.is_finite() && *v != 0.0));
        }
    }
}

/// A network of `layers` (`[outputs, inputs, activation]` each) with
/// weights of either sign drawn from `seed`.
fn drawn_mlp(layers: &[(usize, usize, Activation)], seed: u32) -> Arc<Mlp> {
    let mut s = seed;
    let mut draw = move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (s >> 8) as f32 / (1u32 << 24) as f32 * 1.6 - 0.8
    };
    let dense = layers
        .iter()
        .enumerate()
        .map(|(i, &(outputs, inputs, activation))| {
            let weight = (0..outputs * inputs).map(|_| draw()).collect();
            let bias = (0..outputs).map(|_| draw()).collect();
            Dense::new(i.to_string(), outputs, inputs, weight, bias, activation)
        })
        .collect();
    Arc::new(Mlp::new("drawn", dense).unwrap())
}

/// A 2-layer LSTM of hidden 5 with a Linear head, weights from `seed`.
fn drawn_lstm(seed: u32) -> Arc<LstmNet> {
    drawn_lstm_of(2, 5, seed)
}

/// An LSTM of `layers` layers of hidden `hidden` with a Linear head, weights
/// from `seed`.
pub(crate) fn drawn_lstm_of(layers: usize, hidden: usize, seed: u32) -> Arc<LstmNet> {
    let value = |i: usize, k: u32| ((i as f32 + 0.3) * (0.37 + 0.11 * (seed + k) as f32)).sin();
    let gates = 4 * hidden;
    // Recurrent weights shrink with the width, so that wide cells do not all saturate.
    let recurrent = 3.0 / hidden as f32;
    let layer = |l: usize, inputs: usize| sinew::LstmLayer {
        name: ("lstm.".into(), format!("_l{l}")),
        inputs,
        hidden,
        weight_ih: (0..gates * inputs)
            .map(|i| value(i, 1 + l as u32))
            .collect(),
        weight_hh: (0..gates * hidden)
            .map(|i| recurrent * value(i, 3 + l as u32))
            .collect(),
        bias_ih: (0..gates).map(|i| 0.2 * value(i, 5)).collect(),
        bias_hh: (0..gates).map(|i| 0.1 * value(i, 7)).collect(),
    };
    let head = Dense::new(
        "head",
        1,
        hidden,
        (0..hidden).map(|i| 2.0 * value(i, 9)).collect(),
        vec![0.1],
        Activation::Identity,
    );
    let cells = (0..layers)
        .map(|l| layer(l, if l == 0 { 2 } else { hidden }))
        .collect();
    Arc::new(LstmNet::new("drawn", cells, vec![head]).unwrap())
}

/// The GPU sizes a thread's activations to the plan's widest layer, and its
/// layers compute four outputs (or gates) at a time. Networks of widths
/// from 3 to 128 (layers whose outputs are not a multiple of four) step as
/// on the CPU, through a reset and a non-finite velocity.
#[test]
fn networks_of_every_width_match_the_cpu_on_the_gpu() {
    use sinew::{Backend, CpuBackend, WgpuBackend};
    use Activation::{Elu, Identity, Relu, Sigmoid, Softsign, Tanh};
    let Some(ctx) = crate::support::gpu() else {
        return;
    };
    let (num_envs, n) = (37, 3);
    let mlp = |layers: &[(usize, usize, Activation)], seed, taps: [u32; 3]| {
        LearnedMlpCfg::new(drawn_mlp(layers, seed), 40.0, 60.0, 20.0)
            .with_taps(taps)
            .into()
    };
    let nets: [(&str, ActuatorCfg); 5] = [
        (
            "mlp 6 → 3 → 1",
            mlp(&[(3, 6, Tanh), (1, 3, Identity)], 5, [0, 1, 2]),
        ),
        (
            "mlp 6 → 33 → 30 → 1",
            mlp(
                &[(33, 6, Softsign), (30, 33, Elu), (1, 30, Identity)],
                6,
                [0, 2, 3],
            ),
        ),
        (
            "mlp 6 → 128 → 7 → 1",
            mlp(
                &[(128, 6, Relu), (7, 128, Sigmoid), (1, 7, Identity)],
                7,
                [0, 1, 2],
            ),
        ),
        (
            "lstm hidden 13",
            LstmNetCfg::new(drawn_lstm_of(2, 13, 8), 40.0, 60.0, 20.0).into(),
        ),
        (
            "lstm hidden 128",
            LstmNetCfg::new(drawn_lstm_of(2, 128, 9), 40.0, 60.0, 20.0).into(),
        ),
    ];
    for (name, cfg) in nets {
        let plan = || {
            Plan::new(
                &crate::support::joints(n),
                vec![GroupCfg::new(
                    "net",
                    (0..n).map(|i| format!("j{i}")),
                    cfg.clone(),
                )],
                num_envs,
                PlanOptions::default(),
            )
            .unwrap()
        };
        let mut cpu = CpuBackend::new(plan());
        let mut gpu = WgpuBackend::new(&ctx, plan()).unwrap();
        for k in 0..12 {
            if k == 6 {
                for backend in [&mut cpu as &mut dyn Backend, &mut gpu] {
                    backend.reset(EnvIds::List(&[2, 30])).unwrap();
                }
            }
            let mut cmd = ActuatorCmd::zeros(num_envs, n);
            for i in 0..num_envs * n {
                let value = |f: usize| ((k * 29 + i * 5 + f * 3) as f32 * 0.219).sin();
                cmd.position_target[i] = value(0);
                cmd.pos[i] = 0.5 * value(1);
                cmd.vel[i] = 20.0 * value(2);
            }
            if k == 4 {
                cmd.vel[11 * n + 1] = f32::NAN;
            }
            let (mut want, mut got) = (vec![0.0; num_envs * n], vec![0.0; num_envs * n]);
            for (backend, out) in [
                (&mut cpu as &mut dyn Backend, &mut want),
                (&mut gpu, &mut got),
            ] {
                backend.step(&cmd).unwrap();
                backend.read_ctrl(out).unwrap();
            }
            for (i, (&w, &g)) in want.iter().zip(&got).enumerate() {
                assert!(
                    crate::support::Tolerance::GPU.accepts(w, g),
                    "{name}, step {k}, element {i}: cpu {w}, gpu {g}"
                );
            }
        }
    }
}

/// The CPU runs a learned group that drives every joint, in command order,
/// over a tile's envs at once, one (env, joint) per lane; any other plan
/// runs it env by env, one joint per lane. The two give the same bits:
/// every output, non-finite env and state value of 12 learned joints
/// (one MLP delayed) stepped alone and beside a PD joint, over 70 envs
/// (chunks on every thread, lane groups that straddle envs, a last tile
/// part full), with resets, a NaN velocity and a target whose scaled error
/// overflows.
#[test]
fn learned_groups_by_rows_and_env_by_env_give_the_same_bits() {
    use sinew::{Backend, CpuBackend, DelayCfg, IdealPdCfg, InputOrder};
    let (num_envs, n) = (70, 12);
    let mlp = drawn_mlp(
        &[
            (16, 6, Activation::Softsign),
            (9, 16, Activation::Elu),
            (7, 9, Activation::Tanh),
            (1, 7, Activation::Identity),
        ],
        11,
    );
    let kinds: [(&str, ActuatorCfg, Option<DelayCfg>); 4] = [
        (
            "mlp backfilled, pos then vel",
            LearnedMlpCfg::new(mlp.clone(), 40.0, 60.0, 20.0)
                .with_taps([0, 1, 3])
                .with_scales(2.0, 0.25, 3.0)
                .into(),
            None,
        ),
        (
            "mlp from zeros, vel then pos",
            LearnedMlpCfg::new(mlp.clone(), 40.0, 60.0, 20.0)
                .with_taps([0, 1, 3])
                .with_scales(-1.5, 0.5, 2.0)
                .with_input_order(InputOrder::VelPos)
                .with_history_init(HistoryInit::Zeros)
                .into(),
            None,
        ),
        (
            "mlp delayed 0–3 steps",
            LearnedMlpCfg::new(mlp, 40.0, 60.0, 20.0)
                .with_taps([0, 2, 4])
                .into(),
            Some(DelayCfg::new(0, 3)),
        ),
        (
            "lstm",
            LstmNetCfg::new(drawn_lstm(4), 40.0, 60.0, 20.0).into(),
            None,
        ),
    ];
    let learned: Vec<String> = (0..n).map(|i| format!("j{i}")).collect();
    for (name, cfg, delay) in kinds {
        let net = |joints: Vec<String>| match &delay {
            Some(delay) => GroupCfg::new("net", joints, cfg.clone()).with_delay(delay.clone()),
            None => GroupCfg::new("net", joints, cfg.clone()),
        };
        let alone = Plan::new(
            &crate::support::joints(n),
            vec![net(learned.clone())],
            num_envs,
            PlanOptions::default(),
        )
        .unwrap();
        let beside = Plan::new(
            &crate::support::joints(n + 1),
            vec![
                net(learned.clone()),
                GroupCfg::new("pd", [format!("j{n}")], IdealPdCfg::new(5.0, 0.1)),
            ],
            num_envs,
            PlanOptions::default(),
        )
        .unwrap();
        assert!(alone.learned().runs_by_rows(n, n), "{name}");
        assert!(!beside.learned().runs_by_rows(n + 1, n + 1), "{name}");
        let slots: Vec<&str> = alone.groups()[0].state().iter().map(|s| s.name).collect();
        let (mut rows, mut envs) = (CpuBackend::new(alone), CpuBackend::new(beside));
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for k in 0..24 {
            if k == 9 {
                rows.reset(EnvIds::List(&[0, 17, 69])).unwrap();
                envs.reset(EnvIds::List(&[0, 17, 69])).unwrap();
            }
            let value = |i: usize, f: usize| ((k * 31 + i * 7 + f * 3) as f32 * 0.173).sin();
            let mut cmd = ActuatorCmd::zeros(num_envs, n);
            let mut wide = ActuatorCmd::zeros(num_envs, n + 1);
            for e in 0..num_envs {
                for j in 0..n {
                    let (i, w) = (e * n + j, e * (n + 1) + j);
                    cmd.position_target[i] = value(i, 0);
                    cmd.pos[i] = 0.5 * value(i, 1);
                    cmd.vel[i] = 30.0 * value(i, 2);
                    if k == 5 && e == 3 {
                        cmd.vel[i] = f32::NAN;
                    }
                    if k == 12 && e == 66 && j == 7 {
                        cmd.position_target[i] = 3e38;
                    }
                    wide.position_target[w] = cmd.position_target[i];
                    wide.pos[w] = cmd.pos[i];
                    wide.vel[w] = cmd.vel[i];
                }
            }
            rows.step(&cmd).unwrap();
            envs.step(&wide).unwrap();
            let mut want = vec![0.0; num_envs * (n + 1)];
            let mut got = vec![0.0; num_envs * n];
            rows.read_ctrl(&mut got).unwrap();
            envs.read_ctrl(&mut want).unwrap();
            for e in 0..num_envs {
                let (got, want) = (&got[e * n..][..n], &want[e * (n + 1)..][..n]);
                assert_eq!(bits(got), bits(want), "{name}: step {k}, env {e}");
            }
            let bad = rows.nonfinite_envs().unwrap();
            assert_eq!(bad, envs.nonfinite_envs().unwrap(), "{name}: step {k}");
            // The overflowing target's scaled error is infinite in the
            // undelayed MLPs; the LSTM's gates saturate instead.
            if k == 5 || (k == 12 && name.starts_with("mlp") && delay.is_none()) {
                assert!(!bad.is_empty(), "{name}: step {k} zeroes an env");
            }
            for slot in &slots {
                let mut want = vec![0.0; num_envs * n];
                let mut got = vec![0.0; num_envs * n];
                rows.read_state("net", slot, &mut got).unwrap();
                envs.read_state("net", slot, &mut want).unwrap();
                let differ = bits(&got)
                    .iter()
                    .zip(bits(&want))
                    .position(|(g, w)| *g != w);
                let first = differ.map(|i| (i / n, i % n));
                assert_eq!(
                    first, None,
                    "{name}: step {k}, {slot}: first (env, joint) differing"
                );
            }
        }
    }
}
