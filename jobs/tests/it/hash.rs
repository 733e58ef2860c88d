//! The spec hash is pinned: it names every experiment (`<name>-<12 hex>`)
//! and resuming finds an experiment by it, so renaming a field or a variant
//! must never change it silently. The canonical form is written by hand
//! (jobs/src/spec.rs, `canonical_json`), not derived from engine types.

use jobs::{BEYOND_SPEC, MYERS2014_SPEC, SMOKE_SPEC, Spec};

/// A spec that sets every key, with the variants the shipped specs leave out.
const VARIANTS: &str = r#"
name = "variants-a"
seed = 9223372036854775807
output = "deep/dir/a"
[rules]
set = 4
hand = 4
boneyard = 7
lead = "player"
blocked = "none"
[grid]
information_source = ["bayes", "oracle", "classifier"]
observability = ["partial"]
target = ["defender", "random"]
starting_states = [5, 3, 9]
engine = ["expectimax"]
repeats = 3
[search]
worlds = 8
depth = 4
[classifier]
kind = "random-forest"
samples = 1000
compare_samples = [1000, 2000]
folds = 3
holdout = 0.125
[shards]
games = 7
"#;

fn variants_b() -> String {
    VARIANTS
        .replace("\"player\"", "\"target\"")
        .replace("worlds = 8", "worlds = \"all\"")
        .replace("depth = 4", "depth = \"unlimited\"")
        .replace("[5, 3, 9]", "\"2-6\"")
        .replace("\"random-forest\"", "\"mda\"")
        .replace("holdout = 0.125", "holdout = 0.3")
}

fn check(text: &str, json: &str, hash: &str) {
    let spec = Spec::from_toml(text).unwrap();
    assert_eq!(spec.canonical_json(), json);
    assert_eq!(spec.hash(), hash);
    assert_eq!(spec.id(), format!("{}-{}", spec.name, &hash[..12]));
}

#[test]
fn the_shipped_specs_keep_their_hashes() {
    check(
        MYERS2014_SPEC,
        r#"{"name":"myers2014","seed":2014,"output":"myers2014","rules":{"set":3,"hand":3,"boneyard":4,"lead":"highest-double","blocked":"difference"},"grid":{"information_source":["oracle","classifier"],"observability":["full","partial"],"target":["random","scorer","defender"],"starting_states":{"first":0,"last":4199},"engine":["mstar","expectimax"],"repeats":12},"search":{"worlds":"All","belief":"Uniform","depth":"Unlimited"},"classifier":{"kind":"best","samples":8000,"compare_samples":[8000,50000,130000],"folds":5,"holdout":0.2},"shard_games":5040}"#,
        "cf204527162ce5f447f59963cdef773b4fca3b64d6c5349ffaf51cb1a495514d",
    );
    check(
        SMOKE_SPEC,
        r#"{"name":"smoke","seed":7,"output":"smoke","rules":{"set":3,"hand":3,"boneyard":4,"lead":"highest-double","blocked":"difference"},"grid":{"information_source":["oracle","classifier","bayes"],"observability":["full","partial"],"target":["random","scorer","defender"],"starting_states":{"first":0,"last":299},"engine":["mstar","expectimax"],"repeats":1},"search":{"worlds":"All","belief":"Uniform","depth":"Unlimited"},"classifier":{"kind":"best","samples":2000,"compare_samples":[2000],"folds":5,"holdout":0.2},"shard_games":450}"#,
        "207a482a53d08a049e5d7cede42da35f4f94ab5dd6daa3c297a110d91d2abc96",
    );
    check(
        BEYOND_SPEC,
        r#"{"name":"beyond","seed":2014,"output":"beyond","rules":{"set":3,"hand":3,"boneyard":4,"lead":"highest-double","blocked":"difference"},"grid":{"information_source":["oracle","classifier","bayes"],"observability":["full","partial"],"target":["random","scorer","defender"],"starting_states":{"first":0,"last":4199},"engine":["mstar","expectimax"],"repeats":12},"search":{"worlds":"All","belief":"Uniform","depth":"Unlimited"},"classifier":{"kind":"best","samples":8000,"compare_samples":[8000],"folds":5,"holdout":0.2},"shard_games":5040}"#,
        "0a9463c94e1954e3b0dea83bdec4e40015a3c0c2e7f3d66e9b26b556a53f32e1",
    );
}

#[test]
fn every_variant_keeps_its_canonical_form() {
    check(
        VARIANTS,
        r#"{"name":"variants-a","seed":9223372036854775807,"output":"deep/dir/a","rules":{"set":4,"hand":4,"boneyard":7,"lead":"player","blocked":"none"},"grid":{"information_source":["bayes","oracle","classifier"],"observability":["partial"],"target":["defender","random"],"starting_states":[5,3,9],"engine":["expectimax"],"repeats":3},"search":{"worlds":{"Sample":8},"belief":"Uniform","depth":{"Turns":4}},"classifier":{"kind":"random-forest","samples":1000,"compare_samples":[1000,2000],"folds":3,"holdout":0.125},"shard_games":7}"#,
        "b6bbe40a17698f3b80709435d52c90497c6edafbe035a2484abe34191da04fe3",
    );
    check(
        &variants_b(),
        r#"{"name":"variants-a","seed":9223372036854775807,"output":"deep/dir/a","rules":{"set":4,"hand":4,"boneyard":7,"lead":"target","blocked":"none"},"grid":{"information_source":["bayes","oracle","classifier"],"observability":["partial"],"target":["defender","random"],"starting_states":{"first":2,"last":6},"engine":["expectimax"],"repeats":3},"search":{"worlds":"All","belief":"Uniform","depth":"Unlimited"},"classifier":{"kind":"mda","samples":1000,"compare_samples":[1000,2000],"folds":3,"holdout":0.3},"shard_games":7}"#,
        "2d06805db92918e5b2cf4bca619060b0795cdc35b59d94ef6c8b80396e03c763",
    );
}
