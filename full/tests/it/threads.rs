//! A decision's worlds shared among threads (`AlphaBeta::decide_threaded`,
//! `MatchOptions::decision_threads`): the same decision, value bits, node
//! count and depth reached as the worlds searched in turn, with and without
//! the adaptive stop, the learned leaf and a node budget; and whole matches
//! played alike.

use engine::PlayerEngine;
use engine::seed::keyed_rng;
use engine::{Belief, TargetKind};
use full::{
    Adaptive, AlphaBeta, Evaluation, FEATURES, FivesTable, FullAgent, FullConfig, FullDecision, FullRules, FullTarget,
    Limits, LinearEval, MatchOptions, SearchSettings, default_training, play_match_with,
};

use crate::adaptive::{MODELS, decision};
use crate::alphabeta::rules;

/// A learned evaluation with long mantissas (a changed sum would show).
fn eval() -> LinearEval {
    LinearEval {
        features: FEATURES.iter().map(|s| s.to_string()).collect(),
        weights: (0..FEATURES.len()).map(|k| (k as f64 + 0.3) / 7.0 - 1.1).collect(),
        training: default_training(),
        samples: 0,
        holdout_mse: 0.0,
        holdout_mse_score: 0.0,
    }
}

fn bits(d: &FullDecision) -> (usize, u64, Option<u64>, u64) {
    (d.index, d.value.to_bits(), d.best_other.map(f64::to_bits), d.nodes)
}

#[test]
fn a_decision_on_threads_is_the_decision_in_turn() {
    let learned = eval();
    let (mut compared, mut stopped) = (0, 0);
    for (set, seats) in [(6, 2), (6, 4)] {
        let r = rules(set, seats, seats == 4);
        for seed in 0..12u64 {
            let mut rng = keyed_rng(seed, 3, 4, b"testthrd", 0);
            let Some((pos, worlds)) = decision(&r, seed, 1 + seed % 5, 9, &mut rng) else {
                continue;
            };
            for (eval, limits) in [
                (
                    Evaluation::Score,
                    Limits {
                        depth: 60,
                        budget: 1_500,
                    },
                ),
                (
                    Evaluation::Learned(&learned),
                    Limits {
                        depth: 60,
                        budget: 1_500,
                    },
                ),
                (Evaluation::Learned(&learned), Limits { depth: 3, budget: 0 }),
            ] {
                for adaptive in [None, Some(Adaptive::with_confidence(0.8).expect("a confidence"))] {
                    let capacity = FivesTable::slots_for(limits.budget, 4);
                    let mut table = FivesTable::with_slots(capacity);
                    let mut ab = AlphaBeta::new(&r, pos.mover, PlayerEngine::MStar, MODELS, eval, &mut table);
                    let turn = ab.decide_with(&worlds, limits, adaptive);
                    let (turn_nodes, turn_reached) = (ab.nodes(), ab.reached());
                    for helpers in 1..=3 {
                        let mut tables: Vec<FivesTable> =
                            (0..helpers).map(|_| FivesTable::with_slots(capacity)).collect();
                        let mut table = FivesTable::with_slots(capacity);
                        let mut ab = AlphaBeta::new(&r, pos.mover, PlayerEngine::MStar, MODELS, eval, &mut table);
                        let threaded = ab.decide_threaded(&worlds, limits, adaptive, &mut tables);
                        let what = format!("{set}/{seats} seed {seed}, {limits:?}, {adaptive:?}, {helpers} helpers");
                        assert_eq!(bits(&turn), bits(&threaded), "{what}");
                        assert_eq!((turn_nodes, turn_reached), (ab.nodes(), ab.reached()), "{what}");
                        compared += 1;
                    }
                    if adaptive.is_some() {
                        let mut table = FivesTable::with_slots(capacity);
                        let all = AlphaBeta::new(&r, pos.mover, PlayerEngine::MStar, MODELS, eval, &mut table)
                            .decide_with(&worlds, limits, None);
                        stopped += usize::from(turn.nodes < all.nodes);
                    }
                }
            }
        }
    }
    assert!(compared >= 200, "{compared} decisions compared");
    assert!(
        stopped >= 3,
        "the adaptive stop cut a batch short in {stopped} decisions"
    );
}

#[test]
fn a_match_with_decision_threads_is_the_same_match() {
    let r = FullRules::new(FullConfig::all_fives(2)).expect("valid rules");
    let learned = eval();
    let agent = FullAgent::Search(SearchSettings {
        engine: PlayerEngine::MStar,
        depth: full::DEEPEST,
        budget: 3_000,
        worlds: 8,
        learned: true,
        belief: Belief::Uniform,
        shaping: full::Shaping::None,
        predictor: full::predict::PredictModel::Logit,
        adaptive: None,
    });
    let target = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Scorer));
    let agents = [agent, target, agent, target];
    for deal in 0..3u64 {
        let play = |threads: usize| {
            let opts = MatchOptions {
                eval: Some(&learned),
                decision_threads: threads,
                ..MatchOptions::default()
            };
            play_match_with(&r, 7, deal * 1_000_003, 1, &agents, 0, &opts).expect("a deal index")
        };
        let one = play(1);
        assert!(one.hands.iter().map(|h| h.nodes).sum::<u64>() > 0, "the agent searched");
        for threads in [2, 3] {
            assert_eq!(one, play(threads), "deal {deal}, {threads} threads");
        }
    }
}
