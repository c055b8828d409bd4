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

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use super::dc_motor::{SATURATION_EFFORT, VELOCITY_LIMIT};
use super::ideal_pd::{symmetric_ranges, EFFORT_LIMIT};
use super::spec::{interned, param_slot, Kind, LawIo, ParamSpec, Stage, StateSpec};
use super::{invalid, CommandField};
use crate::error::Error;

mod networks;
mod weights_file;

pub use networks::*;
pub use weights_file::*;

/// The widest layer (and LSTM hidden size) a network may have: the WGSL
/// kernel keeps one layer's activations in a private array of this size.
pub const NET_MAX_WIDTH: usize = 128;

/// The longest history (largest tap + 1) a learned MLP may read.
pub const MAX_HISTORY: usize = 64;

/// The largest network file read (bytes): far above any actuator network
/// (a 128-wide LSTM is ~0.5 MB), low enough that a wrong path cannot fill
/// memory.
pub const MAX_NETWORK_FILE_BYTES: u64 = 256 << 20;

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

/// The slot of an MLP column's `fresh` flag: 1 after a reset, when the next
/// step fills the history before reading it ([`HistoryInit`]); 0 after a
/// step. Its past frames follow ([`crate::net`] gives the layout).
pub const MLP_FRESH: usize = 0;

/// A learned MLP group's state: [`MLP_FRESH`], then the position errors
/// `error_1` … and the velocities `vel_1` … of the `history_len − 1` steps
/// before this one.
fn mlp_state(history_len: usize) -> Vec<StateSpec> {
    let lags = history_len.saturating_sub(1);
    let mut state = vec![StateSpec {
        name: "fresh",
        unit: "",
        doc: "1 after a reset: the next step fills the history before reading it",
        reset: 1.0,
    }];
    for (what, unit, doc) in [
        (
            "error",
            "rad or m",
            "the position error this many steps back",
        ),
        ("vel", "rad/s or m/s", "the velocity this many steps back"),
    ] {
        state.extend((1..=lags).map(|lag| StateSpec {
            name: interned(format!("{what}_{lag}")),
            unit,
            doc,
            reset: 0.0,
        }));
    }
    state
}

/// An LSTM group's state: per layer `l`, the hidden state `h{l}_{u}` of
/// each unit `u`, then the cell state `c{l}_{u}` (0 after a reset, as
/// Isaac Lab's).
fn lstm_state(layers: usize, hidden: usize) -> Vec<StateSpec> {
    (0..layers)
        .flat_map(|l| {
            let unit = move |(what, doc), u| StateSpec {
                name: interned(format!("{what}{l}_{u}")),
                unit: "",
                doc,
                reset: 0.0,
            };
            let h = (0..hidden).map(move |u| unit(("h", "an LSTM layer's hidden state"), u));
            let c = (0..hidden).map(move |u| unit(("c", "an LSTM layer's cell state"), u));
            h.chain(c)
        })
        .collect()
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
        const WGSL: &'static str = include_str!("../../../../../shaders/learned.wgsl");
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

    fn state_slots(&self) -> Cow<'static, [StateSpec]> {
        Cow::Owned(mlp_state(self.history_len()))
    }

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

    fn state_slots(&self) -> Cow<'static, [StateSpec]> {
        Cow::Owned(lstm_state(
            self.network.layers().len(),
            self.network.hidden(),
        ))
    }

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
    use super::weights_file::{f16_to_f32, natural_key};
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
