//! The full game's block and team presets: deal indices both ways, OpenSpiel's
//! action ids, tiles conserved and OpenSpiel's scoring in random hands.

use full::{
    self, FullAction, FullActions, FullConfig, FullPosition, FullRules, HandEnd, OPENING, Preset, deal_count,
    deal_from_index, deal_index, openspiel,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

#[test]
fn deal_counts_are_multinomials() {
    // C(28,7) * C(21,7) and 28! / (7!)^4.
    assert_eq!(deal_count(&FullRules::preset(Preset::Block)), Some(1_184_040 * 116_280));
    assert_eq!(deal_count(&FullRules::preset(Preset::Team)), Some(472_518_347_558_400));
    // Double-9, 4 seats of 13: 55! / (13!^4 3!) does not fit a u64.
    let big = FullRules::new(FullConfig {
        set: 9,
        hand: 13,
        ..FullConfig::all_fives(4)
    })
    .unwrap();
    assert_eq!(deal_count(&big), None);
}

#[test]
fn deal_indices_go_both_ways() {
    for preset in [Preset::Block, Preset::Team] {
        let rules = FullRules::preset(preset);
        let count = deal_count(&rules).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let picks = [0, 1, 2, count / 3, count / 2, count - 2, count - 1];
        for index in picks
            .into_iter()
            .chain((0..500).map(|_| rand_core::RngCore::next_u64(&mut rng) % count))
        {
            let hands = deal_from_index(&rules, index).unwrap();
            for s in 0..rules.seats() as usize {
                assert_eq!(hands[s].count_ones(), 7);
                for o in 0..s {
                    assert_eq!(hands[s] & hands[o], 0, "hands overlap");
                }
            }
            assert_eq!(deal_index(&rules, &hands), index);
        }
        assert_eq!(deal_from_index(&rules, count), None);
        // Random deals map to indices and back.
        for _ in 0..500 {
            let hands = full::random_deal(&rules, &mut rng);
            assert_eq!(deal_from_index(&rules, deal_index(&rules, &hands)), Some(hands));
        }
    }
}

#[test]
fn openspiel_action_ids_are_77_per_seat_and_go_both_ways() {
    let rules = FullRules::preset(Preset::Team);
    assert_eq!(rules.actions_per_seat(), 77);
    let mut seen = std::collections::HashSet::new();
    for seat in 0..4u8 {
        for tile in 0..28u8 {
            let (p, q) = rules.pips(tile);
            let mut covers = vec![OPENING, p];
            if p != q {
                covers.push(q);
            }
            for cover in covers {
                let a = FullAction { tile, cover };
                let id = openspiel::action_id(&rules, seat, a);
                assert!(id < 4 * 77);
                assert!(seen.insert(id), "id {id} twice");
                assert_eq!(openspiel::action_from_id(&rules, id as u64), Some((seat, a)));
            }
        }
    }
    assert_eq!(seen.len(), 308);
    assert_eq!(openspiel::action_from_id(&rules, 308), None);
    // OpenSpiel's first ids: p0 (0,0) None, p0 (0,0) 0, p0 (0,1) None, p0 (0,1) 0, p0 (0,1) 1.
    let ids: Vec<u32> = [(0, OPENING), (0, 0), (1, OPENING), (1, 0), (1, 1)]
        .into_iter()
        .map(|(tile, cover)| openspiel::action_id(&rules, 0, FullAction { tile, cover }))
        .collect();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    // p1 (6,6) pip 6 is the last id of seat 1's block.
    assert_eq!(openspiel::action_id(&rules, 1, FullAction { tile: 27, cover: 6 }), 153);
}

#[test]
fn random_hands_conserve_tiles_and_score_as_openspiel() {
    for preset in [Preset::Block, Preset::Team] {
        let rules = FullRules::preset(preset);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut list = FullActions::default();
        let (mut dominoes, mut blocked) = (0, 0);
        for _ in 0..3000 {
            let hands = full::random_deal(&rules, &mut rng);
            let mut pos = FullPosition::deal(&rules, hands);
            let mut on_board = 0u64;
            while pos.end.is_none() {
                pos.actions(&rules, &mut list);
                assert!(!list.is_empty(), "the mover can always play");
                assert_eq!(pos.action_count(&rules) as usize, list.len());
                let a = list.as_slice()[engine::seed::below_u32(&mut rng, list.len() as u32) as usize];
                on_board |= 1 << a.tile;
                pos.play(&rules, a);
            }
            let held = pos.hands.iter().fold(0, |x, h| x | h);
            assert_eq!(held | on_board | pos.boneyard, rules.all_tiles());
            assert_eq!(held & on_board, 0);
            assert_eq!(pos.plays as u32, on_board.count_ones());
            let r = pos.returns(&rules);
            assert_eq!(r.iter().sum::<i32>(), 0, "zero-sum");
            let sides = pos.side_pips(&rules);
            let (a, b) = (sides[0] as i32, sides[1] as i32);
            let want0 = if a < b {
                b
            } else if a > b {
                -a
            } else {
                0
            };
            assert_eq!(r[0], want0);
            assert_eq!(r[1], -want0);
            if rules.teams() {
                assert_eq!((r[2], r[3]), (r[0], r[1]), "partners share their return");
            }
            match pos.end {
                Some(HandEnd::Domino(s)) => {
                    assert_eq!(pos.hands[s as usize], 0);
                    dominoes += 1;
                }
                Some(HandEnd::Blocked) => {
                    assert!((0..rules.seats()).all(|s| !pos.can_play(&rules, s)));
                    blocked += 1;
                }
                None => unreachable!(),
            }
        }
        assert!(
            dominoes > 100 && blocked > 100,
            "{preset}: {dominoes} dominoes, {blocked} blocked"
        );
    }
}

#[test]
fn a_history_replays_and_an_illegal_step_is_named() {
    let rules = FullRules::preset(Preset::Block);
    // Seat 0 gets tiles 0-6 ((0,0)..(0,6)), seat 1 tiles 7-13 ((1,1)..(2,2)).
    let mut h: Vec<u64> = (0..14).collect();
    let r = openspiel::replay_history(&rules, &h).unwrap();
    assert_eq!(r.legal.len(), 1, "the history stops at seat 0's first decision");
    assert_eq!(
        r.legal[0],
        (0..7)
            .map(|t| openspiel::action_id(
                &rules,
                0,
                FullAction {
                    tile: t,
                    cover: OPENING
                }
            ))
            .collect::<Vec<_>>()
    );
    assert_eq!(r.returns, None);
    // Seat 1 cannot open: its actions are ids 77 and up.
    h.push(77);
    let e = openspiel::replay_history(&rules, &h).unwrap_err();
    assert_eq!((e.index, e.action), (14, 77));
    assert!(e.reason.contains("seat 0's turn"), "{e}");
    // A tile dealt twice.
    let e = openspiel::replay_history(&rules, &[3, 3]).unwrap_err();
    assert_eq!((e.index, e.action), (1, 3));
    assert!(e.to_string().contains("dealt already"), "{e}");
}
