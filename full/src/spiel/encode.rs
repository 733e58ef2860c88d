//! What a learner sees of a state: the observation encodings of the
//! reinforcement-learning environments (docs/rl.md), one definition for the
//! Python environments and for anything in Rust that reads the same input
//! (a network in an engine). Versioned: a change to what an encoding writes
//! is a new [`ENCODING_VERSION`].
//!
//! - [`Encoding::InfoState`]: OpenSpiel's information-state tensor, as
//!   `information_state_tensor` gives it (for block and team, OpenSpiel's
//!   own, value for value).
//! - [`Encoding::Rich`]: the same facts for every preset, laid out for a
//!   network: the observer, its hand, the board, who played what, the tiles
//!   each seat has shown it lacks (voids), the open ends, the unseen tiles
//!   of each suit, the hand sizes, the boneyard, the points. Seats are the
//!   table's (absolute); `player` says which one observes.
//! - [`Encoding::RichHistory`]: the rich encoding, then what each seat's
//!   plays in this hand showed, per seat and pip: how many of its plays had
//!   an open end of that pip (`offered`), covered one (`onto`), and had one
//!   while the tile played has no such pip (`declined`), the evidence
//!   beyond the voids that a belief reads from the plays (docs/train.md,
//!   "A belief head").

use std::fmt;
use std::str::FromStr;

use engine::{Loc, TileSet};

use super::tensor::{SliceOut, TensorOut};

use super::{SpielState, View};
use crate::rules::{FullRules, MAX_SEATS};

/// The version of what the encodings write; bumped by any change to them.
pub const ENCODING_VERSION: u32 = 1;

/// An observation encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    /// OpenSpiel's information-state tensor.
    #[default]
    InfoState,
    /// The facts every preset shares, with named pieces (this module's doc).
    Rich,
    /// The rich encoding and what each seat's plays showed (this module's doc).
    RichHistory,
}

impl Encoding {
    pub const ALL: [Encoding; 3] = [Encoding::InfoState, Encoding::Rich, Encoding::RichHistory];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::InfoState => "info_state",
            Encoding::Rich => "rich",
            Encoding::RichHistory => "rich_history",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown encoding {s:?}: expected \"info_state\", \"rich\" or \"rich_history\""))
    }
}

const INFO_STATE: View = View {
    perfect_recall: true,
    private: true,
    public: true,
};

/// The rich encoding's pieces: (name, shape) in order.
fn rich_pieces(rules: &FullRules) -> Vec<(&'static str, Vec<usize>)> {
    let (seats, tiles, pips) = (
        rules.seats() as usize,
        rules.tile_count() as usize,
        rules.set() as usize + 1,
    );
    vec![
        ("player", vec![seats]),
        ("hand", vec![tiles]),
        ("board", vec![tiles]),
        ("played_by", vec![seats, tiles]),
        ("voids", vec![seats, tiles]),
        ("ends", vec![4, pips + 1]),
        ("suits_unseen", vec![pips]),
        ("sizes", vec![seats]),
        ("boneyard", vec![1]),
        ("points", vec![seats]),
        ("totals", vec![seats]),
        ("to_act", vec![seats]),
    ]
}

/// The pieces `rich_history` adds to the rich encoding.
fn history_pieces(rules: &FullRules) -> [(&'static str, Vec<usize>); 3] {
    let (seats, pips) = (rules.seats() as usize, rules.set() as usize + 1);
    [
        ("offered", vec![seats, pips]),
        ("onto", vec![seats, pips]),
        ("declined", vec![seats, pips]),
    ]
}

/// What each seat's plays in this hand showed: per seat and pip, the
/// plays with an open end of that pip, those that covered one, and those
/// with one whose tile has no such pip.
#[derive(Default)]
struct PlayFacts {
    offered: [[u8; MAX_PIPS]; MAX_SEATS],
    onto: [[u8; MAX_PIPS]; MAX_SEATS],
    declined: [[u8; MAX_PIPS]; MAX_SEATS],
}

/// Pips a set may have (double-15).
const MAX_PIPS: usize = 16;

impl PlayFacts {
    /// One play: `seat` put the tile `pips` on an end of pip `onto` (none
    /// for the opening) while the ends' pips were `open` (a bit a pip).
    fn add(&mut self, seat: u8, open: u16, pips: (u8, u8), onto: Option<u8>) {
        let s = seat as usize;
        for p in 0..MAX_PIPS {
            if open >> p & 1 == 1 {
                self.offered[s][p] = self.offered[s][p].saturating_add(1);
                if p as u8 != pips.0 && p as u8 != pips.1 {
                    self.declined[s][p] = self.declined[s][p].saturating_add(1);
                }
            }
        }
        if let Some(p) = onto {
            self.onto[s][p as usize] = self.onto[s][p as usize].saturating_add(1);
        }
    }
}

/// What the rich encoding writes, gathered from either state type.
#[derive(Default)]
struct Facts {
    hand: TileSet,
    board: TileSet,
    played_by: [TileSet; MAX_SEATS],
    voids: [TileSet; MAX_SEATS],
    /// The pip of each open end.
    ends: [Option<u8>; 4],
    sizes: [u32; MAX_SEATS],
    boneyard: u32,
    /// Points of each seat's side in this hand, and in the hands before.
    points: [u32; MAX_SEATS],
    totals: [u32; MAX_SEATS],
    to_act: Option<usize>,
}

impl SpielState {
    /// The pieces of `encoding`: (name, shape) in order.
    pub fn encoding_pieces(&self, encoding: Encoding) -> Vec<(&'static str, Vec<usize>)> {
        match encoding {
            Encoding::InfoState => self.tensor_pieces(INFO_STATE),
            Encoding::Rich => rich_pieces(self.rules()),
            Encoding::RichHistory => {
                let mut pieces = rich_pieces(self.rules());
                pieces.extend(history_pieces(self.rules()));
                pieces
            }
        }
    }

    /// The number of values `encoding` writes.
    pub fn encoding_size(&self, encoding: Encoding) -> usize {
        self.encoding_pieces(encoding)
            .iter()
            .map(|(_, shape)| shape.iter().product::<usize>())
            .sum()
    }

    /// What a model must be to play this game through `encoding`: its
    /// game, encoding and version, widths and belief head's shape (what
    /// `net::Model::check` compares).
    pub fn model_expect(&self, encoding: Encoding) -> net::Expect<'static> {
        net::Expect {
            game: self.rules().config().preset.name(),
            encoding: encoding.name(),
            encoding_version: ENCODING_VERSION,
            inputs: self.encoding_size(encoding),
            actions: self.action_count() as usize,
            belief: net::BeliefShape {
                tiles: self.rules().tile_count() as usize,
                holders: self.belief_holders(),
            },
        }
    }

    /// `player`'s observation under `encoding`, written over `out` (which
    /// is cleared first).
    pub fn encode(&self, player: u8, encoding: Encoding, out: &mut Vec<f32>) {
        out.clear();
        self.encode_to(player, encoding, out);
    }

    /// `player`'s observation under `encoding`, written in place over `out`,
    /// which must be [`Self::encoding_size`] long (a row of a vector
    /// environment's array: no copy through a scratch vector).
    pub fn encode_slice(&self, player: u8, encoding: Encoding, out: &mut [f32]) {
        let mut w = SliceOut::new(out);
        self.encode_to(player, encoding, &mut w);
        w.finish();
    }

    fn encode_to(&self, player: u8, encoding: Encoding, out: &mut impl TensorOut) {
        match encoding {
            Encoding::InfoState => match self {
                SpielState::Open(c) => c.tensor_into(player, INFO_STATE, out),
                SpielState::Fives(c) => c.tensor_into(player, INFO_STATE, out),
            },
            Encoding::Rich => write_rich(self.rules(), player, &self.facts(player), out),
            Encoding::RichHistory => {
                write_rich(self.rules(), player, &self.facts(player), out);
                write_history(self.rules(), &self.play_facts(), out);
            }
        }
    }

    /// What every seat's plays in this hand showed (public: the same from
    /// every seat's side).
    fn play_facts(&self) -> PlayFacts {
        let mut f = PlayFacts::default();
        let rules = self.rules();
        match self {
            SpielState::Open(c) => {
                // Block and team: two ends, replayed from the plays.
                let mut ends: Option<[u8; 2]> = None;
                for &(seat, a) in &c.plays {
                    let (x, y) = rules.pips(a.tile);
                    match ends.as_mut() {
                        None => {
                            f.add(seat, 0, (x, y), None);
                            ends = Some([x, y]);
                        }
                        Some(e) => {
                            f.add(seat, 1 << e[0] | 1 << e[1], (x, y), Some(a.cover));
                            let other = if x == a.cover { y } else { x };
                            let at = usize::from(e[0] != a.cover);
                            e[at] = other;
                        }
                    }
                }
            }
            SpielState::Fives(c) => {
                for (before, a, _) in c.seen.plays() {
                    let open = Loc::ALL[..before.board.open_locations()]
                        .iter()
                        .filter_map(|&l| before.board.exposed(l))
                        .fold(0u16, |m, p| m | 1 << p);
                    let onto = if open == 0 { None } else { before.board.exposed(a.loc) };
                    f.add(before.mover, open, rules.pips(a.tile), onto);
                }
            }
        }
        f
    }

    fn facts(&self, player: u8) -> Facts {
        let mut f = Facts {
            hand: self.hand_of(player),
            to_act: usize::try_from(self.current_player()).ok(),
            ..Facts::default()
        };
        let seats = self.rules().seats() as usize;
        for s in 0..seats {
            f.sizes[s] = self.hand_of(s as u8).count_ones();
        }
        match self {
            SpielState::Open(c) => {
                for &(s, a) in &c.plays {
                    f.played_by[s as usize] |= 1 << a.tile;
                    f.board |= 1 << a.tile;
                }
                f.voids = c.void;
                if let Some(p) = &c.pos {
                    for (e, &pip) in f.ends.iter_mut().zip(&p.ends[..p.open as usize]) {
                        *e = Some(pip);
                    }
                    f.boneyard = p.boneyard.count_ones();
                }
            }
            SpielState::Fives(c) => {
                let rules = c.rules();
                f.played_by = c.hand_played;
                if let Some(p) = &c.pos {
                    f.board = p.on_board(rules);
                    f.voids = c.seen.voids().0;
                    for (e, &l) in f.ends.iter_mut().zip(&Loc::ALL) {
                        *e = p.board.exposed(l);
                    }
                    f.boneyard = p.boneyard.count_ones();
                    for s in 0..seats {
                        f.points[s] = p.scores[rules.side(s as u8) as usize];
                    }
                }
                for s in 0..seats {
                    f.totals[s] = c.totals[rules.side(s as u8) as usize];
                }
            }
        }
        f
    }
}

fn write_rich(rules: &FullRules, player: u8, f: &Facts, out: &mut impl TensorOut) {
    let (seats, tiles, pips) = (rules.seats() as usize, rules.tile_count() as usize, rules.set() + 1);
    out.one_hot(seats, Some(player as usize));
    out.set(tiles, f.hand);
    out.set(tiles, f.board);
    for &set in &f.played_by[..seats] {
        out.set(tiles, set);
    }
    for &set in &f.voids[..seats] {
        out.set(tiles, set);
    }
    for &end in &f.ends {
        out.value(end.is_some() as u8 as f32);
        out.one_hot(pips as usize, end.map(usize::from));
    }
    let unseen = rules.all_tiles() & !f.hand & !f.board;
    for p in 0..pips {
        out.value((unseen & rules.pip_mask(p)).count_ones() as f32);
    }
    for &n in &f.sizes[..seats] {
        out.value(n as f32);
    }
    out.value(f.boneyard as f32);
    for &n in &f.points[..seats] {
        out.value(n as f32);
    }
    for &n in &f.totals[..seats] {
        out.value(n as f32);
    }
    out.one_hot(seats, f.to_act);
}

fn write_history(rules: &FullRules, f: &PlayFacts, out: &mut impl TensorOut) {
    let (seats, pips) = (rules.seats() as usize, rules.set() as usize + 1);
    for counts in [&f.offered, &f.onto, &f.declined] {
        for row in &counts[..seats] {
            for &n in &row[..pips] {
                out.value(n as f32);
            }
        }
    }
}
