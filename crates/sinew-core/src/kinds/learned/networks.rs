//! The networks themselves: activations, dense and LSTM layers, the MLP
//! and the LSTM, each checked when made and evaluated for one row.

use super::*;
use crate::math::fexp;

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
                    fexp(x) - 1.0
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
/// `net_tanh`; the shader's built-in may overflow for large `|x|`). The
/// networks' e^x is [`fexp`](crate::math::fexp), the kernels' own.
#[inline(always)]
pub fn net_tanh(x: f32) -> f32 {
    let e = fexp(-2.0 * x.abs());
    ((1.0 - e) / (1.0 + e)).copysign(x)
}

/// The logistic function (WGSL `net_sigmoid`).
#[inline(always)]
pub fn net_sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + fexp(-x))
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
