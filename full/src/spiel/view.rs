//! What a player of an All-Fives state sees (docs/python.md): the
//! observation string and tensor (its hand and the table now), and the
//! information state (everything it saw, in order). A seat sees the tiles
//! dealt to it and drawn by it, every play, draw and pass, and at the end
//! of a hand every hand (the hand's points are counted face up), so an
//! earlier hand of a match is public.

use engine::{Loc, TileSet, bits};

use super::View;
use super::fives::{Event, FivesState};
use super::tensor::TensorOut;

impl FivesState {
    fn tile_name(&self, t: u8) -> String {
        let (a, b) = self.rules().pips(t);
        format!("{a}-{b}")
    }

    /// The tiles `player` holds now.
    pub fn hand_of(&self, player: u8) -> TileSet {
        match &self.pos {
            Some(p) => p.hands[player as usize],
            None => self.deal[player as usize],
        }
    }

    fn tiles_string(&self, set: TileSet) -> String {
        let names: Vec<String> = bits(set).map(|t| self.tile_name(t)).collect();
        format!("[{}]", names.join(" "))
    }

    /// The observation (or, with `perfect_recall`, information state) string.
    pub fn observation_string(&self, player: u8, view: View) -> String {
        let mut out = vec![format!("p{player}")];
        if view.private {
            out.push(format!("hand:{}", self.tiles_string(self.hand_of(player))));
        }
        if view.public {
            if view.perfect_recall {
                out.extend(self.record(player, view.private));
            } else {
                out.push(self.table_string());
            }
        }
        out.join(" ")
    }

    /// The table now: hand number, the board's open ends and count, points,
    /// hand sizes, the boneyard's size and who is to act.
    fn table_string(&self) -> String {
        let rules = self.rules();
        let seats = rules.seats() as usize;
        let sides = rules.sides() as usize;
        let mut s = format!("hand_no:{}", self.hand_no + 1);
        if let Some(p) = &self.pos {
            let ends: Vec<String> = Loc::ALL[..p.board.open_locations()]
                .iter()
                .map(|&l| match p.board.exposed(l) {
                    Some(pip) => format!("{}{pip}", l.letter()),
                    None => format!("{}-", l.letter()),
                })
                .collect();
            s += &format!(" ends:[{}] count:{}", ends.join(" "), p.board.count());
            s += &format!(" points:{:?}", &p.scores[..sides]);
            let sizes: Vec<u32> = p.hands[..seats].iter().map(|h| h.count_ones()).collect();
            s += &format!(" sizes:{sizes:?} boneyard:{}", p.boneyard.count_ones());
        }
        if self.to > 0 {
            s += &format!(" totals:{:?}", &self.totals[..sides]);
        }
        match self.current_player() {
            super::TERMINAL => s += " over",
            super::CHANCE => s += " chance",
            m => s += &format!(" to_act:p{m}"),
        }
        s
    }

    /// Every entry of the history as `player` saw it: `h2` opens hand 2;
    /// `deal:3-5` or `deal:?`, `p1:3-5R`, `p1:draw`, `drew:3-5` or `drew:?`,
    /// `p0:pass`.
    fn record(&self, player: u8, private: bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut hand = u32::MAX;
        for &(h, e) in &self.events {
            if h != hand {
                hand = h;
                out.push(format!("h{}", h + 1));
            }
            // A finished hand is face up.
            let sees = |seat: u8| (private && seat == player) || h < self.hand_no || self.over;
            out.push(match e {
                Event::Deal { seat, tile } if sees(seat) => format!("deal:{}", self.tile_name(tile)),
                Event::Deal { .. } => "deal:?".to_string(),
                Event::Play { seat, tile, loc } => format!("p{seat}:{}{}", self.tile_name(tile), loc.letter()),
                Event::Stuck { seat, .. } => format!("p{seat}:draw"),
                Event::Drawn { seat, tile } if sees(seat) => format!("drew:{}", self.tile_name(tile)),
                Event::Drawn { .. } => "drew:?".to_string(),
                Event::Pass { seat, .. } => format!("p{seat}:pass"),
            });
        }
        out
    }

    /// The tensor's pieces (name, shape) for `view`.
    pub fn tensor_pieces(&self, view: View) -> Vec<(&'static str, Vec<usize>)> {
        let rules = self.rules();
        let (seats, tiles) = (rules.seats() as usize, rules.tile_count() as usize);
        let mut pieces = vec![("player", vec![seats])];
        if view.private {
            pieces.push(("hand", vec![tiles]));
        }
        if view.public {
            pieces.push(("board", vec![tiles]));
            pieces.push(("ends", vec![4, rules.set() as usize + 2]));
            pieces.push(("sizes", vec![seats]));
            pieces.push(("boneyard", vec![1]));
            pieces.push(("points", vec![seats]));
            pieces.push(("totals", vec![seats]));
            pieces.push(("to_act", vec![seats]));
            if view.perfect_recall {
                pieces.push(("played_by", vec![seats, tiles]));
                pieces.push(("voids", vec![seats, tiles]));
            }
        }
        if view.private && view.perfect_recall {
            pieces.push(("drawn", vec![tiles]));
        }
        pieces
    }

    /// The tensor of `player` (pieces as [`Self::tensor_pieces`]).
    pub fn tensor(&self, player: u8, view: View) -> Vec<f32> {
        let mut out = Vec::new();
        self.tensor_into(player, view, &mut out);
        out
    }

    /// [`Self::tensor`] appended to `out`: no allocation once a vector
    /// `out` has room for a tensor; a slice is written in place (a vector
    /// environment's step).
    pub fn tensor_into(&self, player: u8, view: View, w: &mut impl TensorOut) {
        let rules = self.rules();
        let (seats, tiles) = (rules.seats() as usize, rules.tile_count() as usize);
        w.one_hot(seats, Some(player as usize));
        if view.private {
            w.set(tiles, self.hand_of(player));
        }
        if view.public {
            let p = self.pos.as_ref();
            w.set(tiles, p.map_or(0, |p| p.on_board(rules)));
            for &l in &Loc::ALL {
                let open = p.filter(|p| Loc::ALL[..p.board.open_locations()].contains(&l));
                w.value(open.is_some() as u8 as f32);
                let pip = open.and_then(|p| p.board.exposed(l)).map(usize::from);
                w.one_hot(rules.set() as usize + 1, pip);
            }
            for s in 0..seats {
                w.value(p.map_or(self.deal[s], |p| p.hands[s]).count_ones() as f32);
            }
            w.value(p.map_or(0, |p| p.boneyard.count_ones()) as f32);
            for s in 0..seats {
                w.value(p.map_or(0, |p| p.scores[s]) as f32);
            }
            for s in 0..seats {
                w.value(self.totals[s] as f32);
            }
            let mover = usize::try_from(self.current_player()).ok();
            w.one_hot(seats, mover);
            if view.perfect_recall {
                for &set in &self.hand_played[..seats] {
                    w.set(tiles, set);
                }
                let (void, _) = self.seen.voids();
                for &v in &void[..seats] {
                    w.set(tiles, if p.is_some() { v } else { 0 });
                }
            }
        }
        if view.private && view.perfect_recall {
            w.set(tiles, self.hand_drawn[player as usize]);
        }
    }
}
