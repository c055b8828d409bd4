//! The kernels' own float helpers from `shaders/common.wgsl`, run on the
//! adapter against the CPU: `fexp` (the kernels' e^x, in place of the
//! builtin `exp`, which WGSL allows to be 3 + 2·|x| ulp off and which was
//! 15–17 ulp off on NVIDIA and lavapipe), `fdiv` (the CPU's correctly
//! rounded division, where WGSL's `/` may be 2.5 ulp off) and
//! `clip` (which must keep a NaN where a driver turns selects into min and
//! max).

use sinew_wgpu::shaders::{self, DRIVER_FILES};
use wgpu::util::DeviceExt;

use crate::support::{gpu, Rng};

/// Runs `body` (WGSL statements reading `x[i]` and writing `y[i]`) after
/// common.wgsl over `x`; `None` without an adapter.
fn run_elementwise(body: &str, x: &[f32]) -> Option<Vec<f32>> {
    let ctx = gpu()?;
    let (device, queue) = (ctx.device(), ctx.queue());
    let common = DRIVER_FILES
        .iter()
        .find(|(name, _)| *name == "common.wgsl")
        .unwrap()
        .1;
    let source = format!(
        "{common}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if i < arrayLength(&x) {{
        {body}
    }}
}}"
    );
    // Compiled as the step's kernels are on this device: without
    // contraction where they are, so that a helper's bits here are its bits
    // there.
    let buffer = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("float helpers"),
        entries: &[buffer(0, true), buffer(1, false)],
    });
    let module = if ctx.forbids_contraction() {
        let spirv = shaders::wgsl_to_spirv_without_contraction(&source, &[]).unwrap();
        let entry_point = wgpu::PassthroughShaderEntryPoint {
            name: "probe".into(),
            workgroup_size: (64, 1, 1),
        };
        let descriptor = wgpu::ShaderModuleDescriptorPassthrough {
            label: Some("float helpers"),
            entry_points: vec![entry_point].into(),
            spirv: Some(spirv.into()),
            ..Default::default()
        };
        // SAFETY: naga's SPIR-V for the WGSL it has just validated, with
        // only `NoContraction` decorations added; its bindings are `layout`'s.
        unsafe { device.create_shader_module_passthrough(descriptor) }
    } else {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("float helpers"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
    };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("float helpers"),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("float helpers"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let size = std::mem::size_of_val(x) as u64;
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(x),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((x.len() as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &read, 0, size);
    queue.submit([encoder.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let values = bytemuck::cast_slice(&read.slice(..).get_mapped_range().unwrap()).to_vec();
    Some(values)
}

/// `fexp` within 1.5 ulp of e^x wherever e^x is a normal f32 (the builtin
/// `exp` on lavapipe: 17 ulp), inf and 0 where the CPU's are, below the
/// normal range 0 or a subnormal (adapters may flush those), NaN for NaN;
/// and, compiled without contraction, the CPU twin's bits.
#[test]
fn fexp_is_within_one_and_a_half_ulp_of_e_to_the_x_and_the_cpus_twin() {
    let mut x: Vec<f32> = (0..=200_000)
        .map(|k| -110.0 + 205.0 * k as f32 / 200_000.0)
        .collect();
    x.extend([
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        f32::INFINITY,
        -f32::INFINITY,
        f32::NAN,
    ]);
    x.extend([88.72283, 88.72284, -87.33654, -103.97208]);
    let Some(y) = run_elementwise("y[i] = fexp(x[i]);", &x) else {
        return;
    };
    let mut worst = (0.0f64, 0.0f32);
    for (&x, &y) in x.iter().zip(&y) {
        let exact = f64::from(x).exp();
        let cpu = x.exp();
        if x.is_nan() {
            assert!(y.is_nan(), "fexp(NaN) = {y}");
        } else if cpu.is_infinite() || cpu == 0.0 {
            assert_eq!(y, cpu, "fexp({x:e})");
        } else if cpu < f32::MIN_POSITIVE {
            assert!((0.0..f32::MIN_POSITIVE).contains(&y), "fexp({x:e}) = {y:e}");
        } else {
            let spacing = f64::from(f32::from_bits(cpu.to_bits() + 1) - cpu);
            let ulps = (f64::from(y) - exact).abs() / spacing;
            if ulps > worst.0 {
                worst = (ulps, x);
            }
        }
    }
    // Where the kernels round every operation on its own, the CPU's twin
    // (`sinew_core::math::fexp`, the learned networks' e^x) gives the same
    // bits, but where the adapter flushes a subnormal.
    if gpu().is_some_and(|ctx| ctx.forbids_contraction()) {
        for (&x, &y) in x.iter().zip(&y) {
            let twin = sinew_core::math::fexp(x);
            let agrees = if twin.is_nan() {
                y.is_nan()
            } else if twin != 0.0 && twin.abs() < f32::MIN_POSITIVE {
                y.abs() < f32::MIN_POSITIVE
            } else {
                y.to_bits() == twin.to_bits()
            };
            assert!(agrees, "fexp({x:e}) = {y:e} here, {twin:e} on the CPU");
        }
    }
    println!("fexp: worst {:.2} ulp at x = {:e}", worst.0, worst.1);
    assert!(
        worst.0 <= 1.5,
        "fexp is {:.2} ulp off at x = {:e}",
        worst.0,
        worst.1
    );
}

/// `clip` is torch's clamp: a NaN stays NaN whatever the bounds, lo > hi
/// gives hi, and finite values are bounded.
#[test]
fn clip_keeps_nan_and_torchs_order() {
    let cases: [[f32; 4]; 7] = [
        // x, lo, hi, torch.clamp(x, lo, hi)
        [f32::NAN, -1.0, 1.0, f32::NAN],
        [f32::NAN, 1.0, -1.0, f32::NAN],
        [5.0, -1.0, 1.0, 1.0],
        [-5.0, -1.0, 1.0, -1.0],
        [0.5, -1.0, 1.0, 0.5],
        [0.0, 1.0, -1.0, -1.0],
        [f32::INFINITY, -2.0, 2.0, 2.0],
    ];
    let flat: Vec<f32> = cases.iter().flat_map(|c| [c[0], c[1], c[2]]).collect();
    // One case per thread; the others only carry inputs.
    let body = "if i % 3u == 0u { y[i] = clip(x[i], x[i + 1u], x[i + 2u]); }";
    let Some(y) = run_elementwise(body, &flat) else {
        return;
    };
    for (k, case) in cases.iter().enumerate() {
        let got = y[3 * k];
        assert!(
            got.to_bits() == case[3].to_bits() || (got.is_nan() && case[3].is_nan()),
            "clip({}, {}, {}) = {got}, torch gives {}",
            case[0],
            case[1],
            case[2],
            case[3]
        );
    }
}

/// `fdiv` is the CPU's division bit for bit wherever the quotient is a
/// normal f32 or 0 or infinite; below the normal range 0 or a subnormal
/// (adapters may flush those); NaN for NaN.
#[test]
fn fdiv_is_the_cpus_division_bit_for_bit() {
    let mut rng = Rng(17);
    let mut pairs: Vec<[f32; 2]> = Vec::new();
    // Random significands and signs, exponents 2^-60 to 2^60.
    let random = |rng: &mut Rng| {
        let bits = rng.next() as u32 & 0x807f_ffff;
        f32::from_bits(bits | ((67 + rng.below(121) as u32) << 23))
    };
    for _ in 0..60_000 {
        pairs.push([random(&mut rng), random(&mut rng)]);
    }
    // Equal and neighbouring significands (quotients at 1 and just below).
    for _ in 0..2_000 {
        let b = random(&mut rng);
        let near = f32::from_bits(b.to_bits() - 1 - rng.below(3) as u32);
        pairs.extend([[b, b], [near, b], [b, near], [-b, b]]);
    }
    // Quotients that are exact: whole numbers times a divisor.
    for k in -100..=100 {
        for b in [0.5f32, 3.0, 0.002, 7.25, 1e-3, 2.0e4] {
            pairs.push([k as f32 * b, b]);
        }
    }
    // Past and at the ends of the normal range, zeros and non-finite ones.
    let max = f32::MAX;
    let tiny = f32::MIN_POSITIVE;
    pairs.extend([
        [max, 0.5],
        [max, 1.0],
        [-max, 0.999_999_9],
        [tiny, 2.0],
        [tiny, 1.000_000_1],
        [1e-30, 1e10],
        [tiny, 0.5],
        [0.0, 3.0],
        [-0.0, 3.0],
        [3.0, 0.0],
        [-3.0, 0.0],
        [1.0, f32::INFINITY],
        [f32::INFINITY, 2.0],
        [f32::NAN, 1.0],
        [1.0, f32::NAN],
        [0.0, 0.0],
    ]);
    let flat: Vec<f32> = pairs.iter().flatten().copied().collect();
    let body = "if i % 2u == 0u { y[i] = fdiv(x[i], x[i + 1u]); }";
    let Some(y) = run_elementwise(body, &flat) else {
        return;
    };
    for (k, &[a, b]) in pairs.iter().enumerate() {
        let (got, cpu) = (y[2 * k], a / b);
        let agrees = if cpu.is_nan() {
            got.is_nan()
        } else if cpu == 0.0 {
            got == 0.0
        } else if cpu.abs() < f32::MIN_POSITIVE {
            got.abs() < f32::MIN_POSITIVE
        } else {
            got.to_bits() == cpu.to_bits()
        };
        assert!(
            agrees,
            "fdiv({a:e}, {b:e}) = {got:e}, the CPU gives {cpu:e}"
        );
    }
}

/// `fdiv_from` corrects an estimate up to 3 ulp off either way (more than
/// WGSL's 2.5) to the CPU's quotient bit for bit, across powers of two and
/// at exact quotients, and its fallback takes estimates 40 and 100 ulp off. (On lavapipe
/// the builtin `/` is already the CPU's, so `fdiv` alone leaves the
/// correction idle there; here every estimate is off by a chosen amount.)
#[test]
fn fdiv_from_corrects_estimates_a_few_ulp_off() {
    let mut rng = Rng(29);
    let random = |rng: &mut Rng| {
        let bits = rng.next() as u32 & 0x807f_ffff;
        f32::from_bits(bits | ((87 + rng.below(81) as u32) << 23))
    };
    let mut pairs: Vec<[f32; 2]> = (0..20_000)
        .map(|_| [random(&mut rng), random(&mut rng)])
        .collect();
    // Quotients at and next to powers of two, and exact ones.
    for _ in 0..500 {
        let b = random(&mut rng);
        let two = 2f32.powi(rng.below(20) as i32 - 10);
        let a = b * two;
        pairs.extend([
            [a, b],
            [f32::from_bits(a.to_bits() + 1), b],
            [f32::from_bits(a.to_bits() - 1), b],
        ]);
    }
    for k in -60i32..=60 {
        pairs.push([k as f32, 3.0]);
        pairs.push([k as f32 * 0.25, -0.5]);
    }
    let mut triples: Vec<f32> = Vec::new();
    for &[a, b] in &pairs {
        let q = a / b;
        for off in [-3i32, -2, -1, 0, 1, 2, 3, 40, -100] {
            let estimate = f32::from_bits(q.to_bits().wrapping_add_signed(off));
            triples.extend([a, b, estimate]);
        }
    }
    let body = "if i % 3u == 0u { y[i] = fdiv_from(x[i], x[i + 1u], x[i + 2u]); }";
    let Some(y) = run_elementwise(body, &triples) else {
        return;
    };
    for (t, chunk) in triples.chunks_exact(3).enumerate() {
        let (a, b, estimate) = (chunk[0], chunk[1], chunk[2]);
        let (got, cpu) = (y[3 * t], a / b);
        assert_eq!(
            got.to_bits(),
            cpu.to_bits(),
            "fdiv_from({a:e}, {b:e}, {estimate:e}) = {got:e}, the CPU gives {cpu:e}"
        );
    }
}
