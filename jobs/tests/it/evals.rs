//! The learned evaluation's artifact: the shipped one is what its recorded
//! training run fits, byte for byte; a foreign artifact is refused.

use full::{ModelError, default_training};
use jobs::LearnError;
use jobs::evals::{SHIPPED_EVAL_JSON, eval_hash, fit_eval, parse_eval, shipped_eval, shipped_eval_hash};

#[test]
fn the_shipped_evaluation_is_what_its_training_run_fits() {
    let shipped = shipped_eval();
    assert_eq!(shipped.training, default_training());
    let (eval, json) = fit_eval(&shipped.training).unwrap();
    assert_eq!(
        json, SHIPPED_EVAL_JSON,
        "muggins fit-eval --out jobs/evals/fives-double6.json refits it"
    );
    // The search reads the text parsed (serde_json's parser may land a last
    // bit away from the fitted float; the text is the artifact's identity).
    assert_eq!(&parse_eval(&json).unwrap(), shipped);
    assert_eq!(eval_hash(&json), shipped_eval_hash());
    // It predicts the rest of a hand better than "score so far" on held-out hands.
    assert!(
        eval.holdout_mse < 0.95 * eval.holdout_mse_score,
        "{} vs {}",
        eval.holdout_mse,
        eval.holdout_mse_score
    );
}

#[test]
fn an_artifact_with_other_features_is_refused() {
    let other = SHIPPED_EVAL_JSON.replacen("\"my_pips\"", "\"my_dots\"", 1);
    let e = parse_eval(&other).unwrap_err();
    let LearnError::Model(ModelError::EvalFeatures { have, want }) = &e else {
        panic!("{e:?}");
    };
    assert!(have.iter().any(|f| f == "my_dots") && want.contains(&"my_pips"), "{e}");
    let text = e.to_string();
    assert!(text.contains("my_dots") && text.contains("my_pips"), "{text}");
    let e = parse_eval("{}").unwrap_err();
    assert!(
        matches!(
            e,
            LearnError::Format {
                kind: "an evaluation",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("not an evaluation artifact: "), "{e}");
}

#[test]
fn the_shipped_predictors_are_what_their_training_run_fits() {
    use full::predict::default_predict_training;
    use jobs::predictors::{SHIPPED_PREDICTORS_JSON, fit, parse_predictors, shipped_predictors};
    let shipped = shipped_predictors();
    assert_eq!(shipped.training, default_predict_training());
    let (_, json) = fit(&shipped.training).unwrap();
    assert_eq!(
        json, SHIPPED_PREDICTORS_JSON,
        "muggins fit-predict --out jobs/predictors/fives-double6.json refits it"
    );
    assert_eq!(&parse_predictors(&json).unwrap(), shipped);
    let other = SHIPPED_PREDICTORS_JSON.replacen("\"scores_most\"", "\"scores_more\"", 1);
    let e = parse_predictors(&other).unwrap_err();
    assert!(
        matches!(&e, LearnError::Model(ModelError::PredictorFeatures { have, .. }) if have.iter().any(|f| f == "scores_more")),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("scores_more") && text.contains("scores_most"), "{text}");
    let e = parse_predictors("{}").unwrap_err();
    assert!(
        matches!(
            e,
            LearnError::Format {
                kind: "a predictors",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("not a predictors artifact: "), "{e}");
}
