//! The `[train]` spec: self-play generations of one network (docs/train.md).
//! Parsed with every field checked, each refusal naming the field and the
//! value; its id is the SHA-256 of its canonical JSON, so two specs that
//! train differently never share a directory's results.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use full::spiel::Encoding;
use full::{FullRules, Preset};

/// The most self-play games a generation may have.
pub const MAX_TRAIN_GAMES: u64 = 10_000_000;
/// The most generations a spec may ask for.
pub const MAX_GENERATIONS: u32 = 1_000;
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
}

/// The `[train]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Train {
    /// The game: `block`, `team` or `all-fives` (two seats, one hand).
    pub game: String,
    /// Generations to run (each: self-play, fit, gate, evaluation).
    pub generations: u32,
    /// Self-play games a generation.
    pub games: u64,
    /// Games a self-play partition holds (the unit of work and of resumption).
    #[serde(default = "default_shard_games")]
    pub shard_games: u64,
    /// The observation encoding (`rich` or `info_state`).
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
    /// The fixed strategies of that share: `random`, `heaviest`.
    #[serde(default = "default_anchors")]
    pub population: Vec<String>,
    /// The share of the network's self-play decisions searched instead:
    /// `search` decides, and the row's target is its root's visits.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub searched: f64,
    /// The search of those decisions: `ismcts`, `ismcts:BUDGETxWORLDS`, or
    /// `guided:SIMULATIONS` (the network's own guided search).
    #[serde(default = "default_search", skip_serializing_if = "is_default_search")]
    pub search: String,
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

/// `[train.fit]`: the policy gradient with a value baseline, by Adam.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fit {
    /// Passes over the generation's rows.
    pub epochs: u32,
    /// Rows a minibatch.
    pub batch: usize,
    /// Adam's step size.
    pub learning_rate: f64,
    /// The value loss's weight beside the policy's.
    pub value_weight: f64,
    /// The weight of the policy's entropy, added to what the fit maximises
    /// (keeps self-play exploring).
    #[serde(default = "default_entropy")]
    pub entropy_bonus: f64,
    /// PPO's clip: a row stops pulling its action once the network's
    /// probability of it is this share above (or below, for a bad one)
    /// the probability it was drawn with.
    #[serde(default = "default_clip")]
    pub clip: f64,
}

fn default_clip() -> f64 {
    0.2
}

fn default_entropy() -> f64 {
    0.01
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            epochs: 1,
            batch: 512,
            learning_rate: 0.001,
            value_weight: 0.5,
            entropy_bonus: default_entropy(),
            clip: default_clip(),
        }
    }
}

/// `[train.gate]`: the new network against the best so far, greedy, in
/// pairs of games (each deal from both seatings), under an SPRT on Elo.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gate {
    /// The most pairs; undecided there, the one with the higher score is kept (ties keep the best).
    pub pairs: u64,
    /// H0's Elo of the new network over the best.
    pub elo0: f64,
    /// H1's Elo.
    pub elo1: f64,
    /// The chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// The chance of accepting H0 when H1 holds.
    pub beta: f64,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            pairs: 2_000,
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
        }
    }
}

/// `[train.eval]`: each generation's best network against fixed anchors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Eval {
    /// Pairs against each anchor.
    pub pairs: u64,
    /// The anchors: `random`, `heaviest`.
    pub anchors: Vec<String>,
}

impl Default for Eval {
    fn default() -> Eval {
        Eval {
            pairs: 500,
            anchors: default_anchors(),
        }
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// `ismcts`, as `engine::PlayerEngine` spells it.
fn ismcts_name() -> &'static str {
    engine::PlayerEngine::Ismcts.name()
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

fn default_anchors() -> Vec<String> {
    vec!["random".into(), "heaviest".into()]
}

/// ISMCTS's nodes a world and worlds when an anchor or a member of the
/// population is named `ismcts` alone (those of Gymnasium's `"ismcts"`).
pub const DEFAULT_ISMCTS: (u32, u16) = (1_000, 8);

/// A fixed strategy: an anchor or a member of the population.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// A uniform draw among the legal plays.
    Random,
    /// The heaviest legal tile.
    Heaviest,
    /// muggins' ISMCTS from the seat's information (`budget` nodes a
    /// world, `worlds` worlds from the constraints belief): `ismcts`, or
    /// `ismcts:BUDGETxWORLDS`.
    Ismcts {
        /// Nodes a world.
        budget: u32,
        /// Worlds.
        worlds: u16,
    },
}

impl Fixed {
    /// Its name in specs and reports.
    pub fn name(self) -> String {
        match self {
            Fixed::Random => "random".into(),
            Fixed::Heaviest => "heaviest".into(),
            Fixed::Ismcts { budget, worlds } if (budget, worlds) == DEFAULT_ISMCTS => ismcts_name().into(),
            Fixed::Ismcts { budget, worlds } => format!("{}:{budget}x{worlds}", ismcts_name()),
        }
    }

    fn parse(field: &str, s: &str) -> Result<Fixed, TrainSpecError> {
        let bad = |why: &str| TrainSpecError::field(field, s, why);
        match s {
            "random" => Ok(Fixed::Random),
            "heaviest" => Ok(Fixed::Heaviest),
            s if s == ismcts_name() => Ok(Fixed::Ismcts {
                budget: DEFAULT_ISMCTS.0,
                worlds: DEFAULT_ISMCTS.1,
            }),
            _ => {
                let Some(rest) = s.strip_prefix(ismcts_name()).and_then(|r| r.strip_prefix(':')) else {
                    return Err(bad(
                        "expected \"random\", \"heaviest\", \"ismcts\" or \"ismcts:BUDGETxWORLDS\"",
                    ));
                };
                let (b, w) = rest
                    .split_once('x')
                    .ok_or_else(|| bad("ismcts:BUDGETxWORLDS, e.g. ismcts:1000x8"))?;
                let budget: u32 = b
                    .parse()
                    .ok()
                    .filter(|b| (1..=1_000_000).contains(b))
                    .ok_or_else(|| bad("a budget of 1 to 1000000 nodes a world"))?;
                let worlds: u16 = w
                    .parse()
                    .ok()
                    .filter(|w| (1..=1_000).contains(w))
                    .ok_or_else(|| bad("1 to 1000 worlds"))?;
                Ok(Fixed::Ismcts { budget, worlds })
            }
        }
    }
}

/// The search of a training run's searched decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainSearch {
    /// muggins' ISMCTS from the seat's view.
    Ismcts {
        /// Nodes a world.
        budget: u32,
        /// Worlds a decision.
        worlds: u16,
    },
    /// The network being trained guiding its own search
    /// (`full::spiel::guided_decide`), AlphaZero's self-play target.
    Guided {
        /// Simulations a decision.
        simulations: u32,
    },
}

/// The prefix of a guided search in `train.search`.
const GUIDED: &str = "guided:";

impl TrainSearch {
    fn parse(s: &str) -> Result<TrainSearch, TrainSpecError> {
        const WANT: &str = "expected \"ismcts\", \"ismcts:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"";
        if let Some(n) = s.strip_prefix(GUIDED) {
            let simulations = n
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=full::spiel::MAX_SIMULATIONS).contains(n))
                .ok_or_else(|| {
                    let why = format!(
                        "guided:SIMULATIONS takes 1 to {} simulations",
                        full::spiel::MAX_SIMULATIONS
                    );
                    TrainSpecError::field("train.search", s, &why)
                })?;
            return Ok(TrainSearch::Guided { simulations });
        }
        match Fixed::parse("train.search", s) {
            Ok(Fixed::Ismcts { budget, worlds }) => Ok(TrainSearch::Ismcts { budget, worlds }),
            Ok(_) => Err(TrainSpecError::field("train.search", s, WANT)),
            Err(TrainSpecError::Field { why, .. }) if why.starts_with("expected") => {
                Err(TrainSpecError::field("train.search", s, WANT))
            }
            Err(e) => Err(e),
        }
    }
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
    fn field(field: &str, value: impl std::fmt::Display, why: &str) -> TrainSpecError {
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
    /// Parses and checks a training spec.
    pub fn from_toml(text: &str) -> Result<TrainSpec, TrainSpecError> {
        let spec: TrainSpec = toml::from_str(text).map_err(|e| TrainSpecError::Toml(e.to_string()))?;
        spec.check()?;
        Ok(spec)
    }

    fn check(&self) -> Result<(), TrainSpecError> {
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
            Fixed::parse("train.population", p)?;
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
        TrainSearch::parse(&t.search)?;
        self.check_fit_gate_eval()?;
        self.check_all_fives()
    }

    /// All Fives has no ISMCTS of its own here (muggins' ISMCTS reads block
    /// and team positions): a spec that names it for All Fives is refused
    /// naming the field.
    fn check_all_fives(&self) -> Result<(), TrainSpecError> {
        let t = &self.train;
        if !matches!(t.game.parse::<Preset>(), Ok(Preset::AllFives)) {
            return Ok(());
        }
        const WHY: &str = "muggins' ISMCTS plays block and team only: give \"random\" or \"heaviest\" for all-fives";
        let ismcts = |s: &String| matches!(Fixed::parse("", s), Ok(Fixed::Ismcts { .. }));
        if let Some(p) = t.population.iter().find(|p| ismcts(p)) {
            return Err(TrainSpecError::field("train.population", p, WHY));
        }
        if let Some(a) = t.eval.anchors.iter().find(|a| ismcts(a)) {
            return Err(TrainSpecError::field("train.eval.anchors", a, WHY));
        }
        if t.searched > 0.0 && matches!(TrainSearch::parse(&t.search), Ok(TrainSearch::Ismcts { .. })) {
            let why = "muggins' ISMCTS plays block and team only: search all-fives with \"guided:SIMULATIONS\"";
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
            Fixed::parse("train.eval.anchors", a)?;
        }
        Ok(())
    }

    /// The rules of its game.
    pub fn rules(&self) -> FullRules {
        FullRules::preset(self.train.game.parse().expect("checked"))
    }

    /// Its encoding.
    pub fn encoding(&self) -> Encoding {
        self.train.encoding.parse().expect("checked")
    }

    /// The population's strategies.
    pub fn population(&self) -> Vec<Fixed> {
        let p = &self.train.population;
        p.iter().map(|s| Fixed::parse("", s).expect("checked")).collect()
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
        a.iter().map(|s| Fixed::parse("", s).expect("checked")).collect()
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
