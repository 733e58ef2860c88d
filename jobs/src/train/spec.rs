//! The `[train]` spec: self-play generations of one network (docs/train.md).
//! Parsed (`parse.rs`) with every field checked here, each refusal naming
//! the field and the value; its id is the SHA-256 of its canonical JSON,
//! so two specs that train differently never share a directory's results.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use full::spiel::Encoding;
use full::{FullConfig, FullRules, Preset};

use super::fixed::{Fixed, TrainSearch, ismcts_name};
pub use super::stages::{BeliefPrior, Eval, Fit, Gate, Keep};
use super::stages::{default_anchors, is_zero};

/// The most self-play games a generation may have.
pub const MAX_TRAIN_GAMES: u64 = 10_000_000;
/// The most generations a spec may ask for.
pub const MAX_GENERATIONS: u32 = 1_000;
/// The most points a training match may be played to (as `[match] to`).
pub const MAX_MATCH_TO: u32 = 100_000;
/// The widest hidden layer.
pub const MAX_WIDTH: usize = 4_096;
/// The most pairs a gate or an anchor's evaluation may play.
pub const MAX_PAIRS: u64 = 1_000_000;

/// A training spec: its name, seed and `[train]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainSpec {
    /// The results directory's name under `--out`.
    pub name: String,
    /// The seed of every stream (deals, draws, weights, minibatches).
    pub seed: u64,
    /// What to train.
    pub train: Train,
    /// Where `train.start`'s file is read when it is not the path the spec
    /// writes: a coordinator's copy in the run's directory
    /// ([`START_NET`](crate::layout::START_NET)), for its workers. Not a
    /// key of the TOML, nor part of the id (the file's hash is).
    #[serde(skip)]
    pub start_file: Option<std::path::PathBuf>,
}

/// The `[train]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Train {
    /// The game: `block`, `team` or `all-fives` (two seats, one hand).
    pub game: String,
    /// All Fives' seats: 2, or 4 in partnerships (0+2 against 1+3), each
    /// side one network.
    #[serde(default = "two_seats", skip_serializing_if = "is_two_seats")]
    pub seats: u8,
    /// All Fives: 0 (the default) plays one hand a game; above 0, a match
    /// to that many points (a game's outcome is then the match's).
    #[serde(default, skip_serializing_if = "is_no_match")]
    pub to: u32,
    /// Generations to run (each: self-play, fit, gate, evaluation).
    pub generations: u32,
    /// Self-play games a generation.
    pub games: u64,
    /// Games a self-play partition holds (the unit of work and of resumption).
    #[serde(default = "default_shard_games")]
    pub shard_games: u64,
    /// The observation encoding (`rich`, `rich_history` or `info_state`).
    #[serde(default = "default_encoding")]
    pub encoding: String,
    /// The hidden layers' widths.
    #[serde(default = "default_hidden")]
    pub hidden: Vec<usize>,
    /// Self-play draws each play from the softmax of the logits over this.
    #[serde(default = "one")]
    pub temperature: f64,
    /// The share of self-play games where one side is a fixed strategy
    /// (drawn from `population`) instead of the network.
    #[serde(default)]
    pub population_share: f64,
    /// The fixed strategies of that share ([`Fixed`]'s names).
    #[serde(default = "default_anchors")]
    pub population: Vec<String>,
    /// The share of the network's self-play decisions searched instead:
    /// `search` decides, and the row's target is its root's visits.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub searched: f64,
    /// The search of those decisions ([`TrainSearch`]'s names: `ismcts`,
    /// `mstar`, with `:BUDGETxWORLDS`, or `guided:SIMULATIONS`).
    #[serde(default = "default_search", skip_serializing_if = "is_default_search")]
    pub search: String,
    /// A model file the first generation starts from (of this game,
    /// encoding and hidden layers), instead of weights drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// That file's SHA-256, written when the spec is parsed (not a key of
    /// the TOML), so that the id covers the weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_sha256: Option<String>,
    /// The fit.
    #[serde(default)]
    pub fit: Fit,
    /// The gate.
    #[serde(default)]
    pub gate: Gate,
    /// The evaluation against fixed anchors after each generation.
    #[serde(default)]
    pub eval: Eval,
}

fn is_no_match(to: &u32) -> bool {
    *to == 0
}

fn two_seats() -> u8 {
    2
}

fn is_two_seats(n: &u8) -> bool {
    *n == 2
}

fn default_search() -> String {
    ismcts_name().into()
}

fn is_default_search(s: &str) -> bool {
    s == ismcts_name()
}

fn default_shard_games() -> u64 {
    1_000
}

fn default_encoding() -> String {
    "rich".into()
}

fn default_hidden() -> Vec<usize> {
    vec![128, 128]
}

fn one() -> f64 {
    1.0
}

/// Why a training spec was refused.
#[derive(Debug, thiserror::Error)]
pub enum TrainSpecError {
    /// Not TOML of a training spec (an unknown or missing field, a wrong type).
    #[error("{0}")]
    Toml(String),
    /// A field out of range.
    #[error("{field} = {value}: {why}")]
    #[allow(missing_docs)]
    Field { field: String, value: String, why: String },
}

impl TrainSpecError {
    pub(crate) fn field(field: &str, value: impl std::fmt::Display, why: &str) -> TrainSpecError {
        TrainSpecError::Field {
            field: field.into(),
            value: value.to_string(),
            why: why.into(),
        }
    }
}

/// Whether the TOML text is a training spec (it has a `[train]` table).
pub fn is_train_spec(text: &str) -> bool {
    text.parse::<toml::Table>()
        .map(|t| t.contains_key("train"))
        .unwrap_or(false)
}

impl TrainSpec {
    /// Whether the network has a belief head that this training teaches
    /// (`train.fit.belief_weight` above 0).
    pub fn belief(&self) -> bool {
        self.train.fit.belief_weight > 0.0
    }

    /// The width of the belief head's own hidden layer, if it has one
    /// (`net::Meta::belief_hidden`).
    pub fn belief_hidden(&self) -> Option<usize> {
        Some(self.train.fit.belief_hidden).filter(|&h| h > 0 && self.belief())
    }

    /// The belief head's prior as a model file names it
    /// (`net::Meta::belief_prior`), with a belief head only.
    pub fn belief_prior(&self) -> Option<&'static str> {
        match self.train.fit.belief_prior {
            Some(BeliefPrior::Constraints) if self.belief() => Some(net::BELIEF_PRIOR_CONSTRAINTS),
            _ => None,
        }
    }

    pub(super) fn check(&self) -> Result<(), TrainSpecError> {
        let t = &self.train;
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            || self.name.starts_with('.')
        {
            return Err(TrainSpecError::field(
                "name",
                format!("{:?}", self.name),
                "letters, digits, '-', '_' and '.' only, not starting with '.'",
            ));
        }
        match t.game.parse::<Preset>() {
            Ok(Preset::Block | Preset::Team | Preset::AllFives) => {}
            _ => {
                return Err(TrainSpecError::field(
                    "train.game",
                    format!("{:?}", t.game),
                    "expected \"block\", \"team\" or \"all-fives\"",
                ));
            }
        }
        let fives = matches!(t.game.parse::<Preset>(), Ok(Preset::AllFives));
        match (fives, t.seats) {
            (_, 2) | (true, 4) => {}
            (true, n) => {
                return Err(TrainSpecError::field(
                    "train.seats",
                    n,
                    "2, or 4 in partnerships: training plays two sides",
                ));
            }
            (false, n) => {
                return Err(TrainSpecError::field(
                    "train.seats",
                    n,
                    "block and team have their seats (2 and 4): seats applies to all-fives",
                ));
            }
        }
        if t.to > MAX_MATCH_TO || (t.to > 0 && !fives) {
            return Err(TrainSpecError::field(
                "train.to",
                t.to,
                &format!("0 (one hand a game) or a match to 1 to {MAX_MATCH_TO} points, All Fives only"),
            ));
        }
        if !(1..=MAX_GENERATIONS).contains(&t.generations) {
            return Err(TrainSpecError::field(
                "train.generations",
                t.generations,
                &format!("1 to {MAX_GENERATIONS}"),
            ));
        }
        if !(1..=MAX_TRAIN_GAMES).contains(&t.games) {
            return Err(TrainSpecError::field(
                "train.games",
                t.games,
                &format!("1 to {MAX_TRAIN_GAMES}"),
            ));
        }
        if !(1..=100_000).contains(&t.shard_games) {
            return Err(TrainSpecError::field("train.shard_games", t.shard_games, "1 to 100000"));
        }
        t.encoding
            .parse::<Encoding>()
            .map_err(|why| TrainSpecError::field("train.encoding", format!("{:?}", t.encoding), &why))?;
        if t.hidden.is_empty() || t.hidden.iter().any(|&w| !(1..=MAX_WIDTH).contains(&w)) || t.hidden.len() > 8 {
            return Err(TrainSpecError::field(
                "train.hidden",
                format!("{:?}", t.hidden),
                &format!("1 to 8 layers, each 1 to {MAX_WIDTH} wide"),
            ));
        }
        if !(t.temperature > 0.0 && t.temperature <= full::spiel::MAX_TEMPERATURE) {
            return Err(TrainSpecError::field(
                "train.temperature",
                t.temperature,
                &format!("above 0 and at most {}", full::spiel::MAX_TEMPERATURE),
            ));
        }
        if !(0.0..=1.0).contains(&t.population_share) {
            return Err(TrainSpecError::field(
                "train.population_share",
                t.population_share,
                "0 to 1",
            ));
        }
        for p in &t.population {
            Fixed::parse(p).map_err(|why| TrainSpecError::field("train.population", p, &why))?;
        }
        if t.population_share > 0.0 && t.population.is_empty() {
            return Err(TrainSpecError::field(
                "train.population",
                "[]",
                "name at least one strategy when population_share > 0",
            ));
        }
        if !(0.0..=1.0).contains(&t.searched) {
            return Err(TrainSpecError::field("train.searched", t.searched, "0 to 1"));
        }
        TrainSearch::parse(&t.search).map_err(|why| TrainSpecError::field("train.search", &t.search, &why))?;
        self.check_fit_gate_eval()?;
        self.check_game_players()
    }

    /// Each fixed strategy and search plays the spec's game: muggins'
    /// ISMCTS here reads block and team positions, M*'s learned leaves are
    /// All Fives'. A spec that names one for the other game is refused
    /// naming the field.
    fn check_game_players(&self) -> Result<(), TrainSpecError> {
        let t = &self.train;
        let fives = matches!(t.game.parse::<Preset>(), Ok(Preset::AllFives));
        const FOUR: &str =
            "M*'s learned leaves are fitted for two seats: give \"random\" or \"heaviest\" for seats = 4";
        let why = match (fives, t.seats) {
            (true, 2) => {
                "muggins' ISMCTS plays block and team only: give \"random\", \"heaviest\" or \"mstar\" for all-fives"
            }
            (true, _) => FOUR,
            (false, _) => {
                "M* with learned leaves plays all-fives only: give \"random\", \"heaviest\" or \"ismcts\" for block and team"
            }
        };
        let wrong = |f: Fixed| match (fives, t.seats) {
            (true, 2) => f.open_only(),
            (true, _) => f.open_only() || f.all_fives_only(),
            (false, _) => f.all_fives_only(),
        };
        let named = |s: &String| Fixed::parse(s).is_ok_and(wrong);
        if let Some(p) = t.population.iter().find(|p| named(p)) {
            return Err(TrainSpecError::field("train.population", p, why));
        }
        if let Some(a) = t.eval.anchors.iter().find(|a| named(a)) {
            return Err(TrainSpecError::field("train.eval.anchors", a, why));
        }
        if let Some(a) = t.eval.anchors.iter().find(|a| Fixed::parse(a) == Ok(Fixed::Past)) {
            return Err(TrainSpecError::field(
                "train.eval.anchors",
                a,
                "an anchor is the same player in every generation: \"past\" is a member of the population only",
            ));
        }
        let expert = TrainSearch::parse(&t.search).ok().and_then(TrainSearch::expert);
        if t.searched > 0.0 && expert.is_some_and(wrong) {
            let why = if fives && t.seats != 2 {
                FOUR
            } else if fives {
                "muggins' ISMCTS plays block and team only: search all-fives with \"mstar\" or \"guided:SIMULATIONS\""
            } else {
                "M* with learned leaves plays all-fives only: search block and team with \"ismcts\" or \"guided:SIMULATIONS\""
            };
            return Err(TrainSpecError::field("train.search", &t.search, why));
        }
        Ok(())
    }

    /// `[train.fit]`, `[train.gate]` and `[train.eval]`.
    fn check_fit_gate_eval(&self) -> Result<(), TrainSpecError> {
        let t = &self.train;
        let f = &t.fit;
        if !(1..=1_000).contains(&f.epochs) {
            return Err(TrainSpecError::field("train.fit.epochs", f.epochs, "1 to 1000"));
        }
        if !(1..=1 << 20).contains(&f.batch) {
            return Err(TrainSpecError::field("train.fit.batch", f.batch, "1 to 1048576"));
        }
        if !(f.learning_rate > 0.0 && f.learning_rate <= 1.0) {
            return Err(TrainSpecError::field(
                "train.fit.learning_rate",
                f.learning_rate,
                "above 0 and at most 1",
            ));
        }
        if !(f.clip > 0.0 && f.clip <= 10.0) {
            return Err(TrainSpecError::field(
                "train.fit.clip",
                f.clip,
                "above 0 and at most 10",
            ));
        }
        if !(0.0..=10.0).contains(&f.entropy_bonus) {
            return Err(TrainSpecError::field(
                "train.fit.entropy_bonus",
                f.entropy_bonus,
                "0 to 10",
            ));
        }
        if !(0.0..=100.0).contains(&f.value_weight) {
            return Err(TrainSpecError::field(
                "train.fit.value_weight",
                f.value_weight,
                "0 to 100",
            ));
        }
        if !(0.0..=100.0).contains(&f.belief_weight) {
            return Err(TrainSpecError::field(
                "train.fit.belief_weight",
                f.belief_weight,
                "0 (no belief head) to 100",
            ));
        }
        if f.belief_hidden > 4096 || (f.belief_hidden > 0 && f.belief_weight == 0.0) {
            return Err(TrainSpecError::field(
                "train.fit.belief_hidden",
                f.belief_hidden,
                "0 (the head reads the last hidden layer) to 4096, with train.fit.belief_weight above 0",
            ));
        }
        if f.belief_prior.is_some() && f.belief_weight == 0.0 {
            return Err(TrainSpecError::field(
                "train.fit.belief_prior",
                "\"constraints\"",
                "a prior for a belief head: set train.fit.belief_weight above 0 too",
            ));
        }
        let g = &t.gate;
        if !(1..=MAX_PAIRS).contains(&g.pairs) {
            return Err(TrainSpecError::field(
                "train.gate.pairs",
                g.pairs,
                &format!("1 to {MAX_PAIRS}"),
            ));
        }
        if !(g.elo0.is_finite() && g.elo1.is_finite() && g.elo1 > g.elo0) {
            return Err(TrainSpecError::field(
                "train.gate.elo1",
                g.elo1,
                &format!("finite and above elo0 ({})", g.elo0),
            ));
        }
        for (k, v) in [("train.gate.alpha", g.alpha), ("train.gate.beta", g.beta)] {
            if !(v > 0.0 && v < 0.5) {
                return Err(TrainSpecError::field(k, v, "above 0 and below 0.5"));
            }
        }
        if !(1..=MAX_PAIRS).contains(&t.eval.pairs) {
            return Err(TrainSpecError::field(
                "train.eval.pairs",
                t.eval.pairs,
                &format!("1 to {MAX_PAIRS}"),
            ));
        }
        for a in &t.eval.anchors {
            Fixed::parse(a).map_err(|why| TrainSpecError::field("train.eval.anchors", a, &why))?;
        }
        Ok(())
    }

    /// The rules of its game.
    pub fn rules(&self) -> FullRules {
        match self.train.game.parse().expect("checked") {
            Preset::AllFives => FullRules::new(FullConfig::all_fives(self.train.seats)).expect("checked seats"),
            preset => FullRules::preset(preset),
        }
    }

    /// A game of the spec at its start: one hand, or a match to `to`.
    pub fn state(&self) -> full::spiel::SpielState {
        full::spiel::SpielState::new(self.rules(), self.train.to)
    }

    /// Its encoding.
    pub fn encoding(&self) -> Encoding {
        self.train.encoding.parse().expect("checked")
    }

    /// The population's strategies.
    pub fn population(&self) -> Vec<Fixed> {
        let p = &self.train.population;
        p.iter().map(|s| Fixed::parse(s).expect("checked")).collect()
    }

    /// The searched share and its search, or `None` when no decision is
    /// searched.
    pub fn search(&self) -> Option<(f64, TrainSearch)> {
        let t = &self.train;
        (t.searched > 0.0).then(|| (t.searched, TrainSearch::parse(&t.search).expect("checked")))
    }

    /// The evaluation's anchors.
    pub fn anchors(&self) -> Vec<Fixed> {
        let a = &self.train.eval.anchors;
        a.iter().map(|s| Fixed::parse(s).expect("checked")).collect()
    }

    /// Its canonical JSON (every field, defaults written out).
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("a spec serialises")
    }

    /// Its id: the SHA-256 (hex) of [`canonical`](Self::canonical).
    pub fn id(&self) -> String {
        Sha256::digest(self.canonical().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Self-play partitions a generation: `(first game, games)` each.
    pub fn shards(&self) -> Vec<(u64, u64)> {
        let (n, s) = (self.train.games, self.train.shard_games);
        (0..n.div_ceil(s)).map(|k| (k * s, s.min(n - k * s))).collect()
    }
}
