// Learned networks (LearnedMlp, LstmNet). Twin of the learned stage in
// crates/sinew-core/src/net.rs; the kinds' Rust law forwards the position
// target to that stage, while on the GPU the law itself runs the network
// (one thread per (env, column)), then the DC clip. A column's history or
// recurrent state is its group's state slots (net.rs gives the layout),
// read with io_state and written with io_set_state.

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
        raw = mlp_effort(col, error, io_vel());
    } else {
        raw = lstm_effort(col, error, io_vel());
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
    let at = dims.learned_columns_offset + 15u * k;
    var w: array<u32, 15>;
    for (var j = 0u; j < 15u; j++) {
        w[j] = words[at + j];
    }
    return LearnedColumn(
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
        bitcast<f32>(w[12]), bitcast<f32>(w[13]), bitcast<f32>(w[14]),
    );
}

fn net_layer(l: u32) -> NetLayer {
    let at = dims.net_layers_offset + 8u * l;
    return NetLayer(
        words[at], words[at + 1u], words[at + 2u], words[at + 3u],
        words[at + 4u], words[at + 5u], words[at + 6u], words[at + 7u],
    );
}

// `count` dense layers from `first` on this thread's activations, whose
// first half holds the input (twin of `dense`). Each layer reads one half
// of `net_acts` and writes the other; four outputs at a time share each
// input read and one read of their four weights, each summed over the
// inputs in order from zero, as the twin sums one. The last group's lanes
// past the layer's outputs (zero weights) are dropped.
fn dense_stack(first: u32, count: u32) -> f32 {
    var src = 0u;
    for (var l = first; l < first + count; l++) {
        let layer = net_layer(l);
        let dst = NET_WIDTH - src;
        let groups = (layer.outputs + 3u) / 4u;
        for (var o = 0u; o < layer.outputs; o += 4u) {
            let q = o / 4u;
            var acc = vec4<f32>(0.0);
            for (var i = 0u; i < layer.inputs; i++) {
                acc += net_get(src + i) * net_weights[layer.weight + i * groups + q];
            }
            let y = acc + net_weights[layer.bias + q];
            let left = layer.outputs - o;
            net_set(dst + o, activate(layer.activation, y.x));
            if left > 1u {
                net_set(dst + o + 1u, activate(layer.activation, y.y));
            }
            if left > 2u {
                net_set(dst + o + 2u, activate(layer.activation, y.z));
            }
            if left > 3u {
                net_set(dst + o + 3u, activate(layer.activation, y.w));
            }
        }
        src = dst;
    }
    return net_get(src);
}

// The frame `lag` steps back of one half of an MLP's history (0: errors, 1:
// velocities), `now` its value this step (twin of `mlp_column`'s `frame`).
fn mlp_frame(col: LearnedColumn, fresh: bool, lag: u32, half: u32, now: f32) -> f32 {
    if lag == 0u {
        return now;
    }
    if fresh {
        return select(now, 0.0, col.history_init != 0u);
    }
    return io_state(half * (col.history_len - 1u) + lag);
}

// An MLP column's scaled output before the DC clip (twin of
// `LearnedStage::mlp_column`): reads the taps, writes the history shifted
// by one step.
fn mlp_effort(col: LearnedColumn, error: f32, vel: f32) -> f32 {
    let fresh = io_state(MLP_FRESH) != 0.0;
    let n = col.num_taps;
    var pos_half = 0u;
    var vel_half = n;
    if col.input_order != 0u {
        pos_half = n;
        vel_half = 0u;
    }
    for (var k = 0u; k < n; k++) {
        let t = words[dims.learned_taps_offset + col.taps_offset + k];
        net_set(pos_half + k, col.pos_scale * mlp_frame(col, fresh, t, 0u, error));
        net_set(vel_half + k, col.vel_scale * mlp_frame(col, fresh, t, 1u, vel));
    }
    let lags = col.history_len - 1u;
    for (var lag = 1u; lag <= lags; lag++) {
        io_set_state(lag, mlp_frame(col, fresh, lag - 1u, 0u, error));
        io_set_state(lags + lag, mlp_frame(col, fresh, lag - 1u, 1u, vel));
    }
    io_set_state(MLP_FRESH, 0.0);
    return dense_stack(col.first_layer, col.num_layers) * col.torque_scale;
}

// Slot `k` of this column's next state, as written this step.
fn next_state(k: u32) -> f32 {
    return state[(dims.num_state_slots + k) * plane() + law_at];
}

// An LSTM column's output before the DC clip (twin of
// `LearnedStage::lstm_column`): per layer `l`, reads the hidden and cell
// states at slots 2·l·hidden.. and writes the next ones there. The layer's
// input is the first half of `net_acts`, its old hidden state the second;
// a unit's four gates share each input's read and one read of their four
// weights, each gate summed in the twin's order.
fn lstm_effort(col: LearnedColumn, error: f32, vel: f32) -> f32 {
    let hidden = col.hidden;
    net_set(0u, error);
    net_set(1u, vel);
    for (var l = 0u; l < col.lstm_layers; l++) {
        let layer = net_layer(col.first_layer + l);
        let h_at = 2u * l * hidden;
        for (var j = 0u; j < hidden; j++) {
            net_set(NET_WIDTH + j, io_state(h_at + j));
        }
        for (var u = 0u; u < hidden; u++) {
            var from_x = vec4<f32>(0.0);
            for (var i = 0u; i < layer.inputs; i++) {
                from_x += net_get(i) * net_weights[layer.weight + i * hidden + u];
            }
            var from_h = vec4<f32>(0.0);
            for (var j = 0u; j < hidden; j++) {
                from_h += net_get(NET_WIDTH + j) * net_weights[layer.weight_hh + j * hidden + u];
            }
            let pre = (from_x + net_weights[layer.bias + u])
                + (from_h + net_weights[layer.bias_hh + u]);
            let hc = lstm_unit(pre, io_state(h_at + hidden + u));
            io_set_state(h_at + u, hc.x);
            io_set_state(h_at + hidden + u, hc.y);
        }
        for (var u = 0u; u < hidden; u++) {
            net_set(u, next_state(h_at + u));
        }
    }
    return dense_stack(col.first_layer + col.lstm_layers, col.num_layers - col.lstm_layers);
}
