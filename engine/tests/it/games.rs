use engine::{
    Ending, GameConfig, GameRecord, InfoSource, LocalTable, Move, Observability, PlayerEngine, Rules, SearchConfig,
    Searcher, Seat, TargetKind, play_game, replay,
};

use crate::{deal, thesis};

/// Checks one game's record against its deal: tiles conserved, legal moves,
/// play scores multiples of 5, scores and counts consistent with the moves.
pub fn check_record(r: &Rules, game: &GameConfig, rec: &GameRecord) {
    let d = deal(r, game.starting_state);
    let ctx = format!("{game:?}: {}", rec.moves_text(r));
    let mut hands = [d.player, d.target];
    let mut boneyard = d.boneyard;
    let mut played = 0u64;
    let mut draws = [0u32; 2];
    let mut plays = 0;
    for m in &rec.moves {
        match *m {
            Move::Play { seat, tile, points, .. } => {
                let bit = 1u64 << tile;
                assert!(hands[seat as usize] & bit != 0, "{ctx}: played a tile not in hand");
                hands[seat as usize] &= !bit;
                assert_eq!(played & bit, 0, "{ctx}: tile played twice");
                played |= bit;
                plays += 1;
                assert_eq!(points % 5, 0, "{ctx}: a play scored {points}");
            }
            Move::Draw { seat, tile } => {
                let bit = 1u64 << tile;
                assert!(boneyard & bit != 0, "{ctx}: drew a tile not in the boneyard");
                boneyard &= !bit;
                hands[seat as usize] |= bit;
                draws[seat as usize] += 1;
            }
            Move::Pass { .. } => {
                assert_eq!(boneyard, 0, "{ctx}: passed with tiles in the boneyard")
            }
        }
    }
    assert_eq!(
        hands[0] | hands[1] | boneyard | played,
        r.all_tiles(),
        "{ctx}: tiles lost"
    );
    assert_eq!(hands[0] & hands[1], 0);
    assert_eq!((hands[0] | hands[1]) & (boneyard | played), 0);
    assert_eq!(played.count_ones(), plays);
    match rec.ending {
        Ending::Domino => assert!(hands[0] == 0 || hands[1] == 0, "{ctx}: domino with tiles in both hands"),
        Ending::Blocked => {
            let n = rec.moves.len();
            assert!(
                n >= 2
                    && matches!(rec.moves[n - 1], Move::Pass { .. })
                    && matches!(rec.moves[n - 2], Move::Pass { .. })
            );
        }
        Ending::Forfeit => panic!("{ctx}: the engine's own games are never forfeited"),
    }
    assert_eq!((rec.player_draws, rec.target_draws), (draws[0], draws[1]), "{ctx}");
    let again = replay(r, &d, &rec.moves).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(
        (again.player_score, again.target_score),
        (rec.player_score, rec.target_score),
        "{ctx}"
    );
    assert_eq!((again.ending, again.turns), (rec.ending, rec.turns), "{ctx}");
    assert_eq!(rec.score_diff, rec.player_score as i32 - rec.target_score as i32);
    let first_seat = rec.moves.iter().find_map(|m| match *m {
        Move::Play { seat, .. } => Some(seat),
        _ => None,
    });
    assert_eq!(first_seat, Some(rec.leader));
    match game.engine {
        PlayerEngine::Expectimax => assert_eq!(rec.predictions, 0),
        // The oracle is always right.
        PlayerEngine::MStar => assert_eq!(rec.predictions, rec.predictions_correct),
        _ => {
            unreachable!("the thesis's games are searched by mstar and expectimax")
        }
    }
    let player_plays = rec
        .moves
        .iter()
        .filter(|m| matches!(m, Move::Play { seat: Seat::Player, .. }))
        .count();
    assert!(rec.predictions as usize <= player_plays);
}

#[test]
fn every_state_target_engine_and_observability_plays_correctly() {
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let mut games = 0;
    let mut endings = [0u32; 2];
    for observability in [Observability::Full, Observability::Partial] {
        for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
            for target in TargetKind::ALL {
                for state in 0..r.starting_states() {
                    let game = GameConfig {
                        seed: 2014,
                        starting_state: state,
                        repeat: 1,
                        engine,
                        target,
                        observability,
                    };
                    let rec = play_game(&mut s, &game, InfoSource::Oracle).unwrap();
                    check_record(&r, &game, &rec);
                    endings[(rec.ending == Ending::Blocked) as usize] += 1;
                    games += 1;
                }
            }
        }
    }
    assert_eq!(games, 4200 * 3 * 2 * 2);
    assert!(endings[0] > 0 && endings[1] > 0, "both endings occur: {endings:?}");
}

#[test]
fn mstar_with_the_oracle_beats_expectimax_on_average_under_full_observation() {
    // The value M* gains is the point of the thesis; against a deterministic
    // target and full observation it cannot be negative in expectation.
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    for target in [TargetKind::Scorer, TargetKind::Defender] {
        let mut sums = [0i64; 2];
        for (i, engine) in [PlayerEngine::MStar, PlayerEngine::Expectimax].into_iter().enumerate() {
            for state in 0..r.starting_states() {
                for repeat in 1..=3 {
                    let game = GameConfig {
                        seed: 7,
                        starting_state: state,
                        repeat,
                        engine,
                        target,
                        observability: Observability::Full,
                    };
                    sums[i] += play_game(&mut s, &game, InfoSource::Oracle).unwrap().score_diff as i64;
                }
            }
        }
        assert!(sums[0] > sums[1], "{target}: mstar {} expectimax {}", sums[0], sums[1]);
    }
}

#[test]
fn out_of_range_states_are_refused() {
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let game = GameConfig {
        seed: 1,
        starting_state: 4200,
        repeat: 1,
        engine: PlayerEngine::MStar,
        target: TargetKind::Random,
        observability: Observability::Full,
    };
    let e = play_game(&mut s, &game, InfoSource::Oracle).unwrap_err();
    assert_eq!(
        e.to_string(),
        "starting_state = 4200 is out of range: these rules have 4200 starting states (0-4199)"
    );
}

#[test]
fn other_rules_play_to_the_end() {
    for (set, hand, boneyard) in [(2u8, 2u8, 2u8), (4, 4, 7), (6, 7, 14)] {
        for lead in [engine::Lead::HighestDouble, engine::Lead::Player, engine::Lead::Target] {
            let r = Rules::new(engine::RulesConfig {
                set,
                hand,
                boneyard,
                lead,
                blocked: engine::Blocked::Difference,
            })
            .unwrap();
            let config = SearchConfig {
                depth: if set > 4 {
                    engine::DepthLimit::Turns(3)
                } else {
                    engine::DepthLimit::Unlimited
                },
                worlds: engine::WorldCount::Sample(8),
                ..SearchConfig::default()
            };
            let mut s = Searcher::new(r.clone(), config, LocalTable::new());
            for k in 0..12u64 {
                let state = (k * 2_654_435_761) % r.starting_states();
                for observability in [Observability::Full, Observability::Partial] {
                    let game = GameConfig {
                        seed: 3,
                        starting_state: state,
                        repeat: k,
                        engine: PlayerEngine::MStar,
                        target: TargetKind::ALL[k as usize % 3],
                        observability,
                    };
                    let rec = play_game(&mut s, &game, InfoSource::Oracle).unwrap();
                    check_record(&r, &game, &rec);
                }
            }
        }
    }
}

#[test]
fn constraints_equal_uniform_on_the_thesis_until_the_target_draws_or_passes() {
    use engine::{Belief, play_game_recorded};
    let r = thesis();
    let config = |belief| SearchConfig {
        belief,
        ..SearchConfig::default()
    };
    let mut u = Searcher::new(r.clone(), config(Belief::Uniform), LocalTable::new());
    let mut c = Searcher::new(r.clone(), config(Belief::Constraints), LocalTable::new());
    let (mut same, mut differ, mut shown) = (0, 0, 0);
    for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
        for target in TargetKind::ALL {
            for state in (0..r.starting_states()).step_by(3) {
                let game = GameConfig {
                    seed: 2014,
                    starting_state: state,
                    repeat: 1,
                    engine,
                    target,
                    observability: Observability::Partial,
                };
                for source in [InfoSource::Oracle, InfoSource::Bayes] {
                    let (ru, du) = play_game_recorded(&mut u, &game, source).unwrap();
                    let (rc, dc) = play_game_recorded(&mut c, &game, source).unwrap();
                    if matches!(source, InfoSource::Oracle) {
                        check_record(&r, &game, &rc);
                    }
                    // The player's decisions before the target first drew or passed.
                    let first_shown = ru.moves.iter().position(|m| {
                        matches!(
                            m,
                            Move::Draw { seat: Seat::Target, .. } | Move::Pass { seat: Seat::Target }
                        )
                    });
                    match first_shown {
                        None => {
                            assert_eq!(ru, rc, "{game:?}");
                            assert_eq!(du, dc, "{game:?}");
                            same += 1;
                        }
                        Some(k) => {
                            // The same plays until then.
                            shown += 1;
                            assert_eq!(ru.moves[..k], rc.moves[..k], "{game:?}");
                            differ += (ru != rc) as u32;
                        }
                    }
                }
            }
        }
    }
    assert!(
        same > 1000 && shown > 100,
        "{same} games without, {shown} with a draw or pass"
    );
    // Once the target shows a void, constraints uses it.
    assert!(differ > 0, "constraints never changed a game");
}
