use std::sync::Mutex;

use engine::{
    Features, GameConfig, InfoSource, LocalTable, Observability, OpponentModel, PlayerEngine, Position, SearchConfig,
    Searcher, TargetKind, play_game,
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
    let rec = play_game(&mut s, &game(3333, TargetKind::Scorer), InfoSource::Classifier(&model)).unwrap();
    assert_eq!(rec.moves_text(&r), "T33L Pd23 P23L T03R P22L T00R");
    let seen = model.seen.into_inner().unwrap();
    // Points/t, defense, opponent draws/t, scoring plays/t, count.
    assert_eq!(seen, vec![[0.0, 3.0, 0.0, 0.0, 6.0], [0.0, 1.0, 0.5, 0.0, 2.0]]);
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
            let rec = play_game(&mut s, &game(state, target), InfoSource::Classifier(&wrong)).unwrap();
            assert_eq!(rec.predictions_correct, 0);
            wrong_made += rec.predictions;
            // With the player leading, it searches before the target's first
            // turn: that prediction is the prior, wrong here; the rest are right.
            let late = Fixed::new(other, target);
            let rec = play_game(&mut lead, &game(state, target), InfoSource::Classifier(&late)).unwrap();
            assert!(rec.predictions_correct <= rec.predictions);
            assert!(rec.predictions - rec.predictions_correct <= 1);
            prior_misses += rec.predictions - rec.predictions_correct;
        }
    }
    assert!(wrong_made > 100);
    assert!(prior_misses > 0, "some games search before the target's first turn");
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

#[test]
fn training_games_follow_table_9_and_are_reproducible() {
    let r = thesis();
    for i in 0..18u64 {
        let g = engine::training_game(&r, 77, i);
        assert_eq!((g.player, g.target), engine::TABLE_9[(i % 9) as usize]);
        assert_eq!(g, engine::training_game(&r, 77, i));
        assert!(!g.samples.is_empty(), "game {i} gave the target no turn");
        assert!(g.starting_state < 4200);
        for f in &g.samples {
            assert!((0.0..=3.0).contains(&f.defense));
            assert!(f.points_per_turn >= 0.0 && f.scoring_plays_per_turn <= 1.0);
        }
    }
    assert_eq!(engine::TABLE_9[1], (TargetKind::Defender, TargetKind::Random));
    let states: std::collections::HashSet<u64> = (0..200)
        .map(|i| engine::training_game(&r, 77, i).starting_state)
        .collect();
    assert!(states.len() > 150, "starting states are drawn at random");
}

/// The posterior over (random, scorer, defender) after a game, rebuilt from
/// its move list with the engine's likelihoods (full observation).
fn final_posterior(r: &engine::Rules, state: u64, moves: &[engine::Move]) -> [f64; 3] {
    let mut pos = Position::start(r, &crate::deal(r, state));
    let mut logp = [0.0f64; 3];
    let config = SearchConfig::default();
    let mut rng = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::seed_from_u64(0);
    for m in moves {
        match *m {
            engine::Move::Play { seat, tile, loc, .. } => {
                let a = engine::Action { tile, loc };
                if seat == engine::Seat::Target && !pos.board.is_empty() {
                    let l = engine::likelihoods(r, &pos, a, engine::Observability::Full, &config, 0, &mut rng);
                    for k in 0..3 {
                        logp[k] += l[k].max(engine::BAYES_FLOOR).ln();
                    }
                }
                pos.play(r, a);
            }
            engine::Move::Draw { tile, .. } => pos.draw(tile),
            engine::Move::Pass { .. } => {
                pos.pass(r);
            }
        }
    }
    let m = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e = logp.map(|l| (l - m).exp());
    let z: f64 = e.iter().sum();
    e.map(|x| x / z)
}

#[test]
fn bayes_identifies_deterministic_targets_under_full_observation() {
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    for target in [TargetKind::Scorer, TargetKind::Defender] {
        let (mut made, mut correct, mut informative, mut identified, mut unique, mut games) = (0, 0, 0, 0, 0, 0);
        for state in (0..4200).step_by(7) {
            let rec = play_game(&mut s, &game(state, target), InfoSource::Bayes).unwrap();
            assert!(rec.predictions_correct <= rec.predictions);
            made += rec.predictions;
            correct += rec.predictions_correct;
            let p = final_posterior(&r, state, &rec.moves);
            if p.iter().any(|&x| (x - p[0]).abs() > 1e-12) {
                informative += 1;
                // The true type is (one of) the most probable.
                let top = p.iter().copied().fold(0.0, f64::max);
                identified += (p[target as usize] >= top - 1e-12) as u32;
            }
            games += 1;
            let others = (0..3)
                .filter(|&k| k != target as usize)
                .map(|k| p[k])
                .fold(0.0, f64::max);
            unique += (p[target as usize] > others + 1e-12) as u32;
        }
        let acc = correct as f64 / made as f64;
        println!(
            "{target}: per-decision accuracy {acc:.3} ({correct}/{made}); at game end the true type is most probable in \
             {identified}/{informative} games with informative actions, the only most probable in {unique}/{games} games"
        );
        // Never ruled out, never overtaken: the true type stays most probable.
        assert_eq!(identified, informative, "{target}");
        assert!(informative as f64 > 0.8 * games as f64);
    }
}

#[test]
fn likelihoods_under_full_observation_are_policy_indicators() {
    let r = thesis();
    let d = crate::deal(&r, 3);
    // State 3: the player holds 33 and leads; then the target (13, 22, 23) answers.
    let mut pos = Position::start(&r, &d);
    let mut list = engine::ActionList::default();
    pos.actions(&r, &mut list);
    pos.play(&r, list.as_slice()[0]);
    pos.actions(&r, &mut list);
    let acts = list.as_slice().to_vec();
    assert!(acts.len() >= 2);
    let config = SearchConfig::default();
    let mut rng = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::seed_from_u64(0);
    let scorer_pick = engine::target_choice(&r, TargetKind::Scorer, &pos, &acts).unwrap();
    let l = engine::likelihoods(
        &r,
        &pos,
        acts[scorer_pick],
        engine::Observability::Full,
        &config,
        0,
        &mut rng,
    );
    assert_eq!(l[1], 1.0);
    assert!((l[0] - 1.0 / acts.len() as f64).abs() < 1e-12);
    let other = (scorer_pick + 1) % acts.len();
    let l = engine::likelihoods(&r, &pos, acts[other], engine::Observability::Full, &config, 0, &mut rng);
    assert_eq!(l[1], 0.0);
}
