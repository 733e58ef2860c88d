//! The shaping factor: each level's shaping and predictor
//! ([`ShapingLevel`]), the spec's parameters, reading `[search] shaping`
//! and its settings, and `[prediction]` (how the fit stage trains the
//! predictors a shaped grid needs).

use engine::PlayerEngine;
use full::predict::{PredictModel, PredictTraining, default_predict_training};
use full::{FullConfig, Shaping};
use toml::{Table, Value};

use super::fields::{bad, distinct_strings, int_in, no_unknown, take_int};
use super::{GridSpec, SpecError};

/// One level of the shaping factor: how opponents' nodes are shaped, and
/// by which model's predictions (`none` has no model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShapingLevel {
    /// The shaping, with the spec's parameters.
    pub shaping: Shaping,
    /// The model that predicts the opponents' plays.
    pub predictor: PredictModel,
}

impl ShapingLevel {
    /// No shaping.
    pub const NONE: ShapingLevel = ShapingLevel {
        shaping: Shaping::None,
        predictor: PredictModel::Logit,
    };

    /// The name in rows and reports: `none`, or `prune/logit`,
    /// `asymmetric/dbn`, `expect/naive-bayes` (the parameters are the spec's).
    pub fn name(&self) -> String {
        if self.shaping == Shaping::None {
            "none".to_string()
        } else {
            format!("{}/{}", self.shaping.name(), self.predictor.name())
        }
    }
}

impl std::str::FromStr for ShapingLevel {
    type Err = String;
    /// Reads a level's name back (the parameters at their defaults).
    fn from_str(s: &str) -> Result<ShapingLevel, String> {
        if s == "none" {
            return Ok(ShapingLevel::NONE);
        }
        let (kind, model) = s
            .split_once('/')
            .ok_or_else(|| format!("unknown shaping {s:?}: expected none or KIND/MODEL"))?;
        let shaping = shaping_of(kind, &ShapingParams::default())?;
        Ok(ShapingLevel {
            shaping,
            predictor: model.parse()?,
        })
    }
}

/// The shaping's parameters (`[search]` keys; `muggins play` flags).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapingParams {
    /// `prune`: plays searched at most per opponent node.
    pub top_n: u8,
    /// `prune`: the least probability searched.
    pub epsilon: f64,
    /// `asymmetric`: how many of the most probable plays are likely.
    pub likely: u8,
    /// `asymmetric`: extra plies under a likely play.
    pub extend: u8,
    /// `asymmetric`: plies fewer under the others.
    pub reduce: u8,
}

impl Default for ShapingParams {
    fn default() -> Self {
        ShapingParams {
            top_n: 2,
            epsilon: 0.0,
            likely: 1,
            extend: 1,
            reduce: 1,
        }
    }
}

/// The shaping `kind` (`none`, `prune`, `asymmetric`, `expect`) with the
/// parameters `p`.
pub fn shaping_of(kind: &str, p: &ShapingParams) -> Result<Shaping, String> {
    Ok(match kind {
        "none" => Shaping::None,
        "prune" => Shaping::Prune {
            top_n: p.top_n,
            epsilon_ppm: (p.epsilon * 1e6).round() as u32,
        },
        "asymmetric" => Shaping::Asymmetric {
            likely: p.likely,
            extend: p.extend,
            reduce: p.reduce,
        },
        "expect" => Shaping::Expect,
        _ => {
            return Err(format!(
                "unknown shaping {kind:?}: expected none, prune, asymmetric or expect"
            ));
        }
    })
}

/// A string or a non-empty list of strings, each once.
fn names_of(key: &str, v: &Value, what: &str) -> Result<Vec<String>, SpecError> {
    let items = match v {
        Value::String(_) => vec![v.clone()],
        Value::Array(a) if !a.is_empty() => a.clone(),
        _ => return Err(bad(key, v, format!("expected {what} or a list of them"))),
    };
    distinct_strings(key, items, "each entry must be a string")
}

/// `[search] shaping` (one or a list: a grid factor), `predictor` (one or a
/// list) and the parameters `top_n`, `epsilon`, `likely`, `extend`,
/// `reduce`: the levels, each shaping other than `none` once per predictor.
pub(super) fn take_shaping(t: &mut Option<Table>, grid: &GridSpec) -> Result<Vec<ShapingLevel>, SpecError> {
    let Some(t) = t.as_mut() else {
        return Ok(vec![ShapingLevel::NONE]);
    };
    let given: Vec<(&str, Value)> = super::full::SHAPING_KEYS
        .iter()
        .filter(|k| **k != "shaping")
        .filter_map(|k| t.get(*k).map(|v| (*k, v.clone())))
        .collect();
    let mut p = ShapingParams::default();
    if let Some(v) = take_int(t, "search", "top_n")? {
        p.top_n = int_in("search.top_n", v, 1, 64)? as u8;
    }
    if let Some(v) = take_int(t, "search", "likely")? {
        p.likely = int_in("search.likely", v, 1, 64)? as u8;
    }
    if let Some(v) = take_int(t, "search", "extend")? {
        p.extend = int_in("search.extend", v, 0, 8)? as u8;
    }
    if let Some(v) = take_int(t, "search", "reduce")? {
        p.reduce = int_in("search.reduce", v, 0, 8)? as u8;
    }
    if let Some(v) = t.remove("epsilon") {
        let x = match &v {
            Value::Float(x) => *x,
            Value::Integer(i) => *i as f64,
            _ => return Err(bad("search.epsilon", &v, "expected a probability from 0 to 1")),
        };
        if !(0.0..1.0).contains(&x) {
            return Err(bad(
                "search.epsilon",
                &v,
                "expected a probability from 0 up to (not including) 1",
            ));
        }
        p.epsilon = x;
    }
    let shapings = match t.remove("shaping") {
        None => vec!["none".to_string()],
        Some(v) => names_of(
            "search.shaping",
            &v,
            "a shaping (\"none\", \"prune\", \"asymmetric\" or \"expect\")",
        )?,
    };
    let models = match t.remove("predictor") {
        None => vec![PredictModel::Logit],
        Some(v) => names_of(
            "search.predictor",
            &v,
            "a predictor (\"naive-bayes\", \"dbn\" or \"logit\")",
        )?
        .iter()
        .map(|m| {
            m.parse::<PredictModel>()
                .map_err(|why| bad("search.predictor", format!("\"{m}\""), why))
        })
        .collect::<Result<_, _>>()?,
    };
    unread_shaping_settings(&given, &shapings)?;
    let mut out = Vec::new();
    for s in &shapings {
        let shaping = shaping_of(s, &p).map_err(|why| bad("search.shaping", format!("\"{s}\""), why))?;
        if shaping == Shaping::None {
            out.push(ShapingLevel::NONE);
            continue;
        }
        for &predictor in &models {
            out.push(ShapingLevel { shaping, predictor });
        }
    }
    if out != [ShapingLevel::NONE]
        && let Some(e) = grid
            .engine
            .iter()
            .find(|e| matches!(e, PlayerEngine::Ismcts | PlayerEngine::Dominai))
    {
        return Err(bad(
            "search.shaping",
            format!("{shapings:?}"),
            format!("shaping applies to the searches mstar and expectimax; grid.engine lists {e}"),
        ));
    }
    Ok(out)
}

/// Refuses a shaping setting that no listed shaping reads (a setting that
/// changes nothing is a mistake, not a default), naming what would read it.
fn unread_shaping_settings(given: &[(&str, Value)], shapings: &[String]) -> Result<(), SpecError> {
    let reads = |key: &str| -> &'static [&'static str] {
        match key {
            "top_n" | "epsilon" => &["prune"],
            "likely" | "extend" | "reduce" => &["asymmetric"],
            _ => &["prune", "asymmetric", "expect"],
        }
    };
    for (key, v) in given {
        let readers = reads(key);
        if !shapings.iter().any(|s| readers.contains(&s.as_str())) {
            let listed = shapings
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(bad(
                &format!("search.{key}"),
                v,
                format!(
                    "is read only by shaping = {}; the grid's shapings ({listed}) do not read it: remove it, or add \
                     such a shaping to search.shaping",
                    readers
                        .iter()
                        .map(|r| format!("\"{r}\""))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
    }
    Ok(())
}

/// The most training hands a strategy `[prediction] hands` may ask for.
pub const MAX_PREDICTION_HANDS: u64 = 200_000;

/// `[prediction]` (`hands` a strategy, `seed`): how the fit stage trains
/// the opponent-move predictors of a grid that shapes its search, at the
/// spec's seats; the defaults are the shipped artifact's training
/// (`muggins fit-predict`). `None` when nothing is shaped; the table is
/// refused then.
pub(super) fn take_prediction(
    t: Option<Table>,
    grid: &GridSpec,
    config: Option<&FullConfig>,
) -> Result<Option<PredictTraining>, SpecError> {
    let shaped = grid.shaping.iter().any(|l| *l != ShapingLevel::NONE);
    if !shaped {
        if let Some(t) = t {
            let v = t.keys().next().map_or("{}".to_string(), |k| k.clone());
            return Err(bad(
                "prediction",
                v,
                "trains the predictors of a shaped search: it needs [search] shaping other than \"none\"",
            ));
        }
        return Ok(None);
    }
    let mut training = default_predict_training();
    training.seats = config.map_or(2, |c| c.seats);
    if let Some(mut t) = t {
        if let Some(v) = take_int(&mut t, "prediction", "hands")? {
            training.hands = int_in("prediction.hands", v, 1, MAX_PREDICTION_HANDS as i64)? as u64;
        }
        if let Some(v) = take_int(&mut t, "prediction", "seed")? {
            training.seed = int_in("prediction.seed", v, 0, i64::MAX)? as u64;
        }
        no_unknown(&t, "prediction", &["hands", "seed"])?;
    }
    Ok(Some(training))
}
