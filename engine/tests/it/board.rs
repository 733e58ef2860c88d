use engine::{Action, ActionList, Board, Loc, Position, Rules, Seat};

use crate::{thesis, tiles};

fn tile(r: &Rules, name: &str) -> u8 {
    let b = name.as_bytes();
    r.tile_index(b[0] - b'0', b[1] - b'0').unwrap()
}

/// Plays `moves` ("33L", "23L", ...) on an empty board, checking the count and
/// defense after each against `expected` (count, defense).
fn check(moves: &[&str], expected: &[(u32, u32)]) -> Board {
    let r = thesis();
    let mut b = Board::default();
    for (m, &(count, defense)) in moves.iter().zip(expected) {
        let t = tile(&r, &m[..2]);
        let loc = Loc::from_letter(m.chars().nth(2).unwrap()).unwrap();
        assert!(b.accepts(&r, t, loc), "{m} should be legal");
        b.play(&r, t, loc);
        assert_eq!(
            (b.count(), b.defense()),
            (count, defense),
            "count and defense after {m} in {moves:?}"
        );
    }
    b
}

#[test]
fn rules_md_count_examples_spinner_first() {
    // (3|3) -> 6; (2|3) Left -> 2 + 6 = 8; (1|3) Right -> 2 + 1 = 3, Up/Down open
    // with pip 3; (0|3) Up -> 2 + 1 + 0 = 3.
    let b = check(&["33L", "23L", "13R", "03U"], &[(6, 3), (8, 2), (3, 1), (3, 0)]);
    assert!(b.up_down_open());
    assert_eq!(b.exposed(Loc::Down), Some(3));
    assert_eq!(b.exposed(Loc::Up), Some(0));
}

#[test]
fn rules_md_count_examples_spinner_on_an_arm() {
    // (1|2) -> 3; (2|2) Right -> 1 + 4 = 5 (the spinner); (2|3) Right -> 1 + 3 = 4,
    // and Up/Down open with pip 2.
    let b = check(&["12L", "22R", "23R"], &[(3, 2), (5, 2), (4, 1)]);
    assert!(b.up_down_open());
    assert_eq!(b.exposed(Loc::Up), Some(2));
    assert_eq!(b.exposed(Loc::Down), Some(2));
}

#[test]
fn up_and_down_wait_for_both_sides_of_a_centre_spinner() {
    let b = check(&["33L", "23L"], &[(6, 3), (8, 2)]);
    assert!(!b.up_down_open());
    assert_eq!(b.open_locations(), 2);
    // A spinner on the left arm opens only when a tile lies beyond it on that arm.
    let b = check(&["12L", "11L", "23R"], &[(3, 2), (2 + 2, 2), (2 + 3, 2)]);
    assert!(!b.up_down_open());
    let b = check(&["12L", "11L", "23R", "01L"], &[(3, 2), (4, 2), (5, 2), (3, 1)]);
    assert!(b.up_down_open());
    assert_eq!(b.exposed(Loc::Up), Some(1));
}

#[test]
fn later_doubles_are_ordinary_and_count_both_halves() {
    // (3|3) spinner; (1|3) Left, (0|3) Right open Up/Down; (1|1) Left is an ordinary double.
    check(&["33L", "13L", "03R", "11L"], &[(6, 3), (1 + 6, 2), (1, 1), (2, 1)]);
    // Up counts once played, a double there counts both halves.
    check(
        &["33L", "13L", "03R", "23U", "22U"],
        &[(6, 3), (7, 2), (1, 1), (3, 0), (1 + 4, 0)],
    );
}

#[test]
fn a_lone_non_double_shows_low_pip_left() {
    let r = thesis();
    let mut b = Board::default();
    b.play(&r, tile(&r, "13"), Loc::Left);
    assert_eq!(b.exposed(Loc::Left), Some(1));
    assert_eq!(b.exposed(Loc::Right), Some(3));
    assert_eq!((b.count(), b.defense()), (4, 2));
    assert!(!b.accepts(&r, tile(&r, "22"), Loc::Left));
    assert!(!b.accepts(&r, tile(&r, "23"), Loc::Up));
}

fn actions(pos: &Position, r: &Rules) -> Vec<String> {
    let mut list = ActionList::default();
    pos.actions(r, &mut list);
    list.as_slice()
        .iter()
        .map(|a| format!("{}{}", r.tile_name(a.tile), a.loc.letter()))
        .collect()
}

#[test]
fn legal_actions_are_in_canonical_order_without_removing_duplicates() {
    let r = thesis();
    let mut pos = Position {
        hands: [tiles(&r, &["03", "13", "23"]), tiles(&r, &["00"])],
        boneyard: 0,
        board: Board::default(),
        mover: Seat::Player,
        passes: 0,
    };
    pos.board.play(&r, tile(&r, "33"), Loc::Left);
    assert_eq!(actions(&pos, &r), ["03L", "03R", "13L", "13R", "23L", "23R"]);
    pos.play(
        &r,
        Action {
            tile: tile(&r, "13"),
            loc: Loc::Right,
        },
    );
    pos.mover = Seat::Player;
    assert_eq!(actions(&pos, &r), ["03L", "23L"]);
    pos.play(
        &r,
        Action {
            tile: tile(&r, "23"),
            loc: Loc::Left,
        },
    );
    pos.mover = Seat::Player;
    assert_eq!(actions(&pos, &r), ["03U", "03D"]);
}

#[test]
fn the_forced_lead_is_the_highest_double_then_the_heaviest_tile() {
    let r = thesis();
    let pos = Position::start(&r, &crate::deal(&r, 0));
    assert_eq!(pos.mover, Seat::Target);
    assert_eq!(actions(&pos, &r), ["33L"]);
    // Every double in the boneyard: the heaviest tile (2|3) leads and scores 5.
    let deal = engine::Deal {
        boneyard: tiles(&r, &["00", "11", "22", "33"]),
        player: tiles(&r, &["01", "02", "03"]),
        target: tiles(&r, &["12", "13", "23"]),
    };
    let mut pos = Position::start(&r, &deal);
    assert_eq!(pos.mover, Seat::Target);
    assert_eq!(actions(&pos, &r), ["23L"]);
    let step = pos.play(
        &r,
        Action {
            tile: tile(&r, "23"),
            loc: Loc::Left,
        },
    );
    assert_eq!((step.count_points, step.reward), (5, -5));
    // Equal pip sums: the higher pip wins, (2|5) over (3|4).
    let r6 = crate::rules(6, 1, 26);
    let deal = engine::Deal {
        player: tiles(&r6, &["25"]),
        target: tiles(&r6, &["34"]),
        boneyard: r6.all_tiles() & !tiles(&r6, &["25", "34"]),
    };
    let pos = Position::start(&r6, &deal);
    assert_eq!(pos.mover, Seat::Player);
}

#[test]
fn domino_and_blocked_scoring() {
    let r = thesis();
    // Player dominoes with (2|3) on (3|3): count 2 + 6 = 8, plus the target's 0 + 1 = 1 pips left.
    let mut pos = Position {
        hands: [tiles(&r, &["23"]), tiles(&r, &["01"])],
        boneyard: 0,
        board: Board::default(),
        mover: Seat::Player,
        passes: 0,
    };
    pos.board.play(&r, tile(&r, "33"), Loc::Left);
    let step = pos.play(
        &r,
        Action {
            tile: tile(&r, "23"),
            loc: Loc::Left,
        },
    );
    assert_eq!((step.count_points, step.reward, step.terminal), (0, 1, true));
    // Blocked: the player holds (1|1) = 2 pips, the target (0|0) = 0: the target scores 2.
    let mut pos = Position {
        hands: [tiles(&r, &["11"]), tiles(&r, &["00"])],
        boneyard: 0,
        board: Board::default(),
        mover: Seat::Player,
        passes: 0,
    };
    pos.board.play(&r, tile(&r, "33"), Loc::Left);
    let first = pos.pass(&r);
    assert!(!first.terminal);
    let second = pos.pass(&r);
    assert_eq!((second.reward, second.terminal), (-2, true));
}

/// Perft: the number of complete games (paths through every choice and draw)
/// and of distinct positions reachable from a deal. These totals change only
/// when the rules' behaviour changes.
fn perft(r: &Rules, pos: &Position, seen: &mut std::collections::HashSet<Position>) -> u64 {
    seen.insert(*pos);
    let mut list = ActionList::default();
    pos.actions(r, &mut list);
    if list.is_empty() {
        if pos.boneyard != 0 {
            return (0..r.tile_count())
                .filter(|t| pos.boneyard >> t & 1 == 1)
                .map(|t| {
                    let mut c = *pos;
                    c.draw(t);
                    perft(r, &c, seen)
                })
                .sum();
        }
        let mut c = *pos;
        return if c.pass(r).terminal { 1 } else { perft(r, &c, seen) };
    }
    list.as_slice()
        .iter()
        .map(|&a| {
            let mut c = *pos;
            if c.play(r, a).terminal { 1 } else { perft(r, &c, seen) }
        })
        .sum()
}

#[test]
fn perft_counts_of_fixed_deals() {
    let r = thesis();
    let mut got = Vec::new();
    for state in [0u64, 3, 3333, 4199] {
        let mut seen = std::collections::HashSet::new();
        let games = perft(&r, &Position::start(&r, &crate::deal(&r, state)), &mut seen);
        got.push((state, games, seen.len()));
    }
    assert_eq!(got, PERFT);
}

const PERFT: [(u64, u64, usize); 4] = [(0, 66, 37), (3, 452, 339), (3333, 4746, 1295), (4199, 430, 265)];
