//! Training speed (net::train) on a model file's shapes: rows a second of
//! a batch's loss and gradient, on 1 and 2 threads, and of an Adam step:
//! `cargo run --release -p net --example train_speed -- models/ppo-block.safetensors`.

use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "models/ppo-block.safetensors".into());
    let model = net::Model::load(std::path::Path::new(&path)).expect("a model file");
    let mut mlp = model.mlp.clone();
    let (d, a, rows) = (mlp.inputs(), mlp.actions(), 1024);
    let obs: Vec<f32> = (0..rows * d).map(|i| ((i * 7919) % 5 == 0) as u8 as f32).collect();
    let legal: Vec<u8> = (0..rows * a).map(|i| ((i * 31) % 7 < 2) as u8).collect();
    let mut policy = vec![0.0f32; rows * a];
    for r in 0..rows {
        let row: Vec<usize> = (r * a..(r + 1) * a).filter(|&k| legal[k] == 1).collect();
        for &k in &row {
            policy[k] = 1.0 / row.len() as f32;
        }
    }
    let outcome: Vec<f32> = (0..rows).map(|r| (r % 3) as f32 - 1.0).collect();
    let batch = net::Batch {
        rows,
        obs: &obs,
        legal: &legal,
        policy: &policy,
        outcome: &outcome,
        holders: &[],
        prior: &[],
        belief_weight: 0.0,
    };
    let flops = 3.0 * 2.0 * mlp.macs() as f64;
    let best = |f: &mut dyn FnMut()| {
        f();
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    for threads in [1, 2] {
        let secs = best(&mut || {
            std::hint::black_box(net::loss_and_grads(&mlp, &batch, 1.0, threads));
        });
        let r = rows as f64 / secs;
        println!(
            "loss and gradient, {threads} thread(s): {r:9.0} rows/s {:6.1} Gflop/s (3 x the forward's flops)",
            r * flops / 1e9
        );
    }
    let (_, grads) = net::loss_and_grads(&mlp, &batch, 1.0, 2);
    let mut adam = net::Adam::new(&mlp, 1e-3);
    let secs = best(&mut || adam.step(&mut mlp, &grads));
    println!("Adam step (every weight, then repacked): {:.2} ms", secs * 1e3);
}
