//! The WGSL sources: the step's driver files from the repository's top-level
//! `shaders/`, each registered kind's own file ([`Kind::WGSL`]), and a
//! prelude generated here from the kind registry. This is the only place
//! shader text enters the crate.
//!
//! WGSL declarations may come in any order, so the module is the prelude,
//! the driver files and the kind files concatenated.

use std::fmt::Write;

use sinew_core::{
    planes_of, BiasType, CommandField, DynType, GainType, Kind, KindId, KindVisitor, Plan,
    PlaneSpec,
};

/// What a step module is specialized to ([`module_source`]): each plan's
/// kernels carry only the code its columns can reach, which keeps them
/// quick to build and lean in registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Specialization {
    /// The plan's kinds, sorted, no repeats ([`Plan::kinds`]): `kind_law`
    /// switches over these alone.
    pub kinds: Vec<KindId>,
    /// Its networks' activations ([`net_width`]).
    pub net_width: u32,
    /// Whether it has delay buffers (`DELAYED`).
    pub delayed: bool,
    /// Whether some column reaches the MuJoCo stage: its kind's law is
    /// MuJoCo's, or its group computes its force
    /// ([`GroupCfg::compute_force`](sinew_core::GroupCfg::compute_force)).
    /// Without one, law_stage has no per-actuator stage (`mj_element`).
    pub mujoco: bool,
    /// Whether the plan's force coupling has members
    /// ([`MjStage::members`](sinew_core::MjStage::members)). Without them,
    /// law_stage has no per-element stage of law members (`mj_law_element`)
    /// and output_stage no per-env MuJoCo stage (`mj_env_stage`).
    pub coupled: bool,
    /// Whether an actuator of the MuJoCo stage reads its parameters from
    /// the plan's tables ([`MjStage::table_params`](sinew_core::MjStage::table_params)).
    /// Without one, the stage has no table reads.
    pub table_params: bool,
    /// Whether an actuator of the MuJoCo stage has a muscle's gain, bias or
    /// dynamics. Without one, the stage has no muscle curves.
    pub muscles: bool,
    /// Whether a step is one dispatch of `env_stage`, whose workgroups hold
    /// whole envs, rather than `law_stage`'s and `output_stage`'s: where
    /// the plan allows it ([`Specialization::of`]) and the backend asks for
    /// it ([`Dispatches`](crate::Dispatches)). Every module has all three
    /// entry points; this picks the pipelines.
    pub env_stage: bool,
}

impl Specialization {
    /// What `plan`'s kernels need.
    pub fn of(plan: &Plan) -> Specialization {
        Specialization {
            kinds: plan.kinds(),
            net_width: net_width(plan.learned().widest()),
            delayed: !plan.buffers().is_empty(),
            mujoco: !plan.mj().actuators.is_empty(),
            coupled: !plan.mj().members.is_empty(),
            table_params: plan.mj().table_params,
            muscles: (plan.mj().actuators.iter()).any(|a| {
                a.gain_type == GainType::Muscle as u32
                    || a.bias_type == BiasType::Muscle as u32
                    || a.dyn_type == DynType::Muscle as u32
            }),
            env_stage: crate::layout::fits_env_stage(plan),
        }
    }

    /// `kinds` (sorted, no repeats) with networks `net_width` wide and
    /// every stage compiled in: delays, the per-actuator and the per-env
    /// MuJoCo stage, parameter tables, muscles.
    pub fn with_every_stage(kinds: &[KindId], net_width: u32) -> Specialization {
        Specialization {
            kinds: kinds.to_vec(),
            net_width,
            delayed: true,
            mujoco: true,
            coupled: true,
            table_params: true,
            muscles: true,
            env_stage: true,
        }
    }
}

/// The driver files as `(name, text)`: index helpers and the lag RNG, the
/// delay stage, network helpers, the bindings and kernels, and the per-env
/// MuJoCo stage.
pub const DRIVER_FILES: [(&str, &str); 5] = [
    ("common.wgsl", include_str!("../../../shaders/common.wgsl")),
    ("delay.wgsl", include_str!("../../../shaders/delay.wgsl")),
    ("net.wgsl", include_str!("../../../shaders/net.wgsl")),
    ("step.wgsl", include_str!("../../../shaders/step.wgsl")),
    (
        "mj_stage.wgsl",
        include_str!("../../../shaders/mj_stage.wgsl"),
    ),
];

/// The WGSL name of a Rust name: `IdealPd` or `effort_limit` → `IDEAL_PD`,
/// `EFFORT_LIMIT`.
pub fn wgsl_constant(name: &str) -> String {
    let mut out = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

/// The WGSL constant holding a kind's id: `KIND_IDEAL_PD`.
pub fn kind_constant(kind: KindId) -> String {
    format!("KIND_{}", wgsl_constant(kind.spec().key))
}

/// The WGSL law function of a kind: `ideal_pd_law`.
pub fn law_function(kind: KindId) -> String {
    format!("{}_law", kind.spec().key)
}

/// The activations a learned network's thread keeps for a plan whose widest
/// layer or hidden state has `widest` units (0: no network): `NET_WIDTH`
/// in the prelude, each of the two halves of `net_acts` in
/// `shaders/net.wgsl` (a layer's input and its output). It is `widest`
/// rounded up to a power of two of at least 8, so that few widths need
/// their own pipeline; 1 without networks.
///
/// A thread indexes that array at run time, so it lives in the GPU's
/// per-thread local memory, which thousands of threads overflow from cache:
/// sized to the plan's networks rather than to the widest a network may
/// have ([`sinew_core::NET_MAX_WIDTH`]), it takes a quarter of the memory
/// for Isaac Lab's and mjlab's 32-unit networks.
pub fn net_width(widest: usize) -> u32 {
    if widest == 0 {
        1
    } else {
        widest.next_power_of_two().max(8) as u32
    }
}

/// The prelude for a plan's [`Specialization`]: every kind's id and slot
/// constants, each kind's input and output planes as the plan's plane
/// indices (`<KIND>_IN_<NAME>`, `<KIND>_OUT_<NAME>`; 0 for kinds the plan
/// does not use, whose laws never run), the command-field constants,
/// `NET_WIDTH`, `kind_law`, the switch over the plan's kinds only (so a
/// pipeline carries no other kind's law), and the calls into the MuJoCo
/// stage's parts, stubs for the parts the plan cannot reach.
pub fn prelude(spec: &Specialization) -> String {
    let kinds = &spec.kinds[..];
    let (inputs, outputs) = planes_of(kinds);
    let index = |all: &[PlaneSpec], name: &str| all.iter().position(|p| p.name == name);
    let mut out =
        String::from("// Generated from the kind registry (sinew_wgpu::shaders::prelude).\n");
    for (name, field) in [
        ("FIELD_POSITION", CommandField::Position),
        ("FIELD_VELOCITY", CommandField::Velocity),
        ("FIELD_EFFORT", CommandField::Effort),
    ] {
        let _ = writeln!(out, "const {name}: u32 = {}u;", field as u32);
    }
    let _ = writeln!(
        out,
        "const MJ_ACT_SLOT: u32 = {}u;",
        sinew_core::MJ_ACT_SLOT
    );
    let _ = writeln!(out, "const MLP_FRESH: u32 = {}u;", sinew_core::MLP_FRESH);
    // Whether a column of the plan reaches the MuJoCo stage: without one,
    // law_stage compiles no per-actuator stage (`mj_element`). Compiled
    // into every plan's kernel, it took PD at 65536 × 29 from 44 to 59 µs
    // on an H200 (its registers leave fewer threads in flight).
    let _ = writeln!(out, "const MJ_STAGE: bool = {};", spec.mujoco);
    // Whether the plan's force coupling has members: without them, law_stage
    // compiles no per-element stage of law members (`mj_law_element`).
    let _ = writeln!(out, "const MJ_COUPLED: bool = {};", spec.coupled);
    let _ = writeln!(out, "const NET_WIDTH: u32 = {}u;", spec.net_width);
    for &kind in KindId::ALL {
        let spec = kind.spec();
        let prefix = wgsl_constant(spec.key);
        let _ = writeln!(
            out,
            "const {}: u32 = {}u;",
            kind_constant(kind),
            kind as u32
        );
        for (k, p) in spec.params.iter().enumerate() {
            let _ = writeln!(out, "const {prefix}_{}: u32 = {k}u;", wgsl_constant(p.name));
        }
        for (k, s) in spec.state.iter().enumerate() {
            let _ = writeln!(out, "const {prefix}_{}: u32 = {k}u;", wgsl_constant(s.name));
        }
        for (tag, own, all) in [
            ("IN", spec.inputs, &inputs),
            ("OUT", spec.outputs, &outputs),
        ] {
            for p in own {
                let k = index(all, p.name).unwrap_or(0);
                let name = wgsl_constant(p.name);
                let _ = writeln!(out, "const {prefix}_{tag}_{name}: u32 = {k}u;");
            }
        }
    }
    out.push_str("\n// The law of a column's kind, for the kinds of this plan.\n");
    out.push_str("fn kind_law(kind: u32) -> f32 {\n    switch kind {\n");
    for &kind in kinds {
        let _ = writeln!(
            out,
            "        case {}: {{ return {}(); }}",
            kind_constant(kind),
            law_function(kind)
        );
    }
    out.push_str("        default: { return 0.0; }\n    }\n}\n");
    // The kernels call the MuJoCo stage's parts through these, stubs for the
    // parts the plan cannot reach: a driver builds all that a kernel calls
    // before it folds the constants and branches guarding the calls. Mesa's
    // lavapipe spent 330 of the 550 ms it took to build PD's two kernels on
    // the per-env stage, which PD never runs, and 740 of the 1 030 ms of
    // mjlab's G1 with MuJoCo's force on the muscle curves, which its
    // position actuators never take.
    // (reached, signature, the call, the stub's value)
    let hooks = [
        (
            spec.mujoco,
            "mj_element(env: u32, k: u32, forwarded: f32, known_wild: bool) -> MjElement",
            "mj_element(env, k, forwarded, known_wild)",
            "MjElement(forwarded, 0u, false)",
        ),
        (
            spec.coupled,
            "mj_law_element(env: u32, entry: u32, value: f32) -> u32",
            "mj_law_element(env, entry, value)",
            "0u",
        ),
        (
            spec.coupled,
            "mj_env_stage(env: u32, known_wild: bool) -> u32",
            "mj_env_stage(env, known_wild)",
            "0u",
        ),
        (
            spec.table_params,
            "mj_table_actuator(compiled: MjActuator, row: u32) -> MjActuator",
            "mj_table_actuator(compiled, row)",
            "compiled",
        ),
        (
            spec.muscles,
            "mj_muscle_gain(length: f32, velocity: f32, length_lo: f32, length_hi: f32, \
             acc0: f32, prm: array<f32, 9>) -> f32",
            "mj_muscle_gain(length, velocity, length_lo, length_hi, acc0, prm)",
            "0.0",
        ),
        (
            spec.muscles,
            "mj_muscle_bias(length: f32, length_lo: f32, length_hi: f32, acc0: f32, \
             prm: array<f32, 9>) -> f32",
            "mj_muscle_bias(length, length_lo, length_hi, acc0, prm)",
            "0.0",
        ),
        (
            spec.muscles,
            "mj_muscle_dynamics(ctrl: f32, act: f32, dynprm: array<f32, 3>) -> f32",
            "mj_muscle_dynamics(ctrl, act, dynprm)",
            "0.0",
        ),
    ];
    out.push_str("\n// The MuJoCo stage's parts this plan can reach, stubs for the others.\n");
    for (reached, signature, call, stub) in hooks {
        let body = if reached { call } else { stub };
        let _ = writeln!(out, "fn plan_{signature} {{\n    return {body};\n}}");
    }
    out
}

/// Every distinct kind file, in registry order (kinds may share one).
pub fn kind_files() -> Vec<&'static str> {
    struct Wgsl;
    impl KindVisitor for Wgsl {
        type Output = &'static str;
        fn visit<K: Kind>(self) -> &'static str {
            K::WGSL
        }
    }
    let mut files: Vec<&'static str> = Vec::new();
    for &kind in KindId::ALL {
        let text = kind.visit(Wgsl);
        if !files.contains(&text) {
            files.push(text);
        }
    }
    files
}

/// The step module for a [`Specialization`] (see [`prelude`]).
pub fn module_source(spec: &Specialization) -> String {
    let mut out = prelude(spec);
    for (name, text) in DRIVER_FILES {
        let _ = write!(out, "// ---- {name}\n{text}\n");
    }
    for text in kind_files() {
        let _ = write!(out, "// ---- kind file\n{text}\n");
    }
    out
}

/// The step module for a [`Specialization`] as SPIR-V for Vulkan, with
/// `DELAYED` set, in which no float operation may be fused with another:
/// every multiply, add and subtract is decorated `NoContraction` (GLSL's
/// `precise`).
///
/// SPIR-V lets a driver contract `a·b + c` into one FMA unless told not
/// to, naga does not tell it, and NVIDIA's driver does: MuJoCo 4 dcmotor's
/// `kp·(u − q) + kd·(u̇ − q̇)`, which cancels, came out one rounding apart
/// from the CPU's (which never contracts) and its current rate ~100 ulp
/// off. Without contraction the kernels round every operation as the CPU
/// does. The WGSL is checked by naga's validator first; the SPIR-V is
/// naga's for it (bounds checks that clamp every index, as wgpu's own
/// defaults) with only the decorations added.
pub fn spirv_without_contraction(spec: &Specialization) -> Result<Vec<u32>, String> {
    wgsl_to_spirv_without_contraction(
        &module_source(spec),
        &[("DELAYED", f64::from(u8::from(spec.delayed)))],
    )
}

/// Any WGSL module as [`spirv_without_contraction`] compiles the step's,
/// with its pipeline-overridable `constants` set: validated by naga, then
/// naga's SPIR-V (bounds checks that clamp every index) with every float
/// multiply, add and subtract decorated `NoContraction`. (The tests' probes
/// of the kernels' float helpers are compiled so too.)
pub fn wgsl_to_spirv_without_contraction(
    source: &str,
    constants: &[(&str, f64)],
) -> Result<Vec<u32>, String> {
    use naga::back::spv;
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(""))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| format!("{e:?}"))?;
    let constants = constants
        .iter()
        .map(|&(name, value)| (name.to_owned(), value))
        .collect();
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
            .map_err(|e| e.to_string())?;
    let policy = naga::proc::BoundsCheckPolicy::Restrict;
    let options = spv::Options {
        flags: spv::WriterFlags::empty(),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: policy,
            buffer: policy,
            image_load: policy,
            binding_array: policy,
        },
        ..Default::default()
    };
    let words = spv::write_vec(&module, &info, &options, None).map_err(|e| e.to_string())?;
    Ok(forbid_contraction(&words))
}

/// `words` (a SPIR-V module) with a `NoContraction` decoration on the
/// result of every float multiply (scalar, vector by scalar, matrix, dot
/// product), add and subtract, placed after the module's other annotations.
/// A truncated module gets decorations for what it holds, and no panic.
pub fn forbid_contraction(words: &[u32]) -> Vec<u32> {
    // Opcodes (SPIR-V 1.0): the module's sections before its types, and
    // the float arithmetic whose result id is the instruction's third word.
    const PREAMBLE: [u32; 19] = [
        17, 10, 11, 14, 15, 16, // capability … execution mode
        7, 4, 3, 2, 5, 6, 330, // debug
        71, 72, 73, 74, 75, 332, // annotations
    ];
    const FLOAT_OPS: [u32; 9] = [129, 131, 133, 142, 143, 144, 145, 146, 148];
    const OP_DECORATE: u32 = 71;
    const NO_CONTRACTION: u32 = 42;
    const HEADER: usize = 5;
    let (mut at, mut types_start) = (HEADER, None);
    let mut results = Vec::new();
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if types_start.is_none() && !PREAMBLE.contains(&opcode) {
            types_start = Some(at);
        }
        if FLOAT_OPS.contains(&opcode) && count > 2 {
            if let Some(&id) = words.get(at + 2) {
                results.push(id);
            }
        }
        at += count.max(1);
    }
    let split = types_start.unwrap_or(words.len());
    let mut out = Vec::with_capacity(words.len() + 3 * results.len());
    out.extend_from_slice(&words[..split]);
    for id in results {
        out.extend([(3 << 16) | OP_DECORATE, id, NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[split..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_screaming_snake_case() {
        assert_eq!(wgsl_constant("effort_limit"), "EFFORT_LIMIT");
        assert_eq!(wgsl_constant("IdealPd"), "IDEAL_PD");
        assert_eq!(kind_constant(KindId::DcMotor), "KIND_DC_MOTOR");
    }

    /// A decoration per float result, after the preamble (here a
    /// capability) and before the first type; a truncated last
    /// instruction is left alone.
    #[test]
    fn decorations_go_before_the_types() {
        let header = [0x0723_0203, 0x0001_0000, 0, 100, 0];
        let capability = [(2 << 16) | 17, 1];
        let void = [(2 << 16) | 19, 5];
        let fmul = [(5 << 16) | 133, 6, 7, 8, 9];
        let module: Vec<u32> = [&header[..], &capability, &void, &fmul].concat();
        let decorated = forbid_contraction(&module);
        let decoration = [(3 << 16) | 71, 7, 42];
        let want: Vec<u32> = [&header[..], &capability, &decoration, &void, &fmul].concat();
        assert_eq!(decorated, want);
        let truncated = &module[..module.len() - 3];
        assert_eq!(forbid_contraction(truncated), truncated);
    }
}
