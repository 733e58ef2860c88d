//! Seats decided outside muggins (`FullAgent::External`, the agent
//! protocol's core): what they are shown and how a bad answer ends the
//! game; and block's PIMC, which decides from the seat's own view.

use engine::PlayerEngine;
use engine::TileSet;
use full::{
    ExternalSeats, FullAgent, FullRules, FullTarget, MAX_SEATS, MatchKeys, MatchOptions, Preset, SearchSettings,
    SeatView, deal_from_index, play_match_external, play_open_hand, play_open_hand_external,
};

/// Plays the first legal action, or `bad` on its `n`-th decision; records
/// what it was shown.
#[derive(Debug, Default)]
struct Scripted {
    bad: Option<(usize, u32)>,
    asked: usize,
    shown: Vec<(u8, TileSet, Vec<u32>, Vec<u32>)>,
}

impl ExternalSeats for Scripted {
    fn decide(&mut self, v: &SeatView) -> Result<u32, String> {
        self.asked += 1;
        self.shown.push((v.seat, v.tiles, v.history.to_vec(), v.legal.to_vec()));
        match self.bad {
            Some((n, id)) if n == self.asked => Ok(id),
            _ => Ok(v.legal[0]),
        }
    }
}

fn searcher() -> FullAgent {
    FullAgent::Search(SearchSettings::fixed(PlayerEngine::Expectimax, 2))
}

#[test]
fn an_external_seat_sees_its_own_tiles_and_the_public_history() {
    let rules = FullRules::preset(Preset::AllFives);
    let agents = [searcher(), FullAgent::External, searcher(), FullAgent::External];
    let mut ext = Scripted::default();
    let keys = MatchKeys {
        seed: 1,
        deal: 12_345,
        repeat: 1,
    };
    let m = play_match_external(&rules, keys, &agents, 0, &MatchOptions::default(), &mut ext)
        .unwrap()
        .expect("no forfeit");
    assert!(ext.asked > 0);
    let hand = &m.hands[0];
    for (seat, tiles, history, legal) in &ext.shown {
        assert_eq!(*seat, 1);
        // Its tiles: dealt to it, never another seat's.
        assert_eq!(tiles & hand.hands[0], 0);
        // Every legal id is a play of one of its tiles (4 t + location).
        assert!(legal.iter().all(|&id| tiles >> (id / 4) & 1 == 1), "{legal:?}");
        // The history's draws show no tile: the draw id, 4 T.
        assert!(history.iter().all(|&id| id <= 4 * 28 + 1));
    }
    // The same match without the external seat's choices would differ only
    // where it chose: the first legal play, as scripted.
    assert!(!hand.moves.is_empty());
}

#[test]
fn an_illegal_answer_forfeits_the_game_naming_the_seat_and_the_id() {
    let rules = FullRules::preset(Preset::AllFives);
    let agents = [searcher(), FullAgent::External, searcher(), searcher()];
    let mut ext = Scripted {
        bad: Some((1, 9999)),
        ..Scripted::default()
    };
    let keys = MatchKeys {
        seed: 1,
        deal: 777,
        repeat: 1,
    };
    let f = play_match_external(&rules, keys, &agents, 0, &MatchOptions::default(), &mut ext)
        .unwrap()
        .expect_err("a forfeit");
    assert_eq!((f.seat, f.reason.as_str()), (1, "illegal action 9999"));

    let rules = FullRules::preset(Preset::Block);
    let hands = deal_from_index(&rules, 4242).unwrap();
    let mut rngs = MatchKeys {
        seed: 1,
        deal: 4242,
        repeat: 1,
    }
    .seat_streams();
    let mut ext = Scripted {
        bad: Some((2, 5)),
        ..Scripted::default()
    };
    let agents = [searcher(), FullAgent::External, searcher(), searcher()];
    let r = play_open_hand_external(&rules, hands, &agents, &mut rngs, Some(&mut ext));
    let f = r.expect_err("a forfeit");
    assert_eq!((f.seat, f.reason.as_str()), (1, "illegal action 5"));
}

/// Block deals `a` and `b` as seat 0 sees them: the same own hand, other
/// tiles for seat 1.
fn twin_deals(rules: &FullRules, index: u64) -> ([TileSet; MAX_SEATS], [TileSet; MAX_SEATS]) {
    let a = deal_from_index(rules, index).unwrap();
    let mut b = a;
    let unseen: Vec<u8> = (0..28).filter(|&t| (a[0] | a[1]) >> t & 1 == 0).collect();
    // Seat 1 gets seven of the undealt tiles instead.
    b[1] = unseen[..7].iter().fold(0, |m, &t| m | 1 << t);
    (a, b)
}

#[test]
fn block_pimc_decides_from_the_seats_own_view() {
    let rules = FullRules::preset(Preset::Block);
    let pimc = FullAgent::Search(SearchSettings {
        worlds: 8,
        belief: engine::Belief::Constraints,
        ..SearchSettings::fixed(PlayerEngine::MStar, 3)
    });
    let peeking = FullAgent::Search(SearchSettings::fixed(PlayerEngine::MStar, 3));
    let random = FullAgent::Fixed(FullTarget::Thesis(engine::TargetKind::Random));
    let mut peeking_differs = 0;
    for index in [11, 2_222, 33_333, 444_444, 5_555_555, 66_666_666] {
        let (a, b) = twin_deals(&rules, index);
        let first = |hands, agent| {
            let mut rngs = MatchKeys {
                seed: 3,
                deal: index,
                repeat: 1,
            }
            .seat_streams();
            play_open_hand(&rules, hands, &[agent, random, agent, random], &mut rngs).plays[0]
        };
        // The same view, the same first play.
        assert_eq!(first(a, pimc), first(b, pimc), "deal {index}");
        peeking_differs += (first(a, peeking) != first(b, peeking)) as u32;
    }
    // A search that sees the other hand does tell the twins apart.
    assert!(peeking_differs > 0);
}
