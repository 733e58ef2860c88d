//! Experiment specs: TOML in, a validated [`Spec`] out. Every refusal names
//! the key and the value given.

use std::fmt;

use engine::{
    Belief, Blocked, DepthLimit, Lead, Observability, PlayerEngine, Rules, RulesConfig, SearchConfig, TargetKind,
    WorldCount,
};
use serde::Serialize;
use sha2::{Digest, Sha256};
use toml::{Table, Value};

/// The longest `output` accepted.
pub const MAX_OUTPUT_BYTES: usize = 256;
/// The longest path (relative to the results root) a completion may name.
pub const MAX_PATH_BYTES: usize = 1024;
/// Largest spec text accepted.
pub const MAX_SPEC_BYTES: usize = 1 << 20;
/// Largest grid accepted, in games.
pub const MAX_GAMES: u64 = 100_000_000;
/// Largest shard accepted, in games.
pub const MAX_SHARD_GAMES: u64 = 1_000_000;
/// Games per shard unless the spec says otherwise.
pub const DEFAULT_SHARD_GAMES: u64 = 5040;

/// A spec that cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Not TOML at all; the parser's message names the line and column.
    #[error("invalid spec: not valid TOML: {0}")]
    Syntax(String),
    #[error("invalid spec: unknown key `{key}`{hint}")]
    UnknownKey { key: String, hint: String },
    #[error("invalid spec: missing key `{key}` ({reason})")]
    Missing { key: String, reason: String },
    #[error("invalid spec: {key} = {value}: {reason}")]
    Value { key: String, value: String, reason: String },
}

impl SpecError {
    /// The key the error is about.
    pub fn key(&self) -> Option<&str> {
        match self {
            SpecError::Syntax(_) => None,
            SpecError::UnknownKey { key, .. } | SpecError::Missing { key, .. } | SpecError::Value { key, .. } => {
                Some(key)
            }
        }
    }
}

fn bad(key: &str, value: impl fmt::Display, reason: impl Into<String>) -> SpecError {
    SpecError::Value {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Where M* takes its model of the target from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Oracle,
    Classifier,
    /// Beyond the thesis: a posterior over the types from observed actions.
    Bayes,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Oracle => "oracle",
            Source::Classifier => "classifier",
            Source::Bayes => "bayes",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "oracle" => Some(Source::Oracle),
            "classifier" => Some(Source::Classifier),
            "bayes" => Some(Source::Bayes),
            _ => None,
        }
    }
}

/// The starting states of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateSet {
    /// The inclusive range lo..=hi.
    Range { first: u64, last: u64 },
    /// These states, in this order.
    List(Vec<u64>),
}

impl StateSet {
    pub fn len(&self) -> u64 {
        match self {
            StateSet::Range { first, last } => last - first + 1,
            StateSet::List(v) => v.len() as u64,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The i-th state.
    pub fn get(&self, i: u64) -> u64 {
        match self {
            StateSet::Range { first, .. } => first + i,
            StateSet::List(v) => v[i as usize],
        }
    }
}

/// The levels and factors (Table 12 of the thesis).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridSpec {
    pub information_source: Vec<Source>,
    pub observability: Vec<Observability>,
    pub target: Vec<TargetKind>,
    pub starting_states: StateSet,
    pub engine: Vec<PlayerEngine>,
    pub repeats: u32,
}

/// Classifier settings (used by the opponent-modeling stages).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassifierSpec {
    pub kind: String,
    pub samples: u64,
    pub compare_samples: Vec<u64>,
    pub folds: u32,
    pub holdout: f64,
}

impl Default for ClassifierSpec {
    fn default() -> Self {
        ClassifierSpec {
            kind: "best".into(),
            samples: 8000,
            compare_samples: vec![8000, 50000, 130000],
            folds: 5,
            holdout: 0.2,
        }
    }
}

/// A validated experiment spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: String,
    pub seed: u64,
    /// Where results go, relative to the results root.
    pub output: String,
    pub rules: RulesConfig,
    pub grid: GridSpec,
    pub search: SearchConfig,
    pub classifier: ClassifierSpec,
    /// Games per shard.
    pub shard_games: u64,
}

impl Spec {
    /// Parses and validates a spec.
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        if text.len() > MAX_SPEC_BYTES {
            return Err(bad(
                "spec",
                format!("{} bytes", text.len()),
                format!("a spec may be at most {MAX_SPEC_BYTES} bytes"),
            ));
        }
        let mut root: Table = text
            .parse()
            .map_err(|e: toml::de::Error| SpecError::Syntax(e.to_string().trim().to_string()))?;
        let name = take_str(&mut root, "", "name")?.ok_or_else(|| missing("name", "every experiment has a name"))?;
        check_name("name", &name)?;
        let seed =
            take_int(&mut root, "", "seed")?.ok_or_else(|| missing("seed", "the experiment seed, e.g. seed = 2014"))?;
        let seed = u64::try_from(seed).map_err(|_| bad("seed", seed, "must not be negative"))?;
        let output = match take_str(&mut root, "", "output")? {
            Some(o) => {
                check_output(&o)?;
                o
            }
            None => name.clone(),
        };
        let rules = parse_rules(take_table(&mut root, "", "rules")?)?;
        let rules_checked = Rules::new(rules).map_err(|e| bad(&format!("rules.{}", e.field), &e.value, e.reason))?;
        let grid_table = take_table(&mut root, "", "grid")?
            .ok_or_else(|| missing("grid", "the [grid] table of levels and factors"))?;
        let grid = parse_grid(grid_table, &rules_checked)?;
        let search = parse_search(take_table(&mut root, "", "search")?, &rules)?;
        let classifier = parse_classifier(take_table(&mut root, "", "classifier")?)?;
        check_classifier_fits(&classifier)?;
        let shard_games = parse_shards(take_table(&mut root, "", "shards")?)?;
        no_unknown(
            &root,
            "",
            &[
                "name",
                "seed",
                "output",
                "rules",
                "grid",
                "search",
                "classifier",
                "shards",
            ],
        )?;
        let spec = Spec {
            name,
            seed,
            output,
            rules,
            grid,
            search,
            classifier,
            shard_games,
        };
        let games = spec.games_u128();
        if games > MAX_GAMES as u128 {
            return Err(bad(
                "grid",
                format!("{games} games"),
                format!("a grid may hold at most {MAX_GAMES} games"),
            ));
        }
        Ok(spec)
    }

    fn games_u128(&self) -> u128 {
        let g = &self.grid;
        g.information_source.len() as u128
            * g.observability.len() as u128
            * g.target.len() as u128
            * g.starting_states.len() as u128
            * g.engine.len() as u128
            * g.repeats as u128
    }

    /// Games in the grid.
    pub fn games(&self) -> u64 {
        self.games_u128() as u64
    }

    /// The validated rules.
    pub fn rules(&self) -> Rules {
        Rules::new(self.rules).expect("validated when the spec was parsed")
    }

    /// The spec in canonical JSON (what the hash covers).
    ///
    /// Written by hand, key by key and variant by variant, so that renaming a
    /// Rust field or variant never changes an experiment's hash (and id);
    /// `jobs/tests/it/hash.rs` pins it.
    pub fn canonical_json(&self) -> String {
        use std::fmt::Write;
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let list = |items: Vec<String>| format!("[{}]", items.join(","));
        let names = |items: Vec<&str>| list(items.into_iter().map(text).collect());
        let r = &self.rules;
        let g = &self.grid;
        let c = &self.classifier;
        let lead = match r.lead {
            Lead::HighestDouble => "highest-double",
            Lead::Player => "player",
            Lead::Target => "target",
        };
        let blocked = match r.blocked {
            Blocked::Difference => "difference",
            Blocked::None => "none",
        };
        let observability = |o: &Observability| match o {
            Observability::Full => "full",
            Observability::Partial => "partial",
        };
        let target = |t: &TargetKind| match t {
            TargetKind::Random => "random",
            TargetKind::Scorer => "scorer",
            TargetKind::Defender => "defender",
        };
        let player_engine = |e: &PlayerEngine| match e {
            PlayerEngine::Expectimax => "expectimax",
            PlayerEngine::MStar => "mstar",
        };
        let states = match &g.starting_states {
            StateSet::Range { first, last } => format!("{{\"first\":{first},\"last\":{last}}}"),
            StateSet::List(v) => list(v.iter().map(u64::to_string).collect()),
        };
        let worlds = match self.search.worlds {
            WorldCount::All => text("All"),
            WorldCount::Sample(k) => format!("{{\"Sample\":{k}}}"),
        };
        let belief = match self.search.belief {
            Belief::Uniform => text("Uniform"),
        };
        let depth = match self.search.depth {
            DepthLimit::Unlimited => text("Unlimited"),
            DepthLimit::Turns(d) => format!("{{\"Turns\":{d}}}"),
        };
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\"name\":{},\"seed\":{},\"output\":{},\
             \"rules\":{{\"set\":{},\"hand\":{},\"boneyard\":{},\"lead\":{},\"blocked\":{}}},\
             \"grid\":{{\"information_source\":{},\"observability\":{},\"target\":{},\"starting_states\":{},\
             \"engine\":{},\"repeats\":{}}},\
             \"search\":{{\"worlds\":{},\"belief\":{},\"depth\":{}}},\
             \"classifier\":{{\"kind\":{},\"samples\":{},\"compare_samples\":{},\"folds\":{},\"holdout\":{}}},\
             \"shard_games\":{}}}",
            text(&self.name),
            self.seed,
            text(&self.output),
            r.set,
            r.hand,
            r.boneyard,
            text(lead),
            text(blocked),
            names(g.information_source.iter().map(|s| s.name()).collect()),
            names(g.observability.iter().map(observability).collect()),
            names(g.target.iter().map(target).collect()),
            states,
            names(g.engine.iter().map(player_engine).collect()),
            g.repeats,
            worlds,
            belief,
            depth,
            text(&c.kind),
            c.samples,
            list(c.compare_samples.iter().map(u64::to_string).collect()),
            c.folds,
            serde_json::to_string(&c.holdout).expect("a finite float serialises"),
            self.shard_games
        );
        out
    }

    /// Whether the grid needs a trained classifier (and so the training stages).
    pub fn needs_classifier(&self) -> bool {
        self.grid.information_source.contains(&Source::Classifier)
    }

    /// Samples the training stage must provide: the most any fit asks for.
    pub fn samples_needed(&self) -> u64 {
        self.classifier
            .compare_samples
            .iter()
            .copied()
            .chain([self.classifier.samples])
            .max()
            .unwrap_or(0)
    }

    /// Training games to play: enough for `samples_needed` with room to spare
    /// (a game gives the target seat at least `hand` turns less a few; the
    /// thesis deal gives about 3.5 samples a game). The fit stage refuses to
    /// run on fewer samples than it needs, naming both numbers.
    pub fn training_games(&self) -> u64 {
        let per_game = (self.rules.hand as u64).max(2) - 1;
        self.samples_needed().div_ceil(per_game)
    }

    /// SHA-256 of the canonical JSON, in hex.
    pub fn hash(&self) -> String {
        hex(&Sha256::digest(self.canonical_json().as_bytes()))
    }

    /// The experiment id: the name and the first 12 hex digits of the hash.
    pub fn id(&self) -> String {
        format!("{}-{}", self.name, &self.hash()[..12])
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn missing(key: &str, reason: &str) -> SpecError {
    SpecError::Missing {
        key: key.into(),
        reason: reason.into(),
    }
}

fn path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn no_unknown(t: &Table, prefix: &str, allowed: &[&str]) -> Result<(), SpecError> {
    if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(SpecError::UnknownKey {
            key: path(prefix, k),
            hint: format!(" (expected one of: {})", allowed.join(", ")),
        });
    }
    Ok(())
}

fn take_table(t: &mut Table, prefix: &str, key: &str) -> Result<Option<Table>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::Table(x)) => Ok(Some(x)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be a table, e.g. [rules]")),
    }
}

fn take_str(t: &mut Table, prefix: &str, key: &str) -> Result<Option<String>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be a string")),
    }
}

fn take_int(t: &mut Table, prefix: &str, key: &str) -> Result<Option<i64>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(i)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be an integer")),
    }
}

fn int_in(key: &str, v: i64, lo: i64, hi: i64) -> Result<i64, SpecError> {
    if v < lo || v > hi {
        return Err(bad(key, v, format!("must be between {lo} and {hi}")));
    }
    Ok(v)
}

fn check_name(key: &str, s: &str) -> Result<(), SpecError> {
    let ok_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if s.is_empty() || s.len() > 64 || !ok_chars || s.starts_with(['.', '_', '-']) {
        return Err(bad(
            key,
            Value::String(s.into()),
            "must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.', '_' or '-'",
        ));
    }
    Ok(())
}

/// The output directory must stay inside the results root.
fn check_output(o: &str) -> Result<(), SpecError> {
    let shown = Value::String(o.into());
    if o.len() > MAX_OUTPUT_BYTES {
        return Err(bad(
            "output",
            format!("{} bytes", o.len()),
            format!(
                "may be at most {MAX_OUTPUT_BYTES} bytes, so that every file name under it fits the \
                 {MAX_PATH_BYTES}-byte limit of a task's completion"
            ),
        ));
    }
    if o.starts_with('/') || o.contains('\\') || o.contains(':') {
        return Err(bad("output", shown, "must be a relative path inside the results root"));
    }
    for part in o.split('/') {
        if part == ".." || part == "." {
            return Err(bad(
                "output",
                shown,
                "must stay inside the results root (no '.' or '..' components)",
            ));
        }
        check_name("output", part).map_err(|_| {
            bad(
                "output",
                shown.clone(),
                "each path component must be letters, digits, '-', '_' or '.', not starting with '.', '_' or '-'",
            )
        })?;
    }
    Ok(())
}

fn parse_rules(t: Option<Table>) -> Result<RulesConfig, SpecError> {
    let mut r = RulesConfig::default();
    let Some(mut t) = t else { return Ok(r) };
    let p = "rules";
    if let Some(v) = take_int(&mut t, p, "set")? {
        r.set = int_in("rules.set", v, 1, 9)? as u8;
    }
    if let Some(v) = take_int(&mut t, p, "hand")? {
        r.hand = int_in("rules.hand", v, 1, 55)? as u8;
    }
    if let Some(v) = take_int(&mut t, p, "boneyard")? {
        r.boneyard = int_in("rules.boneyard", v, 0, 55)? as u8;
    }
    if let Some(v) = take_str(&mut t, p, "lead")? {
        r.lead = v
            .parse::<Lead>()
            .map_err(|e| bad("rules.lead", Value::String(v), e.reason))?;
    }
    if let Some(v) = take_str(&mut t, p, "blocked")? {
        r.blocked = v
            .parse::<Blocked>()
            .map_err(|e| bad("rules.blocked", Value::String(v), e.reason))?;
    }
    no_unknown(&t, p, &["set", "hand", "boneyard", "lead", "blocked"])?;
    Ok(r)
}

/// A non-empty list of distinct values, each parsed by `parse`; `example`
/// shows valid levels of this factor when it is missing.
fn factor<T: PartialEq>(
    t: &mut Table,
    key: &str,
    example: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, SpecError> {
    let full = path("grid", key);
    let v = t
        .remove(key)
        .ok_or_else(|| missing(&full, &format!("a list of levels, e.g. {key} = {example}")))?;
    let Value::Array(items) = v else {
        return Err(bad(&full, v, "must be a list of strings"));
    };
    if items.is_empty() {
        return Err(bad(&full, "[]", "a factor needs at least one level"));
    }
    let mut out = Vec::new();
    for item in &items {
        let Value::String(s) = item else {
            return Err(bad(&full, item, "each level must be a string"));
        };
        let level = parse(s).map_err(|reason| bad(&full, item, reason))?;
        if out.contains(&level) {
            return Err(bad(&full, item, "is listed twice"));
        }
        out.push(level);
    }
    Ok(out)
}

fn parse_grid(mut t: Table, rules: &Rules) -> Result<GridSpec, SpecError> {
    let information_source = factor(
        &mut t,
        "information_source",
        r#"["oracle", "classifier", "bayes"]"#,
        |s| Source::parse(s).ok_or_else(|| "expected \"oracle\", \"classifier\" or \"bayes\"".to_string()),
    )?;
    let observability = factor(&mut t, "observability", r#"["full", "partial"]"#, |s| {
        s.parse::<Observability>()
    })?;
    let target = factor(&mut t, "target", r#"["random", "scorer", "defender"]"#, |s| {
        s.parse::<TargetKind>()
    })?;
    let engine = factor(&mut t, "engine", r#"["mstar", "expectimax"]"#, |s| {
        s.parse::<PlayerEngine>()
    })?;
    let starting_states = match t.remove("starting_states") {
        None => StateSet::Range {
            first: 0,
            last: rules.starting_states() - 1,
        },
        Some(v) => parse_states(v, rules)?,
    };
    let repeats = take_int(&mut t, "grid", "repeats")?.ok_or_else(|| {
        missing(
            "grid.repeats",
            "how many times each game is repeated, e.g. repeats = 12",
        )
    })?;
    let repeats = int_in("grid.repeats", repeats, 1, 1_000_000)? as u32;
    no_unknown(
        &t,
        "grid",
        &[
            "information_source",
            "observability",
            "target",
            "starting_states",
            "engine",
            "repeats",
        ],
    )?;
    Ok(GridSpec {
        information_source,
        observability,
        target,
        starting_states,
        engine,
        repeats,
    })
}

fn parse_states(v: Value, rules: &Rules) -> Result<StateSet, SpecError> {
    let key = "grid.starting_states";
    let count = rules.starting_states();
    let range_err = |shown: &Value, s: u64| {
        bad(
            key,
            shown,
            format!(
                "state {s} is out of range: these rules have {count} starting states (0-{})",
                count - 1
            ),
        )
    };
    match &v {
        Value::String(s) if s == "all" => Ok(StateSet::Range {
            first: 0,
            last: count - 1,
        }),
        Value::String(s) => {
            let parsed = s
                .split_once('-')
                .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)));
            let Some((first, last)) = parsed.or_else(|| s.trim().parse::<u64>().ok().map(|x| (x, x))) else {
                return Err(bad(
                    key,
                    &v,
                    "expected \"all\", a range like \"0-99\", or a list of indices",
                ));
            };
            if first > last {
                return Err(bad(key, &v, "the range runs backwards"));
            }
            if last >= count {
                return Err(range_err(&v, last));
            }
            Ok(StateSet::Range { first, last })
        }
        Value::Array(items) => {
            if items.is_empty() {
                return Err(bad(key, "[]", "a factor needs at least one level"));
            }
            let mut out = Vec::with_capacity(items.len());
            let mut seen = std::collections::HashSet::new();
            for item in items {
                let Some(i) = item.as_integer().filter(|i| *i >= 0) else {
                    return Err(bad(key, item, "each listed state must be a non-negative integer"));
                };
                let i = i as u64;
                if i >= count {
                    return Err(range_err(item, i));
                }
                if !seen.insert(i) {
                    return Err(bad(key, item, "is listed twice"));
                }
                out.push(i);
            }
            Ok(StateSet::List(out))
        }
        _ => Err(bad(
            key,
            &v,
            "expected \"all\", a range like \"0-99\", or a list of indices",
        )),
    }
}

fn parse_search(t: Option<Table>, rules: &RulesConfig) -> Result<SearchConfig, SpecError> {
    let mut c = SearchConfig::default();
    let Some(mut t) = t else {
        return check_depth(c, rules);
    };
    if let Some(v) = t.remove("worlds") {
        c.worlds = parse_level("search.worlds", v, "all")?;
    }
    match take_str(&mut t, "search", "belief")? {
        None => {}
        Some(s) if s == "uniform" => c.belief = Belief::Uniform,
        Some(s) => {
            return Err(bad("search.belief", Value::String(s), "expected \"uniform\""));
        }
    }
    if let Some(v) = t.remove("depth") {
        c.depth = parse_level("search.depth", v, "unlimited")?;
    }
    no_unknown(&t, "search", &["worlds", "belief", "depth"])?;
    check_depth(c, rules)
}

/// A search setting written as the string `word` or an integer, parsed by
/// the engine type's own `FromStr` (which the CLI flags use too).
fn parse_level<T: std::str::FromStr<Err = String>>(key: &str, v: Value, word: &str) -> Result<T, SpecError> {
    let text = match &v {
        Value::String(s) if s == word => s.clone(),
        Value::Integer(k) => k.to_string(),
        _ => String::new(),
    };
    text.parse().map_err(|why: String| bad(key, &v, why))
}

/// Exact search beyond double-4 would not finish: ask for a depth.
fn check_depth(c: SearchConfig, rules: &RulesConfig) -> Result<SearchConfig, SpecError> {
    if c.depth == DepthLimit::Unlimited && rules.set > 4 {
        return Err(bad(
            "search.depth",
            "\"unlimited\"",
            format!(
                "exact search of a double-{} set would not finish; give a depth in turns, e.g. depth = 4",
                rules.set
            ),
        ));
    }
    Ok(c)
}

fn parse_classifier(t: Option<Table>) -> Result<ClassifierSpec, SpecError> {
    let mut c = ClassifierSpec::default();
    let Some(mut t) = t else { return Ok(c) };
    let p = "classifier";
    if let Some(k) = take_str(&mut t, p, "kind")? {
        if !["mda", "random-forest", "best"].contains(&k.as_str()) {
            return Err(bad(
                "classifier.kind",
                Value::String(k),
                "expected \"mda\", \"random-forest\" or \"best\"",
            ));
        }
        c.kind = k;
    }
    if let Some(v) = take_int(&mut t, p, "samples")? {
        c.samples = int_in("classifier.samples", v, 100, 100_000_000)? as u64;
    }
    if let Some(v) = t.remove("compare_samples") {
        let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
            bad(
                "classifier.compare_samples",
                &v,
                "must be a non-empty list of sample counts",
            )
        })?;
        c.compare_samples = items
            .iter()
            .map(|i| match i.as_integer() {
                Some(n) if (100..=100_000_000).contains(&n) => Ok(n as u64),
                _ => Err(bad(
                    "classifier.compare_samples",
                    i,
                    "each sample count must be between 100 and 100000000",
                )),
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = take_int(&mut t, p, "folds")? {
        c.folds = int_in("classifier.folds", v, 2, 20)? as u32;
    }
    match t.remove("holdout") {
        None => {}
        Some(Value::Float(h)) if h > 0.0 && h < 1.0 => c.holdout = h,
        Some(v) => {
            return Err(bad(
                "classifier.holdout",
                v,
                "must be a fraction strictly between 0 and 1, e.g. 0.2",
            ));
        }
    }
    no_unknown(&t, p, &["kind", "samples", "compare_samples", "folds", "holdout"])?;
    Ok(c)
}

/// The fewest samples a fit may be given (MDA's minimum with three classes).
const MIN_FIT_SAMPLES: u64 = 5;

/// Refuses a classifier section whose cross validation could never fit: every
/// sample count it fits at must leave, after the holdout, at least one
/// sample per fold and `MIN_FIT_SAMPLES` outside each fold, and a non-empty
/// holdout.
fn check_classifier_fits(c: &ClassifierSpec) -> Result<(), SpecError> {
    let counts = std::iter::once(("classifier.samples", c.samples))
        .chain(c.compare_samples.iter().map(|&n| ("classifier.compare_samples", n)));
    for (key, n) in counts {
        let test = ((c.holdout * n as f64).round() as u64).min(n);
        let train = n - test;
        let folds = u64::from(c.folds);
        // The largest fold holds ceil(train / folds); the fit leaves it out.
        let fit_on = train - train.div_ceil(folds.max(1));
        if test == 0 || train < folds || fit_on < MIN_FIT_SAMPLES {
            let why = if test == 0 {
                format!(
                    "classifier.holdout = {} of {n} samples leaves no holdout sample",
                    c.holdout
                )
            } else {
                format!(
                    "with classifier.holdout = {} only {train} of {n} samples are left to train on; \
                     classifier.folds = {} then fits on {fit_on} (at least {MIN_FIT_SAMPLES} are needed, \
                     and a sample per fold)",
                    c.holdout, c.folds
                )
            };
            return Err(bad(
                key,
                n as i64,
                format!("cannot be fitted: {why}; raise the sample count or lower holdout or folds"),
            ));
        }
    }
    Ok(())
}

fn parse_shards(t: Option<Table>) -> Result<u64, SpecError> {
    let Some(mut t) = t else {
        return Ok(DEFAULT_SHARD_GAMES);
    };
    let games = match take_int(&mut t, "shards", "games")? {
        Some(g) => int_in("shards.games", g, 1, MAX_SHARD_GAMES as i64)? as u64,
        None => DEFAULT_SHARD_GAMES,
    };
    no_unknown(&t, "shards", &["games"])?;
    Ok(games)
}
