//! All Fives for 2 to 4 seats: thousands of seeded matches by every target,
//! with the invariants of the rules, and hand-worked scoring examples.

use engine::PlayerEngine;
use engine::{Action, Loc, TargetKind};
use full::{
    FivesBlocked, FivesLead, FivesPosition, FullAgent, FullConfig, FullMove, FullRules, FullTarget, HandEnd, MAX_SEATS,
    Opening, deal_count, play_match, round_to_five,
};

fn tile(rules: &FullRules, a: u8, b: u8) -> u8 {
    (0..rules.tile_count())
        .find(|&t| rules.pips(t) == (a.min(b), a.max(b)))
        .unwrap()
}

fn set(rules: &FullRules, tiles: &[(u8, u8)]) -> u64 {
    tiles.iter().fold(0, |s, &(a, b)| s | 1 << tile(rules, a, b))
}

/// The table shapes: 2 seats, 3 seats, 4 seats alone, 4 in partnerships, and 2 seats keeping 2 back.
fn shapes() -> Vec<FullRules> {
    vec![
        FullRules::new(FullConfig::all_fives(2)).unwrap(),
        FullRules::new(FullConfig::all_fives(3)).unwrap(),
        FullRules::new(FullConfig {
            teams: false,
            ..FullConfig::all_fives(4)
        })
        .unwrap(),
        FullRules::new(FullConfig::all_fives(4)).unwrap(),
        FullRules::new(FullConfig {
            keep: 2,
            lead: FivesLead::HighestDouble,
            blocked: FivesBlocked::Difference,
            ..FullConfig::all_fives(2)
        })
        .unwrap(),
    ]
}

#[test]
fn seeded_matches_by_every_target_keep_the_rules() {
    let mut hands_seen = 0;
    let mut endings = [0u32; 2];
    for rules in shapes() {
        let sides = rules.sides() as usize;
        let deals = deal_count(&rules).unwrap();
        for (k, agent) in FullTarget::ALL.into_iter().enumerate() {
            for g in 0..60u64 {
                // Every seat plays `agent`, except seat 1 which plays the next one.
                let mut agents = [FullAgent::Fixed(agent); MAX_SEATS];
                agents[1] = FullAgent::Fixed(FullTarget::ALL[(k + 1) % 4]);
                let deal = (g * 7_919_993 + k as u64) % deals;
                let m = play_match(&rules, 2014, deal, g, &agents, 150).unwrap();
                // Matches end in the first hand after which a side has 150.
                let mut totals = [0u32; MAX_SEATS];
                let mut previous: Option<HandEnd> = None;
                for (h, hand) in m.hands.iter().enumerate() {
                    assert!(
                        totals[..sides].iter().all(|&t| t < 150),
                        "the match went on after reaching 150"
                    );
                    hands_seen += 1;
                    // The leader follows the rule.
                    let want = Opening::of(&rules, &hand.hands, previous);
                    assert_eq!(hand.opening, want);
                    match (rules.config().lead, previous) {
                        (FivesLead::Winner, Some(HandEnd::Domino(s))) => {
                            assert_eq!((want.leader, want.forced), (s, None), "the last hand's domino leads");
                        }
                        _ => {
                            let t = want.forced.expect("the highest double (or heaviest tile) is forced");
                            assert!(hand.hands[want.leader as usize] & (1 << t) != 0);
                            let (a, b) = rules.pips(t);
                            for s in 0..rules.seats() as usize {
                                for u in full::tiles_of(hand.hands[s]) {
                                    let (c, d) = rules.pips(u);
                                    assert!((a == b, a + b, b) >= (c == d, c + d, d), "{u} beats the forced {t}");
                                }
                            }
                        }
                    }
                    match hand.moves.first() {
                        Some(FullMove::Play { seat, tile, .. }) => {
                            assert_eq!(*seat, want.leader);
                            if let Some(f) = want.forced {
                                assert_eq!(*tile, f);
                            }
                        }
                        other => panic!("a hand opens with a play, not {other:?}"),
                    }
                    // Replay the hand: tiles conserved, every score a multiple of 5.
                    let mut pos = FivesPosition::deal(&rules, hand.hands, hand.opening);
                    let mut scores = [0u32; MAX_SEATS];
                    for mv in &hand.moves {
                        match *mv {
                            FullMove::Draw { seat, tile } => {
                                assert_eq!(seat, pos.mover);
                                assert!(pos.must_draw(&rules));
                                pos.draw(tile);
                                assert!(pos.boneyard.count_ones() >= rules.config().keep as u32);
                            }
                            FullMove::Pass { seat, scored } => {
                                assert_eq!(seat, pos.mover);
                                assert!(pos.must_pass(&rules));
                                assert_eq!(pos.pass(&rules), scored);
                                if let Some(s) = scored.end_side {
                                    scores[s as usize] += scored.end_points;
                                }
                            }
                            FullMove::Play {
                                seat,
                                tile,
                                loc,
                                scored,
                            } => {
                                assert_eq!(seat, pos.mover);
                                let mut list = engine::ActionList::default();
                                pos.actions(&rules, &mut list);
                                assert!(list.as_slice().contains(&Action { tile, loc }), "illegal play");
                                assert_eq!(pos.play(&rules, Action { tile, loc }), scored);
                                assert_eq!(scored.count_points % 5, 0);
                                scores[rules.side(seat) as usize] += scored.count_points;
                                if let Some(s) = scored.end_side {
                                    scores[s as usize] += scored.end_points;
                                }
                            }
                        }
                        let held = pos.hands.iter().fold(0, |x, h| x | h);
                        let board = pos.on_board(&rules);
                        assert_eq!(pos.board.tile_count() as u32, board.count_ones(), "tiles conserved");
                        assert_eq!(held & pos.boneyard, 0);
                        assert_eq!(held | pos.boneyard | board, rules.all_tiles());
                    }
                    assert_eq!(pos.end, Some(hand.end));
                    assert_eq!(scores, hand.scores);
                    assert!(hand.scores.iter().all(|s| s % 5 == 0), "{:?}", hand.scores);
                    match hand.end {
                        HandEnd::Domino(s) => {
                            assert_eq!(pos.hands[s as usize], 0);
                            endings[0] += 1;
                        }
                        HandEnd::Blocked => {
                            assert!((0..rules.seats()).all(|s| pos.hands[s as usize] != 0));
                            endings[1] += 1;
                        }
                    }
                    for (t, s) in totals.iter_mut().zip(hand.scores) {
                        *t += s;
                    }
                    previous = Some(hand.end);
                    let _ = h;
                }
                assert_eq!(totals, m.totals);
                assert!(m.totals[..sides].iter().any(|&t| t >= 150));
                assert_eq!(m.totals[m.winner as usize], *m.totals[..sides].iter().max().unwrap());
                // A match is a pure function of its coordinates.
                assert_eq!(play_match(&rules, 2014, deal, g, &agents, 150).unwrap(), m);
            }
        }
    }
    eprintln!("{hands_seen} hands: {} dominoes, {} blocked", endings[0], endings[1]);
    assert!(hands_seen > 5000, "{hands_seen} hands");
    assert!(
        endings[0] > 100 && endings[1] > 10,
        "dominoes {}, blocked {}",
        endings[0],
        endings[1]
    );
}

#[test]
fn rounding_is_to_the_nearest_five() {
    let got: Vec<u32> = (0..=13).map(round_to_five).collect();
    assert_eq!(got, [0, 0, 0, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10, 15]);
}

#[test]
fn a_spinner_count_scores() {
    // (5|5) leads: a lone double counts 10 and scores 10; (5|0) beside it
    // leaves 0 + 10 (the spinner with one side covered counts both halves);
    // (5|6) on the other side opens Up/Down: 0 + 6 = 6, no score; (5|4) Up: 0 + 6 + 4 = 10.
    let rules = FullRules::new(FullConfig::all_fives(2)).unwrap();
    let hands = [
        set(&rules, &[(5, 5), (5, 6), (1, 1)]),
        set(&rules, &[(0, 5), (4, 5), (2, 2)]),
        0,
        0,
    ];
    let mut pos = FivesPosition::deal(
        &rules,
        hands,
        Opening {
            leader: 0,
            forced: None,
        },
    );
    let play = |pos: &mut FivesPosition, a, b, loc| {
        pos.play(
            &rules,
            Action {
                tile: tile(&rules, a, b),
                loc,
            },
        )
        .count_points
    };
    assert_eq!(play(&mut pos, 5, 5, Loc::Left), 10);
    assert_eq!(play(&mut pos, 0, 5, Loc::Left), 10);
    assert_eq!(play(&mut pos, 5, 6, Loc::Right), 0);
    assert_eq!(pos.board.count(), 6);
    assert_eq!(play(&mut pos, 4, 5, Loc::Up), 10);
    assert_eq!(pos.scores[..2], [10, 20]);
}

#[test]
fn a_domino_scores_the_opponents_pips_rounded() {
    // Seat 0 plays its last tile; seat 1 holds (6|6) and (0|1): 13 pips -> 15.
    let rules = FullRules::new(FullConfig::all_fives(2)).unwrap();
    let hands = [set(&rules, &[(2, 3)]), set(&rules, &[(6, 6), (0, 1)]), 0, 0];
    let mut pos = FivesPosition::deal(
        &rules,
        hands,
        Opening {
            leader: 0,
            forced: None,
        },
    );
    let s = pos.play(
        &rules,
        Action {
            tile: tile(&rules, 2, 3),
            loc: Loc::Left,
        },
    );
    assert_eq!((s.count_points, s.end_points, s.end_side), (5, 15, Some(0)));
    assert_eq!(pos.end, Some(HandEnd::Domino(0)));
    // Without rounding: 13. In partnerships both opponents' hands count.
    let raw = FullRules::new(FullConfig {
        round: false,
        ..FullConfig::all_fives(2)
    })
    .unwrap();
    let mut pos = FivesPosition::deal(
        &raw,
        hands,
        Opening {
            leader: 0,
            forced: None,
        },
    );
    assert_eq!(
        pos.play(
            &raw,
            Action {
                tile: tile(&raw, 2, 3),
                loc: Loc::Left
            }
        )
        .end_points,
        13
    );
    let teams = FullRules::new(FullConfig::all_fives(4)).unwrap();
    let hands = [
        set(&teams, &[(2, 3)]),
        set(&teams, &[(6, 6)]),
        set(&teams, &[(4, 4)]),
        set(&teams, &[(0, 1), (1, 1)]),
    ];
    let mut pos = FivesPosition::deal(
        &teams,
        hands,
        Opening {
            leader: 0,
            forced: None,
        },
    );
    let s = pos.play(
        &teams,
        Action {
            tile: tile(&teams, 2, 3),
            loc: Loc::Left,
        },
    );
    // Opponents (seats 1 and 3) hold 12 + 3 = 15; the partner's (4|4) does not count.
    assert_eq!((s.end_points, s.end_side), (15, Some(0)));
}

#[test]
fn a_blocked_hand_scores_by_the_lowest_total() {
    // Two seats, an empty boneyard beyond nothing: (6|6) leads, nobody holds a 6.
    let cfg = FullConfig {
        set: 6,
        hand: 3,
        ..FullConfig::all_fives(2)
    };
    let rules = FullRules::new(cfg).unwrap();
    let p0 = set(&rules, &[(6, 6), (0, 1), (1, 2)]);
    let p1 = set(&rules, &[(3, 4), (4, 5), (2, 3)]);
    let mut pos = FivesPosition::deal(
        &rules,
        [p0, p1, 0, 0],
        Opening {
            leader: 0,
            forced: None,
        },
    );
    // Take the boneyard out of play, so that nobody can draw a 6.
    pos.boneyard = 0;
    pos.play(
        &rules,
        Action {
            tile: tile(&rules, 6, 6),
            loc: Loc::Left,
        },
    );
    assert!(pos.must_pass(&rules));
    assert_eq!(pos.pass(&rules).end_points, 0);
    assert!(pos.must_pass(&rules));
    let s = pos.pass(&rules);
    // Seat 0 holds 1 + 3 = 4, seat 1 holds 7 + 9 + 5 = 21: seat 0 scores 21 -> 20.
    assert_eq!((s.end_points, s.end_side), (20, Some(0)));
    assert_eq!(pos.end, Some(HandEnd::Blocked));
    // Difference: 21 - 4 = 17 -> 15.
    let diff = FullRules::new(FullConfig {
        blocked: FivesBlocked::Difference,
        ..cfg
    })
    .unwrap();
    let mut pos = FivesPosition::deal(
        &diff,
        [p0, p1, 0, 0],
        Opening {
            leader: 0,
            forced: None,
        },
    );
    pos.boneyard = 0;
    pos.play(
        &diff,
        Action {
            tile: tile(&diff, 6, 6),
            loc: Loc::Left,
        },
    );
    pos.pass(&diff);
    assert_eq!(pos.pass(&diff).end_points, 15);
}

#[test]
fn knobs_that_contradict_are_refused_naming_both() {
    let e = FullRules::new(FullConfig {
        teams: true,
        ..FullConfig::all_fives(3)
    })
    .unwrap_err();
    assert_eq!(e.field, "teams");
    assert!(e.reason.contains("seats = 3"), "{e}");
    let e = FullRules::new(FullConfig {
        keep: 1,
        ..FullConfig::all_fives(2)
    })
    .unwrap_err();
    assert_eq!(e.field, "keep");
    let e = FullRules::new(FullConfig {
        hand: 8,
        ..FullConfig::all_fives(4)
    })
    .unwrap_err();
    assert_eq!(e.field, "hand");
    let e = FullRules::new(FullConfig {
        hand: 5,
        ..FullConfig::preset(full::Preset::Block)
    })
    .unwrap_err();
    assert_eq!(e.field, "hand");
    assert!(
        e.reason.contains("preset = \"block\"") && e.reason.contains("hand = 7"),
        "{e}"
    );
    let _ = TargetKind::Random;
}

#[test]
fn a_depth_limited_search_beats_the_fixed_strategies() {
    // The same 300 deals and streams: seat 0 searches (M* with the oracle,
    // or Expectimax) or plays heaviest / random, against a scorer.
    use full::SearchSettings;
    let rules = FullRules::new(FullConfig::all_fives(2)).unwrap();
    let target = FullAgent::Fixed(FullTarget::Thesis(TargetKind::Scorer));
    let mean = |agent: FullAgent| {
        let agents = [agent, target, agent, target];
        let mut diff = 0i64;
        let mut nodes = 0;
        for g in 0..300u64 {
            let m = play_match(&rules, 7, g * 457_000_111, 1, &agents, 0).unwrap();
            diff += m.totals[0] as i64 - m.totals[1] as i64;
            nodes += m.hands[0].nodes;
        }
        (diff as f64 / 300.0, nodes)
    };
    let (mstar, mstar_nodes) = mean(FullAgent::Search(SearchSettings::fixed(PlayerEngine::MStar, 3)));
    let (em, em_nodes) = mean(FullAgent::Search(SearchSettings::fixed(PlayerEngine::Expectimax, 3)));
    let (heaviest, fixed_nodes) = mean(FullAgent::Fixed(FullTarget::Heaviest));
    let (random, _) = mean(FullAgent::Fixed(FullTarget::Thesis(TargetKind::Random)));
    eprintln!("mean score diff: mstar/3 {mstar:.2}, expectimax/3 {em:.2}, heaviest {heaviest:.2}, random {random:.2}");
    assert!(mstar_nodes > 0 && em_nodes > 0 && fixed_nodes == 0);
    assert!(
        mstar > heaviest + 2.0 && mstar > random + 2.0,
        "M* {mstar} vs heaviest {heaviest}, random {random}"
    );
    assert!(
        em > heaviest && em > random,
        "Expectimax {em} vs heaviest {heaviest}, random {random}"
    );
}

#[test]
fn perft_counts_every_move_and_the_fast_move_generator_matches_the_rules() {
    use full::{deal_from_index, fives_perft};
    // The straightforward generator: every tile in hand at every open
    // location whose pip it shows (the forced opening aside).
    fn naive(rules: &FullRules, pos: &FivesPosition) -> Vec<Action> {
        let open = pos.board.open_locations();
        let mut out = Vec::new();
        for t in full::tiles_of(pos.hands[pos.mover as usize]) {
            if pos.board.is_empty() {
                if pos.forced.is_none_or(|f| f == t) {
                    out.push(Action {
                        tile: t,
                        loc: Loc::Left,
                    });
                }
                continue;
            }
            for &loc in &Loc::ALL[..open] {
                if pos.board.accepts(rules, t, loc) {
                    out.push(Action { tile: t, loc });
                }
            }
        }
        out
    }
    fn walk(rules: &FullRules, pos: &FivesPosition, depth: u8, checked: &mut u64) -> u64 {
        if depth == 0 || pos.end.is_some() {
            return 1;
        }
        if !pos.can_play(rules, pos.mover) {
            assert!(naive(rules, pos).is_empty());
            if pos.must_pass(rules) {
                let mut next = *pos;
                next.pass(rules);
                return walk(rules, &next, depth - 1, checked);
            }
            return full::tiles_of(pos.boneyard)
                .map(|t| {
                    let mut next = *pos;
                    next.draw(t);
                    walk(rules, &next, depth - 1, checked)
                })
                .sum();
        }
        let mut list = engine::ActionList::default();
        pos.actions(rules, &mut list);
        assert_eq!(list.as_slice(), naive(rules, pos).as_slice(), "{pos:?}");
        *checked += 1;
        list.as_slice()
            .iter()
            .map(|&a| {
                let mut next = *pos;
                next.play(rules, a);
                walk(rules, &next, depth - 1, checked)
            })
            .sum()
    }
    for rules in shapes() {
        let mut checked = 0;
        for d in 0..12u64 {
            let deal = d * 1_000_003 % deal_count(&rules).unwrap();
            let hands = deal_from_index(&rules, deal).unwrap();
            let start = FivesPosition::deal(&rules, hands, Opening::of(&rules, &hands, None));
            assert_eq!(fives_perft(&rules, &start, 5), walk(&rules, &start, 5, &mut checked));
        }
        assert!(checked > 500, "{checked} positions checked");
    }
}
