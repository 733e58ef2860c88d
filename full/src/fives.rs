//! A hand of All Fives for 2 to 4 seats: the thesis's board (spinner, four
//! arms, the count), drawing until able to play, passing, and the hand's
//! scoring; sides are seats or partnerships.

use engine::{Action, ActionList};
use engine::{Board, Loc};
use engine::{TileSet, bit, bits};

use super::position::HandEnd;
use super::rules::{FivesBlocked, FivesLead, FullRules, MAX_SEATS};

/// The All-Fives action id of a play (docs/python.md, docs/agents.md):
/// `4 tile + location` (Left 0, Right 1, Up 2, Down 3).
pub fn fives_play_id(a: Action) -> u32 {
    let loc = Loc::ALL.iter().position(|&l| l == a.loc).expect("a location") as u32;
    4 * a.tile as u32 + loc
}

/// The play of an All-Fives id below the draw's.
pub fn fives_action_of(id: u32) -> Action {
    Action {
        tile: (id / 4) as u8,
        loc: Loc::ALL[(id % 4) as usize],
    }
}

/// The All-Fives id of a draw: `4 T` for a set of `T` tiles.
pub fn fives_draw_id(rules: &FullRules) -> u32 {
    4 * rules.tile_count() as u32
}

/// The All-Fives id of a pass: `4 T + 1`.
pub fn fives_pass_id(rules: &FullRules) -> u32 {
    fives_draw_id(rules) + 1
}

/// `x` rounded to the nearest multiple of 5 (a remainder of 3 or 4 rounds up).
pub fn round_to_five(x: u32) -> u32 {
    (x + 2) / 5 * 5
}

/// Who opens a hand, and with which tile when the lead rule forces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opening {
    /// The seat that plays first.
    pub leader: u8,
    /// The tile it must open with (the highest double, or the heaviest tile
    /// when no double was dealt); `None`: any tile.
    pub forced: Option<u8>,
}

impl Opening {
    /// The opening of a hand dealt as `hands`, after a previous hand that
    /// ended as `previous` (`None` for a match's first hand).
    pub fn of(rules: &FullRules, hands: &[TileSet; MAX_SEATS], previous: Option<HandEnd>) -> Opening {
        if let (FivesLead::Winner, Some(HandEnd::Domino(s))) = (rules.config().lead, previous) {
            return Opening {
                leader: s,
                forced: None,
            };
        }
        // The highest double dealt; with none, the heaviest tile (pip sum,
        // then high pip: the higher tile index among equal sums).
        let mut best: Option<(u8, u8, (bool, u8, u8))> = None;
        for seat in 0..rules.seats() {
            for t in bits(hands[seat as usize]) {
                let (a, b) = rules.pips(t);
                let key = (a == b, a + b, b);
                if best.is_none_or(|(_, _, k)| key > k) {
                    best = Some((seat, t, key));
                }
            }
        }
        let (leader, tile, _) = best.expect("every seat holds tiles");
        Opening {
            leader,
            forced: Some(tile),
        }
    }
}

/// A position of one All-Fives hand. `Copy`, fixed size, no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FivesPosition {
    /// Each seat's tiles (seats beyond the table's are empty).
    pub hands: [TileSet; MAX_SEATS],
    /// Tiles not in any hand nor on the board.
    pub boneyard: TileSet,
    /// The line of play (the thesis's board: spinner, arms, count).
    pub board: Board,
    /// The seat to move.
    pub mover: u8,
    /// Points each side made in this hand so far (index: side).
    pub scores: [u32; MAX_SEATS],
    /// Passes since the last play; every seat passing in turn blocks the hand.
    pub passes: u8,
    /// The tile the opening must be, until it is played.
    pub forced: Option<u8>,
    /// Set once the hand is over.
    pub end: Option<HandEnd>,
}

/// What a move did to the scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scored {
    /// Points of the count after a play (0 unless a positive multiple of 5).
    pub count_points: u32,
    /// Points the hand's end gave (domino or blocked), to `end_side`.
    pub end_points: u32,
    /// The side that scored the end points.
    pub end_side: Option<u8>,
}

impl FivesPosition {
    /// A hand dealt as `hands` (the rest is the boneyard), opening as `opening`.
    pub fn deal(rules: &FullRules, hands: [TileSet; MAX_SEATS], opening: Opening) -> FivesPosition {
        let dealt = hands.iter().fold(0, |a, h| a | h);
        FivesPosition {
            hands,
            boneyard: rules.all_tiles() & !dealt,
            board: Board::default(),
            mover: opening.leader,
            scores: [0; MAX_SEATS],
            passes: 0,
            forced: opening.forced,
            end: None,
        }
    }

    /// The mover's legal plays in canonical order (tile, then Left, Right,
    /// Up, Down); empty when it must draw or pass, or the hand is over.
    pub fn actions(&self, rules: &FullRules, out: &mut ActionList) {
        out.clear();
        if self.end.is_some() {
            return;
        }
        if self.board.is_empty() {
            match self.forced {
                Some(t) => out.push(Action {
                    tile: t,
                    loc: Loc::Left,
                }),
                None => {
                    for t in bits(self.hands[self.mover as usize]) {
                        out.push(Action {
                            tile: t,
                            loc: Loc::Left,
                        });
                    }
                }
            }
            return;
        }
        let open = self.board.open_locations();
        let mut exposed = [u8::MAX; 4];
        let mut matching = 0;
        for (e, &loc) in exposed.iter_mut().zip(&Loc::ALL[..open]) {
            *e = self.board.exposed(loc).expect("an open location exposes a pip");
            matching |= rules.pip_mask(*e);
        }
        for t in bits(self.hands[self.mover as usize] & matching) {
            let (a, b) = rules.pips(t);
            for (&e, &loc) in exposed[..open].iter().zip(&Loc::ALL) {
                if e == a || e == b {
                    out.push(Action { tile: t, loc });
                }
            }
        }
    }

    /// Whether `seat` holds a tile that plays on the board.
    pub fn can_play(&self, rules: &FullRules, seat: u8) -> bool {
        if self.board.is_empty() {
            return self.hands[seat as usize] != 0;
        }
        let open = self.board.open_locations();
        let mut pips = 0;
        for &loc in &Loc::ALL[..open] {
            if let Some(p) = self.board.exposed(loc) {
                pips |= rules.pip_mask(p);
            }
        }
        self.hands[seat as usize] & pips != 0
    }

    /// Whether the mover, having no play, must draw (the boneyard holds more
    /// than the tiles kept back).
    pub fn must_draw(&self, rules: &FullRules) -> bool {
        self.end.is_none()
            && !self.can_play(rules, self.mover)
            && self.boneyard.count_ones() > rules.config().keep as u32
    }

    /// Whether the mover, with no play and nothing to draw, must pass.
    pub fn must_pass(&self, rules: &FullRules) -> bool {
        self.end.is_none()
            && !self.can_play(rules, self.mover)
            && self.boneyard.count_ones() <= rules.config().keep as u32
    }

    /// The mover draws `tile` from the boneyard (a chance event).
    pub fn draw(&mut self, tile: u8) {
        debug_assert!(self.boneyard & bit(tile) != 0, "tile {tile} is not in the boneyard");
        self.boneyard &= !bit(tile);
        self.hands[self.mover as usize] |= bit(tile);
    }

    /// Makes a legal play: the count scores for the mover's side when it is
    /// a positive multiple of 5; emptying the hand ends it with a domino.
    pub fn play(&mut self, rules: &FullRules, a: Action) -> Scored {
        let me = self.mover;
        debug_assert!(
            self.hands[me as usize] & bit(a.tile) != 0,
            "{a:?} is not in the mover's hand"
        );
        self.hands[me as usize] &= !bit(a.tile);
        self.board.play(rules, a.tile, a.loc);
        self.forced = None;
        self.passes = 0;
        let count = self.board.count();
        let mut scored = Scored::default();
        if count > 0 && count.is_multiple_of(5) {
            self.scores[rules.side(me) as usize] += count;
            scored.count_points = count;
        }
        if self.hands[me as usize] == 0 {
            self.end = Some(HandEnd::Domino(me));
            let side = rules.side(me);
            let mut pips = 0;
            for s in 0..rules.seats() {
                if rules.side(s) != side {
                    pips += rules.pip_total(self.hands[s as usize]);
                }
            }
            let points = self.end_points(rules, pips);
            self.scores[side as usize] += points;
            scored.end_points = points;
            scored.end_side = Some(side);
            return scored;
        }
        self.mover = (me + 1) % rules.seats();
        scored
    }

    /// The mover passes (it has no play and nothing it may draw); when every
    /// seat has passed in turn the hand is blocked and scored.
    pub fn pass(&mut self, rules: &FullRules) -> Scored {
        self.passes += 1;
        if self.passes < rules.seats() {
            self.mover = (self.mover + 1) % rules.seats();
            return Scored::default();
        }
        self.end = Some(HandEnd::Blocked);
        let mut side_pips = [0u32; MAX_SEATS];
        for s in 0..rules.seats() {
            side_pips[rules.side(s) as usize] += rules.pip_total(self.hands[s as usize]);
        }
        let sides = &side_pips[..rules.sides() as usize];
        let low = *sides.iter().min().expect("two sides at least");
        let lows = sides.iter().filter(|&&p| p == low).count();
        if lows != 1 {
            return Scored::default();
        }
        let w = sides.iter().position(|&p| p == low).expect("found above");
        let raw: u32 = match rules.config().blocked {
            FivesBlocked::Opponents => sides.iter().sum::<u32>() - low,
            FivesBlocked::Difference => sides.iter().map(|&p| p - low).sum(),
        };
        let points = self.end_points(rules, raw);
        self.scores[w] += points;
        Scored {
            count_points: 0,
            end_points: points,
            end_side: Some(w as u8),
        }
    }

    fn end_points(&self, rules: &FullRules, raw: u32) -> u32 {
        if rules.config().round { round_to_five(raw) } else { raw }
    }

    /// The mover, who cannot play, draws a uniformly random tile of the
    /// boneyard (while it holds more than the tiles kept back) or passes.
    pub fn draw_or_pass(&mut self, rules: &FullRules, rng: &mut impl rand_core::RngCore) {
        let left = self.boneyard.count_ones();
        if left > rules.config().keep as u32 {
            let mut b = self.boneyard;
            for _ in 0..engine::seed::below_u32(rng, left) {
                b &= b - 1;
            }
            self.draw(b.trailing_zeros() as u8);
        } else {
            self.pass(rules);
        }
    }

    /// Tiles on the board.
    pub fn on_board(&self, rules: &FullRules) -> TileSet {
        let held = self.hands.iter().fold(self.boneyard, |a, h| a | h);
        rules.all_tiles() & !held
    }
}

/// Perft of All Fives: the positions reached from `pos` in exactly `depth`
/// moves, where a move is a play, a draw (each boneyard tile a branch) or a
/// pass, counting hand ends before `depth` as leaves. A checksum of move
/// generation and of making moves (the search benchmark's node count).
pub fn fives_perft(rules: &FullRules, pos: &FivesPosition, depth: u8) -> u64 {
    if depth == 0 || pos.end.is_some() {
        return 1;
    }
    if !pos.can_play(rules, pos.mover) {
        if pos.must_pass(rules) {
            let mut next = *pos;
            next.pass(rules);
            return fives_perft(rules, &next, depth - 1);
        }
        return bits(pos.boneyard)
            .map(|t| {
                let mut next = *pos;
                next.draw(t);
                fives_perft(rules, &next, depth - 1)
            })
            .sum();
    }
    let mut list = ActionList::default();
    pos.actions(rules, &mut list);
    list.as_slice()
        .iter()
        .map(|&a| {
            let mut next = *pos;
            next.play(rules, a);
            fives_perft(rules, &next, depth - 1)
        })
        .sum()
}
