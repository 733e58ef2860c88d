//! The line of play: open locations, the spinner, the count and the defense score
//! (docs/rules.md section 2).

use serde::{Deserialize, Serialize};

use crate::tiles::PipTable;

/// An open location on the board, in canonical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Loc {
    /// The left end of the line. The first tile of a game is always played
    /// here; a non-double lead shows its low pip on Left.
    Left = 0,
    /// The right end of the line; a non-double lead shows its high pip here.
    Right = 1,
    /// An arm off the spinner: open only once the spinner has a tile on both
    /// lateral sides, and then exposing the spinner's pip until played on.
    Up = 2,
    /// The arm opposite Up, opening with it on the same pip.
    Down = 3,
}

impl Loc {
    /// Every location in canonical order; a location's discriminant is its
    /// index here.
    pub const ALL: [Loc; 4] = [Loc::Left, Loc::Right, Loc::Up, Loc::Down];

    /// The location's letter in move tokens: `L`, `R`, `U` or `D`.
    pub fn letter(self) -> char {
        match self {
            Loc::Left => 'L',
            Loc::Right => 'R',
            Loc::Up => 'U',
            Loc::Down => 'D',
        }
    }

    /// The location of a move-token letter (`L`, `R`, `U` or `D`, uppercase
    /// only); `None` for any other character.
    pub fn from_letter(c: char) -> Option<Loc> {
        match c {
            'L' => Some(Loc::Left),
            'R' => Some(Loc::Right),
            'U' => Some(Loc::Up),
            'D' => Some(Loc::Down),
            _ => None,
        }
    }
}

/// One end of the line: the pip it exposes, whether its outermost tile is a
/// double, and whether a tile has been played on it (for Left/Right: beyond the
/// first tile; for Up/Down: at all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct End {
    pip: u8,
    double: bool,
    covered: bool,
}

impl End {
    #[inline]
    fn value(self) -> u32 {
        if self.double {
            2 * self.pip as u32
        } else {
            self.pip as u32
        }
    }
}

/// Where the spinner (the first double played) stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum Spinner {
    /// No double played yet.
    #[default]
    None,
    /// Laid as the first tile: Up/Down open once Left and Right are both covered.
    Center,
    /// Played at the end of the Left arm: Up/Down open once a tile lies beyond it.
    LeftArm,
    /// Played at the end of the Right arm.
    RightArm,
    /// Up and Down are open.
    Open,
}

/// The board: what the search needs to know of the line of play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Board {
    ends: [End; 4],
    tiles: u8,
    spinner: Spinner,
    spinner_pip: u8,
}

impl Board {
    /// Number of tiles on the board.
    #[inline]
    pub fn tile_count(&self) -> u8 {
        self.tiles
    }

    /// Whether no tile has been played yet (the next play is the lead).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tiles == 0
    }

    /// Whether Up and Down are open.
    #[inline]
    pub fn up_down_open(&self) -> bool {
        self.spinner == Spinner::Open
    }

    /// Number of open locations (0, 2 or 4).
    #[inline]
    pub fn open_locations(&self) -> usize {
        match (self.tiles, self.spinner) {
            (0, _) => 0,
            (_, Spinner::Open) => 4,
            _ => 2,
        }
    }

    /// The pip a location exposes, if it is open.
    #[inline]
    pub fn exposed(&self, loc: Loc) -> Option<u8> {
        ((loc as usize) < self.open_locations()).then(|| self.ends[loc as usize].pip)
    }

    /// The board count: the sum over exposed ends, a double at an end counting
    /// both halves, a lone tile counting its pips once, Up/Down only once played on.
    pub fn count(&self) -> u32 {
        match self.tiles {
            0 => 0,
            1 => {
                let l = self.ends[0];
                if l.double {
                    2 * l.pip as u32
                } else {
                    l.pip as u32 + self.ends[1].pip as u32
                }
            }
            _ => {
                let mut c = self.ends[0].value() + self.ends[1].value();
                if self.spinner == Spinner::Open {
                    for e in &self.ends[2..] {
                        if e.covered {
                            c += e.value();
                        }
                    }
                }
                c
            }
        }
    }

    /// The count [`play`](Self::play) of `tile` at `loc` would leave, without
    /// playing it (a legal play on a board with a tile or more; tested
    /// against `play` then [`count`](Self::count)).
    #[inline]
    pub fn count_after(&self, rules: &impl PipTable, tile: u8, loc: Loc) -> u32 {
        let (a, b) = rules.pips(tile);
        let q = a + b - self.ends[loc as usize].pip;
        self.count_beside(loc) + if a == b { 2 * q as u32 } else { q as u32 }
    }

    /// The count of a board with a tile or more, less what open location
    /// `loc` adds to it: a play there then adds what its new end shows (a
    /// double both halves), as [`count_after`](Self::count_after) does.
    #[inline]
    pub fn count_beside(&self, loc: Loc) -> u32 {
        let i = loc as usize;
        if self.tiles == 1 {
            // The lone tile's other end, then counted as an arm's end.
            return self.ends[1 - i].value();
        }
        let old = if i < 2 || self.ends[i].covered {
            self.ends[i].value()
        } else {
            0
        };
        self.count() - old
    }

    /// The count, and each open location's exposed pip and
    /// [`count_beside`](Self::count_beside) (the first
    /// [`open_locations`](Self::open_locations) entries), the count computed
    /// once.
    #[inline(always)]
    pub fn open_ends(&self) -> (u32, [(u8, u32); 4]) {
        let count = self.count();
        let mut out = [(0, 0); 4];
        for (i, o) in out.iter_mut().enumerate().take(self.open_locations()) {
            let e = self.ends[i];
            let rest = if self.tiles == 1 {
                self.ends[1 - i].value()
            } else if i < 2 || e.covered {
                count - e.value()
            } else {
                count
            };
            *o = (e.pip, rest);
        }
        (count, out)
    }

    /// Defense score: 4 minus the number of distinct pips over the open locations
    /// (Up/Down take part as soon as they open).
    pub fn defense(&self) -> u32 {
        let mut pips = 0u16;
        for e in &self.ends[..self.open_locations()] {
            pips |= 1 << e.pip;
        }
        4 - pips.count_ones()
    }

    /// Whether `tile` may be played at `loc`.
    #[inline]
    pub fn accepts(&self, rules: &impl PipTable, tile: u8, loc: Loc) -> bool {
        match self.exposed(loc) {
            Some(p) => {
                let (a, b) = rules.pips(tile);
                a == p || b == p
            }
            None => self.tiles == 0 && loc == Loc::Left,
        }
    }

    /// Plays `tile` at `loc`; the caller has checked legality.
    pub fn play(&mut self, rules: &impl PipTable, tile: u8, loc: Loc) {
        let (a, b) = rules.pips(tile);
        let double = a == b;
        if self.tiles == 0 {
            // A non-double shows its low pip on Left and its high pip on Right.
            self.ends[0] = End {
                pip: a,
                double,
                covered: false,
            };
            self.ends[1] = End {
                pip: b,
                double,
                covered: false,
            };
            self.tiles = 1;
            if double {
                self.spinner = Spinner::Center;
                self.spinner_pip = a;
            }
            return;
        }
        let i = loc as usize;
        let p = self.ends[i].pip;
        debug_assert!(a == p || b == p, "illegal play reached the board");
        self.ends[i] = End {
            pip: a + b - p,
            double,
            covered: true,
        };
        self.tiles += 1;
        let opens = match (self.spinner, loc) {
            (Spinner::None, Loc::Left) if double => {
                self.spinner = Spinner::LeftArm;
                self.spinner_pip = a;
                false
            }
            (Spinner::None, Loc::Right) if double => {
                self.spinner = Spinner::RightArm;
                self.spinner_pip = a;
                false
            }
            (Spinner::Center, Loc::Left | Loc::Right) => self.ends[0].covered && self.ends[1].covered,
            (Spinner::LeftArm, Loc::Left) | (Spinner::RightArm, Loc::Right) => true,
            _ => false,
        };
        if opens {
            self.spinner = Spinner::Open;
            let e = End {
                pip: self.spinner_pip,
                double: false,
                covered: false,
            };
            self.ends[2] = e;
            self.ends[3] = e;
        }
    }

    /// A compact code of everything about the board that matters for future
    /// play (fits in 31 bits). Facts that can no longer matter are left out so
    /// that transpositions meet.
    #[inline]
    pub fn code(&self) -> u64 {
        let end = |e: End| (e.pip as u64) | (e.double as u64) << 4 | (e.covered as u64) << 5;
        // Whether Left/Right are covered matters only while a centre spinner
        // waits to open; the number of tiles on the board follows from the hands.
        let lr = if self.spinner == Spinner::Center {
            0b11_1111
        } else {
            0b01_1111
        };
        let mut c = (end(self.ends[0]) & lr) | (end(self.ends[1]) & lr) << 6;
        let (kind, pip) = match self.spinner {
            Spinner::None => (0, 0),
            Spinner::Center => (1, self.spinner_pip),
            Spinner::LeftArm => (2, self.spinner_pip),
            Spinner::RightArm => (3, self.spinner_pip),
            Spinner::Open => {
                c |= end(self.ends[2]) << 12 | end(self.ends[3]) << 18;
                (4, 0)
            }
        };
        c | (kind as u64) << 24 | (pip as u64) << 27
    }
}
