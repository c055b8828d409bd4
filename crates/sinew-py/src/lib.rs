//! The compiled half of the `sinew` Python package (`sinew._sinew`): an
//! engine over numpy arrays, stepped without copies and with the GIL
//! released. The pure-Python half (`python/sinew`) gives it its documented
//! API: config classes per kind, torch and DLPack inputs, the mjlab adapter.
//!
//! Groups arrive as a scenario table (the `[[groups]]` of a scenario file,
//! as Python dicts), so every kind, field and error message is the
//! scenario reader's.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple, PyType};
use sinew::{Backend, CmdRef, EnvIds, Lags, Transmission, Values, CMD_FIELDS};
use sinew_cli::{CliError, Scenario};

/// An exception of `sinew.errors` (classes with two bases each, e.g.
/// `ConfigError(SinewError, ValueError)`, which `create_exception!` cannot
/// declare) carrying `message`.
fn raise(class: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py
            .import("sinew.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            Err(e) => e,
        }
    })
}

fn config_err(message: impl Into<String>) -> PyErr {
    raise("ConfigError", message.into())
}

fn shape_err(message: impl Into<String>) -> PyErr {
    raise("ShapeError", message.into())
}

/// A library error as the Python exception of its boundary, with Sinew's
/// message (which names the group, field and value).
fn py_err(e: sinew::Error) -> PyErr {
    use sinew::ErrorKind as K;
    let message = e.to_string();
    match (e.kind(), &e) {
        (_, sinew::Error::EnvOutOfRange { .. }) => PyIndexError::new_err(message),
        (K::Shape, _) => shape_err(message),
        (K::Lookup, _) => raise("UnknownNameError", message),
        (K::Device, _) => raise("GpuError", message),
        _ => config_err(message),
    }
}

/// A scenario error without the line of the generated text (Python callers
/// wrote no file); a file's own errors keep theirs.
fn cli_err(e: CliError, generated: bool) -> PyErr {
    match e {
        CliError::Sinew(e) => py_err(e),
        CliError::Scenario { message, .. } if generated => config_err(message),
        CliError::Io { .. } => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        e => config_err(e.to_string()),
    }
}

/// A Python value (dicts, lists, numbers, strings, booleans; `None` leaves
/// the key out) as TOML.
fn to_toml(v: &Bound<'_, PyAny>, at: &str) -> PyResult<Option<toml::Value>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Some(toml::Value::Boolean(b.is_true())));
    }
    if v.cast::<PyString>().is_ok() {
        return Ok(Some(toml::Value::String(v.extract()?)));
    }
    // numpy arrays and scalars as Python lists and numbers.
    if v.hasattr("tolist")? && v.cast::<PyList>().is_err() {
        return to_toml(&v.call_method0("tolist")?, at);
    }
    if v.cast::<PyInt>().is_ok() {
        return match v.extract::<i64>() {
            Ok(i) => Ok(Some(toml::Value::Integer(i))),
            Err(_) => Err(config_err(format!("{at}: the integer {v} is out of range"))),
        };
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Some(toml::Value::Float(x)));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (key, value) in d.iter() {
            let key: String = key
                .extract()
                .map_err(|_| config_err(format!("{at}: keys must be strings, got {key:?}")))?;
            if let Some(value) = to_toml(&value, &format!("{at}.{key}"))? {
                table.insert(key, value);
            }
        }
        return Ok(Some(toml::Value::Table(table)));
    }
    if v.cast::<PyList>().is_ok() || v.cast::<PyTuple>().is_ok() {
        let mut array = Vec::new();
        for (k, item) in v.try_iter()?.enumerate() {
            let item = item?;
            let value = to_toml(&item, &format!("{at}[{k}]"))?
                .ok_or_else(|| config_err(format!("{at}[{k}]: None cannot be a list item")))?;
            array.push(value);
        }
        return Ok(Some(toml::Value::Array(array)));
    }
    Err(config_err(format!(
        "{at}: cannot use a value of type {} here",
        v.get_type().name()?
    )))
}

/// What an engine owns besides the backend: zeros for the inputs a step
/// leaves out.
#[derive(Debug)]
struct State {
    engine: sinew::Engine,
    zeros: Vec<f32>,
}

/// The compiled engine. Methods take numpy arrays only; `sinew.Engine`
/// converts torch tensors and DLPack producers before calling them.
#[pyclass(frozen, module = "sinew._sinew")]
struct Engine {
    state: Mutex<State>,
    num_envs: usize,
    num_targets: usize,
    num_ctrl: usize,
    /// The command columns' names.
    targets: Vec<String>,
}

const _: () = {
    const fn send<T: Send>() {}
    send::<sinew::Engine>();
};

fn backend_of(scenario: &Scenario, num_envs: usize, backend: &str) -> Result<sinew::Engine, PyErr> {
    let make = match backend {
        "auto" => sinew::Engine::auto,
        "cpu" => sinew::Engine::cpu,
        "wgpu" | "gpu" => sinew::Engine::gpu,
        other => {
            return Err(PyValueError::new_err(format!(
                "backend: expected \"auto\", \"cpu\" or \"wgpu\", got {other:?}"
            )))
        }
    };
    make(
        &scenario.robot,
        scenario.groups.clone(),
        num_envs,
        scenario.options.clone(),
    )
    .map_err(py_err)
}

impl Engine {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic inside a call is a bug in Sinew (Python sees a
        // PanicException); later calls go on with what it left, which
        // `reset` puts right for the state and delay histories.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn from_scenario(scenario: &Scenario, num_envs: usize, backend: &str) -> PyResult<Engine> {
        let mut engine = backend_of(scenario, num_envs, backend)?;
        let len = engine.plan().num_envs() * engine.plan().num_targets();
        for (name, &value) in &scenario.inputs {
            engine.set_input(name, &vec![value; len]).map_err(py_err)?;
        }
        let plan = engine.plan();
        let (num_targets, num_ctrl) = (plan.num_targets(), plan.num_ctrl());
        Ok(Engine {
            state: Mutex::new(State {
                engine,
                zeros: vec![0.0; len],
            }),
            num_envs,
            num_targets,
            num_ctrl,
            targets: [
                Transmission::Joint,
                Transmission::Tendon,
                Transmission::Site,
            ]
            .iter()
            .flat_map(|&t| scenario.robot.names(t).iter().cloned())
            .collect(),
        })
    }

    /// The number of targets of `group`.
    fn group_targets(&self, group: &str) -> PyResult<usize> {
        let state = self.lock();
        let plan = state.engine.plan();
        let g = plan.group_index(group).map_err(py_err)?;
        Ok(plan.groups()[g].targets.len())
    }
}

impl Engine {
    /// Checks the five inputs and `out` of a step (see `step`) and runs `f`
    /// on the engine over their memory, the GIL released. Returns `out` (a
    /// new array when not given) and what `f` returned.
    fn with_step_args<'py, T: Send>(
        &self,
        py: Python<'py>,
        inputs: [Option<Bound<'py, PyAny>>; 5],
        out: Option<Bound<'py, PyAny>>,
        f: impl FnOnce(&mut sinew::Engine, &CmdRef<'_>, &mut [f32]) -> Result<T, sinew::Error> + Send,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, T)> {
        let shape = [self.num_envs, self.num_targets];
        let mut arrays: [Option<Bound<'py, PyArray2<f32>>>; 5] = Default::default();
        for (k, input) in inputs.into_iter().enumerate() {
            if let Some(v) = input {
                arrays[k] = Some(step_array(v, CMD_FIELDS[k], shape)?);
            }
        }
        let out = match out {
            Some(o) => {
                let out = step_array(o, "out", [self.num_envs, self.num_ctrl])?;
                // SAFETY: a live array object's flags.
                let flags =
                    unsafe { (*numpy::npyffi::_PyArray_GET_ITEM_DATA(out.as_array_ptr())).flags };
                if flags & numpy::npyffi::NPY_ARRAY_WRITEABLE == 0 {
                    return Err(shape_err(
                        "out: the array is read-only (it must be writeable and must not also be \
                         an input)",
                    ));
                }
                out
            }
            None => PyArray2::<f32>::zeros(py, [self.num_envs, self.num_ctrl], false),
        };
        let spans = arrays
            .each_ref()
            .map(|a| a.as_ref().map(byte_span))
            .into_iter()
            .zip(CMD_FIELDS);
        let _claims = Claims::take(spans, byte_span(&out))?;
        // SAFETY: every array is checked C-contiguous and aligned
        // (`step_array`), so its memory is one slice, and this thread holds
        // a reference to each until the slices are gone. `out` shares no
        // byte with an input, and no step running in another thread writes
        // an input's memory or uses `out`'s (`_claims`, which lives until
        // then), so the one mutable slice aliases nothing Sinew touches.
        // Python code writing these arrays from another thread while the
        // GIL is released would race with the step, as with any native
        // code that reads them in place.
        let (slices, out_slice) = unsafe {
            (
                arrays
                    .each_ref()
                    .map(|a| a.as_ref().map(|a| a.as_slice().expect("checked"))),
                out.as_slice_mut().expect("checked"),
            )
        };
        let result = py
            .detach(|| {
                let mut guard = self.lock();
                let State { engine, zeros } = &mut *guard;
                let fields = slices.map(|s| s.unwrap_or(zeros.as_slice()));
                let cmd = CmdRef::new(shape[0], shape[1], fields)?;
                f(engine, &cmd, out_slice)
            })
            .map_err(py_err)?;
        Ok((out, result))
    }
}

/// A step's array argument `v` (named `arg`) as a C-contiguous, aligned
/// float32 array of `shape`: a numpy array as it is, a torch CPU tensor
/// through `Tensor.numpy()` ([`torch_view`]), anything else (another DLPack
/// producer, a list, a tensor with no numpy view) through
/// `sinew._arrays.view`, which shares its memory where it can.
fn step_array<'py>(
    v: Bound<'py, PyAny>,
    arg: &str,
    shape: [usize; 2],
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let v = if v.cast::<PyUntypedArray>().is_ok() {
        v
    } else if let Some(view) = torch_view(&v) {
        view
    } else {
        static VIEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let py = v.py();
        let view = VIEW.get_or_try_init(py, || {
            py.import("sinew._arrays")?
                .getattr("view")
                .map(Bound::unbind)
        })?;
        view.bind(py).call1((v, arg))?
    };
    // The common case in one check; the others' message from `checked_f32`.
    match v.cast::<PyArray2<f32>>() {
        Ok(a) if a.shape() == shape && a.is_c_contiguous() && a.is_aligned() => Ok(a.clone()),
        _ => checked_f32(&v, arg, Some(&shape))?
            .cast_into::<PyArray2<f32>>()
            .map_err(PyErr::from),
    }
}

/// A torch CPU tensor's numpy view (`Tensor.numpy()`, the same memory),
/// or `None` for anything else and for a tensor that has none (on a GPU,
/// with grad), which `sinew._arrays.view` then turns into its error
/// through DLPack. `np.from_dlpack` took 2.98 µs a tensor, `Tensor.numpy()`
/// 0.78; called from here rather than from Python, a step with six
/// tensors took 6.4–6.6 µs against 7.4–7.5 (BENCHMARKS.md).
fn torch_view<'py>(v: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    static MODULES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static TENSOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = v.py();
    let tensor = match TENSOR.get(py) {
        Some(tensor) => tensor,
        None => {
            // No tensor exists before torch is imported.
            let modules = MODULES
                .get_or_try_init(py, || {
                    Ok::<_, PyErr>(py.import("sys")?.getattr("modules")?.unbind())
                })
                .ok()?;
            let torch = modules.bind(py).get_item("torch").ok()?;
            let tensor = torch.getattr("Tensor").ok()?.cast_into::<PyType>().ok()?;
            TENSOR.get_or_init(py, || tensor.unbind())
        }
    };
    if !v.is_instance(tensor.bind(py)).unwrap_or(false) {
        return None;
    }
    v.call_method0("numpy").ok()
}

/// The bytes an array's elements span (contiguous arrays only).
fn byte_span<T: numpy::Element, D: numpy::ndarray::Dimension>(
    a: &Bound<'_, numpy::PyArray<T, D>>,
) -> std::ops::Range<usize> {
    let start = a.data() as usize;
    start..start + a.len() * std::mem::size_of::<T>()
}

/// A `ShapeError` if a step running in another thread writes some of the
/// memory of `a` (argument `arg`), which this thread is about to read
/// with the GIL held. Such a read needs no claim of its own: a step
/// claims its memory with the GIL held, so none starts until it is done.
fn not_written<T: numpy::Element, D: numpy::ndarray::Dimension>(
    a: &Bound<'_, numpy::PyArray<T, D>>,
    arg: &str,
) -> PyResult<()> {
    let in_use = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    if busy(&in_use, &byte_span(a), false) {
        return Err(written_err(arg));
    }
    Ok(())
}

/// Whether `span`, read (or with `write`, written), shares a byte with
/// memory that a running step writes (or uses at all).
fn busy(
    in_use: &[(std::ops::Range<usize>, bool, u64)],
    span: &std::ops::Range<usize>,
    write: bool,
) -> bool {
    in_use
        .iter()
        .any(|(other, written, _)| (write || *written) && overlap(span, other))
}

/// The error for argument `arg` whose memory a running step uses.
fn written_err(arg: &str) -> PyErr {
    shape_err(format!(
        "{arg}: the array shares memory with one that a step running in another thread writes{} \
         (give each thread its own arrays)",
        if arg == "out" { " or reads" } else { "" }
    ))
}

/// Whether two byte ranges share a byte.
fn overlap(a: &std::ops::Range<usize>, b: &std::ops::Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// The memory of every step that runs now, in any thread (its GIL
/// released): each input's bytes, read, and its `out`'s, written, with
/// the step's [`Claims`] number. numpy's own borrow flags would see the
/// same, but only between views of one array object (not a torch tensor
/// or a DLPack view of the same memory), at 0.4 µs a step of six arrays
/// against this list's 80 ns or so (BENCHMARKS.md).
static IN_USE: Mutex<Vec<(std::ops::Range<usize>, bool, u64)>> = Mutex::new(Vec::new());

/// A step's entries in [`IN_USE`], removed when this is dropped.
struct Claims(u64);

impl Claims {
    /// Claims the memory of a step's inputs (each with its name) and of
    /// its `out`; a `ShapeError` if `out` shares a byte with an input or
    /// with a running step's input or `out`, or an input with a running
    /// step's `out`.
    fn take<'a>(
        inputs: impl Iterator<Item = (Option<std::ops::Range<usize>>, &'a str)> + Clone,
        out: std::ops::Range<usize>,
    ) -> PyResult<Claims> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let inputs = inputs.filter_map(|(span, name)| Some((span?, name)));
        if inputs.clone().any(|(span, _)| overlap(&span, &out)) {
            return Err(shape_err(
                "out: the array shares memory with an input (it must be writeable and must not \
                 also be an input)",
            ));
        }
        let mut in_use = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        let clash = inputs
            .clone()
            .find(|(span, _)| busy(&in_use, span, false))
            .map(|(_, name)| name)
            .or_else(|| busy(&in_use, &out, true).then_some("out"));
        if let Some(name) = clash {
            return Err(written_err(name));
        }
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        in_use.extend(inputs.map(|(span, _)| (span, false, id)));
        in_use.push((out, true, id));
        Ok(Claims(id))
    }
}

impl Drop for Claims {
    fn drop(&mut self) {
        let mut in_use = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        in_use.retain(|&(_, _, id)| id != self.0);
    }
}

/// A new `(rows, cols)` float32 array that `fill` writes through the
/// engine (the GIL released).
fn new_array<'py>(
    engine: &Engine,
    py: Python<'py>,
    rows: usize,
    cols: usize,
    fill: impl FnOnce(&mut sinew::Engine, &mut [f32]) -> Result<(), sinew::Error> + Send,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let out = PyArray2::<f32>::zeros(py, [rows, cols], false);
    {
        let mut rw = out.readwrite();
        let slice = rw.as_slice_mut().expect("a new array is contiguous");
        py.detach(|| fill(&mut engine.lock().engine, slice))
            .map_err(py_err)?;
    }
    Ok(out)
}

/// An `f32` array argument checked for dtype, rank, shape, C order and
/// alignment, with the argument's name in every message.
fn checked_f32<'py>(
    v: &Bound<'py, PyAny>,
    arg: &str,
    shape: Option<&[usize]>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let a = v.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{arg}: expected a numpy array of float32, got {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let dtype = a.dtype();
    if !dtype.is_equiv_to(&numpy::dtype::<f32>(v.py())) {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected dtype float32, got {dtype}; convert it with .astype(numpy.float32) \
             (a copy)"
        )));
    }
    if let Some(shape) = shape {
        if a.shape() != shape {
            return Err(shape_err(format!(
                "{arg}: expected shape {shape:?}, got {:?}",
                a.shape()
            )));
        }
    }
    if !a.is_c_contiguous() {
        return Err(shape_err(format!(
            "{arg}: the array is not C-contiguous (Fortran order, a transpose or a strided \
             view); Sinew reads rows in place, so pass numpy.ascontiguousarray({arg}) (a copy)"
        )));
    }
    if !a.is_aligned() {
        return Err(shape_err(format!(
            "{arg}: the array's data is not aligned to its 4-byte floats (a view at an odd byte \
             offset); Sinew reads rows in place, so pass {arg}.copy()"
        )));
    }
    Ok(a.clone())
}

/// Env ids as `EnvIds` (`None`: every env).
fn env_ids<'a>(ids: &'a Option<PyReadonlyArray1<'_, u32>>) -> PyResult<EnvIds<'a>> {
    match ids {
        None => Ok(EnvIds::All),
        Some(ids) => {
            not_written(ids, "env_ids")?;
            Ok(EnvIds::List(ids.as_slice().map_err(|_| {
                shape_err("env_ids: expected a contiguous array of uint32")
            })?))
        }
    }
}

/// Values for a setter: a 0-d array (one value), 1-D (one per selected
/// env), 2-D `(n, 1)` (the same) or `(n, group targets)`.
fn values<'a>(v: &'a numpy::PyReadonlyArrayDyn<'_, f32>, arg: &str) -> PyResult<Values<'a>> {
    not_written(v, arg)?;
    let shape = v.shape().to_vec();
    let slice = v
        .as_slice()
        .map_err(|_| shape_err(format!("{arg}: expected a C-contiguous array")))?;
    Ok(match shape.as_slice() {
        [] => Values::Scalar(slice[0]),
        [_] | [_, 1] => Values::PerEnv(slice),
        [_, _] => Values::PerEnvTarget(slice),
        _ => {
            return Err(shape_err(format!(
                "{arg}: expected a scalar, one value per env or a (envs, targets) array, got \
                 shape {shape:?}"
            )))
        }
    })
}

#[pymethods]
impl Engine {
    /// An engine from a scenario table (as Python dicts), compiled on
    /// `backend`; relative network paths resolve against `base_dir`.
    #[new]
    #[pyo3(signature = (spec, num_envs, backend = "auto", base_dir = None))]
    fn new(
        spec: &Bound<'_, PyDict>,
        num_envs: usize,
        backend: &str,
        base_dir: Option<PathBuf>,
    ) -> PyResult<Engine> {
        let Some(toml::Value::Table(mut table)) = to_toml(spec.as_any(), "spec")? else {
            return Err(config_err("spec: expected a table"));
        };
        table.insert("num_envs".into(), toml::Value::Integer(num_envs as i64));
        table.entry("steps").or_insert(toml::Value::Integer(1));
        let text = toml::to_string(&table)
            .map_err(|e| config_err(format!("spec: cannot be written as TOML: {e}")))?;
        let dir = base_dir.unwrap_or_else(|| PathBuf::from("."));
        let scenario = Scenario::parse_in(&text, "engine", &dir).map_err(|e| cli_err(e, true))?;
        Engine::from_scenario(&scenario, num_envs, backend)
    }

    /// An engine from a scenario file (its own `num_envs` unless given).
    #[staticmethod]
    #[pyo3(signature = (path, num_envs = None, backend = "auto"))]
    fn from_file(path: PathBuf, num_envs: Option<usize>, backend: &str) -> PyResult<Engine> {
        let scenario = Scenario::load(Path::new(&path)).map_err(|e| cli_err(e, false))?;
        let n = num_envs.unwrap_or(scenario.num_envs);
        Engine::from_scenario(&scenario, n, backend)
    }

    /// An engine from a shipped preset (`g1`, `go1`, `so100`, `mimo`, …).
    #[staticmethod]
    #[pyo3(signature = (name, num_envs = None, backend = "auto"))]
    fn from_preset(name: &str, num_envs: Option<usize>, backend: &str) -> PyResult<Engine> {
        let scenario = sinew_cli::presets::preset(name)
            .ok_or_else(|| {
                raise(
                    "UnknownNameError",
                    format!(
                        "no preset `{name}`; the presets are {}",
                        sinew_cli::presets::names()
                    ),
                )
            })?
            .map_err(|e| cli_err(e, false))?;
        let n = num_envs.unwrap_or(scenario.num_envs);
        Engine::from_scenario(&scenario, n, backend)
    }

    /// Envs per step.
    #[getter]
    fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// Command columns (joints, then tendons, then sites).
    #[getter]
    fn num_targets(&self) -> usize {
        self.num_targets
    }

    /// ctrl columns.
    #[getter]
    fn num_ctrl(&self) -> usize {
        self.num_ctrl
    }

    /// The backend, in words.
    #[getter]
    fn description(&self) -> String {
        self.lock().engine.description()
    }

    /// `(group, target, transmission, meaning, command column)` per ctrl column.
    fn ctrl_columns(&self) -> Vec<(String, String, String, String, usize)> {
        let state = self.lock();
        let plan = state.engine.plan();
        plan.ctrl_columns()
            .iter()
            .map(|c| {
                (
                    plan.groups()[c.group].cfg.name.clone(),
                    c.target.clone(),
                    snake(&format!("{:?}", c.transmission)),
                    snake(&format!("{:?}", c.meaning)),
                    c.cmd_column,
                )
            })
            .collect()
    }

    /// The command columns' names.
    #[getter]
    fn targets(&self) -> Vec<String> {
        self.targets.clone()
    }

    /// `(name, kind, targets, params, state)` per group.
    #[allow(clippy::type_complexity, reason = "a plain tuple for Python")]
    fn groups(&self) -> Vec<(String, String, Vec<String>, Vec<String>, Vec<String>)> {
        let state = self.lock();
        state
            .engine
            .plan()
            .groups()
            .iter()
            .map(|g| {
                let a = &g.cfg.actuator;
                (
                    g.cfg.name.clone(),
                    a.kind_id().spec().key.to_owned(),
                    g.targets.clone(),
                    a.params().iter().map(|p| p.name.to_owned()).collect(),
                    g.state().iter().map(|s| s.name.to_owned()).collect(),
                )
            })
            .collect()
    }

    /// Input and output plane names.
    fn planes(&self) -> (Vec<String>, Vec<String>) {
        let state = self.lock();
        let plan = state.engine.plan();
        let names = |p: &[sinew::PlaneSpec]| p.iter().map(|p| p.name.to_owned()).collect();
        (names(plan.input_planes()), names(plan.output_planes()))
    }

    /// One step. Each input is `None` (zeros) or a float32 C-contiguous
    /// `(num_envs, num_targets)` array, read in place; `out` (float32
    /// `(num_envs, num_ctrl)`) is written in place, or a new array is made.
    /// Arguments that are not numpy arrays (torch CPU tensors, other DLPack
    /// producers) become numpy views of the same memory; numpy arrays cost
    /// one call in all (`engine.step` passes them straight
    /// through: 0.8 µs a call against 2.5 through a Python conversion per
    /// argument, BENCHMARKS.md).
    #[pyo3(signature = (position_target, velocity_target, effort_target, pos, vel, out))]
    #[allow(clippy::too_many_arguments, reason = "the five command fields and out")]
    fn step<'py>(
        &self,
        py: Python<'py>,
        position_target: Option<Bound<'py, PyAny>>,
        velocity_target: Option<Bound<'py, PyAny>>,
        effort_target: Option<Bound<'py, PyAny>>,
        pos: Option<Bound<'py, PyAny>>,
        vel: Option<Bound<'py, PyAny>>,
        out: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let inputs = [position_target, velocity_target, effort_target, pos, vel];
        self.with_step_args(py, inputs, out, |engine, cmd, out| {
            engine.step_into(cmd, out)
        })
        .map(|(out, ())| out)
    }

    /// Seconds that `steps` steps over these arguments (as `step` takes
    /// them) take in a Rust loop, the GIL released: the same work as
    /// `step` without Python, for measuring what the binding adds.
    #[pyo3(signature = (steps, position_target, velocity_target, effort_target, pos, vel, out))]
    #[allow(clippy::too_many_arguments, reason = "the five command fields and out")]
    fn time_steps<'py>(
        &self,
        py: Python<'py>,
        steps: usize,
        position_target: Option<Bound<'py, PyAny>>,
        velocity_target: Option<Bound<'py, PyAny>>,
        effort_target: Option<Bound<'py, PyAny>>,
        pos: Option<Bound<'py, PyAny>>,
        vel: Option<Bound<'py, PyAny>>,
        out: Option<Bound<'py, PyAny>>,
    ) -> PyResult<f64> {
        let inputs = [position_target, velocity_target, effort_target, pos, vel];
        self.with_step_args(py, inputs, out, |engine, cmd, out| {
            let start = std::time::Instant::now();
            for _ in 0..steps {
                engine.step_into(cmd, out)?;
            }
            Ok(start.elapsed().as_secs_f64())
        })
        .map(|(_, seconds)| seconds)
    }

    /// The last step's ctrl as a new `(num_envs, num_ctrl)` array.
    fn read_ctrl<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        new_array(self, py, self.num_envs, self.num_ctrl, |e, out| {
            e.read_ctrl(out)
        })
    }

    /// The envs the last step zeroed for a non-finite input or output.
    fn nonfinite_envs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let mut state = self.lock();
        let envs = state.engine.nonfinite_envs().map_err(py_err)?;
        Ok(PyArray1::from_slice(py, envs))
    }

    /// Resets `env_ids` (all when `None`).
    #[pyo3(signature = (env_ids = None))]
    fn reset(&self, env_ids: Option<PyReadonlyArray1<'_, u32>>) -> PyResult<()> {
        let ids = self::env_ids(&env_ids)?;
        self.lock().engine.reset(ids).map_err(py_err)
    }

    /// Writes a parameter of a group.
    #[pyo3(signature = (group, name, values, env_ids = None))]
    fn set_param(
        &self,
        group: &str,
        name: &str,
        values: numpy::PyReadonlyArrayDyn<'_, f32>,
        env_ids: Option<PyReadonlyArray1<'_, u32>>,
    ) -> PyResult<()> {
        let v = self::values(&values, "values")?;
        let ids = self::env_ids(&env_ids)?;
        self.lock()
            .engine
            .set_param(group, name, ids, v)
            .map_err(py_err)
    }

    /// mjlab's `set_gains`: kp and kd together, checked before either is written.
    #[pyo3(signature = (group, kp, kd, env_ids = None))]
    fn set_gains(
        &self,
        group: &str,
        kp: Option<numpy::PyReadonlyArrayDyn<'_, f32>>,
        kd: Option<numpy::PyReadonlyArrayDyn<'_, f32>>,
        env_ids: Option<PyReadonlyArray1<'_, u32>>,
    ) -> PyResult<()> {
        let kp = kp.as_ref().map(|v| values(v, "kp")).transpose()?;
        let kd = kd.as_ref().map(|v| values(v, "kd")).transpose()?;
        let ids = self::env_ids(&env_ids)?;
        self.lock()
            .engine
            .set_gains(group, ids, kp, kd)
            .map_err(py_err)
    }

    /// A group's parameter as `(num_envs, group targets)`.
    fn read_param<'py>(
        &self,
        py: Python<'py>,
        group: &str,
        name: &str,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let n = self.group_targets(group)?;
        new_array(self, py, self.num_envs, n, |e, out| {
            e.read_param(group, name, out)
        })
    }

    /// Writes a state slot of a group.
    #[pyo3(signature = (group, name, values, env_ids = None))]
    fn set_state(
        &self,
        group: &str,
        name: &str,
        values: numpy::PyReadonlyArrayDyn<'_, f32>,
        env_ids: Option<PyReadonlyArray1<'_, u32>>,
    ) -> PyResult<()> {
        let v = self::values(&values, "values")?;
        let ids = self::env_ids(&env_ids)?;
        self.lock()
            .engine
            .set_state(group, name, ids, v)
            .map_err(py_err)
    }

    /// A group's state slot as `(num_envs, group targets)`.
    fn read_state<'py>(
        &self,
        py: Python<'py>,
        group: &str,
        name: &str,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let n = self.group_targets(group)?;
        new_array(self, py, self.num_envs, n, |e, out| {
            e.read_state(group, name, out)
        })
    }

    /// Sets the lags of a group's delay buffer (clamped to its range).
    #[pyo3(signature = (group, lags, env_ids = None))]
    fn set_lags(
        &self,
        group: &str,
        lags: numpy::PyReadonlyArrayDyn<'_, u32>,
        env_ids: Option<PyReadonlyArray1<'_, u32>>,
    ) -> PyResult<()> {
        not_written(&lags, "lags")?;
        let slice = lags
            .as_slice()
            .map_err(|_| shape_err("lags: expected a contiguous array"))?;
        let lags = match lags.ndim() {
            0 => Lags::Scalar(slice[0]),
            1 => Lags::PerEnv(slice),
            n => {
                return Err(shape_err(format!(
                    "lags: expected one lag or one per env, got a {n}-D array"
                )))
            }
        };
        let ids = self::env_ids(&env_ids)?;
        self.lock()
            .engine
            .set_lags(group, ids, lags)
            .map_err(py_err)
    }

    /// The current lag of each env in a group's delay buffer.
    fn read_lags<'py>(&self, py: Python<'py>, group: &str) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let mut lags = vec![0u32; self.num_envs];
        self.lock()
            .engine
            .read_lags(group, &mut lags)
            .map_err(py_err)?;
        Ok(PyArray1::from_vec(py, lags))
    }

    /// Sets an input plane, `(num_envs, num_targets)`.
    fn set_input(&self, name: &str, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = checked_f32(values, "values", Some(&[self.num_envs, self.num_targets]))?;
        let a = a
            .cast::<PyArray2<f32>>()
            .map_err(PyErr::from)?
            .try_readonly()
            .map_err(|e| shape_err(format!("values: {e}")))?;
        not_written(&a, "values")?;
        let slice = a.as_slice().expect("checked C-contiguous");
        self.lock().engine.set_input(name, slice).map_err(py_err)
    }

    /// An output plane of the last step, `(num_envs, num_ctrl)`.
    fn read_output<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray2<f32>>> {
        new_array(self, py, self.num_envs, self.num_ctrl, |e, out| {
            e.read_output(name, out)
        })
    }
}

/// `CamelCase` as `snake_case`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `(key, class name, fields)` of every kind: what `sinew.kinds` builds its
/// config classes from.
#[pyfunction]
fn kinds() -> Vec<(String, String, Vec<String>)> {
    sinew::KindId::ALL
        .iter()
        .map(|&id| {
            let spec = id.spec();
            (
                spec.key.to_owned(),
                spec.name.to_owned(),
                sinew_cli::scenario::kind_fields(id)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            )
        })
        .collect()
}

/// The shipped presets: `(name, aliases)`.
#[pyfunction]
fn presets() -> Vec<(String, Vec<String>)> {
    sinew_cli::presets::PRESETS
        .iter()
        .map(|(name, aliases, _, _)| {
            (
                (*name).to_owned(),
                aliases.iter().map(|a| (*a).to_owned()).collect(),
            )
        })
        .collect()
}

/// What `backend="auto"` finds on this machine, in one line.
#[pyfunction]
fn gpu_status() -> String {
    sinew::gpu_status()
}

/// Sets how long, in seconds, the CPU step's other threads keep looking
/// for work after a step before they sleep, and after the time a caller
/// stepping at a steady pace is due (every engine in the process); 0
/// lets them sleep at once and turns their timed wake off.
#[pyfunction]
fn set_cpu_spin_wait(seconds: f64) -> PyResult<()> {
    let wait = std::time::Duration::try_from_secs_f64(seconds).map_err(|_| {
        PyValueError::new_err(format!(
            "set_cpu_spin_wait: seconds must be finite and at least 0, got {seconds}"
        ))
    })?;
    sinew::CpuBackend::set_spin_wait(wait);
    Ok(())
}

/// The CPU step's spin wait now in force, in seconds.
#[pyfunction]
fn cpu_spin_wait() -> f64 {
    sinew::CpuBackend::spin_wait().as_secs_f64()
}

/// The compiled module.
#[pymodule]
fn _sinew(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(kinds, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_status, m)?)?;
    m.add_function(wrap_pyfunction!(set_cpu_spin_wait, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_spin_wait, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
