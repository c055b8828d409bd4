//! Safetensors network files, read as an MLP and as an LSTM; a network
//! that loads is stepped 3 times on the CPU and must give finite efforts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew::{
    ActuatorCfg, ActuatorCmd, Backend, CpuBackend, GroupCfg, LearnedMlpCfg, LstmNet, LstmNetCfg,
    Mlp, NetSpec, Plan, PlanOptions, Robot,
};

fn step(cfg: ActuatorCfg) {
    let Ok(plan) = Plan::new(
        &Robot::from_joints(["a", "b"]),
        vec![GroupCfg::new("net", [".*"], cfg)],
        2,
        PlanOptions::default(),
    ) else {
        return;
    };
    let mut cpu = CpuBackend::new(plan);
    let mut cmd = ActuatorCmd::zeros(2, 2);
    let mut ctrl = [0.0f32; 4];
    for k in 0..3 {
        cmd.position_target.fill(0.1 * k as f32);
        cpu.step(&cmd).expect("shapes match");
        cpu.read_ctrl(&mut ctrl).expect("shapes match");
        assert!(ctrl.iter().all(|x| x.is_finite()), "{ctrl:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let spec = NetSpec::default();
    if let Ok(net) = Mlp::from_safetensors(data, "fuzz.safetensors", &spec) {
        let taps = (net.input_width() / 2).clamp(1, 64) as u32;
        step(LearnedMlpCfg::new(net, 10.0, 10.0, 10.0).with_history_length(taps).into());
    }
    if let Ok(net) = LstmNet::from_safetensors(data, "fuzz.safetensors", &spec) {
        step(LstmNetCfg::new(net, 10.0, 10.0, 10.0).into());
    }
});
