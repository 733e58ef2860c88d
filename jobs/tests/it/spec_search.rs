//! The `[search]` table of full-game specs: search settings, partners,
//! beliefs and shaping, as levels or grid factors, and their refusals.

use jobs::{Spec, coords};

use crate::spec::{BASE, with};
use crate::spec_full::ALL_FIVES;

#[test]
fn an_all_fives_spec_reads_its_search_settings() {
    let s = Spec::from_toml(
        &ALL_FIVES
            .replace("[\"full\"]", "[\"full\", \"partial\"]")
            .replace(
                "depth = 2",
                "budget = 20000\nworlds = 16\ntable_mb = 32\nevaluation = \"learned\"\ntarget_depth = 3",
            )
            .replace("target = [\"scorer\"]", "target = [\"scorer\", \"searcher\"]"),
    )
    .unwrap();
    let f = s.full.expect("a full-game spec");
    assert_eq!(
        f.search,
        jobs::FullSearch {
            budget: 20_000,
            table_mb: 32,
            learned: true,
            target_depth: 3,
            adaptive: None,
        }
    );
    assert_eq!(s.search.worlds, engine::WorldCount::Sample(16));
    // The settings enter the hash only when set: the spec without them keeps its id.
    let plain = Spec::from_toml(ALL_FIVES).unwrap();
    assert_eq!(plain.full.unwrap().search, jobs::FullSearch::default());
    assert!(!plain.canonical_json().contains("budget"));
    let json = s.canonical_json();
    for part in [
        "\"budget\":20000",
        "\"table_mb\":32",
        "\"target_depth\":3",
        jobs::evals::shipped_eval_hash(),
    ] {
        assert!(json.contains(part), "{json} lacks {part}");
    }
    let shipped = Spec::from_toml(include_str!("../../specs/double6-strength.toml")).unwrap();
    assert_eq!(shipped.games(), 900);
}

#[test]
fn a_partner_is_the_agent_unless_the_spec_names_a_strategy() {
    let teams = ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nseats = 4");
    let same = Spec::from_toml(&teams).unwrap();
    assert_eq!(same.full.unwrap().partner, None);
    let agent = Spec::from_toml(&teams.replace("depth = 2", "depth = 2\npartner = \"agent\"")).unwrap();
    assert_eq!(agent.id(), same.id(), "partner = \"agent\" is the default");
    let heavy = Spec::from_toml(&teams.replace("depth = 2", "depth = 2\npartner = \"heaviest\"")).unwrap();
    assert_eq!(heavy.full.unwrap().partner, Some(full::FullTarget::Heaviest));
    assert!(
        heavy
            .canonical_json()
            .contains(r#""lead":"winner","partner":"heaviest"}"#)
    );
    assert_ne!(heavy.id(), same.id());
    for (text, parts) in [
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\npartner = \"heaviest\""),
            vec!["search.partner", "partnerships"],
        ),
        (
            format!("{BASE}[search]\npartner = \"random\"\n"),
            vec!["search.partner", "partnerships"],
        ),
        (
            teams.replace("depth = 2", "depth = 2\npartner = \"bully\""),
            vec!["search.partner = \"bully\"", "agent"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"team\"")
                .replace("[\"scorer\"]", "[\"random\"]")
                .replace("depth = 2", "depth = 2\npartner = \"scorer\""),
            vec!["search.partner = \"scorer\"", "no count"],
        ),
    ] {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn beliefs_are_read_as_one_level_or_a_grid_factor() {
    use engine::Belief;
    let partial = ALL_FIVES
        .replace("[\"full\"]", "[\"partial\"]")
        .replace("depth = 2", "depth = 2\nworlds = 8");
    let one = Spec::from_toml(&partial.replace("worlds = 8", "worlds = 8\nbelief = \"constraints\"")).unwrap();
    assert_eq!(one.grid.belief, vec![Belief::Constraints]);
    assert_eq!(one.search.belief, Belief::Constraints);
    assert_eq!(one.games(), 20);
    let text = partial.replace(
        "worlds = 8",
        "worlds = 8\nbelief = [\"uniform\", \"constraints\", \"dominai\", \"model\"]",
    );
    let four = Spec::from_toml(&text).unwrap();
    assert_eq!(four.grid.belief, Belief::ALL.to_vec());
    assert_eq!(four.games(), 80);
    assert!(
        four.canonical_json()
            .contains(r#""belief":["uniform","constraints","dominai","model"]"#)
    );
    // The belief varies just slower than the engine: the same deal and
    // repeat under every belief.
    let cs: Vec<_> = (0..8).map(|i| jobs::coords(&four, i)).collect();
    assert_eq!(cs[0].belief, Belief::Uniform);
    assert_eq!(cs[2].belief, Belief::Constraints);
    assert!(
        cs.iter()
            .all(|c| c.starting_state == cs[0].starting_state && c.repeat == 1)
    );
    // Each belief makes its own experiment; the default is uniform.
    let default = Spec::from_toml(&partial).unwrap();
    assert_eq!(default.grid.belief, vec![Belief::Uniform]);
    assert_ne!(default.id(), one.id());
    // The thesis keeps its hash with uniform written out, and takes constraints.
    let thesis = with("observability = [\"partial\"]");
    let written = format!("{thesis}[search]\nbelief = \"uniform\"\n");
    assert_eq!(
        Spec::from_toml(&written).unwrap().id(),
        Spec::from_toml(&thesis).unwrap().id()
    );
    let c = Spec::from_toml(&format!("{thesis}[search]\nbelief = \"constraints\"\n")).unwrap();
    assert!(c.canonical_json().contains(r#""belief":"Constraints""#));
}

#[test]
fn a_belief_the_spec_cannot_use_is_refused_naming_key_and_value() {
    let partial = ALL_FIVES
        .replace("[\"full\"]", "[\"partial\"]")
        .replace("depth = 2", "depth = 2\nworlds = 8");
    let thesis = with("observability = [\"partial\"]");
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = \"bayes\""),
            vec![
                "search.belief = \"bayes\"",
                "uniform",
                "constraints",
                "dominai",
                "model",
            ],
        ),
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = [\"model\", \"model\"]"),
            vec!["search.belief = \"model\"", "listed twice"],
        ),
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = 3"),
            vec!["search.belief = 3", "list of them"],
        ),
        (
            format!("{thesis}[search]\nbelief = \"model\"\n"),
            vec!["search.belief = \"model\"", "all-fives"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nbelief = \"constraints\""),
            vec!["search.belief", "partial"],
        ),
        (
            ALL_FIVES.replace("[\"mstar\", \"expectimax\"]", "[\"dominai\"]"),
            vec!["grid.observability = \"full\"", "dominai"],
        ),
        (
            with("engine = [\"dominai\"]"),
            vec!["grid.engine = \"dominai\"", "all-fives"],
        ),
    ];
    for (text, parts) in cases {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn shaping_is_read_as_levels_of_a_grid_factor() {
    use full::Shaping;
    use full::predict::PredictModel;
    use jobs::ShapingLevel;
    let text = ALL_FIVES.replace(
        "depth = 2",
        "depth = 2\nshaping = [\"none\", \"prune\", \"expect\"]\npredictor = [\"logit\", \"dbn\"]\ntop_n = 3\nepsilon = 0.05",
    );
    let s = Spec::from_toml(&text).unwrap();
    let names: Vec<String> = s.grid.shaping.iter().map(ShapingLevel::name).collect();
    assert_eq!(
        names,
        ["none", "prune/logit", "prune/dbn", "expect/logit", "expect/dbn"]
    );
    assert_eq!(
        s.grid.shaping[1].shaping,
        Shaping::Prune {
            top_n: 3,
            epsilon_ppm: 50_000
        }
    );
    assert_eq!(s.grid.shaping[2].predictor, PredictModel::Dbn);
    assert_eq!(s.games(), 100);
    // Just slower than the engine: every level on the same deal and repeat.
    let cs: Vec<_> = (0..10).map(|i| coords(&s, i)).collect();
    assert!(cs.iter().all(|c| c.starting_state == cs[0].starting_state));
    assert_eq!(cs[2].shaping.name(), "prune/logit");
    assert!(
        s.canonical_json()
            .contains(r#""shaping":[{"level":"none"},{"level":"prune/logit","top_n":3,"epsilon_ppm":50000}"#)
    );
    // The fit stage trains the predictors: at the defaults, the shipped ones.
    assert_eq!(s.prediction, Some(full::predict::default_predict_training()));
    assert!(s.needs_predictors() && s.needs_fit() && !s.needs_classifier());
    assert!(
        s.canonical_json()
            .contains(r#""prediction":{"hands":4000,"seed":2026,"seats":2}"#)
    );
    let trained = Spec::from_toml(&format!("{text}\n[prediction]\nhands = 500\nseed = 9\n")).unwrap();
    assert_eq!(trained.prediction.map(|p| (p.hands, p.seed)), Some((500, 9)));
    assert_ne!(trained.id(), s.id());
    // No shaping (or `none` written out) keeps the spec's id.
    let plain = Spec::from_toml(ALL_FIVES).unwrap();
    assert_eq!(plain.grid.shaping, vec![ShapingLevel::NONE]);
    let none = Spec::from_toml(&ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"none\"")).unwrap();
    assert_eq!(none.id(), plain.id());
    assert_ne!(s.id(), plain.id());
    // Asymmetric with its parameters; the default predictor is the logit.
    let a = Spec::from_toml(&ALL_FIVES.replace(
        "depth = 2",
        "depth = 2\nshaping = \"asymmetric\"\nlikely = 2\nextend = 3\nreduce = 0",
    ))
    .unwrap();
    assert_eq!(
        a.grid.shaping,
        vec![ShapingLevel {
            shaping: Shaping::Asymmetric {
                likely: 2,
                extend: 3,
                reduce: 0
            },
            predictor: PredictModel::Logit
        }]
    );
}

#[test]
fn a_shaping_the_spec_cannot_use_is_refused_naming_key_and_value() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"deeper\""),
            vec!["search.shaping = \"deeper\"", "none, prune, asymmetric or expect"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\npredictor = \"svm\""),
            vec!["search.predictor = \"svm\"", "naive-bayes, dbn or logit"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = [\"prune\", \"prune\"]"),
            vec!["search.shaping = \"prune\"", "listed twice"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\ntop_n = 0"),
            vec!["search.top_n = 0"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\nepsilon = 1.5"),
            vec!["search.epsilon = 1.5", "probability"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"asymmetric\"\nextend = 9"),
            vec!["search.extend = 9"],
        ),
        (
            ALL_FIVES
                .replace("[\"mstar\", \"expectimax\"]", "[\"mstar\", \"ismcts\"]")
                .replace("depth = 2", "budget = 100\nshaping = \"expect\""),
            vec!["search.shaping", "mstar and expectimax", "ismcts"],
        ),
        (
            format!("{BASE}[search]\nshaping = \"prune\"\n"),
            vec!["search.shaping", "all-fives"],
        ),
        (
            format!("{ALL_FIVES}[prediction]\nhands = 100\n"),
            vec!["prediction = hands", "shaping"],
        ),
        (
            format!(
                "{}[prediction]\nhands = 0\n",
                ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"")
            ),
            vec!["prediction.hands = 0"],
        ),
        (
            format!(
                "{}[prediction]\nrounds = 3\n",
                ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"")
            ),
            vec!["prediction.rounds", "unknown"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"team\"")
                .replace("depth = 2", "depth = 2\nshaping = \"prune\""),
            vec!["search.shaping", "all-fives"],
        ),
    ];
    for (text, parts) in cases {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn adaptive_is_true_false_or_a_confidence() {
    let partial = ALL_FIVES
        .replace("[\"full\"]", "[\"partial\"]")
        .replace("depth = 2", "depth = 2\nworlds = 8");
    let read = |v: &str| Spec::from_toml(&partial.replace("worlds = 8", &format!("worlds = 8\nadaptive = {v}")));
    let default = read("true").unwrap();
    assert_eq!(
        default.full.as_ref().unwrap().search.adaptive,
        Some(full::Adaptive::DEFAULT)
    );
    // `true` keeps the canonical text it had before levels existed.
    assert!(default.canonical_json().contains(",\"adaptive\":true"));
    let at95 = read("0.95").unwrap();
    assert_eq!(
        at95.full.as_ref().unwrap().search.adaptive,
        Some(full::Adaptive::with_confidence(0.95).unwrap())
    );
    assert!(at95.canonical_json().contains(",\"adaptive\":0.95"));
    assert_ne!(at95.id(), default.id());
    // 0.99 is `true`, and `false` is no setting at all.
    assert_eq!(read("0.99").unwrap().id(), default.id());
    assert_eq!(read("false").unwrap().id(), Spec::from_toml(&partial).unwrap().id());
    for (v, parts) in [
        ("1.0", vec!["search.adaptive = 1.0", "above 0.5 and below 1"]),
        ("0.9555", vec!["search.adaptive = 0.9555", "thousandths"]),
        (
            "\"yes\"",
            vec!["search.adaptive = \"yes\"", "true, false or a confidence"],
        ),
        ("2", vec!["search.adaptive = 2", "true, false or a confidence"]),
    ] {
        let e = read(v).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{v}: {e:?} lacks {p:?}");
        }
    }
}
