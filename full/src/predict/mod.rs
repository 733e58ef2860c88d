//! Predicting a seat's next play (seeds 003 and 004): the features of a
//! candidate play, training decisions from seeded hands, three models (seed
//! 004's naive Bayes with chi-squared selection, seed 003's DBN fitted by
//! EM, and a conditional logit), their held-out evaluation (top-N curves,
//! log loss, seed 004's confidence contours), and the [`Predictor`] the
//! search's shaping asks (docs/prediction.md).
//!
//! Training (seed 004): in each hand one seat plays the strategy being
//! learned and every other seat plays uniformly at random; the learned
//! seat's decisions are the data. A fit is a pure function of its
//! [`PredictTraining`] (streams keyed `mugpred1` by the seed and the
//! strategy).

mod dbn;
mod features;
mod logit;
mod nb;

use serde::{Deserialize, Serialize};

use engine::TargetKind;
use engine::seed::keyed_rng;
use engine::{Action, ActionList};

pub use dbn::{DBN_MAX_ITERATIONS, DBN_STATES, Dbn, StateBelief};
pub use features::{
    BINARY_FEATURES, Decision, PLAY_FEATURE_COUNT, PLAY_FEATURES, PUBLIC_FEATURE_COUNT, PUBLIC_FEATURES, PlayFeatures,
    PublicFeatures, play_features, public_features, read_decision,
};
pub use logit::{LOGIT_L2, Logit, logit_objective};
pub use nb::{NB_KEEP, NaiveBayes, chi2};

use super::deal::random_deal;
use super::fives::{FivesPosition, Opening};
use super::model_error::ModelError;
use super::rules::{FullConfig, FullRules, MAX_SEATS};
use super::search::FullSearcher;
use super::seen::Seen;
use super::targets::{FullTarget, full_choice};
use engine::PlayerEngine;

/// The strategies the models learn, in order: the fixed targets and the
/// `searcher` (a searching agent: Expectimax to [`TRAINING_SEARCH_DEPTH`]);
/// index [`POOLED`] is a model of all of them together (used for a seat
/// whose strategy is none of these).
pub const TYPES: [FullTarget; 5] = [
    FullTarget::Thesis(TargetKind::Random),
    FullTarget::Thesis(TargetKind::Scorer),
    FullTarget::Thesis(TargetKind::Defender),
    FullTarget::Heaviest,
    FullTarget::Searcher,
];

/// The depth of the searching agent whose plays the models learn (the
/// `searcher` target's default depth).
pub const TRAINING_SEARCH_DEPTH: u8 = super::targets::DEFAULT_TARGET_DEPTH;

/// The index of the pooled model.
pub const POOLED: usize = TYPES.len();

/// The model index for a seat playing `t`.
pub fn type_index(t: FullTarget) -> usize {
    TYPES.iter().position(|&x| x == t).unwrap_or(POOLED)
}

/// The longest top-N curve kept: N = 1 to 7.
pub const TOP_N: usize = 7;

/// Which model predicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PredictModel {
    /// Seed 004's naive Bayes with chi-squared feature selection.
    NaiveBayes,
    /// Seed 003's dynamic Bayesian network.
    Dbn,
    /// The conditional logit.
    Logit,
}

impl PredictModel {
    /// Every model.
    pub const ALL: [PredictModel; 3] = [PredictModel::NaiveBayes, PredictModel::Dbn, PredictModel::Logit];

    /// The name in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PredictModel::NaiveBayes => "naive-bayes",
            PredictModel::Dbn => "dbn",
            PredictModel::Logit => "logit",
        }
    }
}

impl std::str::FromStr for PredictModel {
    type Err = String;
    fn from_str(s: &str) -> Result<PredictModel, String> {
        PredictModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown prediction model {s:?}: expected naive-bayes, dbn or logit"))
    }
}

/// How the predictors were trained: enough to fit them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictTraining {
    /// The seed of the hands.
    pub seed: u64,
    /// Hands per strategy fitted on (a further fifth is held out).
    pub hands: u64,
    /// Seats at the table (All Fives, double-6).
    pub seats: u8,
}

/// The shipped predictors' training run: 4,000 two-seat hands a strategy.
pub fn default_predict_training() -> PredictTraining {
    PredictTraining {
        seed: 2026,
        hands: 4000,
        seats: 2,
    }
}

/// How well a model predicted one strategy's held-out plays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictScore {
    /// The model's name.
    pub model: String,
    /// The strategy's name.
    pub target: String,
    /// Held-out decisions with two or more plays.
    pub decisions: u64,
    /// Mean number of legal plays at those decisions.
    pub mean_plays: f64,
    /// Share of decisions whose play was among the model's N most probable,
    /// N = 1 to [`TOP_N`] (ties broken by canonical order, as the search's).
    pub top_n: Vec<f64>,
    /// Mean -ln P(the play made).
    pub log_loss: f64,
}

/// The fitted models of every strategy, with their training run and their
/// held-out scores: the artifact (`muggins fit-predict`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Predictors {
    /// The names of the mover's-view features ([`PLAY_FEATURES`]).
    pub features: Vec<String>,
    /// The names of the public features ([`PUBLIC_FEATURES`]).
    pub public_features: Vec<String>,
    /// How they were trained.
    pub training: PredictTraining,
    /// Naive Bayes per strategy of [`TYPES`], then pooled.
    pub naive_bayes: Vec<NaiveBayes>,
    /// The logit per strategy of [`TYPES`], then pooled.
    pub logit: Vec<Logit>,
    /// The DBN (one, over all strategies: its hidden state tells them apart).
    pub dbn: Dbn,
    /// Held-out scores per model and strategy.
    pub holdout: Vec<PredictScore>,
}

impl Predictors {
    /// Checks a loaded artifact: its features are this build's, one model a
    /// strategy and a pooled one.
    pub fn check(&self) -> Result<(), ModelError> {
        if self.features.iter().map(String::as_str).ne(PLAY_FEATURES)
            || self.public_features.iter().map(String::as_str).ne(PUBLIC_FEATURES)
        {
            return Err(ModelError::PredictorFeatures {
                have: self.features.clone(),
                have_public: self.public_features.clone(),
                want: &PLAY_FEATURES,
                want_public: &PUBLIC_FEATURES,
            });
        }
        if self.naive_bayes.len() != POOLED + 1 || self.logit.len() != POOLED + 1 {
            return Err(ModelError::PredictorCount(POOLED + 1));
        }
        if self.dbn.states() == 0 || self.dbn.states() > DBN_STATES {
            return Err(ModelError::DbnStates {
                have: self.dbn.states(),
                max: DBN_STATES,
            });
        }
        Ok(())
    }
}

/// One hand in which seat 0 plays `strategy` (the searcher: Expectimax to
/// [`TRAINING_SEARCH_DEPTH`], seeing every hand) and every other seat random
/// plays; seat 0's decisions (forced plays too) are appended to `out`.
fn training_hand(
    rules: &FullRules,
    strategy: usize,
    hand: u32,
    rng: &mut rand_chacha::ChaCha20Rng,
    out: &mut Vec<Decision>,
) {
    let hands = random_deal(rules, rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    let mut list = ActionList::default();
    let random = FullTarget::Thesis(TargetKind::Random);
    while pos.end.is_none() {
        if !pos.can_play(rules, pos.mover) {
            pos.draw_or_pass(rules, rng);
            continue;
        }
        pos.actions(rules, &mut list);
        let who = if pos.mover == 0 { TYPES[strategy] } else { random };
        let i = match who {
            FullTarget::Searcher if list.len() > 1 => {
                let mut s = FullSearcher::new(
                    rules,
                    pos.mover,
                    PlayerEngine::Expectimax,
                    TRAINING_SEARCH_DEPTH,
                    [random; MAX_SEATS],
                );
                s.choose(&pos).index
            }
            FullTarget::Searcher => 0,
            _ => full_choice(rules, who, &pos, list.as_slice(), rng),
        };
        if pos.mover == 0 {
            out.push(read_decision(rules, &pos, strategy as u8, hand, i));
        }
        pos.play(rules, list.as_slice()[i]);
    }
}

/// The training and held-out decisions of `training`: per strategy,
/// `hands` hands then a fifth as many held out.
pub fn predict_decisions(training: &PredictTraining) -> Result<(Vec<Decision>, Vec<Decision>), ModelError> {
    let rules = FullRules::new(FullConfig::all_fives(training.seats))?;
    let mut train = Vec::new();
    let mut holdout = Vec::new();
    for k in 0..TYPES.len() {
        let mut rng = keyed_rng(training.seed, k as u64, 0, engine::seed::PREDICT_TRAINING, 0);
        for h in 0..training.hands {
            training_hand(&rules, k, h as u32, &mut rng, &mut train);
        }
        for h in 0..training.hands.div_ceil(5) {
            training_hand(&rules, k, h as u32, &mut rng, &mut holdout);
        }
    }
    Ok((train, holdout))
}

/// Each hand's sequence of seat-0 plays (public features), in order.
pub fn sequences(decisions: &[Decision]) -> Vec<Vec<PublicFeatures>> {
    let mut seqs: Vec<Vec<PublicFeatures>> = Vec::new();
    let mut last = None;
    for d in decisions {
        if last != Some((d.kind, d.hand)) {
            seqs.push(Vec::new());
            last = Some((d.kind, d.hand));
        }
        seqs.last_mut().expect("pushed above").push(d.chosen_public());
    }
    seqs
}

/// Fits every model on `training`'s decisions and scores them on its
/// held-out ones. A pure function of `training`.
pub fn fit_predictors(training: &PredictTraining) -> Result<Predictors, ModelError> {
    if training.hands == 0 {
        return Err(ModelError::NoHands);
    }
    let (train, holdout) = predict_decisions(training)?;
    let per = |k: usize| train.iter().filter(move |d| k == POOLED || d.kind as usize == k);
    let naive_bayes = (0..=POOLED).map(|k| NaiveBayes::fit(per(k))).collect();
    let logit = (0..=POOLED).map(|k| Logit::fit(per(k))).collect();
    let mut rng = keyed_rng(training.seed, 0, 1, engine::seed::PREDICT_TRAINING, 0);
    let dbn = Dbn::fit(&sequences(&train), DBN_STATES, &mut rng);
    let mut set = Predictors {
        features: PLAY_FEATURES.iter().map(|s| s.to_string()).collect(),
        public_features: PUBLIC_FEATURES.iter().map(|s| s.to_string()).collect(),
        training: *training,
        naive_bayes,
        logit,
        dbn,
        holdout: Vec::new(),
    };
    set.holdout = evaluate(&set, &holdout);
    Ok(set)
}

/// The rank (0: most probable) of play `i` under `probs`: plays more
/// probable, or as probable and earlier in canonical order, come first.
pub fn rank_of(probs: &[f64], i: usize) -> usize {
    probs
        .iter()
        .enumerate()
        .filter(|&(j, &p)| p > probs[i] || (p == probs[i] && j < i))
        .count()
}

/// Scores every model on `decisions` (in hand order), per strategy.
pub fn evaluate(set: &Predictors, decisions: &[Decision]) -> Vec<PredictScore> {
    let mut out = Vec::new();
    for model in PredictModel::ALL {
        for k in 0..TYPES.len() {
            let mut n = 0u64;
            let mut plays = 0u64;
            let mut hits = [0u64; TOP_N];
            let mut loss = 0.0;
            let mut past: Vec<PublicFeatures> = Vec::new();
            let mut last = None;
            let mut probs = [0.0f64; 64];
            for d in decisions.iter().filter(|d| d.kind as usize == k) {
                if last != Some(d.hand) {
                    past.clear();
                    last = Some(d.hand);
                }
                if d.is_choice() {
                    let p = &mut probs[..d.plays.len()];
                    match model {
                        PredictModel::NaiveBayes => set.naive_bayes[k].probs(&d.plays, p),
                        PredictModel::Logit => set.logit[k].probs(&d.plays, p),
                        PredictModel::Dbn => {
                            let b = set.dbn.predictive(past.iter().copied());
                            set.dbn.probs(&b, d.plays.iter().map(|f| f.public), p);
                        }
                    }
                    let c = d.chosen as usize;
                    let r = rank_of(p, c);
                    for (m, h) in hits.iter_mut().enumerate() {
                        if r <= m {
                            *h += 1;
                        }
                    }
                    loss -= p[c].max(1e-9).ln();
                    n += 1;
                    plays += d.plays.len() as u64;
                }
                past.push(d.chosen_public());
            }
            let m = n.max(1) as f64;
            out.push(PredictScore {
                model: model.name().to_string(),
                target: TYPES[k].name().to_string(),
                decisions: n,
                mean_plays: plays as f64 / m,
                top_n: hits.iter().map(|&h| h as f64 / m).collect(),
                log_loss: loss / m,
            });
        }
    }
    out
}

/// Seed 004's confidence contours: the nodes a search needs to reach
/// `depth` plies (the agent and the opponent alternating, `depth / 2`
/// opponent plies) while the opponent's actual plays stay among those it
/// searches at every one of its plies with probability `p`, searching the
/// top N at each: the least N with `top_n[N-1]^(depth/2) >= p`, and
/// (`own` x min(N, `opp`))^(depth/2) nodes, against (`own` x
/// `opp`)^(depth/2) for a full search. `None` when no N up to
/// [`TOP_N`] is sure enough (or `p` > 1).
pub fn confidence_nodes(top_n: &[f64], own: f64, opp: f64, depth: u32, p: f64) -> Option<(usize, f64, f64)> {
    let plies = (depth / 2).max(1) as i32;
    let n = top_n.iter().position(|&c| c.powi(plies) >= p - 1e-12)? + 1;
    let searched = (own * (n as f64).min(opp)).powi(plies);
    Some((n, searched, (own * opp).powi(plies)))
}

/// What the search's shaping asks: the probability of each play of an
/// opponent's node.
#[derive(Clone, Debug)]
pub struct Predictor<'a> {
    set: &'a Predictors,
    model: PredictModel,
    kinds: [usize; MAX_SEATS],
    belief: [StateBelief; MAX_SEATS],
}

impl<'a> Predictor<'a> {
    /// A predictor of `model` for seats playing `strategies` (a seat whose
    /// strategy the models do not know, as a searching one, gets the pooled
    /// models); the DBN starts from its initial belief.
    pub fn new(set: &'a Predictors, model: PredictModel, strategies: &[FullTarget; MAX_SEATS]) -> Predictor<'a> {
        let mut b = [0.0; DBN_STATES];
        let k = set.dbn.states().min(DBN_STATES);
        b[..k].copy_from_slice(&set.dbn.initial[..k]);
        Predictor {
            set,
            model,
            kinds: std::array::from_fn(|s| type_index(strategies[s])),
            belief: [b; MAX_SEATS],
        }
    }

    /// The model.
    pub fn model(&self) -> PredictModel {
        self.model
    }

    /// Takes every seat's plays so far in the hand (from `seen`: only what
    /// the table saw of them) as the DBN's evidence.
    pub fn observe(&mut self, rules: &FullRules, seen: &Seen) {
        for s in 0..rules.seats() {
            let past = seen
                .plays()
                .filter(|(before, _, _)| before.mover == s)
                .map(|(before, a, _)| public_features(rules, &before.board, a));
            self.belief[s as usize] = self.set.dbn.predictive(past);
        }
    }

    /// The probability of each of the mover's plays `acts` at `pos` (the
    /// mover's hand is the world's), into `out`; `feats` is scratch with
    /// room for every play (the search keeps one, not one per node).
    pub fn probs(
        &self,
        rules: &FullRules,
        pos: &FivesPosition,
        acts: &[Action],
        feats: &mut [PlayFeatures],
        out: &mut [f64],
    ) {
        let feats = &mut feats[..acts.len()];
        play_features(rules, pos, acts, feats);
        let k = self.kinds[pos.mover as usize];
        let out = &mut out[..acts.len()];
        match self.model {
            PredictModel::NaiveBayes => self.set.naive_bayes[k].probs(feats, out),
            PredictModel::Logit => self.set.logit[k].probs(feats, out),
            PredictModel::Dbn => {
                let b = &self.belief[pos.mover as usize];
                self.set.dbn.probs(b, feats.iter().map(|f| f.public), out)
            }
        }
    }
}
