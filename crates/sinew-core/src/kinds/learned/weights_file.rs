//! Network weights from a safetensors file as PyTorch writes it: the
//! tensors, their dtypes and names, and the metadata that names the layers.

use super::*;

pub(super) fn read_file(path: &std::path::Path, origin: &str) -> Result<Vec<u8>, Error> {
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
pub(super) struct TensorFile {
    origin: String,
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    metadata: HashMap<String, String>,
}

impl TensorFile {
    pub(super) fn parse(bytes: &[u8], origin: &str) -> Result<TensorFile, Error> {
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

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// Takes a tensor's shape and values out of the file.
    pub(super) fn take(&mut self, name: &str) -> Result<(Vec<usize>, Vec<f32>), Error> {
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
    pub(super) fn layer_order(&self, spec: &NetSpec) -> Result<Vec<String>, Error> {
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
    pub(super) fn dense_layers(
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

    pub(super) fn check_all_used(&self) -> Result<(), Error> {
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
pub(super) fn natural_key(name: &str) -> Vec<(u64, String)> {
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
pub(super) fn f16_to_f32(h: u16) -> f32 {
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
