// The arithmetic of learned networks that needs no buffer (twins in
// crates/sinew-core/src/kinds/learned/networks.rs); step.wgsl runs the layers.

// A thread's activations: two halves of NET_WIDTH values (the prelude's
// constant, sized to the plan's networks: sinew_wgpu::shaders::net_width),
// a layer's input and its output.
var<private> net_acts: array<f32, 2u * NET_WIDTH>;

fn net_get(k: u32) -> f32 {
    return net_acts[k];
}

fn net_set(k: u32, value: f32) {
    net_acts[k] = value;
}

// `NetLayer.kind` and `LearnedColumn.kind` (sinew_core::net).
const NET_DENSE: u32 = 0u;
const NET_LSTM: u32 = 1u;
const LEARNED_MLP: u32 = 0u;
const LEARNED_LSTM: u32 = 1u;

// `Activation` codes.
const ACT_IDENTITY: u32 = 0u;
const ACT_RELU: u32 = 1u;
const ACT_ELU: u32 = 2u;
const ACT_TANH: u32 = 3u;
const ACT_SOFTSIGN: u32 = 4u;
const ACT_SIGMOID: u32 = 5u;

// Twin of `net_tanh`: one exponential, finite for every finite input.
fn net_tanh(x: f32) -> f32 {
    let e = fexp(-2.0 * abs(x));
    let t = (1.0 - e) / (1.0 + e);
    return select(t, -t, x < 0.0);
}

// Twin of `net_sigmoid`.
fn net_sigmoid(x: f32) -> f32 {
    return 1.0 / (1.0 + fexp(-x));
}

// Twin of `Activation::apply`.
fn activate(code: u32, x: f32) -> f32 {
    switch code {
        case ACT_RELU: {
            return select(0.0, x, x > 0.0);
        }
        case ACT_ELU: {
            return select(fexp(x) - 1.0, x, x > 0.0);
        }
        case ACT_TANH: {
            return net_tanh(x);
        }
        case ACT_SOFTSIGN: {
            return x / (1.0 + abs(x));
        }
        case ACT_SIGMOID: {
            return net_sigmoid(x);
        }
        default: {
            return x;
        }
    }
}

// One LSTM unit from its four gate pre-activations (input, forget, cell,
// output) and its old cell value: (h, c) (twin of the loop in `lstm_cell`).
fn lstm_unit(pre: vec4<f32>, c_old: f32) -> vec2<f32> {
    let c = net_sigmoid(pre.y) * c_old + net_sigmoid(pre.x) * net_tanh(pre.z);
    return vec2<f32>(net_sigmoid(pre.w) * net_tanh(c), c);
}
