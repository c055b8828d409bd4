//! How this machine's GPU adapter rounds f32 arithmetic, against the CPU:
//! the builtin `exp`, Sinew's own `fexp` (the one the kernels use, from
//! `shaders/common.wgsl`), the builtin division and Sinew's `fdiv`, and
//! whether `a·b + c` is contracted into a fused multiply-add. These decide
//! how close the GPU backend can come to the CPU's bits; BENCHMARKS.md
//! records what lavapipe and an NVIDIA H200 gave.
//!
//! The contraction probe is a lone `a·b + c` in a small WGSL kernel: a
//! driver may leave that one unfused and still fuse inside larger kernels
//! (the H200 did both), which is why the step kernels are built without
//! contraction on Vulkan (`GpuContext::forbids_contraction`).
//!
//! Run: `cargo run --release --example gpu_float_probe`

use wgpu::util::DeviceExt;

/// Values per probe.
const N: usize = 1 << 20;

/// One output plane per probe, in this order.
const PROBES: [&str; 6] = ["exp", "fexp", "fexp_wide", "div", "fdiv", "mul_add"];

const KERNEL: &str = "
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&a);
    if i >= n {
        return;
    }
    out[i] = exp(a[i]);
    out[n + i] = fexp(a[i]);
    out[2u * n + i] = fexp(a[i] * 6.0);
    out[3u * n + i] = a[i] / b[i];
    out[4u * n + i] = fdiv(a[i], b[i]);
    out[5u * n + i] = a[i] * b[i] + c[i];
}
";

/// A small xorshift generator: uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// |got − want| in units of the last place of `want` as an f32.
fn ulps(got: f32, want: f64) -> f64 {
    let w = (want as f32).abs();
    let spacing = f64::from(f32::from_bits(w.to_bits() + 1) - w);
    (f64::from(got) - want).abs() / spacing
}

fn main() {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let Ok(adapter) = pollster::block_on(instance.request_adapter(&Default::default())) else {
        eprintln!("no GPU adapter: nothing to probe");
        return;
    };
    println!("adapter: {}", adapter.get_info().name);
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))
        .expect("a device on the adapter");

    // a in [-20, 20); b of either sign over 2^±30; c close to -a·b, where
    // a fused and an unfused a·b + c differ.
    let mut rng = Rng(0x1234_5678_9abc_def0);
    let a: Vec<f32> = (0..N).map(|_| (rng.unit() - 0.5) * 40.0).collect();
    let b: Vec<f32> = (0..N)
        .map(|_| {
            let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            let exponent = ((rng.unit() - 0.5) * 60.0).round();
            sign * (1.0 + rng.unit()) * exponent.exp2()
        })
        .collect();
    let c: Vec<f32> = (0..N)
        .map(|i| -a[i] * b[i] * (1.0 + (rng.unit() - 0.5) * 1e-3))
        .collect();

    let input = |values: &[f32]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(values),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let size = (PROBES.len() * N * 4) as u64;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
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
    let source = format!("{}{KERNEL}", include_str!("../shaders/common.wgsl"));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffers = [input(&a), input(&b), input(&c), out.clone()];
    let entries: Vec<_> = (buffers.iter().enumerate())
        .map(|(i, buffer)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((N / 64) as u32, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, size);
    queue.submit([encoder.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("the probe to finish");
    let view = read
        .slice(..)
        .get_mapped_range()
        .expect("the mapped results");
    let got: &[f32] = bytemuck::cast_slice(&view);
    let plane = |name: &str| {
        let k = PROBES.iter().position(|p| *p == name).unwrap();
        &got[k * N..(k + 1) * N]
    };

    // Worst ulps against f64 over normal results, and how many differ from
    // the CPU's f32 result.
    let report = |name: &str, exact: &dyn Fn(usize) -> f64, cpu: &dyn Fn(usize) -> f32| {
        let values = plane(name);
        let (mut worst, mut differ) = (0.0f64, 0);
        for (i, &g) in values.iter().enumerate() {
            let want = exact(i);
            if want.abs() >= f64::from(f32::MIN_POSITIVE) && want.abs() <= f64::from(f32::MAX) {
                worst = worst.max(ulps(g, want));
            }
            differ += usize::from(g.to_bits() != cpu(i).to_bits());
        }
        println!(
            "{name}: worst {worst:.2} ulp; {differ} of {N} differ from the CPU's f32 ({:.1} %)",
            100.0 * differ as f64 / N as f64
        );
    };
    report("exp", &|i| f64::from(a[i]).exp(), &|i| a[i].exp());
    report("fexp", &|i| f64::from(a[i]).exp(), &|i| a[i].exp());
    report("div", &|i| f64::from(a[i]) / f64::from(b[i]), &|i| {
        a[i] / b[i]
    });
    report("fdiv", &|i| f64::from(a[i]) / f64::from(b[i]), &|i| {
        a[i] / b[i]
    });

    // fexp past the range of normal results: inf, subnormals (or 0 where
    // the adapter flushes them) and 0 where the CPU gives them.
    let wrong = (plane("fexp_wide").iter().enumerate())
        .filter(|&(i, &g)| {
            let want = (a[i] * 6.0).exp();
            if want.is_infinite() || want == 0.0 {
                g != want
            } else if want < f32::MIN_POSITIVE {
                !(0.0..f32::MIN_POSITIVE).contains(&g)
            } else {
                ((g - want) / want).abs() > 1e-6
            }
        })
        .count();
    println!("fexp over |x| <= 120 (overflow, underflow): {wrong} wrong");

    // Contraction: where fused and unfused a·b + c differ, which one came out.
    let (mut fused, mut unfused, mut neither) = (0, 0, 0);
    for (i, &g) in plane("mul_add").iter().enumerate() {
        let (f, u) = (a[i].mul_add(b[i], c[i]), a[i] * b[i] + c[i]);
        if f.to_bits() == u.to_bits() {
            continue;
        }
        if g.to_bits() == f.to_bits() {
            fused += 1;
        } else if g.to_bits() == u.to_bits() {
            unfused += 1;
        } else {
            neither += 1;
        }
    }
    println!("a*b + c where fused and unfused differ: {fused} fused, {unfused} unfused, {neither} neither");
}
