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
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::InfoState, Encoding::Rich];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::InfoState => "info_state",
            Encoding::Rich => "rich",
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
            .ok_or_else(|| format!("unknown encoding {s:?}: expected \"info_state\" or \"rich\""))
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
        }
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
