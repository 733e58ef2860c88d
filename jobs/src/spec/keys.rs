//! Every key a spec's tables may hold, checked before any value is read:
//! a misspelt key is named as unknown (with the nearest known key), never
//! blamed on the key it was meant to be (`dept = 1` is not "depth missing").

use toml::{Table, Value};

use super::SpecError;

/// The top level.
pub(super) const ROOT: &[&str] = &[
    "name",
    "seed",
    "output",
    "rules",
    "grid",
    "search",
    "classifier",
    "shards",
    "match",
    "prediction",
    "agents",
    "stop",
];

/// `[rules]` (thesis and full-game keys) and each `[rules.NAME]` rule set.
pub(super) const RULES: &[&str] = &[
    "preset", "set", "seats", "hand", "boneyard", "teams", "keep", "round", "blocked", "lead",
];

/// `[grid]`, with or without named agents and rule sets.
/// (`preset`, `seats`, `teams`, `partnerships`, `hand` and `set` are let
/// through: the grid refuses them with the recipe for a rule set.)
pub(super) const GRID: &[&str] = &[
    "preset",
    "seats",
    "teams",
    "partnerships",
    "hand",
    "set",
    "information_source",
    "observability",
    "target",
    "starting_states",
    "engine",
    "repeats",
    "agents",
    "opponents",
    "tournament",
    "paired",
    "rules",
];

/// The other tables: (path, keys).
const TABLES: &[(&str, &[&str])] = &[
    ("grid", GRID),
    ("search", FULL_SEARCH_KEYS),
    (
        "classifier",
        &["kind", "samples", "compare_samples", "folds", "holdout"],
    ),
    ("shards", &["games", "minutes"]),
    ("match", &["to"]),
    ("prediction", &["hands", "seed"]),
    ("output", &["dir", "moves"]),
    ("stop", &["sprt"]),
];

/// The nearest of `known` to `key` (by edit distance, at most 2 edits or a
/// shared prefix of 3 letters), for "did you mean".
pub(super) fn nearest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let best = known.iter().map(|k| (distance(key, k), *k)).min()?;
    if best.0 <= 2 || (key.len() >= 3 && best.1.starts_with(&key[..3])) {
        Some(best.1)
    } else {
        known
            .iter()
            .find(|k| key.len() >= 3 && k.starts_with(&key[..3]))
            .copied()
    }
}

/// Levenshtein distance over bytes (keys are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The error for `key` under `prefix`, not among `allowed`.
pub(super) fn unknown(prefix: &str, key: &str, allowed: &[&str]) -> SpecError {
    let path = if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    };
    if prefix.is_empty() && key == "train" {
        // A training spec handed to what takes experiments (a coordinator's
        // submission, `muggins submit`): say what it is and where it runs.
        return SpecError::UnknownKey {
            key: path,
            hint: " (a [train] section makes a training spec: it runs with `muggins run SPEC` on one machine, \
                   docs/train.md; a coordinator takes experiment specs only)"
                .into(),
        };
    }
    let guess = nearest(key, allowed).map_or(String::new(), |k| format!("did you mean `{k}`? "));
    SpecError::UnknownKey {
        key: path,
        hint: format!(" ({guess}expected one of: {})", allowed.join(", ")),
    }
}

fn check(t: &Table, prefix: &str, allowed: &[&str]) -> Result<(), SpecError> {
    match t.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(unknown(prefix, k, allowed)),
        None => Ok(()),
    }
}

/// Checks every table's keys before anything is parsed. Values of the
/// wrong kind (a table where a number belongs) are left to the parsers,
/// which name them.
pub(super) fn check_all(root: &Table) -> Result<(), SpecError> {
    check(root, "", ROOT)?;
    if let Some(Value::Table(rules)) = root.get("rules") {
        // A table in [rules] is a named rule set [rules.NAME].
        let plain: Table = rules
            .iter()
            .filter(|(_, v)| !v.is_table())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        check(&plain, "rules", RULES)?;
        for (name, v) in rules.iter() {
            if let Value::Table(set) = v {
                check(set, &format!("rules.{name}"), RULES)?;
            }
        }
    }
    for (path, allowed) in TABLES {
        if let Some(Value::Table(t)) = root.get(*path) {
            check(t, path, allowed)?;
        }
    }
    if let Some(Value::Table(stop)) = root.get("stop")
        && let Some(Value::Table(s)) = stop.get("sprt")
    {
        check(s, "stop.sprt", &["elo0", "elo1", "diff0", "diff1", "alpha", "beta"])?;
    }
    if let Some(Value::Table(agents)) = root.get("agents") {
        for (name, v) in agents.iter() {
            if let Value::Table(a) = v {
                // A table without `command` may still mean one (a typo of it
                // is told so).
                let keys: Vec<&str> = if a.contains_key("command") {
                    EXTERNAL_KEYS.to_vec()
                } else {
                    AGENT_KEYS.iter().copied().chain(["command"]).collect()
                };
                check(a, &format!("agents.{name}"), &keys)?;
            }
        }
    }
    Ok(())
}

/// The keys of an external agent's table.
pub(super) const EXTERNAL_KEYS: &[&str] = &[
    "command",
    "cwd",
    "env",
    "pass_env",
    "time_ms",
    "game_ms",
    "restarts",
    "hash_files",
    "sandbox",
    "network",
    "memory_mb",
    "processes",
    "open_files",
    "cpu_s",
    "read",
];

/// The keys of an `[agents.NAME]` table.
pub(super) const AGENT_KEYS: &[&str] = &[
    "engine",
    "table_mb",
    "strategy",
    "budget",
    "depth",
    "worlds",
    "belief",
    "evaluation",
    "shaping",
    "predictor",
    "adaptive",
    "net",
    "temperature",
    "simulations",
];

/// The keys `[search]` of an All-Fives spec takes.
pub(super) const FULL_SEARCH_KEYS: &[&str] = &[
    "partner",
    "adaptive",
    "depth",
    "budget",
    "worlds",
    "evaluation",
    "table_mb",
    "target_depth",
    "belief",
    "shaping",
    "predictor",
    "top_n",
    "epsilon",
    "likely",
    "extend",
    "reduce",
];
