//! The `rich_history` encoding: the rich encoding, then per seat and pip
//! the plays that had an open end of that pip (`offered`), covered one
//! (`onto`) and had one the tile played lacks (`declined`). Checked at
//! every node of random games of block, team and All Fives against counts
//! kept here from the rich encoding's own `ends` piece before each play.

use full::spiel::{CHANCE, Encoding, SpielState};
use full::{FullConfig, FullRules, Preset};

#[test]
fn the_history_pieces_count_what_each_seat_s_plays_showed() {
    let mut checked = 0;
    let mut declined_seen = 0;
    for config in [
        FullConfig::preset(Preset::Block),
        FullConfig::preset(Preset::Team),
        FullConfig::all_fives(2),
        FullConfig::all_fives(4),
    ] {
        let rules = FullRules::new(config).unwrap();
        let (seats, pips) = (rules.seats() as usize, rules.set() as usize + 1);
        for game in 0..8u64 {
            let mut rng = engine::seed::keyed_rng(14, game, 0, b"testhist", 0);
            let mut state = SpielState::new(rules.clone(), 0);
            let rich = state.encoding_size(Encoding::Rich);
            let pieces = state.encoding_pieces(Encoding::Rich);
            let ends_at: usize = pieces
                .iter()
                .take_while(|(n, _)| *n != "ends")
                .map(|(_, s)| s.iter().product::<usize>())
                .sum();
            assert_eq!(state.encoding_size(Encoding::RichHistory), rich + 3 * seats * pips);
            // [offered, onto, declined][seat][pip], kept here.
            let mut want = vec![vec![vec![0f32; pips]; seats]; 3];
            let (mut obs, mut hist) = (Vec::new(), Vec::new());
            while !state.is_terminal() {
                for seat in 0..rules.seats() {
                    state.encode(seat, Encoding::Rich, &mut obs);
                    state.encode(seat, Encoding::RichHistory, &mut hist);
                    assert_eq!(hist[..rich], obs[..], "the rich encoding comes first");
                    let flat: Vec<f32> = want.iter().flatten().flatten().copied().collect();
                    assert_eq!(hist[rich..], flat[..], "{config:?}, game {game}");
                    checked += 1;
                }
                if state.current_player() == CHANCE {
                    state.apply_chance(&mut rng).unwrap();
                    continue;
                }
                let seat = state.current_player() as usize;
                let legal = state.legal_actions();
                let a = legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize];
                // The open ends' pips, from the rich encoding's `ends`
                // (4 x (open, one-hot pip)).
                state.encode(seat as u8, Encoding::Rich, &mut obs);
                let open: Vec<usize> = (0..4)
                    .filter(|e| obs[ends_at + e * (pips + 1)] == 1.0)
                    .map(|e| {
                        (0..pips)
                            .find(|&p| obs[ends_at + e * (pips + 1) + 1 + p] == 1.0)
                            .unwrap()
                    })
                    .collect();
                let play = match &state {
                    SpielState::Open(_) => full::openspiel::action_from_id(&rules, a as u64)
                        .map(|(_, x)| (x.tile, (!open.is_empty()).then_some(x.cover as usize))),
                    SpielState::Fives(c) => (a < 4 * rules.tile_count() as u32).then(|| {
                        let x = full::fives_action_of(a);
                        let p = c.pos.as_ref().unwrap();
                        (
                            x.tile,
                            p.board.exposed(x.loc).map(usize::from).filter(|_| !open.is_empty()),
                        )
                    }),
                };
                if let Some((tile, onto)) = play {
                    let (x, y) = rules.pips(tile);
                    let mut offered: Vec<usize> = open.clone();
                    offered.sort_unstable();
                    offered.dedup();
                    for &p in &offered {
                        want[0][seat][p] += 1.0;
                        if p != x as usize && p != y as usize {
                            want[2][seat][p] += 1.0;
                            declined_seen += 1;
                        }
                    }
                    if let Some(p) = onto {
                        want[1][seat][p] += 1.0;
                    }
                }
                state.apply(a).unwrap();
            }
        }
    }
    assert!(
        checked > 2_000 && declined_seen > 100,
        "{checked} nodes, {declined_seen} declined"
    );
}
