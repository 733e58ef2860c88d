use std::sync::Mutex;

use engine::{
    Features, GameConfig, InfoSource, LocalTable, Observability, OpponentModel, PlayerEngine,
    SearchConfig, Searcher, TargetKind, play_game,
};

use crate::thesis;

/// A test double for the classifier: fixed answers, and a log of the features it was shown.
struct Fixed {
    prior: TargetKind,
    answer: TargetKind,
    seen: Mutex<Vec<[f64; 5]>>,
}

impl Fixed {
    fn new(prior: TargetKind, answer: TargetKind) -> Fixed {
        Fixed {
            prior,
            answer,
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl OpponentModel for Fixed {
    fn prior(&self) -> TargetKind {
        self.prior
    }
    fn predict(&self, f: &Features) -> TargetKind {
        self.seen.lock().unwrap().push(f.to_array());
        self.answer
    }
}

fn game(state: u64, target: TargetKind) -> GameConfig {
    GameConfig {
        seed: 2014,
        starting_state: state,
        repeat: 1,
        engine: PlayerEngine::MStar,
        target,
        observability: Observability::Full,
    }
}

#[test]
fn features_after_each_target_turn() {
    // State 3333 against the scorer: T33L Pd23 P23L T03R P22L T00R. The player
    // searches twice: after T33L (t = 1) and after T03R (t = 2).
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let model = Fixed::new(TargetKind::Scorer, TargetKind::Scorer);
    let rec = play_game(
        &mut s,
        &game(3333, TargetKind::Scorer),
        InfoSource::Classifier(&model),
    )
    .unwrap();
    assert_eq!(rec.moves_text(&r), "T33L Pd23 P23L T03R P22L T00R");
    let seen = model.seen.into_inner().unwrap();
    // Points/t, defense, opponent draws/t, scoring plays/t, count.
    assert_eq!(
        seen,
        vec![[0.0, 3.0, 0.0, 0.0, 6.0], [0.0, 1.0, 0.5, 0.0, 2.0]]
    );
    assert_eq!((rec.predictions, rec.predictions_correct), (2, 2));
}

#[test]
fn a_right_classifier_plays_like_the_oracle_and_a_wrong_one_is_counted() {
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let lead_rules = engine::Rules::new(engine::RulesConfig {
        lead: engine::Lead::Player,
        ..Default::default()
    })
    .unwrap();
    let mut lead = Searcher::new(lead_rules, SearchConfig::default(), LocalTable::new());
    let mut wrong_made = 0;
    let mut prior_misses = 0;
    for state in (0..4200).step_by(29) {
        for target in TargetKind::ALL {
            let oracle = play_game(&mut s, &game(state, target), InfoSource::Oracle).unwrap();
            let right = Fixed::new(target, target);
            assert_eq!(
                play_game(&mut s, &game(state, target), InfoSource::Classifier(&right)).unwrap(),
                oracle
            );
            let other = TargetKind::ALL[(target as usize + 1) % 3];
            let wrong = Fixed::new(other, other);
            let rec =
                play_game(&mut s, &game(state, target), InfoSource::Classifier(&wrong)).unwrap();
            assert_eq!(rec.predictions_correct, 0);
            wrong_made += rec.predictions;
            // With the player leading, it searches before the target's first
            // turn: that prediction is the prior, wrong here; the rest are right.
            let late = Fixed::new(other, target);
            let rec = play_game(
                &mut lead,
                &game(state, target),
                InfoSource::Classifier(&late),
            )
            .unwrap();
            assert!(rec.predictions_correct <= rec.predictions);
            assert!(rec.predictions - rec.predictions_correct <= 1);
            prior_misses += rec.predictions - rec.predictions_correct;
        }
    }
    assert!(wrong_made > 100);
    assert!(
        prior_misses > 0,
        "some games search before the target's first turn"
    );
}

#[test]
fn the_tracker_counts_scoring_plays_and_opponent_draws() {
    let r = thesis();
    let mut board = engine::Board::default();
    let mut t = engine::FeatureTracker::default();
    assert_eq!(t.latest(), None);
    let idx = |a, b| r.tile_index(a, b).unwrap();
    board.play(&r, idx(2, 3), engine::Loc::Left);
    let f = t.turn(5, &board);
    assert_eq!(f.to_array(), [5.0, 2.0, 0.0, 1.0, 5.0]);
    t.opponent_drew();
    t.opponent_drew();
    board.play(&r, idx(1, 3), engine::Loc::Right);
    let f = t.turn(0, &board);
    assert_eq!(f.to_array(), [2.5, 2.0, 1.0, 0.5, 3.0]);
    assert_eq!(t.turns(), 2);
}
