// Learned networks (LearnedMlp, LstmNet). Twin of the learned stage in
// crates/sinew-core/src/net.rs; the kinds' Rust law forwards the position
// target to that stage, while on the GPU the law itself runs the network
// (one thread per (env, column)), then the DC clip.

fn learned_mlp_law() -> f32 {
    return learned_law(law_aux, true);
}

fn lstm_net_law() -> f32 {
    return learned_law(law_aux, false);
}

// The network of learned column `k`, then the DC clip with the current velocity.
fn learned_law(k: u32, mlp: bool) -> f32 {
    let col = learned_column(k);
    let error = io_target(FIELD_POSITION) - io_pos();
    var raw: f32;
    if mlp {
        raw = mlp_effort(col, law_env, error, io_vel());
    } else {
        raw = lstm_effort(col, law_env, error, io_vel());
    }
    // Both learned kinds declare the same parameters (LEARNED_PARAMS).
    return dc_motor_clip(
        raw,
        io_param(LEARNED_MLP_SATURATION_EFFORT),
        io_param(LEARNED_MLP_VELOCITY_LIMIT),
        io_param(LEARNED_MLP_EFFORT_LIMIT),
        io_vel(),
    );
}

fn learned_column(k: u32) -> LearnedColumn {
    let at = dims.learned_columns_offset + 16u * k;
    var w: array<u32, 16>;
    for (var j = 0u; j < 16u; j++) {
        w[j] = words[at + j];
    }
    return LearnedColumn(
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12],
        bitcast<f32>(w[13]), bitcast<f32>(w[14]), bitcast<f32>(w[15]),
    );
}

fn net_layer(l: u32) -> NetLayer {
    let at = dims.net_layers_offset + 8u * l;
    return NetLayer(
        words[at], words[at + 1u], words[at + 2u], words[at + 3u],
        words[at + 4u], words[at + 5u], words[at + 6u], words[at + 7u],
    );
}

fn net_weight(at: u32) -> f32 {
    return params[dims.net_weights_offset + at];
}

// Offset in `learned` of an env's state row.
fn learned_row(env: u32) -> u32 {
    return 2u * dims.num_envs + env * dims.learned_stride;
}

// `count` dense layers from `first` on one row (twin of `dense`).
fn dense_stack(first: u32, count: u32, input: array<f32, NET_MAX_WIDTH>) -> f32 {
    var x = input;
    var y: array<f32, NET_MAX_WIDTH>;
    for (var l = first; l < first + count; l++) {
        let layer = net_layer(l);
        for (var o = 0u; o < layer.outputs; o++) {
            var acc = 0.0;
            for (var i = 0u; i < layer.inputs; i++) {
                acc += x[i] * net_weight(layer.weight + i * layer.outputs + o);
            }
            y[o] = activate(layer.activation, acc + net_weight(layer.bias + o));
        }
        x = y;
    }
    return x[0];
}

// An MLP column's scaled output before the DC clip (twin of
// `LearnedStage::mlp_column`): writes this step's frame into the rings.
fn mlp_effort(col: LearnedColumn, env: u32, error: f32, vel: f32) -> f32 {
    let count = learned[2u * env];
    let fresh = learned[2u * env + 1u];
    let len = col.history_len;
    let at = learned_row(env) + col.state_offset;
    if fresh != 0u {
        let fill_error = select(error, 0.0, col.history_init != 0u);
        let fill_vel = select(vel, 0.0, col.history_init != 0u);
        for (var s = 0u; s < len; s++) {
            learned[at + s] = bitcast<u32>(fill_error);
            learned[at + len + s] = bitcast<u32>(fill_vel);
        }
    }
    let now = count % len;
    learned[at + now] = bitcast<u32>(error);
    learned[at + len + now] = bitcast<u32>(vel);
    let n = col.num_taps;
    var pos_half = 0u;
    var vel_half = n;
    if col.input_order != 0u {
        pos_half = n;
        vel_half = 0u;
    }
    var x: array<f32, NET_MAX_WIDTH>;
    for (var k = 0u; k < n; k++) {
        let t = words[dims.learned_taps_offset + col.taps_offset + k];
        let slot = (count + dims.learned_period - t) % len;
        x[pos_half + k] = col.pos_scale * bitcast<f32>(learned[at + slot]);
        x[vel_half + k] = col.vel_scale * bitcast<f32>(learned[at + len + slot]);
    }
    return dense_stack(col.first_layer, col.num_layers, x) * col.torque_scale;
}

// An LSTM column's output before the DC clip (twin of
// `LearnedStage::lstm_column`): reads the half of the state the count
// names (zeros when fresh), writes the other.
fn lstm_effort(col: LearnedColumn, env: u32, error: f32, vel: f32) -> f32 {
    let count = learned[2u * env];
    let fresh = learned[2u * env + 1u];
    let hidden = col.hidden;
    let gates = 4u * hidden;
    let half = col.lstm_layers * 2u * hidden;
    let at = learned_row(env) + col.state_offset;
    var old_at = at;
    var new_at = at + half;
    if count % 2u == 1u {
        old_at = at + half;
        new_at = at;
    }
    var x: array<f32, NET_MAX_WIDTH>;
    x[0] = error;
    x[1] = vel;
    for (var l = 0u; l < col.lstm_layers; l++) {
        let layer = net_layer(col.first_layer + l);
        let h_old = old_at + 2u * l * hidden;
        let h_new = new_at + 2u * l * hidden;
        for (var u = 0u; u < hidden; u++) {
            var pre: vec4<f32>;
            for (var q = 0u; q < 4u; q++) {
                let r = q * hidden + u;
                var from_x = 0.0;
                for (var i = 0u; i < layer.inputs; i++) {
                    from_x += x[i] * net_weight(layer.weight + i * gates + r);
                }
                var from_h = 0.0;
                for (var j = 0u; j < hidden; j++) {
                    let h = select(bitcast<f32>(learned[h_old + j]), 0.0, fresh != 0u);
                    from_h += h * net_weight(layer.weight_hh + j * gates + r);
                }
                pre[q] = (from_x + net_weight(layer.bias + r)) + (from_h + net_weight(layer.bias_hh + r));
            }
            let c_old = select(bitcast<f32>(learned[h_old + hidden + u]), 0.0, fresh != 0u);
            let hc = lstm_unit(pre, c_old);
            learned[h_new + u] = bitcast<u32>(hc.x);
            learned[h_new + hidden + u] = bitcast<u32>(hc.y);
        }
        for (var u = 0u; u < hidden; u++) {
            x[u] = bitcast<f32>(learned[h_new + u]);
        }
    }
    return dense_stack(col.first_layer + col.lstm_layers, col.num_layers - col.lstm_layers, x);
}

