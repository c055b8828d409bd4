//! Checks of the WGSL that need no GPU: every file parses and validates (with
//! naga, as wgpu would), every law has its function, and every struct,
//! constant and workgroup size agrees with its Rust twin.

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use naga::{Expression, Literal, Module, TypeInner};
use sinew::delay::{DelayParams, STREAMS, STREAM_CANDIDATE, STREAM_HOLD};
use sinew::net::{LEARNED_LSTM, LEARNED_MLP, NET_DENSE, NET_LSTM};
use sinew::{
    Activation, BiasType, CommandField, DelayState, DynType, GainType, KindId, LearnedColumn,
    MjActuator, NetLayer, CMD_FIELDS, MJ_ACT_EARLY, MJ_ACT_LIMITED, MJ_CTRL_LIMITED,
    MJ_FORCE_LIMITED, MJ_FROM_LAW, MJ_MAX_CTRL, MJ_MINVAL, MJ_TABLE_PARAMS, NET_MAX_WIDTH,
};
use sinew_wgpu::layout::{BufferDesc, ColumnDesc, Dims, MJ_LAW_ELEMENT, NO_BUFFER, NO_ELEMENTS};
use sinew_wgpu::shaders::{self, Specialization};
use sinew_wgpu::{ENV_WORKGROUP_SIZE, WORKGROUP_SIZE};

fn parse(source: &str, what: &str) -> Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{what} does not parse:\n{}", e.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{what} does not validate:\n{}", e.emit_to_string(source)));
    module
}

/// The activations of the widest networks a plan may have.
const WIDEST: u32 = NET_MAX_WIDTH as u32;

fn step_module() -> Module {
    parse(
        &shaders::module_source(&Specialization::with_every_stage(KindId::ALL, WIDEST)),
        "the step module",
    )
}

/// `kinds` with no network, no delay and no MuJoCo stage: the kernels call
/// the stages' stubs.
fn bare(kinds: &[KindId]) -> Specialization {
    Specialization {
        kinds: kinds.to_vec(),
        net_width: shaders::net_width(0),
        delayed: false,
        mujoco: false,
        coupled: false,
        table_params: false,
        muscles: false,
        env_stage: true,
    }
}

#[test]
fn the_module_validates_for_each_kind_alone_and_for_all() {
    for &kind in KindId::ALL {
        parse(
            &shaders::module_source(&bare(&[kind])),
            &format!("the module specialized to {}", kind.name()),
        );
    }
    parse(
        &shaders::module_source(&bare(&[])),
        "the module with no kind",
    );
    step_module();
    // Every file in shaders/ is a driver file or some kind's file.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let kind_files = shaders::kind_files();
    for entry in std::fs::read_dir(&dir).expect("shaders/") {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let used = shaders::DRIVER_FILES.iter().any(|(_, t)| *t == text)
            || kind_files.contains(&text.as_str());
        assert!(used, "{} is in no module", path.display());
    }
}

#[test]
fn every_kind_has_its_wgsl_function() {
    let module = step_module();
    let functions: BTreeMap<String, usize> = module
        .functions
        .iter()
        .filter_map(|(_, f)| Some((f.name.clone()?, f.arguments.len())))
        .collect();
    for &kind in KindId::ALL {
        let name = shaders::law_function(kind);
        assert_eq!(
            functions.get(&name),
            Some(&0),
            "kind {}: no WGSL `fn {name}() -> f32`",
            kind.name()
        );
        // Its law is a case of the switch of a module specialized to it.
        let prelude = shaders::prelude(&bare(&[kind]));
        assert!(prelude.contains(&format!("return {name}();")), "{prelude}");
    }
    // The scalar laws the kinds' WGSL laws call, with the Rust arity.
    for (name, arity) in [
        ("ideal_pd_effort", 8),
        ("dc_motor_effort", 10),
        ("mj_force", 5),
    ] {
        assert_eq!(functions.get(name), Some(&arity), "WGSL fn {name}");
    }
    // The helpers each law and the delay stage call, as in the Rust.
    for helper in [
        "clip",
        "pd_torque",
        "dc_motor_clip",
        "push",
        "update_lag",
        "read_slot",
        "draw_lag",
        "hash_u32",
        "rng_u32",
        "rng_unit",
        "nonfinite_bits",
        "thread_index",
        "mj_floor",
        "mj_muscle_gain_length",
        "mj_muscle_peak",
        "mj_muscle_l0",
        "mj_muscle_gain",
        "mj_muscle_bias",
        "mj_sigmoid",
        "mj_muscle_dynamics",
        "mj_act_dot",
        "mj_next_act",
        "mj_ctrl",
        "mj_force_limit",
        "mj_tendon_scale",
        "mj_env_stage",
        "net_tanh",
        "net_sigmoid",
        "activate",
        "lstm_unit",
        "dense_stack",
        "learned_column",
        "net_layer",
    ] {
        assert!(functions.contains_key(helper), "no WGSL fn `{helper}`");
    }
}

/// `(size, [(member, offset)])` of a named WGSL struct.
fn wgsl_struct(module: &Module, name: &str) -> (u32, Vec<(String, u32)>) {
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no WGSL struct {name}"));
    let TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct");
    };
    (
        *span,
        members
            .iter()
            .map(|m| (m.name.clone().unwrap(), m.offset))
            .collect(),
    )
}

macro_rules! rust_struct {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        (
            size_of::<$ty>() as u32,
            vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*],
        )
    };
}

#[test]
fn repr_c_structs_match_their_wgsl_twins() {
    let module = step_module();
    let cases = [
        (
            "DelayState",
            rust_struct!(DelayState {
                head,
                pushes,
                lag,
                step_count,
                phase
            }),
        ),
        (
            "DelayParams",
            rust_struct!(DelayParams {
                min_lag,
                max_lag,
                len,
                update_period,
                per_env_phase,
                on_reset,
                stream,
                hold_prob
            }),
        ),
        (
            "Dims",
            rust_struct!(Dims {
                num_envs,
                num_targets,
                num_ctrl,
                ring_stride,
                num_buffers,
                num_claimed,
                claimed_offset,
                seed,
                num_param_slots,
                num_state_slots,
                data_offset,
                num_mj,
                mj_path_offset,
                mj_tendon_offset,
                num_tendon_limits,
                mj_joint_offset,
                num_joint_limits,
                effort_width,
                num_learned,
                learned_columns_offset,
                net_layers_offset,
                learned_taps_offset,
                num_inputs,
                num_outputs,
                mj_members_offset,
                mj_element_offset
            }),
        ),
        (
            "LearnedColumn",
            rust_struct!(LearnedColumn {
                ctrl_column,
                cmd_column,
                kind,
                first_layer,
                num_layers,
                lstm_layers,
                hidden,
                history_len,
                taps_offset,
                num_taps,
                input_order,
                history_init,
                pos_scale,
                vel_scale,
                torque_scale
            }),
        ),
        (
            "NetLayer",
            rust_struct!(NetLayer {
                kind,
                inputs,
                outputs,
                activation,
                weight,
                bias,
                weight_hh,
                bias_hh
            }),
        ),
        (
            "MjActuator",
            rust_struct!(MjActuator {
                ctrl_column,
                path_offset,
                path_len,
                dyn_type,
                gain_type,
                bias_type,
                flags,
                gear,
                act_step,
                ctrl_lo,
                ctrl_hi,
                force_lo,
                force_hi,
                act_lo,
                act_hi,
                length_lo,
                length_hi,
                acc0,
                dynprm,
                gainprm,
                biasprm,
                timestep
            }),
        ),
        (
            "ColumnDesc",
            rust_struct!(ColumnDesc {
                kind,
                field,
                cmd_column,
                buffer,
                ring_column,
                aux,
                data_offset,
                data_len
            }),
        ),
        (
            "BufferDesc",
            rust_struct!(BufferDesc {
                params,
                ring_offset,
                num_columns,
                columns_offset,
                _pad
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_eq!(
            wgsl_struct(&module, name),
            rust,
            "struct {name}: WGSL vs Rust"
        );
    }
}

fn wgsl_u32_constants(module: &Module) -> BTreeMap<String, u32> {
    module
        .constants
        .iter()
        .filter_map(|(_, c)| match module.global_expressions[c.init] {
            Expression::Literal(Literal::U32(v)) => Some((c.name.clone()?, v)),
            _ => None,
        })
        .collect()
}

/// A plan's networks get activations of the next power of two of its widest
/// layer (at least 8), and the prelude says so.
#[test]
fn network_activations_fit_the_plan() {
    assert_eq!(shaders::net_width(0), 1);
    for (widest, width) in [(1, 8), (6, 8), (9, 16), (32, 32), (33, 64), (128, 128)] {
        assert_eq!(shaders::net_width(widest), width, "widest {widest}");
        let prelude = shaders::prelude(&Specialization {
            net_width: width,
            ..bare(&[KindId::LearnedMlp])
        });
        assert!(prelude.contains(&format!("const NET_WIDTH: u32 = {width}u;")));
    }
}

#[test]
fn wgsl_constants_equal_the_rust_values() {
    let module = step_module();
    let wgsl = wgsl_u32_constants(&module);
    let field = |name: &str| CMD_FIELDS.iter().position(|f| *f == name).unwrap() as u32;
    let mut rust: Vec<(String, u32)> = vec![];
    // The generated prelude: every kind's id and slot indices, from its spec.
    for &kind in KindId::ALL {
        let spec = kind.spec();
        let prefix = shaders::wgsl_constant(spec.key);
        rust.push((shaders::kind_constant(kind), kind as u32));
        for (k, p) in spec.params.iter().enumerate() {
            rust.push((
                format!("{prefix}_{}", shaders::wgsl_constant(p.name)),
                k as u32,
            ));
        }
        for (k, st) in spec.state.iter().enumerate() {
            rust.push((
                format!("{prefix}_{}", shaders::wgsl_constant(st.name)),
                k as u32,
            ));
        }
    }
    let fixed: [(&str, u32); 40] = [
        ("WORKGROUP_SIZE", WORKGROUP_SIZE),
        ("ENV_WORKGROUP_SIZE", ENV_WORKGROUP_SIZE),
        ("NET_DENSE", NET_DENSE),
        ("NET_LSTM", NET_LSTM),
        ("LEARNED_MLP", LEARNED_MLP),
        ("LEARNED_LSTM", LEARNED_LSTM),
        ("ACT_IDENTITY", Activation::Identity as u32),
        ("ACT_RELU", Activation::Relu as u32),
        ("ACT_ELU", Activation::Elu as u32),
        ("ACT_TANH", Activation::Tanh as u32),
        ("ACT_SOFTSIGN", Activation::Softsign as u32),
        ("ACT_SIGMOID", Activation::Sigmoid as u32),
        ("MJ_CTRL_LIMITED", MJ_CTRL_LIMITED),
        ("MJ_FORCE_LIMITED", MJ_FORCE_LIMITED),
        ("MJ_ACT_LIMITED", MJ_ACT_LIMITED),
        ("MJ_ACT_EARLY", MJ_ACT_EARLY),
        ("MJ_TABLE_PARAMS", MJ_TABLE_PARAMS),
        ("MJ_DYN_NONE", DynType::None as u32),
        ("MJ_DYN_INTEGRATOR", DynType::Integrator as u32),
        ("MJ_DYN_FILTER", DynType::Filter as u32),
        ("MJ_DYN_FILTER_EXACT", DynType::FilterExact as u32),
        ("MJ_DYN_MUSCLE", DynType::Muscle as u32),
        ("MJ_GAIN_AFFINE", GainType::Affine as u32),
        ("MJ_GAIN_MUSCLE", GainType::Muscle as u32),
        ("MJ_BIAS_AFFINE", BiasType::Affine as u32),
        ("MJ_BIAS_MUSCLE", BiasType::Muscle as u32),
        ("MJ_GAIN_DCMOTOR", GainType::DcMotor as u32),
        ("MJ_BIAS_DCMOTOR", BiasType::DcMotor as u32),
        ("MJ_FROM_LAW", MJ_FROM_LAW),
        ("NO_BUFFER", NO_BUFFER),
        ("NO_ELEMENTS", NO_ELEMENTS),
        ("MJ_LAW_ELEMENT", MJ_LAW_ELEMENT),
        ("FIELD_POSITION", CommandField::Position as u32),
        ("FIELD_VELOCITY", CommandField::Velocity as u32),
        ("FIELD_EFFORT", CommandField::Effort as u32),
        ("FIELD_POS", field("pos")),
        ("FIELD_VEL", field("vel")),
        ("STREAMS", STREAMS),
        ("STREAM_CANDIDATE", STREAM_CANDIDATE),
        ("STREAM_HOLD", STREAM_HOLD),
    ];
    rust.extend(fixed.map(|(n, v)| (n.to_owned(), v)));
    for (name, value) in rust {
        assert_eq!(wgsl.get(&name), Some(&value), "WGSL const {name}");
    }
    let floats: BTreeMap<String, f32> = module
        .constants
        .iter()
        .filter_map(|(_, c)| match module.global_expressions[c.init] {
            Expression::Literal(Literal::F32(v)) => Some((c.name.clone()?, v)),
            _ => None,
        })
        .collect();
    assert_eq!(floats.get("MJ_MINVAL"), Some(&MJ_MINVAL));
    assert_eq!(floats.get("MJ_MAX_CTRL"), Some(&MJ_MAX_CTRL));
    // Fixed gain and no bias are the WGSL switches' default arms.
    assert_eq!((GainType::Fixed as u32, BiasType::None as u32), (0, 0));
    // The command fields are CMD_FIELDS in order.
    assert_eq!(field("position_target"), CommandField::Position as u32);
    assert_eq!(field("velocity_target"), CommandField::Velocity as u32);
    assert_eq!(field("effort_target"), CommandField::Effort as u32);
}

#[test]
fn every_kernel_dispatches_the_rust_workgroup_size() {
    let module = step_module();
    let names: Vec<&str> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["law_stage", "env_stage", "output_stage"]);
    for entry in &module.entry_points {
        let size = match entry.name.as_str() {
            "env_stage" => ENV_WORKGROUP_SIZE,
            _ => WORKGROUP_SIZE,
        };
        assert_eq!(
            entry.workgroup_size,
            [size, 1, 1],
            "entry point {}",
            entry.name
        );
    }
}

/// The step module binds as many storage buffers as the host declares (the
/// adapter check and the README's device limits rely on that number), one
/// binding each from 0, in group 0, and no other kind of buffer.
#[test]
fn the_module_binds_the_declared_storage_buffers() {
    let module = step_module();
    let mut bindings: Vec<u32> = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        assert_eq!(binding.group, 0, "{:?}", var.name);
        assert!(
            matches!(var.space, naga::AddressSpace::Storage { .. }),
            "{:?} is bound in {:?}",
            var.name,
            var.space
        );
        bindings.push(binding.binding);
    }
    bindings.sort_unstable();
    let expected: Vec<u32> = (0..sinew_wgpu::STORAGE_BUFFERS_PER_STAGE).collect();
    assert_eq!(bindings, expected);
}

/// The step module's SPIR-V for Vulkan decorates the result of every float
/// multiply, add and subtract `NoContraction`, in its annotation section
/// (before the first type), once each; and where CI's adapter (lavapipe,
/// Vulkan) runs the tests, the kernels come from it.
#[test]
fn the_spirv_forbids_contraction_of_every_float_multiply_add_and_subtract() {
    const OP_TYPE_VOID: u32 = 19;
    const OP_DECORATE: u32 = 71;
    const NO_CONTRACTION: u32 = 42;
    // FAdd, FSub, FMul, VectorTimesScalar.
    const FLOAT_OPS: [u32; 4] = [129, 131, 133, 142];
    // (offset, opcode, word count) of each instruction after the header.
    let instructions = |words: &[u32]| {
        let mut out = Vec::new();
        let mut at = 5;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            out.push((at, words[at] & 0xffff, count));
            at += count.max(1);
        }
        out
    };
    for delayed in [false, true] {
        let words = shaders::spirv_without_contraction(&Specialization {
            delayed,
            ..Specialization::with_every_stage(KindId::ALL, WIDEST)
        })
        .unwrap();
        assert_eq!(words[0], 0x0723_0203, "SPIR-V magic number");
        let all = instructions(&words);
        let first_type = all.iter().position(|i| i.1 == OP_TYPE_VOID).unwrap();
        let mut decorated = BTreeMap::new();
        for (k, &(at, opcode, count)) in all.iter().enumerate() {
            if opcode == OP_DECORATE && count == 3 && words[at + 2] == NO_CONTRACTION {
                assert!(k < first_type, "a NoContraction after the types");
                *decorated.entry(words[at + 1]).or_insert(0) += 1;
            }
        }
        let floats: Vec<u32> = all
            .iter()
            .filter(|i| FLOAT_OPS.contains(&i.1))
            .map(|&(at, _, _)| words[at + 2])
            .collect();
        assert!(floats.len() > 100, "{} float operations", floats.len());
        for id in &floats {
            assert_eq!(decorated.get(id), Some(&1), "float result %{id}");
        }
    }
    if let Some(ctx) = crate::support::gpu() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let vulkan = ctx.device().adapter_info().backend == wgpu::Backend::Vulkan;
        assert!(
            !(ci && vulkan) || ctx.forbids_contraction(),
            "CI's Vulkan adapter builds the kernels from the WGSL"
        );
    }
}
