//! Forward-pass speed of a model file against this machine's FMA ceiling:
//! `cargo run --release -p net --example speed -- models/ppo-block.safetensors`.

use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "models/ppo-block.safetensors".into());
    let model = net::Model::load(std::path::Path::new(&path)).expect("a model file");
    let mlp = &model.mlp;
    let flops = 2.0 * mlp.macs() as f64;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let peak = net::fma_peak_flops(0.5);
    let peak_all = net::fma_peak_flops_on(0.5, threads);
    let rows = 4096;
    let obs: Vec<f32> = (0..rows * mlp.inputs())
        .map(|i| ((i * 7919) % 5 == 0) as u8 as f32)
        .collect();
    let (mut logits, mut values) = (vec![0.0; rows * mlp.actions()], vec![0.0; rows]);
    let mut scratch = net::Scratch::default();
    let time = |f: &mut dyn FnMut()| {
        f();
        let mut best = f64::MAX;
        for _ in 0..10 {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let batch = time(&mut || mlp.forward(&obs, rows, &mut logits, &mut values, &mut scratch));
    let batch_all = time(&mut || mlp.forward_threads(&obs, rows, &mut logits, &mut values, threads));
    let single = time(&mut || {
        for r in 0..1000 {
            let o = &obs[r * mlp.inputs()..(r + 1) * mlp.inputs()];
            mlp.forward(o, 1, &mut logits[..mlp.actions()], &mut values[..1], &mut scratch);
        }
    }) / 1000.0;
    println!(
        "FMA ceiling {:.1} Gflop/s on one thread, {:.1} on {threads} at once",
        peak / 1e9,
        peak_all / 1e9
    );
    let all = format!("batch 4096, {threads} threads");
    for (name, secs, n, peak) in [
        ("batch 4096, 1 thread", batch, rows as f64, peak),
        (all.as_str(), batch_all, rows as f64, peak_all),
        ("single", single, 1.0, peak),
    ] {
        let r = n / secs;
        println!(
            "{name:24} {r:10.0} evals/s {:7.1} Gflop/s {:5.1}% of ceiling",
            r * flops / 1e9,
            100.0 * r * flops / peak
        );
    }
}
