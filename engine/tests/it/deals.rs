use std::collections::HashSet;

use engine::Deal;

use crate::{deal, rules, thesis, tiles};

fn check(state: u64, boneyard: &[&str], player: &[&str], target: &[&str]) {
    let r = thesis();
    let d = deal(&r, state);
    assert_eq!(d.boneyard, tiles(&r, boneyard), "boneyard of state {state}");
    assert_eq!(d.player, tiles(&r, player), "player hand of state {state}");
    assert_eq!(d.target, tiles(&r, target), "target hand of state {state}");
    assert_eq!(d.index(&r), Some(state));
}

#[test]
fn rules_md_starting_states() {
    check(0, &["00", "01", "02", "03"], &["11", "12", "13"], &["22", "23", "33"]);
    check(3, &["00", "01", "02", "03"], &["11", "12", "33"], &["13", "22", "23"]);
    check(
        3333,
        &["02", "12", "13", "23"],
        &["01", "11", "22"],
        &["00", "03", "33"],
    );
    check(
        4199,
        &["13", "22", "23", "33"],
        &["03", "11", "12"],
        &["00", "01", "02"],
    );
}

#[test]
fn every_double_3_state_round_trips_and_all_deals_differ() {
    let r = thesis();
    let mut seen = HashSet::new();
    for s in 0..r.starting_states() {
        let d = deal(&r, s);
        assert_eq!(d.index(&r), Some(s));
        assert_eq!(d.player | d.target | d.boneyard, r.all_tiles());
        assert_eq!(d.player & d.target, 0);
        assert!(
            seen.insert((d.player, d.target, d.boneyard)),
            "state {s} repeats a deal"
        );
    }
    assert_eq!(seen.len(), 4200);
    assert_eq!(Deal::from_index(&r, 4200), None);
}

#[test]
fn lexicographic_order_of_subsets() {
    // Consecutive states share a boneyard for C(6,3) = 20 states, then move to the next 4-subset.
    let r = thesis();
    assert_eq!(deal(&r, 19).boneyard, deal(&r, 0).boneyard);
    assert_eq!(deal(&r, 20).boneyard, tiles(&r, &["00", "01", "02", "11"]));
    assert_eq!(deal(&r, 20).player, tiles(&r, &["03", "12", "13"]));
}

#[test]
fn larger_sets_round_trip() {
    for (set, hand, boneyard) in [(6u8, 7u8, 14u8), (9, 7, 41), (1, 1, 1), (2, 3, 0)] {
        let r = rules(set, hand, boneyard);
        let n = r.starting_states();
        for k in 0..200u64 {
            let s = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7) % n;
            let d = deal(&r, s);
            assert_eq!(d.index(&r), Some(s), "double-{set} state {s}");
            assert_eq!(d.player.count_ones(), hand as u32);
            assert_eq!(d.boneyard.count_ones(), boneyard as u32);
        }
        assert_eq!(deal(&r, n - 1).index(&r), Some(n - 1));
    }
}

#[test]
fn bad_deals_have_no_index() {
    let r = thesis();
    let d = deal(&r, 5);
    let overlapping = Deal { target: d.player, ..d };
    assert_eq!(overlapping.index(&r), None);
    let short = Deal {
        boneyard: d.boneyard & (d.boneyard - 1),
        ..d
    };
    assert_eq!(short.index(&r), None);
}
