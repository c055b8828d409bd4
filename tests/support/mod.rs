//! Shared helpers: the backends under test, and small robot fixtures.

use std::sync::Once;

use serde_json::{json, Value};
use sinew::{Backend, CpuBackend, GpuContext, Plan, WgpuBackend};

/// A constructor of one backend over a plan.
pub type MakeBackend = fn(Plan) -> Box<dyn Backend>;

/// How far an effort may be from the CPU reference: `|a − b| ≤ abs + rel·max(|a|, |b|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute part, N·m.
    pub abs: f32,
    /// Relative part.
    pub rel: f32,
}

impl Tolerance {
    /// Bit-equal (the CPU backend against itself and mjlab's golden floats).
    pub const EXACT: Tolerance = Tolerance { abs: 0.0, rel: 0.0 };

    /// The GPU against the CPU reference. The WGSL is the Rust law line for
    /// line, and on Vulkan its SPIR-V forbids fusing `a·b + c` into an FMA
    /// (NVIDIA's driver fused MuJoCo 4 dcmotor's `kp·e + kd·ė`, and its
    /// current rate, which cancels, came out ~100 ulp off). The last bits
    /// may still move where a kernel's function is not the CPU's: e^x
    /// (`fexp`, within ~1 ulp), sin and pow (the driver's), and WGSL's
    /// division (exact only to 2.5 ulp) in the BAM, MIMo and learned
    /// kernels; the MuJoCo-law, DC motor and remotized kernels divide with
    /// `fdiv`, the CPU's correctly rounded division. With the tests'
    /// magnitudes (terms up to a few hundred N·m) a few ulp of a term is
    /// below 1e-4 N·m; 1e-5 relative covers large outputs.
    pub const GPU: Tolerance = Tolerance {
        abs: 1e-4,
        rel: 1e-5,
    };

    /// True when `a` and `b` agree (NaN never agrees; equal infinities do).
    pub fn accepts(self, a: f32, b: f32) -> bool {
        a == b || (a - b).abs() <= self.abs + self.rel * a.abs().max(b.abs())
    }
}

/// The process's one GPU context, or `None` (with a note, once) when this
/// machine has no adapter. Under `CI=true` a missing adapter fails instead:
/// CI installs the software one, so its absence is a broken setup.
pub fn gpu() -> Option<GpuContext> {
    static NOTE: Once = Once::new();
    match GpuContext::shared() {
        Ok(ctx) => {
            NOTE.call_once(|| {
                let kernels = if ctx.forbids_contraction() {
                    "SPIR-V without contraction"
                } else {
                    "WGSL"
                };
                eprintln!(
                    "GPU tests run on {} (kernels from {kernels})",
                    ctx.description()
                );
            });
            Some(ctx)
        }
        Err(e) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(!ci, "CI is set and there is no GPU adapter: {e}");
            NOTE.call_once(|| eprintln!("GPU tests skipped: {e}"));
            None
        }
    }
}

/// Every backend this machine can run: name, constructor, and the tolerance
/// of its efforts against the CPU reference. The GPU twice: as it steps by
/// default (`Dispatches::Auto`: two dispatches on a software adapter, one
/// where the plan allows it on a hardware GPU), and in one dispatch wherever
/// the plan allows it.
pub fn backends() -> Vec<(&'static str, MakeBackend, Tolerance)> {
    let mut all: Vec<(&'static str, MakeBackend, Tolerance)> = vec![(
        "cpu",
        |plan| Box::new(CpuBackend::new(plan)),
        Tolerance::EXACT,
    )];
    if gpu().is_some() {
        all.push((
            "wgpu",
            |plan| Box::new(WgpuBackend::new(&gpu().expect("checked"), plan).expect("GPU backend")),
            Tolerance::GPU,
        ));
        all.push((
            "wgpu (one dispatch)",
            |plan| {
                let mut backend =
                    WgpuBackend::new(&gpu().expect("checked"), plan).expect("GPU backend");
                (backend.set_dispatches(sinew::Dispatches::One)).expect("its kernels");
                Box::new(backend)
            },
            Tolerance::GPU,
        ));
    }
    all
}

/// `n` joints named `j0`, `j1`, ….
pub fn joints(n: usize) -> sinew::Robot {
    sinew::Robot::from_joints((0..n).map(|i| format!("j{i}")))
}

/// SplitMix64: the test data's seeded RNG.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }
    /// A random subset of `0..n` (maybe empty), ascending.
    pub fn subset(&mut self, n: usize, p: f32) -> Vec<u32> {
        (0..n as u32).filter(|_| self.chance(p)).collect()
    }
}

/// A safetensors file, written by hand (8-byte header length, JSON header,
/// little-endian data), so these tests do not depend on the reader's crate.
pub fn safetensors(tensors: &[(&str, &[usize], &[f32])], metadata: &[(&str, &str)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        for v in *values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        header.insert(
            name.to_string(),
            json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    if !metadata.is_empty() {
        let meta: serde_json::Map<String, Value> = metadata
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        header.insert("__metadata__".into(), Value::Object(meta));
    }
    let mut text = serde_json::to_string(&header).unwrap();
    while !text.len().is_multiple_of(8) {
        text.push(' ');
    }
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&data);
    bytes
}
