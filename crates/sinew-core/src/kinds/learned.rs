//! Learned actuator networks: mjlab's `LearnedMlpActuator`, Isaac Lab's
//! `ActuatorNetMLP` and `ActuatorNetLSTM`.
//!
//! A network replaces the analytic motor law: an MLP reads a short history of
//! position errors and velocities, an LSTM reads the current pair and keeps a
//! hidden and a cell state. Both outputs then go through the DC motor clip of
//! [`dc_motor_clip`](super::dc_motor_clip) with the current velocity and the
//! group's (per-env) `effort_limit`, `saturation_effort` and `velocity_limit`.
//!
//! Weights come from a safetensors file written by PyTorch
//! ([`Mlp::from_safetensors`], [`LstmNet::from_safetensors`]) or from layers
//! built in code ([`Mlp::new`]). Every tensor is checked when the network is
//! made (shape, chaining, finite values); the error names the tensor.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use super::dc_motor::{SATURATION_EFFORT, VELOCITY_LIMIT};
use super::ideal_pd::{symmetric_ranges, EFFORT_LIMIT};
use super::spec::{param_slot, Kind, LawIo, ParamSpec, Stage, StateSpec};
use super::{invalid, CommandField};
use crate::error::Error;

/// The widest layer (and LSTM hidden size) a network may have: the WGSL
/// kernel keeps one layer's activations in a private array of this size.
pub const NET_MAX_WIDTH: usize = 128;

/// The longest history (largest tap + 1) a learned MLP may read.
pub const MAX_HISTORY: usize = 64;

/// The largest network file read (bytes): far above any actuator network
/// (a 128-wide LSTM is ~0.5 MB), low enough that a wrong path cannot fill
/// memory.
pub const MAX_NETWORK_FILE_BYTES: u64 = 256 << 20;

/// An elementwise activation after a dense layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Activation {
    /// `x`.
    Identity = 0,
    /// `max(x, 0)`.
    Relu = 1,
    /// `x` for `x > 0`, else `eˣ − 1` (alpha 1, torch's default).
    Elu = 2,
    /// `tanh(x)`.
    Tanh = 3,
    /// `x / (1 + |x|)`.
    Softsign = 4,
    /// `1 / (1 + e⁻ˣ)`.
    Sigmoid = 5,
}

impl Activation {
    /// Every activation, in code order.
    pub const ALL: [Activation; 6] = [
        Activation::Identity,
        Activation::Relu,
        Activation::Elu,
        Activation::Tanh,
        Activation::Softsign,
        Activation::Sigmoid,
    ];

    /// The name (torch's module name, lower case).
    pub fn name(self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Relu => "relu",
            Activation::Elu => "elu",
            Activation::Tanh => "tanh",
            Activation::Softsign => "softsign",
            Activation::Sigmoid => "sigmoid",
        }
    }

    /// Every name, comma-separated (for messages).
    pub fn known_names() -> String {
        Activation::ALL.map(Activation::name).join(", ")
    }

    /// Looks an activation up by name, case-insensitively (`none` and
    /// `linear` mean identity).
    pub fn from_name(name: &str) -> Option<Activation> {
        let name = name.trim().to_ascii_lowercase();
        match name.as_str() {
            "none" | "linear" => Some(Activation::Identity),
            _ => Activation::ALL.into_iter().find(|a| a.name() == name),
        }
    }

    /// Applies the activation (WGSL `activate`).
    #[inline(always)]
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::Identity => x,
            Activation::Relu => {
                if x > 0.0 {
                    x
                } else {
                    0.0
                }
            }
            Activation::Elu => {
                if x > 0.0 {
                    x
                } else {
                    x.exp() - 1.0
                }
            }
            Activation::Tanh => net_tanh(x),
            Activation::Softsign => x / (1.0 + x.abs()),
            Activation::Sigmoid => net_sigmoid(x),
        }
    }
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `tanh` from one exponential, finite for every finite input (WGSL
/// `net_tanh`; the shader's built-in may overflow for large `|x|`).
#[inline(always)]
pub fn net_tanh(x: f32) -> f32 {
    let e = (-2.0 * x.abs()).exp();
    ((1.0 - e) / (1.0 + e)).copysign(x)
}

/// The logistic function (WGSL `net_sigmoid`).
#[inline(always)]
pub fn net_sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// One dense layer, `y = act(x·Wᵀ + b)` (torch's `Linear` then an activation).
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// The tensors' common prefix (`0` for `0.weight` / `0.bias`), used in errors.
    pub name: String,
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// `[outputs][inputs]`, row-major (torch's layout).
    pub weight: Vec<f32>,
    /// `[outputs]`.
    pub bias: Vec<f32>,
    /// Applied to every output.
    pub activation: Activation,
}

impl Dense {
    /// A layer from torch-shaped data: `weight` is `[outputs][inputs]`.
    pub fn new(
        name: impl Into<String>,
        outputs: usize,
        inputs: usize,
        weight: Vec<f32>,
        bias: Vec<f32>,
        activation: Activation,
    ) -> Dense {
        Dense {
            name: name.into(),
            inputs,
            outputs,
            weight,
            bias,
            activation,
        }
    }

    fn check(&self, origin: &str) -> Result<(), Error> {
        let weight = format!("{}.weight", self.name);
        if self.inputs == 0 || self.outputs == 0 {
            return Err(net_error(
                origin,
                &weight,
                "a layer needs at least one input and output".into(),
            ));
        }
        if self.inputs > NET_MAX_WIDTH || self.outputs > NET_MAX_WIDTH {
            return Err(net_error(
                origin,
                &weight,
                format!(
                    "shape [{}, {}] is wider than the {NET_MAX_WIDTH} units a layer may have",
                    self.outputs, self.inputs
                ),
            ));
        }
        check_values(origin, &weight, &self.weight, self.outputs * self.inputs)?;
        check_values(
            origin,
            &format!("{}.bias", self.name),
            &self.bias,
            self.outputs,
        )
    }
}

/// One LSTM layer in torch's form: gates in the order input, forget, cell,
/// output; `weight_ih` is `[4·hidden][inputs]`, `weight_hh` `[4·hidden][hidden]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LstmLayer {
    /// The tensors' common prefix and suffix, e.g. `lstm.` and `_l0`, joined
    /// in errors as `lstm.weight_ih_l0`.
    pub name: (String, String),
    /// Input width (2 for the first layer, `hidden` after).
    pub inputs: usize,
    /// Hidden size.
    pub hidden: usize,
    /// `[4·hidden][inputs]`.
    pub weight_ih: Vec<f32>,
    /// `[4·hidden][hidden]`.
    pub weight_hh: Vec<f32>,
    /// `[4·hidden]`.
    pub bias_ih: Vec<f32>,
    /// `[4·hidden]`.
    pub bias_hh: Vec<f32>,
}

impl LstmLayer {
    fn tensor(&self, which: &str) -> String {
        format!("{}{which}{}", self.name.0, self.name.1)
    }

    fn check(&self, origin: &str) -> Result<(), Error> {
        let g = 4 * self.hidden;
        if self.hidden == 0 || self.hidden > NET_MAX_WIDTH {
            return Err(net_error(
                origin,
                &self.tensor("weight_hh"),
                format!("hidden size {} is outside 1..={NET_MAX_WIDTH}", self.hidden),
            ));
        }
        check_values(
            origin,
            &self.tensor("weight_ih"),
            &self.weight_ih,
            g * self.inputs,
        )?;
        check_values(
            origin,
            &self.tensor("weight_hh"),
            &self.weight_hh,
            g * self.hidden,
        )?;
        check_values(origin, &self.tensor("bias_ih"), &self.bias_ih, g)?;
        check_values(origin, &self.tensor("bias_hh"), &self.bias_hh, g)
    }
}

fn net_error(origin: &str, tensor: &str, reason: String) -> Error {
    Error::InvalidNetwork {
        origin: origin.to_owned(),
        tensor: tensor.to_owned(),
        reason,
    }
}

fn check_values(origin: &str, tensor: &str, values: &[f32], len: usize) -> Result<(), Error> {
    if values.len() != len {
        return Err(net_error(
            origin,
            tensor,
            format!("holds {} values, its shape needs {len}", values.len()),
        ));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(net_error(
            origin,
            tensor,
            format!("element {i} is {}; weights must be finite", values[i]),
        ));
    }
    Ok(())
}

/// A multilayer perceptron mapping one row of features to one output.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlp {
    origin: String,
    layers: Vec<Dense>,
}

impl Mlp {
    /// Checks the layers (widths chain, the last has one output, every value
    /// finite, no layer wider than [`NET_MAX_WIDTH`]). `origin` names the
    /// network in errors (a file path, say).
    ///
    /// ```
    /// use sinew_core::{Activation, Dense, Mlp};
    /// let net = Mlp::new("sum", vec![
    ///     Dense::new("0", 1, 2, vec![1.0, 1.0], vec![0.0], Activation::Identity),
    /// ])?;
    /// assert_eq!(net.forward(&[2.0, 3.0]), 5.0);
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    pub fn new(origin: impl Into<String>, layers: Vec<Dense>) -> Result<Mlp, Error> {
        let origin = origin.into();
        let Some(last) = layers.last() else {
            return Err(net_error(
                &origin,
                "(layers)",
                "the network has no layer".into(),
            ));
        };
        for (k, layer) in layers.iter().enumerate() {
            layer.check(&origin)?;
            if k > 0 && layer.inputs != layers[k - 1].outputs {
                return Err(net_error(
                    &origin,
                    &format!("{}.weight", layer.name),
                    format!(
                        "takes {} inputs but the layer before gives {}",
                        layer.inputs,
                        layers[k - 1].outputs
                    ),
                ));
            }
        }
        if last.outputs != 1 {
            return Err(net_error(
                &origin,
                &format!("{}.weight", last.name),
                format!(
                    "the last layer gives {} outputs; an actuator net gives 1",
                    last.outputs
                ),
            ));
        }
        Ok(Mlp { origin, layers })
    }

    /// What the network was made from (a file path, or the name given to [`Mlp::new`]).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The layers, input first.
    pub fn layers(&self) -> &[Dense] {
        &self.layers
    }

    /// Width of the input row.
    pub fn input_width(&self) -> usize {
        self.layers[0].inputs
    }

    /// Evaluates one row with the CPU backend's arithmetic (for checks and
    /// tools; a step evaluates every row itself).
    ///
    /// # Panics
    ///
    /// When `input` does not hold [`Mlp::input_width`] values.
    pub fn forward(&self, input: &[f32]) -> f32 {
        assert_eq!(
            input.len(),
            self.input_width(),
            "the network {} takes {} inputs",
            self.origin,
            self.input_width()
        );
        crate::net::evaluate_dense(&self.layers, input)
    }

    /// Reads an MLP from safetensors bytes: the `Linear` layers' `weight`
    /// (`[out, in]`) and `bias` tensors, in the order of the file's
    /// `layers` metadata (comma-separated prefixes), or else every
    /// `*.weight` in natural order (`0`, `2`, `10` as numbers), with the
    /// activations of its `activations` metadata (one per layer). `spec`
    /// overrides either. Every tensor must belong to a layer.
    ///
    /// The PyTorch side, for an `nn.Sequential` of `Linear` and activations:
    ///
    /// ```python
    /// from safetensors.torch import save_file
    /// save_file(net.state_dict(), "net.safetensors", metadata={"activations": "softsign,softsign,identity"})
    /// ```
    pub fn from_safetensors(bytes: &[u8], origin: &str, spec: &NetSpec) -> Result<Mlp, Error> {
        let mut file = TensorFile::parse(bytes, origin)?;
        let prefixes = file.layer_order(spec)?;
        let layers = file.dense_layers(&prefixes, spec, false)?;
        file.check_all_used()?;
        Mlp::new(origin, layers)
    }

    /// [`Mlp::from_safetensors`] on a file.
    pub fn load(path: impl AsRef<std::path::Path>, spec: &NetSpec) -> Result<Mlp, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let bytes = read_file(path, &origin)?;
        Mlp::from_safetensors(&bytes, &origin, spec)
    }
}

/// An LSTM stack and a dense head from the last hidden state to one output
/// (Isaac Lab's `ActuatorNetLSTM` module).
#[derive(Debug, Clone, PartialEq)]
pub struct LstmNet {
    origin: String,
    layers: Vec<LstmLayer>,
    head: Vec<Dense>,
}

impl LstmNet {
    /// Checks the stack (the first layer takes 2 inputs, each next one the
    /// hidden size, all hidden sizes equal) and the head (it takes the hidden
    /// size and gives 1; an empty head needs hidden size 1).
    pub fn new(
        origin: impl Into<String>,
        layers: Vec<LstmLayer>,
        head: Vec<Dense>,
    ) -> Result<LstmNet, Error> {
        let origin = origin.into();
        let Some(first) = layers.first() else {
            return Err(net_error(
                &origin,
                "weight_ih_l0",
                "the network has no LSTM layer".into(),
            ));
        };
        let hidden = first.hidden;
        for (k, layer) in layers.iter().enumerate() {
            layer.check(&origin)?;
            let inputs = if k == 0 { 2 } else { hidden };
            if layer.inputs != inputs || layer.hidden != hidden {
                return Err(net_error(
                    &origin,
                    &layer.tensor("weight_ih"),
                    format!(
                        "layer {k} has {} inputs and hidden size {}; it needs {inputs} inputs \
                         ([q* − q, q̇] for the first layer) and hidden size {hidden}",
                        layer.inputs, layer.hidden
                    ),
                ));
            }
        }
        if head.is_empty() {
            if hidden != 1 {
                return Err(net_error(
                    &origin,
                    "(head)",
                    format!("no dense head, so the hidden size must be 1, not {hidden}"),
                ));
            }
        } else {
            let mlp = Mlp::new(origin.clone(), head.clone())?;
            if mlp.input_width() != hidden {
                return Err(net_error(
                    &origin,
                    &format!("{}.weight", head[0].name),
                    format!(
                        "takes {} inputs; the LSTM gives {hidden}",
                        mlp.input_width()
                    ),
                ));
            }
        }
        Ok(LstmNet {
            origin,
            layers,
            head,
        })
    }

    /// What the network was made from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The LSTM layers, input first.
    pub fn layers(&self) -> &[LstmLayer] {
        &self.layers
    }

    /// The dense head (maybe empty).
    pub fn head(&self) -> &[Dense] {
        &self.head
    }

    /// Hidden size.
    pub fn hidden(&self) -> usize {
        self.layers[0].hidden
    }

    /// Reads an LSTM network from safetensors bytes: torch `nn.LSTM`
    /// tensors `<prefix>weight_ih_l<k>`, `weight_hh_l<k>`, `bias_ih_l<k>`,
    /// `bias_hh_l<k>` for k = 0, 1, …, and every other `*.weight`/`*.bias`
    /// pair as the dense head (ordered as in [`Mlp::from_safetensors`]). The
    /// head's activations default to identity.
    pub fn from_safetensors(bytes: &[u8], origin: &str, spec: &NetSpec) -> Result<LstmNet, Error> {
        let mut file = TensorFile::parse(bytes, origin)?;
        let mut layers = Vec::new();
        for k in 0.. {
            let suffix = format!("_l{k}");
            let Some(prefix) = file.names().find_map(|n| {
                n.strip_suffix(&format!("weight_ih{suffix}"))
                    .map(str::to_owned)
            }) else {
                break;
            };
            let name = |which: &str| format!("{prefix}{which}{suffix}");
            let (shape_ih, weight_ih) = file.take(&name("weight_ih"))?;
            let (shape_hh, weight_hh) = file.take(&name("weight_hh"))?;
            let (shape_bih, bias_ih) = file.take(&name("bias_ih"))?;
            let (shape_bhh, bias_hh) = file.take(&name("bias_hh"))?;
            if shape_ih.len() != 2 || shape_ih[0] % 4 != 0 {
                return Err(net_error(
                    origin,
                    &name("weight_ih"),
                    format!("shape {shape_ih:?}; an LSTM's is [4·hidden, inputs]"),
                ));
            }
            // Torch's shapes exactly: a transposed weight_hh holds as many
            // values and would run silently wrong.
            let gates = shape_ih[0];
            let expected = [
                ("weight_hh", shape_hh, vec![gates, gates / 4]),
                ("bias_ih", shape_bih, vec![gates]),
                ("bias_hh", shape_bhh, vec![gates]),
            ];
            for (which, shape, want) in expected {
                if shape != want {
                    return Err(net_error(
                        origin,
                        &name(which),
                        format!("shape {shape:?}; with weight_ih {shape_ih:?} it must be {want:?}"),
                    ));
                }
            }
            layers.push(LstmLayer {
                name: (prefix.clone(), suffix),
                inputs: shape_ih[1],
                hidden: shape_ih[0] / 4,
                weight_ih,
                weight_hh,
                bias_ih,
                bias_hh,
            });
        }
        // The LSTM's tensors are taken: what is left is the head.
        let prefixes = file.layer_order(spec)?;
        let head = file.dense_layers(&prefixes, spec, true)?;
        file.check_all_used()?;
        LstmNet::new(origin, layers, head)
    }

    /// [`LstmNet::from_safetensors`] on a file.
    pub fn load(path: impl AsRef<std::path::Path>, spec: &NetSpec) -> Result<LstmNet, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let bytes = read_file(path, &origin)?;
        LstmNet::from_safetensors(&bytes, &origin, spec)
    }
}

fn read_file(path: &std::path::Path, origin: &str) -> Result<Vec<u8>, Error> {
    crate::memory::read_user_file(path, MAX_NETWORK_FILE_BYTES)
        .map_err(|e| net_error(origin, "(file)", format!("cannot read it: {e}")))
}

/// What a weights file's metadata may leave out or get wrong: given here,
/// it overrides the metadata (a scenario file's `layers` / `activations`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetSpec {
    /// The dense layers' tensor prefixes, input first.
    pub layers: Option<Vec<String>>,
    /// One activation per dense layer.
    pub activations: Option<Vec<Activation>>,
}

/// The tensors of one safetensors file not yet taken by a layer, converted
/// to f32.
struct TensorFile {
    origin: String,
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    metadata: HashMap<String, String>,
}

impl TensorFile {
    fn parse(bytes: &[u8], origin: &str) -> Result<TensorFile, Error> {
        use safetensors::tensor::Dtype;
        let bad = |e: safetensors::SafeTensorError| {
            net_error(origin, "(file)", format!("not a safetensors file: {e}"))
        };
        let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).map_err(bad)?;
        let file = safetensors::SafeTensors::deserialize(bytes).map_err(bad)?;
        let mut tensors = BTreeMap::new();
        for (name, view) in file.tensors() {
            let data = view.data();
            let values: Vec<f32> = match view.dtype() {
                Dtype::F32 => data
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
                Dtype::F64 => data
                    .chunks_exact(8)
                    .map(|b| {
                        f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32
                    })
                    .collect(),
                Dtype::F16 => data
                    .chunks_exact(2)
                    .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                    .collect(),
                Dtype::BF16 => data
                    .chunks_exact(2)
                    .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                    .collect(),
                other => {
                    return Err(net_error(
                        origin,
                        &name,
                        format!("dtype {other:?}; weights must be F32, F64, F16 or BF16"),
                    ))
                }
            };
            tensors.insert(name, (view.shape().to_vec(), values));
        }
        Ok(TensorFile {
            origin: origin.to_owned(),
            tensors,
            metadata: meta.metadata().clone().unwrap_or_default(),
        })
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// Takes a tensor's shape and values out of the file.
    fn take(&mut self, name: &str) -> Result<(Vec<usize>, Vec<f32>), Error> {
        self.tensors.remove(name).ok_or_else(|| {
            let left: Vec<&str> = self.names().collect();
            net_error(
                &self.origin,
                name,
                format!(
                    "missing; the tensors not yet used are [{}]",
                    left.join(", ")
                ),
            )
        })
    }

    /// The dense layers' prefixes: `spec`, else the `layers` metadata, else
    /// every `*.weight` left, in natural order.
    fn layer_order(&self, spec: &NetSpec) -> Result<Vec<String>, Error> {
        if let Some(layers) = &spec.layers {
            return Ok(layers.clone());
        }
        if let Some(layers) = self.metadata.get("layers") {
            return Ok(split_list(layers));
        }
        let mut prefixes: Vec<String> = self
            .names()
            .filter_map(|n| n.strip_suffix(".weight").map(str::to_owned))
            .collect();
        prefixes.sort_by_key(|p| natural_key(p));
        Ok(prefixes)
    }

    /// The dense layers named by `prefixes`, with their activations.
    fn dense_layers(
        &mut self,
        prefixes: &[String],
        spec: &NetSpec,
        identity_default: bool,
    ) -> Result<Vec<Dense>, Error> {
        let activations =
            match (&spec.activations, self.metadata.get("activations")) {
                (Some(a), _) => a.clone(),
                (None, Some(text)) => split_list(text)
                    .iter()
                    .map(|name| {
                        Activation::from_name(name).ok_or_else(|| {
                            net_error(
                                &self.origin,
                                "(metadata activations)",
                                format!(
                                    "unknown activation `{name}`; known: {}",
                                    Activation::known_names()
                                ),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
                (None, None) if identity_default => vec![Activation::Identity; prefixes.len()],
                (None, None) => return Err(net_error(
                    &self.origin,
                    "(metadata activations)",
                    "missing: give one activation per layer in the file's `activations` metadata \
                     (e.g. \"elu,elu,identity\") or beside it"
                        .into(),
                )),
            };
        if activations.len() != prefixes.len() {
            return Err(net_error(
                &self.origin,
                "(metadata activations)",
                format!(
                    "{} activations for {} layers [{}]",
                    activations.len(),
                    prefixes.len(),
                    prefixes.join(", ")
                ),
            ));
        }
        prefixes
            .iter()
            .zip(activations)
            .map(|(prefix, activation)| {
                let weight_name = format!("{prefix}.weight");
                let (shape, weight) = self.take(&weight_name)?;
                let [outputs, inputs] = shape[..] else {
                    return Err(net_error(
                        &self.origin,
                        &weight_name,
                        format!("shape {shape:?}; a Linear weight is [out, in]"),
                    ));
                };
                let bias_name = format!("{prefix}.bias");
                let (bias_shape, bias) = self.take(&bias_name)?;
                if bias_shape != [outputs] {
                    return Err(net_error(
                        &self.origin,
                        &bias_name,
                        format!("shape {bias_shape:?}; the weight needs [{outputs}]"),
                    ));
                }
                Ok(Dense::new(
                    prefix.clone(),
                    outputs,
                    inputs,
                    weight,
                    bias,
                    activation,
                ))
            })
            .collect()
    }

    fn check_all_used(&self) -> Result<(), Error> {
        match self.names().next() {
            Some(unused) => Err(net_error(
                &self.origin,
                unused,
                "belongs to no layer; list the layers in the `layers` metadata".into(),
            )),
            None => Ok(()),
        }
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Orders `layer.10` after `layer.2`: digit runs compare as numbers.
fn natural_key(name: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut rest = name;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            key.push((rest[..digits].parse().unwrap_or(u64::MAX), String::new()));
            rest = &rest[digits..];
        } else {
            let text = rest.len() - rest.trim_start_matches(|c: char| !c.is_ascii_digit()).len();
            key.push((0, rest[..text].to_owned()));
            rest = &rest[text..];
        }
    }
    key
}

/// IEEE half to single precision (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: frac · 2⁻²⁴, exact in f32.
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Order of the two halves of an MLP's input row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum InputOrder {
    /// Position errors first, then velocities (the default of both).
    #[default]
    PosVel = 0,
    /// Velocities first.
    VelPos = 1,
}

impl InputOrder {
    /// Looks an order up by its mjlab name (`pos_vel`, `vel_pos`).
    pub fn from_name(name: &str) -> Option<InputOrder> {
        match name {
            "pos_vel" => Some(InputOrder::PosVel),
            "vel_pos" => Some(InputOrder::VelPos),
            _ => None,
        }
    }
}

/// What an MLP's history holds after a reset, before enough frames exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum HistoryInit {
    /// The first frame after a reset fills every slot (mjlab's
    /// `CircularBuffer`; the default).
    #[default]
    Backfill = 0,
    /// Older slots read 0 until written (Isaac Lab's zero-initialized history).
    Zeros = 1,
}

/// A learned MLP actuator (mjlab `LearnedMlpActuatorCfg`, Isaac Lab
/// `ActuatorNetMLPCfg`).
///
/// Per (env, target) the position error `e = q*_delayed − q` and the velocity
/// `q̇` go into histories; the network reads the row
/// `[ps·e(t−k) for k in taps] ++ [vs·q̇(t−k) for k in taps]` (halves swapped
/// for [`InputOrder::VelPos`]), its output times `torque_scale` goes through
/// the DC motor clip with the current velocity.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedMlpCfg {
    /// The network: `2·taps.len()` inputs, one output.
    pub network: Arc<Mlp>,
    /// History taps, 0 = now (mjlab's `history_length = H` is `0..H`; Isaac
    /// Lab's `input_idx`). Each below [`MAX_HISTORY`].
    pub taps: Vec<u32>,
    /// Scale of the position errors. Finite.
    pub pos_scale: f32,
    /// Scale of the velocities. Finite.
    pub vel_scale: f32,
    /// Scale of the network output. Finite.
    pub torque_scale: f32,
    /// Order of the input halves.
    pub input_order: InputOrder,
    /// History contents after a reset.
    pub history_init: HistoryInit,
    /// Flat output limit of the DC clip (N·m), > 0 (`inf` for none).
    pub effort_limit: f32,
    /// Stall torque of the DC clip (N·m), finite, > 0.
    pub saturation_effort: f32,
    /// No-load speed of the DC clip (rad/s), finite, > 0.
    pub velocity_limit: f32,
}

impl LearnedMlpCfg {
    /// mjlab's defaults: taps `0..3`, unit scales, `pos_vel`, backfill.
    pub fn new(
        network: impl Into<Arc<Mlp>>,
        effort_limit: f32,
        saturation_effort: f32,
        velocity_limit: f32,
    ) -> Self {
        LearnedMlpCfg {
            network: network.into(),
            taps: vec![0, 1, 2],
            pos_scale: 1.0,
            vel_scale: 1.0,
            torque_scale: 1.0,
            input_order: InputOrder::PosVel,
            history_init: HistoryInit::Backfill,
            effort_limit,
            saturation_effort,
            velocity_limit,
        }
    }

    /// mjlab's `history_length`: taps `0..h`.
    ///
    /// A length past [`MAX_HISTORY`] keeps taps up to `MAX_HISTORY`, which
    /// [`validate`](crate::Kind::validate) then rejects, so that a huge
    /// length is an error rather than a huge allocation.
    pub fn with_history_length(mut self, h: u32) -> Self {
        self.taps = (0..h.min(MAX_HISTORY as u32 + 1)).collect();
        self
    }

    /// Isaac Lab's `input_idx`.
    pub fn with_taps(mut self, taps: impl Into<Vec<u32>>) -> Self {
        self.taps = taps.into();
        self
    }

    /// `pos_scale`, `vel_scale`, `torque_scale`.
    pub fn with_scales(mut self, pos: f32, vel: f32, torque: f32) -> Self {
        (self.pos_scale, self.vel_scale, self.torque_scale) = (pos, vel, torque);
        self
    }

    /// The input order.
    pub fn with_input_order(mut self, order: InputOrder) -> Self {
        self.input_order = order;
        self
    }

    /// The history contents after a reset.
    pub fn with_history_init(mut self, init: HistoryInit) -> Self {
        self.history_init = init;
        self
    }

    /// Slots of history kept: the largest tap + 1.
    pub fn history_len(&self) -> usize {
        self.taps.iter().max().map_or(0, |&t| t as usize + 1)
    }

    pub(crate) fn validate(&self, group: &str) -> Result<(), Error> {
        for (field, v) in [
            ("pos_scale", self.pos_scale),
            ("vel_scale", self.vel_scale),
            ("torque_scale", self.torque_scale),
        ] {
            if !v.is_finite() {
                return Err(invalid(group, field, v, "a scale must be finite"));
            }
        }
        if self.taps.is_empty() {
            return Err(Error::InvalidParam {
                group: group.to_owned(),
                field: "taps".into(),
                value: "[]".into(),
                reason: "the network needs at least one history tap",
            });
        }
        if let Some(&t) = self.taps.iter().find(|&&t| t as usize >= MAX_HISTORY) {
            return Err(Error::InvalidParam {
                group: group.to_owned(),
                field: "taps".into(),
                value: t.to_string(),
                reason: "a history tap must be below 64 (a history_length at most 64)",
            });
        }
        let width = self.network.input_width();
        if width != 2 * self.taps.len() {
            return Err(net_error(
                &format!("{} (group `{group}`)", self.network.origin()),
                &format!("{}.weight", self.network.layers()[0].name),
                format!(
                    "takes {width} inputs; {} taps need 2·{} = {}",
                    self.taps.len(),
                    self.taps.len(),
                    2 * self.taps.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The DC clip's parameters of a learned column, in slot order
/// ([`LearnedStage::env_efforts`](crate::LearnedStage::env_efforts) reads them so).
pub const LEARNED_PARAMS: &[ParamSpec] = &[EFFORT_LIMIT, SATURATION_EFFORT, VELOCITY_LIMIT];

/// The slots of the effort limit, saturation effort and velocity limit in
/// [`LEARNED_PARAMS`]: the order of [`LearnedStage::env_efforts`](crate::LearnedStage::env_efforts)'s `limits`.
pub const LEARNED_LIMIT_SLOTS: [usize; 3] = [
    param_slot(LEARNED_PARAMS, "effort_limit"),
    param_slot(LEARNED_PARAMS, "saturation_effort"),
    param_slot(LEARNED_PARAMS, "velocity_limit"),
];

/// The `Kind` items both learned kinds share: the DC clip's parameters, the
/// position target forwarded to the learned stage.
macro_rules! learned_kind {
    ($name:literal, $key:literal) => {
        const NAME: &'static str = $name;
        const KEY: &'static str = $key;
        const PARAMS: &'static [ParamSpec] = LEARNED_PARAMS;
        const STATE: &'static [StateSpec] = &[];
        const READS: &'static [CommandField] = &[CommandField::Position];
        const WGSL: &'static str = include_str!("../../../../shaders/learned.wgsl");
        const STAGE: Stage = Stage::Learned;

        fn param_value(&self, k: usize) -> f32 {
            [
                self.effort_limit,
                self.saturation_effort,
                self.velocity_limit,
            ][k]
        }

        fn command_field(&self) -> Option<CommandField> {
            Some(CommandField::Position)
        }

        fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
            symmetric_ranges(self.effort_limit)
        }

        /// Forwards the (delayed) position target; the learned stage runs
        /// the network (on the GPU, the WGSL twin does).
        #[inline(always)]
        fn law<I: LawIo>(io: &mut I) -> f32 {
            io.target(CommandField::Position)
        }
    };
}

/// Deterministic weights in `[-scale, scale)` for the examples.
fn example_weights(n: usize, seed: f32, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 + 1.0) * seed).sin() * scale)
        .collect()
}

impl Kind for LearnedMlpCfg {
    learned_kind!("LearnedMlp", "learned_mlp");

    fn example() -> Self {
        // Isaac Lab's ActuatorNetMLP shape: 6 inputs (3 taps), softsign hidden.
        let net = Mlp::new(
            "example mlp",
            vec![
                Dense::new(
                    "0",
                    8,
                    6,
                    example_weights(48, 0.77, 0.9),
                    example_weights(8, 1.3, 0.2),
                    Activation::Softsign,
                ),
                Dense::new(
                    "1",
                    1,
                    8,
                    example_weights(8, 0.93, 1.2),
                    vec![0.1],
                    Activation::Identity,
                ),
            ],
        )
        .expect("finite weights of matching shapes");
        LearnedMlpCfg::new(net, 6.0, 9.0, 20.0)
            .with_taps([0, 2, 4])
            .with_scales(-1.0, 0.2, 5.0)
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        LearnedMlpCfg::validate(self, group)
    }
}

impl Kind for LstmNetCfg {
    learned_kind!("LstmNet", "lstm_net");

    fn example() -> Self {
        // Isaac Lab's ActuatorNetLSTM shape, smaller: hidden 4, a linear head.
        let layer = LstmLayer {
            name: ("lstm.".into(), "_l0".into()),
            inputs: 2,
            hidden: 4,
            weight_ih: example_weights(32, 0.37, 0.5),
            weight_hh: example_weights(64, 0.53, 0.4),
            bias_ih: example_weights(16, 0.11, 0.1),
            bias_hh: example_weights(16, 0.29, 0.1),
        };
        let head = Dense::new(
            "head",
            1,
            4,
            example_weights(4, 0.71, 2.0),
            vec![0.1],
            Activation::Identity,
        );
        let net = LstmNet::new("example lstm", vec![layer], vec![head])
            .expect("finite weights of matching shapes");
        LstmNetCfg::new(net, 5.0, 8.0, 25.0)
    }
}

/// A learned LSTM actuator (Isaac Lab `ActuatorNetLSTMCfg`): the network
/// reads `[q*_delayed − q, q̇]` unscaled, keeps its hidden and cell state per
/// (env, target) (zeroed by a reset), and its output goes through the DC
/// motor clip with the current velocity.
#[derive(Debug, Clone, PartialEq)]
pub struct LstmNetCfg {
    /// The network.
    pub network: Arc<LstmNet>,
    /// Flat output limit of the DC clip (N·m), > 0 (`inf` for none).
    pub effort_limit: f32,
    /// Stall torque of the DC clip (N·m), finite, > 0.
    pub saturation_effort: f32,
    /// No-load speed of the DC clip (rad/s), finite, > 0.
    pub velocity_limit: f32,
}

impl LstmNetCfg {
    /// An LSTM actuator with these DC clip settings.
    pub fn new(
        network: impl Into<Arc<LstmNet>>,
        effort_limit: f32,
        saturation_effort: f32,
        velocity_limit: f32,
    ) -> Self {
        LstmNetCfg {
            network: network.into(),
            effort_limit,
            saturation_effort,
            velocity_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_convert_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn natural_order_sorts_numbers_as_numbers() {
        let mut names = vec!["net.10", "net.2", "net.0", "head"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["head", "net.0", "net.2", "net.10"]);
    }

    #[test]
    fn activations_match_their_definitions() {
        for x in [-30.0f32, -2.5, -1e-3, 0.0, 1e-3, 0.7, 3.0, 100.0] {
            assert_eq!(Activation::Relu.apply(x), x.max(0.0));
            assert!((Activation::Tanh.apply(x) - x.tanh()).abs() <= 2.0 * f32::EPSILON);
            assert!(
                (Activation::Elu.apply(x) - if x > 0.0 { x } else { x.exp_m1() }).abs() <= 1e-7
            );
            assert!((Activation::Sigmoid.apply(x) - 1.0 / (1.0 + (-x).exp())).abs() <= 1e-7);
            assert_eq!(Activation::Softsign.apply(x), x / (1.0 + x.abs()));
        }
        assert_eq!(Activation::Tanh.apply(1e30), 1.0);
        assert_eq!(Activation::Tanh.apply(-1e30), -1.0);
        assert_eq!(Activation::from_name("ELU"), Some(Activation::Elu));
        assert_eq!(Activation::from_name("swish"), None);
    }
}
