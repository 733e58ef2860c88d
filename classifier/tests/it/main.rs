//! Tests of the classifiers.

use std::io::Write;
use std::process::Command;

use classifier::{Artifact, Confusion, Forest, ForestParams, Mda, Model, Sample, folds, holdout_split};

fn s(x: [f64; 5], label: u8) -> Sample {
    Sample { x, label }
}

/// Each class: its mean plus and minus each unit vector (10 samples).
fn textbook() -> Vec<Sample> {
    let means = [[0.0; 5], [2.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0]];
    let mut out = Vec::new();
    for (k, m) in means.iter().enumerate() {
        for j in 0..5 {
            for sign in [1.0, -1.0] {
                let mut x = *m;
                x[j] += sign;
                out.push(s(x, k as u8));
            }
        }
    }
    out
}

#[test]
fn mda_on_a_case_worked_by_hand() {
    // Within-class scatter: 2I per class, 6I in all; n - K = 27, so the pooled
    // covariance is (2/9)I and its inverse 4.5I. Priors 1/3. Class 1's weights
    // are 4.5 * (2,0,0,0,0) = (9,0,0,0,0), its intercept -0.5 * 9 * 2 + ln(1/3).
    let m = Mda::fit(&textbook()).unwrap();
    assert_eq!(m.scores.len(), 3);
    let (k, w, b) = &m.scores[1];
    assert_eq!(*k, 1);
    let want_w = [9.0, 0.0, 0.0, 0.0, 0.0];
    for j in 0..5 {
        assert!((w[j] - want_w[j]).abs() < 1e-9, "{w:?}");
    }
    assert!((b - (-9.0 + (1.0f64 / 3.0).ln())).abs() < 1e-9, "{b}");
    let (_, w0, b0) = &m.scores[0];
    assert!(w0.iter().all(|v| v.abs() < 1e-9) && (b0 - (1.0f64 / 3.0).ln()).abs() < 1e-9);
    // d1 - d0 = 9 x0 - 9: the boundary is x0 = 1.
    assert_eq!(m.predict(&[1.1, 0.0, 0.0, 0.0, 0.0]), 1);
    assert_eq!(m.predict(&[0.9, 0.0, 0.0, 0.0, 0.0]), 0);
    assert_eq!(m.predict(&[1.2, 1.3, 0.0, 0.0, 0.0]), 2);
    assert_eq!(m.predict(&[0.0, 0.0, 50.0, -50.0, 3.0]), 0);
}

#[test]
fn mda_survives_a_constant_feature_and_refuses_bad_input() {
    let mut data = textbook();
    for x in &mut data {
        x.x[4] = 7.0;
    }
    let m = Mda::fit(&data).unwrap();
    assert_eq!(m.predict(&[1.2, 0.0, 0.0, 0.0, 7.0]), 1);
    assert_eq!(Mda::fit(&data[..3]), Err(classifier::FitError::TooFew(3)));
    assert_eq!(Mda::fit(&data[..10]), Err(classifier::FitError::OneClass));
    assert_eq!(Mda::fit(&[s([0.0; 5], 5); 9]), Err(classifier::FitError::BadLabel(5)));
}

#[test]
fn folds_are_disjoint_cover_the_training_part_and_are_reproducible() {
    let (train, test) = holdout_split(1003, 0.2, 42);
    assert_eq!(test.len(), 201);
    assert_eq!(train.len() + test.len(), 1003);
    let all: std::collections::BTreeSet<usize> = train.iter().chain(&test).copied().collect();
    assert_eq!(all.len(), 1003);
    let f = folds(train.len(), 5, 42);
    assert_eq!(f.len(), 5);
    let mut seen = vec![0u32; train.len()];
    for fold in &f {
        assert!((160..=161).contains(&fold.len()), "{}", fold.len());
        for &i in fold {
            seen[i] += 1;
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "every index in exactly one fold");
    assert_eq!(f, folds(train.len(), 5, 42));
    assert_ne!(f, folds(train.len(), 5, 43));
    assert_eq!(holdout_split(1003, 0.2, 42), (train, test));
}

fn training_samples(n: usize, seed: u64) -> Vec<Sample> {
    let r = engine::Rules::thesis();
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < n {
        let g = engine::training_game(&r, seed, i);
        for f in g.samples {
            out.push(s(f.to_array(), classifier::class_of(g.target)));
        }
        i += 1;
    }
    out.truncate(n);
    out
}

#[test]
fn forest_is_reproducible_and_learns() {
    let data = training_samples(4000, 5);
    let (train, test) = holdout_split(data.len(), 0.2, 1);
    let tr: Vec<Sample> = train.iter().map(|&i| data[i]).collect();
    let params = ForestParams {
        trees: 30,
        seed: 9,
        ..ForestParams::default()
    };
    let f = Forest::fit(&tr, &params).unwrap();
    let f2 = Forest::fit(&tr, &ForestParams { threads: 3, ..params }).unwrap();
    assert_eq!(f, f2, "threads do not change the forest");
    let mut c = Confusion::default();
    for &i in &test {
        c.add(data[i].label, f.predict(&data[i].x));
    }
    assert_eq!(c.total(), test.len() as u64);
    let m = Mda::fit(&tr).unwrap();
    let mut cm = Confusion::default();
    for &i in &test {
        cm.add(data[i].label, m.predict(&data[i].x));
    }
    println!("forest {:.3}, mda {:.3}", c.accuracy(), cm.accuracy());
    // Three balanced classes: chance is about 1/3 (the thesis: 0.41 to 0.52).
    assert!(c.accuracy() > 0.36, "forest accuracy {}", c.accuracy());
}

#[test]
fn artifacts_round_trip_and_refuse_corruption() {
    let m = Mda::fit(&textbook()).unwrap();
    let a = Artifact {
        format: 1,
        prior: 1,
        trained_on: 30,
        model: Model::Mda(m),
    };
    let (bytes, hash) = a.to_bytes();
    assert_eq!(Artifact::from_bytes(&bytes, &hash).unwrap(), a);
    let mut bad = bytes.clone();
    let n = bad.len() / 2;
    bad[n] ^= 1;
    let e = Artifact::from_bytes(&bad, &hash).unwrap_err().to_string();
    assert!(e.contains("corrupted"), "{e}");
    use engine::OpponentModel;
    assert_eq!(a.prior(), engine::TargetKind::Scorer);
}

/// MDA against scikit-learn's LinearDiscriminantAnalysis on the same samples
/// (scikit-learn comes from PyPI; scripts/ci.sh installs it).
#[test]
fn mda_agrees_with_scikit_learn() {
    let data = training_samples(8000, 2014);
    let (train, test) = holdout_split(data.len(), 0.2, 2014);
    let tr: Vec<Sample> = train.iter().map(|&i| data[i]).collect();
    let m = Mda::fit(&tr).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, idx: &[usize]| {
        let mut f = std::fs::File::create(dir.path().join(name)).unwrap();
        for &i in idx {
            let x = data[i].x;
            writeln!(f, "{},{},{},{},{},{}", x[0], x[1], x[2], x[3], x[4], data[i].label).unwrap();
        }
    };
    write("train.csv", &train);
    write("test.csv", &test);
    let script = "import sys, numpy as np\n\
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA\n\
        tr = np.loadtxt(sys.argv[1] + '/train.csv', delimiter=',')\n\
        te = np.loadtxt(sys.argv[1] + '/test.csv', delimiter=',')\n\
        p = LDA().fit(tr[:, :5], tr[:, 5].astype(int)).predict(te[:, :5])\n\
        print(' '.join(str(int(v)) for v in p))\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.path())
        .output()
        .expect("python3 is needed for this test");
    assert!(
        out.status.success(),
        "scikit-learn failed (install it: python3 -m pip install scikit-learn): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<u8> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(theirs.len(), test.len());
    let same = test
        .iter()
        .zip(&theirs)
        .filter(|&(&i, &p)| m.predict(&data[i].x) == p)
        .count();
    let share = same as f64 / test.len() as f64;
    println!(
        "MDA vs scikit-learn: {same}/{} identical predictions ({:.4})",
        test.len(),
        share
    );
    assert!(share >= 0.995, "only {share} identical");
}
