//! Model files: the round trip, every refusal (naming the file and the
//! problem), and the forward pass against a plain f64 evaluation.

use std::path::Path;

mod common;

use common::{random_mlp, uniform};
use net::{Dense, Expect, Meta, Mlp, Model, NetError, Provenance, Scratch};
fn meta(inputs: usize, hidden: Vec<usize>, actions: usize) -> Meta {
    Meta {
        format_version: net::FORMAT_VERSION,
        game: "block".into(),
        encoding: "rich".into(),
        encoding_version: 1,
        inputs,
        actions,
        hidden,
        activation: "tanh".into(),
        belief: None,
        belief_prior: None,
        belief_hidden: None,
        provenance: Provenance {
            made_by: "net/tests/files.rs".into(),
            spec_id: Some("abc".into()),
            generation: Some(3),
        },
    }
}

fn expect() -> Expect<'static> {
    Expect {
        game: "block",
        encoding: "rich",
        encoding_version: 1,
        inputs: 20,
        actions: 11,
        belief: net::BeliefShape { tiles: 6, holders: 2 },
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn a_model_file_reads_back_as_written_and_evaluates_as_plain_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    let mlp = random_mlp(1, 20, &[16, 12], 11);
    let m = meta(20, vec![16, 12], 11);
    let path = write(dir.path(), "m.safetensors", &Model::to_bytes(&m, &mlp));
    let model = Model::load_for(&path, &expect()).unwrap();
    assert_eq!(model.meta, m);
    assert_eq!(model.sha256.len(), 64);
    // The same bytes again: the same hash; another network: another.
    assert_eq!(Model::to_bytes(&model.meta, &model.mlp), std::fs::read(&path).unwrap());
    let other = Model::from_bytes(&Model::to_bytes(&m, &random_mlp(2, 20, &[16, 12], 11))).unwrap();
    assert_ne!(other.sha256, model.sha256);
    // The forward pass against f64 arithmetic with the true tanh.
    let rows = 7;
    let obs = uniform(&mut 9u64, rows * 20, 1.0);
    let (mut logits, mut values) = (vec![0.0; rows * 11], vec![0.0; rows]);
    model
        .mlp
        .forward(&obs, rows, &mut logits, &mut values, &mut Scratch::default());
    for r in 0..rows {
        let mut h: Vec<f64> = obs[r * 20..(r + 1) * 20].iter().map(|&x| x as f64).collect();
        let apply = |l: &Dense, h: &[f64]| -> Vec<f64> {
            (0..l.outputs())
                .map(|j| {
                    l.bias()[j] as f64
                        + h.iter()
                            .enumerate()
                            .map(|(i, x)| x * l.weights()[i * l.outputs() + j] as f64)
                            .sum::<f64>()
                })
                .collect()
        };
        for l in model.mlp.layers() {
            h = apply(l, &h).into_iter().map(f64::tanh).collect();
        }
        let want = apply(model.mlp.policy(), &h);
        for (j, w) in want.iter().enumerate() {
            assert!((logits[r * 11 + j] as f64 - w).abs() < 1e-5, "row {r} logit {j}");
        }
        assert!((values[r] as f64 - apply(model.mlp.value(), &h)[0]).abs() < 1e-5);
    }
    // Threads and batch sizes change nothing.
    let (mut l2, mut v2) = (vec![0.0; rows * 11], vec![0.0; rows]);
    model.mlp.forward_threads(&obs, rows, &mut l2, &mut v2, 3);
    assert_eq!((l2, v2), (logits.clone(), values.clone()));
    // A batch larger than a chunk of the layers' pass gives each row's own.
    let big = 2 * net::BATCH_CHUNK + 5;
    let obs_big = uniform(&mut 11u64, big * 20, 1.0);
    let (mut lb, mut vb) = (vec![0.0; big * 11], vec![0.0; big]);
    model
        .mlp
        .forward(&obs_big, big, &mut lb, &mut vb, &mut Scratch::default());
    for r in [0, net::BATCH_CHUNK - 1, net::BATCH_CHUNK, big - 1] {
        let (mut lr, mut vr) = (vec![0.0; 11], vec![0.0; 1]);
        model.mlp.forward(
            &obs_big[r * 20..(r + 1) * 20],
            1,
            &mut lr,
            &mut vr,
            &mut Scratch::default(),
        );
        assert_eq!((lr.as_slice(), vr[0]), (&lb[r * 11..(r + 1) * 11], vb[r]), "row {r}");
    }
    let (mut l1, mut v1) = (vec![0.0; 11], vec![0.0; 1]);
    model
        .mlp
        .forward(&obs[6 * 20..], 1, &mut l1, &mut v1, &mut Scratch::default());
    assert_eq!(l1, logits[6 * 11..]);
}

fn refusal(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = write(dir, name, bytes);
    let e = Model::load_for(&path, &expect()).unwrap_err().to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
    e
}

#[test]
fn every_bad_file_is_refused_naming_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = Model::to_bytes(&meta(20, vec![16], 11), &random_mlp(1, 20, &[16], 11));
    let e = refusal(d, "cut.safetensors", &good[..good.len() - 9]);
    assert!(e.contains("not a safetensors file"), "{e}");
    let e = refusal(d, "tiny.safetensors", &good[..5]);
    assert!(e.contains("not a safetensors file"), "{e}");
    // A NaN weight.
    let mut mlp = random_mlp(1, 20, &[16], 11);
    let mut w = mlp.layers()[0].weights().to_vec();
    w[37] = f32::NAN;
    let layers = vec![Dense::new(20, w, mlp.layers()[0].bias().to_vec())];
    mlp = Mlp::new(20, layers, mlp.policy().clone(), mlp.value().clone());
    let e = refusal(d, "nan.safetensors", &Model::to_bytes(&meta(20, vec![16], 11), &mlp));
    assert!(
        e.contains("\"w0\"") && e.contains("NaN") && e.contains("index 37"),
        "{e}"
    );
    // Another game, encoding, width.
    let mut other = meta(20, vec![16], 11);
    other.game = "team".into();
    let e = refusal(
        d,
        "team.safetensors",
        &Model::to_bytes(&other, &random_mlp(1, 20, &[16], 11)),
    );
    assert!(e.contains("game \"team\", not \"block\""), "{e}");
    let mut other = meta(20, vec![16], 11);
    other.encoding_version = 2;
    let e = refusal(
        d,
        "v2.safetensors",
        &Model::to_bytes(&other, &random_mlp(1, 20, &[16], 11)),
    );
    assert!(e.contains("\"rich\" version 2, not \"rich\" version 1"), "{e}");
    let e = refusal(
        d,
        "wide.safetensors",
        &Model::to_bytes(&meta(21, vec![16], 11), &random_mlp(1, 21, &[16], 11)),
    );
    assert!(e.contains("21 floats"), "{e}");
    // Metadata that disagrees with the tensors' shapes.
    let e = refusal(
        d,
        "shape.safetensors",
        &Model::to_bytes(&meta(20, vec![17], 11), &random_mlp(1, 20, &[16], 11)),
    );
    assert!(e.contains("tensor \"w0\" has shape [20, 16], not [20, 17]"), "{e}");
    // A file with no muggins metadata.
    let plain = safetensors::serialize(Vec::<(String, safetensors::tensor::TensorView)>::new(), None).unwrap();
    let e = refusal(d, "plain.safetensors", &plain);
    assert!(e.contains("not a muggins model"), "{e}");
    // Not there at all.
    let missing = d.join("missing.safetensors");
    let e = Model::load(&missing).unwrap_err();
    assert!(matches!(e, NetError::Read { .. }), "{e}");
    assert!(e.to_string().contains("missing.safetensors"), "{e}");
}

/// A belief head is written and read back with the rest (its shape in the
/// metadata, its tensors `w_b`, `b_b`), its logits are the plain
/// arithmetic of the last hidden layer, a file without it still reads,
/// and a head of another shape than the game's is refused.
#[test]
fn a_belief_head_reads_back_and_must_fit_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let base = random_mlp(4, 20, &[16, 12], 11);
    let head = Dense::new(12, uniform(&mut 5u64, 12 * 12, 0.5), uniform(&mut 6u64, 12, 0.1));
    let mlp = base.clone().with_belief(head.clone(), 2);
    let path = write(
        dir.path(),
        "b.safetensors",
        &Model::to_bytes(&meta(20, vec![16, 12], 11), &mlp),
    );
    let model = Model::load_for(&path, &expect()).unwrap();
    assert_eq!(model.meta.belief, Some(net::BeliefShape { tiles: 6, holders: 2 }));
    let b = model.mlp.belief().unwrap();
    assert_eq!((b.tiles(), b.holders, b.dense.weights()), (6, 2, head.weights()));
    // The logits: the last hidden layer (plain tanh arithmetic) times the head.
    let obs = uniform(&mut 7u64, 20, 1.0);
    let mut h: Vec<f64> = obs.iter().map(|&x| x as f64).collect();
    for l in model.mlp.layers() {
        h = (0..l.outputs())
            .map(|j| {
                (l.bias()[j] as f64
                    + h.iter()
                        .enumerate()
                        .map(|(i, x)| x * l.weights()[i * l.outputs() + j] as f64)
                        .sum::<f64>())
                .tanh()
            })
            .collect();
    }
    let mut z = Vec::new();
    model.mlp.belief_logits(&obs, &mut z, &mut Scratch::default()).unwrap();
    for (j, &zj) in z.iter().enumerate() {
        let want = head.bias()[j] as f64
            + h.iter()
                .enumerate()
                .map(|(i, x)| x * head.weights()[i * 12 + j] as f64)
                .sum::<f64>();
        assert!((zj as f64 - want).abs() < 1e-5, "logit {j}: {zj} against {want}");
    }
    // Without the head: no logits, and its file has no belief entry.
    let plain = Model::from_bytes(&Model::to_bytes(&meta(20, vec![16, 12], 11), &base)).unwrap();
    assert!(plain.mlp.belief_logits(&obs, &mut z, &mut Scratch::default()).is_none());
    assert_eq!(plain.meta.belief, None);
    // A head for three holders where the game has two.
    let three = base
        .clone()
        .with_belief(Dense::new(12, vec![0.0; 12 * 18], vec![0.0; 18]), 3);
    let e = refusal(
        dir.path(),
        "three.safetensors",
        &Model::to_bytes(&meta(20, vec![16, 12], 11), &three),
    );
    assert!(e.contains("belief head of 6 tiles x 3 holders, not 6 x 2"), "{e}");
    // A head that corrects the constraints belief says so; another prior,
    // or a prior without a head, is refused.
    let mut with_prior = meta(20, vec![16, 12], 11);
    with_prior.belief_prior = Some(net::BELIEF_PRIOR_CONSTRAINTS.into());
    let model = Model::from_bytes(&Model::to_bytes(&with_prior, &mlp)).unwrap();
    assert_eq!(model.meta.belief_prior.as_deref(), Some("constraints"));
    assert_eq!(
        Model::from_bytes(&Model::to_bytes(&with_prior, &base))
            .unwrap()
            .meta
            .belief_prior,
        None,
        "a network without a head is written without a prior"
    );
    with_prior.belief_prior = Some("oracle".into());
    let e = refusal(dir.path(), "oracle.safetensors", &Model::to_bytes(&with_prior, &mlp));
    assert!(
        e.contains("belief_prior \"oracle\" (this version knows \"constraints\")"),
        "{e}"
    );
    let headless = with_meta_text(&Model::to_bytes(&meta(20, vec![16, 12], 11), &base), |m| {
        m.replace(
            r#"\"provenance\""#,
            r#"\"belief_prior\":\"constraints\",\"provenance\""#,
        )
    });
    let e = refusal(dir.path(), "headless.safetensors", &headless);
    assert!(e.contains("belief_prior \"constraints\" without a belief head"), "{e}");
}

/// A belief head with a layer of its own (`w_bt`, `b_bt` over the
/// observation, `belief_hidden` in the description) reads back and gives
/// the same logits; its width without a head is refused.
#[test]
fn a_belief_head_with_its_own_layer_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let base = random_mlp(4, 20, &[16, 12], 11);
    let trunk = Dense::new(20, uniform(&mut 5u64, 20 * 8, 0.5), uniform(&mut 6u64, 8, 0.1));
    let head = Dense::new(8, uniform(&mut 7u64, 8 * 12, 0.5), uniform(&mut 8u64, 12, 0.1));
    let mlp = base.clone().with_belief_trunk(trunk.clone(), head, 2);
    let path = write(
        dir.path(),
        "t.safetensors",
        &Model::to_bytes(&meta(20, vec![16, 12], 11), &mlp),
    );
    let model = Model::load_for(&path, &expect()).unwrap();
    assert_eq!(model.meta.belief_hidden, Some(8));
    let b = model.mlp.belief().unwrap();
    assert_eq!(b.trunk.as_ref().unwrap().weights(), trunk.weights());
    let obs = uniform(&mut 9u64, 20, 1.0);
    let (mut z, mut want) = (Vec::new(), Vec::new());
    model.mlp.belief_logits(&obs, &mut z, &mut Scratch::default()).unwrap();
    mlp.belief_logits(&obs, &mut want, &mut Scratch::default()).unwrap();
    assert_eq!(z, want);
    // The logits: tanh of the trunk over the observation, times the head.
    let h: Vec<f64> = (0..8)
        .map(|j| {
            (trunk.bias()[j] as f64
                + (0..20)
                    .map(|i| obs[i] as f64 * trunk.weights()[i * 8 + j] as f64)
                    .sum::<f64>())
            .tanh()
        })
        .collect();
    let hw = b.dense.weights();
    for (k, &zk) in z.iter().enumerate() {
        let v = b.dense.bias()[k] as f64 + (0..8).map(|j| h[j] * hw[j * 12 + k] as f64).sum::<f64>();
        assert!((zk as f64 - v).abs() < 1e-5, "logit {k}: {zk} against {v}");
    }
    let headless = with_meta_text(&Model::to_bytes(&meta(20, vec![16, 12], 11), &base), |m| {
        m.replace(r#"\"provenance\""#, r#"\"belief_hidden\":8,\"provenance\""#)
    });
    let e = refusal(dir.path(), "headless-trunk.safetensors", &headless);
    assert!(e.contains("belief_hidden 8 without a belief head"), "{e}");
}

/// A model file's bytes with its header's text changed by `edit` (the
/// header's length prefix made to fit).
fn with_meta_text(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap();
    let mut edited = edit(header);
    assert_ne!(edited, header, "the edit changed nothing");
    while !edited.len().is_multiple_of(8) {
        edited.push(' ');
    }
    let mut out = (edited.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(edited.as_bytes());
    out.extend_from_slice(&bytes[8 + n..]);
    out
}
