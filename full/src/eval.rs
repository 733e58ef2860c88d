//! Leaf evaluation of All-Fives positions for depth-limited search: "score
//! so far" (a leaf is worth nothing more than what the hand has scored), or
//! a linear function of features of the position fitted by least squares to
//! the rest of the hand's score difference in seeded self-play.
//!
//! The features are read from one side's point of view in a fully known
//! position (under partial observation the search evaluates determinized
//! worlds). They do not depend on the scores so far, so a value is the
//! expected *gain* from the position on and the transposition table's key
//! can leave the scores out.

use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use engine::ActionList;
use engine::seed::keyed_rng;
use engine::{TileSet, count_two};

use super::deal::random_deal;
use super::fives::{FivesPosition, Opening};
use super::model_error::ModelError;
use super::rules::{FullRules, MAX_SEATS};
use super::targets::{FullTarget, full_choice};
use engine::seed::below_u32;

/// The names of the features, in the order of a [`LinearEval`]'s weights.
pub const FEATURES: [&str; 16] = [
    "bias",
    "my_pips",
    "their_pips",
    "my_tiles",
    "their_tiles",
    "count",
    "my_turn",
    "my_scoring_plays",
    "their_scoring_plays",
    "my_suit_matches",
    "their_suit_matches",
    "boneyard",
    "my_doubles",
    "their_doubles",
    "my_void",
    "their_void",
];

/// Number of features.
pub const FEATURE_COUNT: usize = FEATURES.len();

/// The most a learned evaluation may add to a leaf, in points either way
/// (its output is clamped: the search's bounds rely on it).
pub const EVAL_LIMIT: f64 = 60.0;

/// How a depth-limited leaf is valued.
#[derive(Clone, Copy, Debug, Default)]
pub enum Evaluation<'a> {
    /// The score so far: a leaf adds nothing.
    #[default]
    Score,
    /// The score so far plus a fitted estimate of the rest of the hand.
    Learned(&'a LinearEval),
}

impl Evaluation<'_> {
    /// What a non-final leaf adds to the score so far, for `side`.
    #[inline]
    pub fn leaf(&self, rules: &FullRules, pos: &FivesPosition, side: u8) -> f64 {
        match self {
            Evaluation::Score => 0.0,
            Evaluation::Learned(e) => e.predict(&features(rules, pos, side)),
        }
    }

    /// The bound on what [`Self::leaf`] may return, either way.
    pub fn limit(&self) -> f64 {
        match self {
            Evaluation::Score => 0.0,
            Evaluation::Learned(_) => EVAL_LIMIT,
        }
    }

    /// The name in specs and rows: `score` or `learned`.
    pub fn name(&self) -> &'static str {
        match self {
            Evaluation::Score => "score",
            Evaluation::Learned(_) => "learned",
        }
    }
}

/// A linear evaluation: weights over [`FEATURES`], and how it was fitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearEval {
    /// The feature names, as [`FEATURES`] (checked when loaded).
    pub features: Vec<String>,
    /// One weight per feature.
    pub weights: Vec<f64>,
    /// How it was fitted.
    pub training: EvalTraining,
    /// Samples fitted on, and the mean squared error on held-out hands.
    pub samples: u64,
    /// Held-out mean squared error of the fit, and of "score so far" (0).
    pub holdout_mse: f64,
    /// Held-out mean squared error of predicting 0 (the score-so-far leaf).
    pub holdout_mse_score: f64,
}

/// The training run of a [`LinearEval`]: enough to fit it again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalTraining {
    /// The seed of the self-play hands.
    pub seed: u64,
    /// Hands played for fitting (a further fifth is held out).
    pub hands: u64,
    /// Seats at the table (All Fives, double-6, defaults otherwise).
    pub seats: u8,
    /// Ridge penalty on the weights (not the bias).
    pub ridge_millis: u32,
}

impl LinearEval {
    /// The estimated rest-of-hand gain of `side`, clamped to [`EVAL_LIMIT`].
    #[inline(always)]
    pub fn predict(&self, f: &[f64; FEATURE_COUNT]) -> f64 {
        // A fixed length: one bounds check, the sum unrolled, its order kept.
        let w: &[f64; FEATURE_COUNT] = self.weights[..FEATURE_COUNT].try_into().expect("checked when loaded");
        let mut v = 0.0;
        for k in 0..FEATURE_COUNT {
            v += w[k] * f[k];
        }
        v.clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    /// Checks a loaded evaluation: the features it was fitted on are ours.
    pub fn check(&self) -> Result<(), ModelError> {
        if self.features.len() != FEATURE_COUNT
            || self.features.iter().zip(FEATURES).any(|(a, b)| a != b)
            || self.weights.len() != FEATURE_COUNT
        {
            return Err(ModelError::EvalFeatures {
                have: self.features.clone(),
                want: &FEATURES,
            });
        }
        if self.weights.iter().any(|w| !w.is_finite()) {
            return Err(ModelError::NonFinite);
        }
        Ok(())
    }
}

/// The features of `pos` from `side`'s point of view.
// Inlined into the search's leaf: about 10% off a learned hand (bench).
#[inline(always)]
pub fn features(rules: &FullRules, pos: &FivesPosition, side: u8) -> [f64; FEATURE_COUNT] {
    // The tiles that match an open end, and those that would score if
    // played now somewhere.
    let (count, matching, scoring) = end_tiles(rules, &pos.board);
    let seats = Fresh {
        rules,
        hands: &pos.hands,
        matching,
        scoring,
    };
    let boneyard = rules.tally(pos.boneyard).tiles;
    assemble(rules, count, pos.mover, boneyard, side, seats)
}

/// Each seat's [`seat_counts`], as [`assemble`] reads them.
pub(super) trait SeatCounts {
    fn of(&self, seat: u8) -> [u32; 6];
}

/// The counts of a position's hands, computed when read.
struct Fresh<'a> {
    rules: &'a FullRules,
    hands: &'a [TileSet; MAX_SEATS],
    matching: TileSet,
    scoring: TileSet,
}

impl SeatCounts for Fresh<'_> {
    #[inline(always)]
    fn of(&self, s: u8) -> [u32; 6] {
        seat_counts(self.rules, self.hands[s as usize], self.matching, self.scoring)
    }
}

/// The features from `side`'s point of view of a position with the board's
/// `count`, `mover` to move, `boneyard` tiles in the boneyard and each
/// seat's [`seat_counts`] given by `seats_of`.
#[inline(always)]
pub(super) fn assemble(
    rules: &FullRules,
    count: u32,
    mover: u8,
    boneyard: u32,
    side: u8,
    seats_of: impl SeatCounts,
) -> [f64; FEATURE_COUNT] {
    let seat = |s: u8| seats_of.of(s);
    let seats = rules.seats();
    // Each side's pips, tiles, scoring plays, suit matches, doubles and
    // voids: integers, so their sums are exact whatever the order.
    let (mine, theirs, mine_seats) = if rules.sides() == 2 && seats == 2 {
        // Two seats, one a side (the reference workload's): no loop.
        (seat(side & 1), seat(1 - (side & 1)), 1)
    } else {
        let mut mine = [0u32; 6];
        let mut theirs = [0u32; 6];
        let mut mine_seats = 0;
        for s in 0..seats {
            let x = seat(s);
            let m = (rules.side(s) == side) as u32;
            mine_seats += m;
            for k in 0..6 {
                mine[k] += m * x[k];
                theirs[k] += (1 - m) * x[k];
            }
        }
        (mine, theirs, mine_seats)
    };
    let mine = mine.map(|x| x as f64);
    let theirs = match theirs_divisor(seats as u32 - mine_seats, mine_seats) {
        None => theirs.map(|x| x as f64),
        Some(n) => theirs.map(|x| x as f64 / n),
    };
    [
        1.0,
        mine[0],
        theirs[0],
        mine[1],
        theirs[1],
        count as f64,
        (rules.side(mover) == side) as u8 as f64,
        mine[2],
        theirs[2],
        mine[3],
        theirs[3],
        boneyard as f64,
        mine[4],
        theirs[4],
        mine[5],
        theirs[5],
    ]
}

/// What [`features`] divides the other sides' counts by, to have them per
/// seat of ours, with `their_seats` and `mine_seats` at the table: `None`
/// where that is 1 (two seats, or sides of equal seats), so that the
/// search's leaves make no division then.
#[inline(always)]
pub(super) fn theirs_divisor(their_seats: u32, mine_seats: u32) -> Option<f64> {
    (their_seats > mine_seats.max(1)).then(|| their_seats as f64 / (mine_seats as f64).max(1.0))
}

/// One seat's pips, tiles, scoring plays, suit matches, doubles and void
/// (1 when an end is open and no tile of `hand` matches one).
#[inline(always)]
pub(super) fn seat_counts(rules: &FullRules, hand: TileSet, matching: TileSet, scoring: TileSet) -> [u32; 6] {
    let held = rules.tally(hand);
    let (scores, matches) = count_two(hand & scoring, hand & matching);
    let void = matching != 0 && hand & matching == 0;
    [held.pips, held.tiles, scores, matches, held.doubles, void as u32]
}

/// The board's count, the tiles that match an open end, and those that
/// would score (make a positive count that is a multiple of 5) if played
/// now somewhere, whoever holds them: at an end showing `p`, the tiles of
/// [`FullRules::scoring_at`] beside the rest of the count.
#[inline(always)]
pub(super) fn end_tiles(rules: &FullRules, board: &engine::Board) -> (u32, TileSet, TileSet) {
    if board.is_empty() {
        return (0, 0, rules.lead_scoring());
    }
    let (count, ends) = board.open_ends();
    let (mut matching, mut scoring) = (0, 0);
    for &(p, rest) in &ends[..board.open_locations()] {
        matching |= rules.pip_mask(p);
        scoring |= rules.scoring_at(p, rest);
    }
    (count, matching, scoring)
}

/// One sample of self-play: the features of a position for side 0 and the
/// rest of the hand's score difference of side 0 from it.
fn self_play_samples(rules: &FullRules, rng: &mut ChaCha20Rng, out: &mut Vec<([f64; FEATURE_COUNT], f64)>) {
    let hands = random_deal(rules, rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    // Each seat plays one of the fixed strategies, drawn per hand.
    // The deterministic strategies only: random play ends hands unlike
    // anything a search meets.
    const PLAYERS: [FullTarget; 3] = [
        FullTarget::Thesis(engine::TargetKind::Scorer),
        FullTarget::Thesis(engine::TargetKind::Defender),
        FullTarget::Heaviest,
    ];
    let strategies: [FullTarget; MAX_SEATS] =
        std::array::from_fn(|_| PLAYERS[below_u32(rng, PLAYERS.len() as u32) as usize]);
    let mut list = ActionList::default();
    let mut seen: Vec<([f64; FEATURE_COUNT], [u32; MAX_SEATS])> = Vec::new();
    while pos.end.is_none() {
        if !pos.can_play(rules, pos.mover) {
            pos.draw_or_pass(rules, rng);
            continue;
        }
        seen.push((features(rules, &pos, 0), pos.scores));
        pos.actions(rules, &mut list);
        let i = full_choice(rules, strategies[pos.mover as usize], &pos, list.as_slice(), rng);
        pos.play(rules, list.as_slice()[i]);
    }
    let diff = |s: &[u32; MAX_SEATS]| {
        let sides = rules.sides() as usize;
        let others: u32 = (1..sides).map(|x| s[x]).sum();
        s[0] as f64 - others as f64 / (sides - 1) as f64
    };
    let end = diff(&pos.scores);
    for (f, scores) in seen {
        out.push((f, end - diff(&scores)));
    }
}

/// Fits a [`LinearEval`] by ridge least squares on `training.hands` seeded
/// self-play hands of All Fives with `training.seats` seats (double-6), every
/// seat playing a fixed strategy drawn per hand; a further fifth of the
/// hands is held out to report the fit's error. A pure function of
/// `training`.
pub fn fit_linear_eval(training: &EvalTraining) -> Result<LinearEval, ModelError> {
    let config = super::rules::FullConfig::all_fives(training.seats);
    let rules = FullRules::new(config)?;
    let mut rng = keyed_rng(training.seed, 0, 0, engine::seed::EVAL_TRAINING, 0);
    let mut samples = Vec::new();
    for _ in 0..training.hands {
        self_play_samples(&rules, &mut rng, &mut samples);
    }
    let mut holdout = Vec::new();
    for _ in 0..training.hands.div_ceil(5) {
        self_play_samples(&rules, &mut rng, &mut holdout);
    }
    // Normal equations (X'X + ridge) w = X'y.
    let n = FEATURE_COUNT;
    let mut a = vec![0.0f64; n * n];
    let mut b = vec![0.0f64; n];
    for (f, y) in &samples {
        for i in 0..n {
            b[i] += f[i] * y;
            for j in 0..n {
                a[i * n + j] += f[i] * f[j];
            }
        }
    }
    let ridge = training.ridge_millis as f64 / 1000.0 * samples.len().max(1) as f64 / 1000.0;
    for i in 1..n {
        a[i * n + i] += ridge;
    }
    let weights = solve_symmetric(&mut a, &mut b, n).ok_or(ModelError::Degenerate)?;
    let eval = LinearEval {
        features: FEATURES.iter().map(|s| s.to_string()).collect(),
        weights,
        training: training.clone(),
        samples: samples.len() as u64,
        holdout_mse: 0.0,
        holdout_mse_score: 0.0,
    };
    let m = holdout.len().max(1) as f64;
    let mse = holdout.iter().map(|(f, y)| (eval.predict(f) - y).powi(2)).sum::<f64>() / m;
    let mse0 = holdout.iter().map(|(_, y)| y * y).sum::<f64>() / m;
    Ok(LinearEval {
        holdout_mse: mse,
        holdout_mse_score: mse0,
        ..eval
    })
}

/// Solves `a x = b` (`a` symmetric positive definite, `n` x `n`, row-major)
/// by Gaussian elimination with partial pivoting; `None` when singular.
pub(super) fn solve_symmetric(a: &mut [f64], b: &mut [f64], n: usize) -> Option<Vec<f64>> {
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
        if a[pivot * n + col].abs() < 1e-12 {
            return None;
        }
        if pivot != col {
            for k in 0..n {
                a.swap(pivot * n + k, col * n + k);
            }
            b.swap(pivot, col);
        }
        for row in col + 1..n {
            let f = a[row * n + col] / a[col * n + col];
            for k in col..n {
                a[row * n + k] -= f * a[col * n + k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let mut s = b[row];
        for k in row + 1..n {
            s -= a[row * n + k] * x[k];
        }
        x[row] = s / a[row * n + row];
    }
    Some(x)
}

/// A default training run (the shipped evaluation's): 20,000 two-seat hands.
pub fn default_training() -> EvalTraining {
    EvalTraining {
        seed: 2026,
        hands: 20_000,
        seats: 2,
        ridge_millis: 1,
    }
}
