//! A wgpu device with Sinew's bind group layout and, per set of kinds, the
//! kernels compiled for it, shared by every backend made from it.

use std::sync::{Arc, Mutex, OnceLock};

use sinew_core::{Error, Source};

use crate::shaders::{self, Specialization};

/// Bindings of the step module (`@binding(n)` in `shaders/step.wgsl`):
/// `(binding, kind)`.
const BINDINGS: [(u32, Binding); 14] = [
    (0, Binding::Read),       // dims
    (1, Binding::Read),       // cmd
    (2, Binding::ReadWrite),  // ctrl
    (3, Binding::Read),       // params
    (4, Binding::ReadWrite),  // ring
    (5, Binding::ReadWrite),  // states
    (6, Binding::ReadWrite),  // flags
    (7, Binding::Read),       // columns
    (8, Binding::Read),       // buffers
    (9, Binding::Read),       // words
    (10, Binding::Read),      // mj
    (11, Binding::ReadWrite), // effort
    (12, Binding::ReadWrite), // state
    (13, Binding::Read),      // net_weights
];

/// Storage buffers the step module binds in one stage.
pub const STORAGE_BUFFERS_PER_STAGE: u32 = 14;

#[derive(Clone, Copy)]
enum Binding {
    Read,
    ReadWrite,
}

/// The bind group layout every step binds, and the kernels specialized to
/// each set of kinds a backend on this context has asked for.
pub(crate) struct Kernels {
    pub layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    /// Whether the kernels are built from SPIR-V without contraction
    /// ([`shaders::spirv_without_contraction`]): on Vulkan where the device
    /// takes passthrough shaders; elsewhere from the WGSL, which a driver
    /// may contract.
    no_contraction: bool,
    /// Pipelines for each [`Specialization`] asked for, made on first use.
    specialized: Mutex<Vec<(Specialization, Arc<Pipelines>)>>,
}

/// The kernels of a step, in dispatch order, for the kinds of one plan.
pub(crate) struct Pipelines {
    pub stages: Vec<(Stage, wgpu::ComputePipeline)>,
}

/// A kernel of the step (an entry point of `shaders/step.wgsl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// `env_stage`: the whole step, workgroups of whole envs.
    Env,
    /// `law_stage`: one thread per element.
    Law,
    /// `output_stage`: one thread per env.
    Output,
}

impl Stage {
    const ALL: [Stage; 3] = [Stage::Env, Stage::Law, Stage::Output];

    fn entry_point(self) -> &'static str {
        match self {
            Stage::Env => "env_stage",
            Stage::Law => "law_stage",
            Stage::Output => "output_stage",
        }
    }

    fn workgroup_size(self) -> u32 {
        match self {
            Stage::Env => crate::layout::ENV_WORKGROUP_SIZE,
            Stage::Law | Stage::Output => crate::WORKGROUP_SIZE,
        }
    }
}

pub(crate) struct Inner {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub kernels: Kernels,
    pub description: String,
    pub software: bool,
}

/// A wgpu device and queue for Sinew's kernels. Cheap to clone; every
/// [`WgpuBackend`](crate::WgpuBackend) made from one context shares its
/// device and the pipelines compiled for each set of kinds (on first use).
#[derive(Clone)]
pub struct GpuContext {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.inner.description)
            .finish_non_exhaustive()
    }
}

impl GpuContext {
    /// Opens the best adapter (high-performance preference; the backends
    /// follow `WGPU_BACKEND` if set) with every limit it offers. Kernels are
    /// compiled when a backend first needs them.
    pub fn new() -> Result<GpuContext, Error> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| Error::NoGpuAdapter {
            reason: format!(
                "{e}; Sinew needs a Vulkan, Metal or DX12 adapter (on Linux without a GPU, \
                 `apt-get install mesa-vulkan-drivers` gives the software one)"
            ),
            source: Some(Source::new(e)),
        })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_PER_STAGE {
            return Err(Error::NoGpuAdapter {
                reason: format!(
                    "adapter {} allows {} storage buffers per shader stage; Sinew's kernels bind {}",
                    info.name, limits.max_storage_buffers_per_shader_stage, STORAGE_BUFFERS_PER_STAGE
                ),
                source: None,
            });
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("sinew"),
            required_limits: limits,
            // Timestamps for `WgpuBackend::gpu_step_times`, passthrough for
            // kernels without contraction, where the adapter has them.
            required_features: adapter.features()
                & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::PASSTHROUGH_SHADERS),
            ..Default::default()
        }))
        .map_err(|e| Error::NoGpuAdapter {
            reason: format!("adapter {} refused a device: {e}", info.name),
            source: Some(Source::new(e)),
        })?;
        let description = format!(
            "{} ({:?}, {:?}, driver {} {})",
            info.name, info.backend, info.device_type, info.driver, info.driver_info
        );
        Ok(Self::build(
            device,
            queue,
            description,
            info.device_type == wgpu::DeviceType::Cpu,
        ))
    }

    /// One context per process, opened on first use (tests, `Engine::auto`).
    /// An error is remembered too: a machine without an adapter is asked once.
    pub fn shared() -> Result<GpuContext, Error> {
        static SHARED: OnceLock<Result<GpuContext, Error>> = OnceLock::new();
        SHARED.get_or_init(GpuContext::new).clone()
    }

    /// A context over a device the caller owns (a wgpu-based simulator's).
    /// The device must allow [`STORAGE_BUFFERS_PER_STAGE`] storage buffers per
    /// shader stage, which the default limits (8) do not: request the
    /// adapter's limits. On Vulkan, request `wgpu::Features::PASSTHROUGH_SHADERS`
    /// too where the adapter has it, so that the kernels are built without
    /// contraction ([`GpuContext::forbids_contraction`]).
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue) -> Result<GpuContext, Error> {
        let limits = device.limits();
        if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_PER_STAGE {
            return Err(Error::Gpu {
                what: "device",
                message: format!(
                    "the device allows {} storage buffers per shader stage and Sinew's kernels \
                     bind {STORAGE_BUFFERS_PER_STAGE}; create it with `required_limits: adapter.limits()`",
                    limits.max_storage_buffers_per_shader_stage
                ),
                source: None,
            });
        }
        Ok(Self::build(device, queue, "caller's device".into(), false))
    }

    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        description: String,
        software: bool,
    ) -> Self {
        let no_contraction = device
            .features()
            .contains(wgpu::Features::PASSTHROUGH_SHADERS)
            && device.adapter_info().backend == wgpu::Backend::Vulkan;
        let kernels = Kernels::new(&device, no_contraction);
        GpuContext {
            inner: Arc::new(Inner {
                device,
                queue,
                kernels,
                description,
                software,
            }),
        }
    }

    /// The step's pipelines for a plan's [`Specialization`], built on first
    /// use and shared by every backend on this context.
    pub(crate) fn pipelines(&self, spec: Specialization) -> Result<Arc<Pipelines>, Error> {
        let kernels = &self.inner.kernels;
        let mut cache = kernels
            .specialized
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, pipelines)) = cache.iter().find(|(k, _)| *k == spec) {
            return Ok(pipelines.clone());
        }
        let device = &self.inner.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipelines = kernels.pipelines(device, &spec);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu {
                what: "kernels",
                message: e.to_string(),
                source: Some(Source::new(e)),
            });
        }
        let pipelines = Arc::new(pipelines?);
        cache.push((spec, pipelines.clone()));
        Ok(pipelines)
    }

    /// The adapter in words: name, graphics API, type and driver.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// True for a software adapter (such as Mesa's llvmpipe/lavapipe), which
    /// the rayon CPU backend outruns.
    pub fn is_software(&self) -> bool {
        self.inner.software
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// Whether the kernels round every float operation on their own, as the
    /// CPU does, with no multiply and add fused into an FMA
    /// ([`shaders::spirv_without_contraction`](crate::shaders::spirv_without_contraction)):
    /// on Vulkan where the device takes passthrough shaders
    /// (`wgpu::Features::PASSTHROUGH_SHADERS`, which [`GpuContext::new`] asks
    /// for). Elsewhere the kernels come from the WGSL, which a driver may
    /// contract (NVIDIA's does).
    pub fn forbids_contraction(&self) -> bool {
        self.inner.kernels.no_contraction
    }

    /// Whether the device allows `env_stage`'s workgroups of
    /// [`ENV_WORKGROUP_SIZE`](crate::ENV_WORKGROUP_SIZE) threads, which a
    /// step of one dispatch needs ([`Dispatches`](crate::Dispatches)).
    pub(crate) fn fits_env_workgroups(&self) -> bool {
        let limits = self.inner.device.limits();
        let size = crate::ENV_WORKGROUP_SIZE;
        limits.max_compute_invocations_per_workgroup >= size
            && limits.max_compute_workgroup_size_x >= size
    }

    /// Whether the device has timestamp queries
    /// (`wgpu::Features::TIMESTAMP_QUERY`), which
    /// [`WgpuBackend::gpu_step_times`](crate::WgpuBackend::gpu_step_times)
    /// needs. [`GpuContext::new`] asks for them where the adapter has them;
    /// a caller's device has them if it was created with them.
    pub fn has_timestamps(&self) -> bool {
        (self.inner.device.features()).contains(wgpu::Features::TIMESTAMP_QUERY)
    }
}

impl Kernels {
    fn new(device: &wgpu::Device, no_contraction: bool) -> Kernels {
        let entries: Vec<wgpu::BindGroupLayoutEntry> = BINDINGS
            .iter()
            .map(|&(binding, kind)| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match kind {
                        Binding::Read => wgpu::BufferBindingType::Storage { read_only: true },
                        Binding::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sinew step"),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sinew step"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        Kernels {
            layout,
            pipeline_layout,
            no_contraction,
            specialized: Mutex::new(Vec::new()),
        }
    }

    fn pipelines(&self, device: &wgpu::Device, spec: &Specialization) -> Result<Pipelines, Error> {
        let delayed_constant = [("DELAYED", f64::from(u8::from(spec.delayed)))];
        let (module, constants): (_, &[(&str, f64)]) = if self.no_contraction {
            let spirv = shaders::spirv_without_contraction(spec).map_err(|e| Error::Gpu {
                what: "kernels",
                message: e,
                source: None,
            })?;
            let entry_points = Stage::ALL.map(|stage| wgpu::PassthroughShaderEntryPoint {
                name: stage.entry_point().into(),
                workgroup_size: (stage.workgroup_size(), 1, 1),
            });
            let descriptor = wgpu::ShaderModuleDescriptorPassthrough {
                label: Some("sinew step"),
                entry_points: entry_points.to_vec().into(),
                spirv: Some(spirv.into()),
                ..Default::default()
            };
            // SAFETY: the SPIR-V is naga's output for the module naga has
            // just validated (with its bounds checks on every index), with
            // only `NoContraction` decorations added, and its bindings and
            // entry points are the WGSL's, which `pipeline_layout` matches
            // (the WGSL path, which wgpu checks, binds the same).
            let module = unsafe { device.create_shader_module_passthrough(descriptor) };
            (module, &[])
        } else {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("sinew step"),
                source: wgpu::ShaderSource::Wgsl(shaders::module_source(spec).into()),
            });
            (module, &delayed_constant)
        };
        let pipeline_layout = &self.pipeline_layout;
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    ..Default::default()
                },
                cache: None,
            })
        };
        let stages = match spec.env_stage {
            true => vec![Stage::Env],
            false => vec![Stage::Law, Stage::Output],
        };
        Ok(Pipelines {
            stages: (stages.into_iter())
                .map(|stage| (stage, pipeline(stage.entry_point())))
                .collect(),
        })
    }
}
