//! The rules of the full game: which preset, the set, the seats and their
//! sides, and the per-tile tables every position uses.

use std::fmt;
use std::sync::OnceLock;

use engine::RulesError;
use engine::{TileSet, bit};

/// Most seats at a table.
pub const MAX_SEATS: usize = 4;

/// The game a hand is played by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// OpenSpiel's `python_block_dominoes`: two seats of 7 from double-6, no
    /// drawing; seat 0 opens with any tile; a seat that cannot play is
    /// skipped; the lower pip total wins the other side's total.
    Block,
    /// OpenSpiel's `python_team_dominoes`: four seats of 7 (all 28 tiles)
    /// in partnerships 0+2 and 1+3, scored as `Block` by team totals.
    Team,
    /// All Fives (Muggins with a spinner): 2 seats of 7 or 3-4 seats of 5,
    /// drawing until able to play, the count scoring on multiples of 5, a
    /// domino scoring the opponents' pips, hands repeated to a target score.
    AllFives,
}

/// How a blocked All-Fives hand scores (the side with the lowest pip total
/// alone scores; equal lowest totals score nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FivesBlocked {
    /// The lowest side scores the other sides' pip totals.
    Opponents,
    /// The lowest side scores the sum of each other side's total minus its own.
    Difference,
}

/// Who leads an All-Fives hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FivesLead {
    /// Every hand: the holder of the highest double opens with it (with no
    /// double dealt, the holder of the heaviest tile opens with that tile).
    HighestDouble,
    /// The first hand as `HighestDouble`; later hands the seat that
    /// dominoed the previous hand leads with any tile (after a blocked hand,
    /// the highest double again).
    Winner,
}

/// Every knob of a rule set; [`FullConfig::preset`] gives a preset's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FullConfig {
    /// The game.
    pub preset: Preset,
    /// The set is double-`set` (1-9).
    pub set: u8,
    /// Seats at the table (2-4).
    pub seats: u8,
    /// Tiles dealt to each seat.
    pub hand: u8,
    /// Seats 0+2 and 1+3 play as partners (4 seats only).
    pub teams: bool,
    /// All Fives: tiles that must stay in the boneyard (0 or 2).
    pub keep: u8,
    /// All Fives: a domino's or a blocked hand's points are rounded to the
    /// nearest multiple of 5 (x mod 5 of 3 or 4 rounds up).
    pub round: bool,
    /// All Fives: how a blocked hand scores.
    pub blocked: FivesBlocked,
    /// All Fives: who leads each hand.
    pub lead: FivesLead,
    /// All Fives: a match ends when a side reaches this score.
    pub to: u32,
}

impl FullConfig {
    /// A preset's defaults: block 2x7 and team 4x7 from double-6; All Fives
    /// two seats of 7 from double-6, nothing kept back, rounding, blocked
    /// hands scoring the opponents' pips, the winner leading, to 150.
    pub fn preset(preset: Preset) -> FullConfig {
        FullConfig {
            preset,
            set: 6,
            seats: if preset == Preset::Team { 4 } else { 2 },
            hand: 7,
            teams: preset == Preset::Team,
            keep: 0,
            round: true,
            blocked: FivesBlocked::Opponents,
            lead: FivesLead::Winner,
            to: 150,
        }
    }

    /// The thesis's game as All Fives knobs (the Python package's `thesis`
    /// preset): double-3, two seats of 3, the other 4 tiles the boneyard,
    /// the highest double leading, a domino's pips not rounded, a blocked
    /// game scoring the difference (checked against the thesis's engine:
    /// `full/tests/it/thesis.rs`).
    pub fn thesis() -> FullConfig {
        FullConfig {
            set: 3,
            hand: 3,
            round: false,
            blocked: FivesBlocked::Difference,
            lead: FivesLead::HighestDouble,
            ..FullConfig::all_fives(2)
        }
    }

    /// All Fives for `seats` seats at their usual hand (7 for two seats, 5
    /// for three or four), four seats in partnerships.
    pub fn all_fives(seats: u8) -> FullConfig {
        FullConfig {
            seats,
            hand: if seats <= 2 { 7 } else { 5 },
            teams: seats == 4,
            ..FullConfig::preset(Preset::AllFives)
        }
    }
}

impl Preset {
    /// The preset's name in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Block => "block",
            Preset::Team => "team",
            Preset::AllFives => "all-fives",
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Preset, String> {
        match s {
            "block" => Ok(Preset::Block),
            "team" => Ok(Preset::Team),
            "all-fives" => Ok(Preset::AllFives),
            _ => Err(format!("unknown preset {s:?}: expected block, team or all-fives")),
        }
    }
}

/// How the chance nodes of a deal hand out tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DealOrder {
    /// Seat 0's whole hand, then seat 1's, ... (OpenSpiel's block game).
    Blocks,
    /// One tile to each seat in turn (OpenSpiel's team game).
    RoundRobin,
}

/// What a set of tiles holds ([`FullRules::tally`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Pips, a double's both halves.
    pub pips: u32,
    /// Tiles.
    pub tiles: u32,
    /// Doubles.
    pub doubles: u32,
}

/// A validated rule set of the full game, with the tables positions use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullRules {
    config: FullConfig,
    preset: Preset,
    set: u8,
    seats: u8,
    hand: u8,
    teams: bool,
    deal_order: DealOrder,
    tiles: u8,
    /// The two pips of each tile, low pip first.
    pips: [(u8, u8); 55],
    /// The tiles that show pip `p` on either half.
    pip_mask: [TileSet; 10],
    /// The doubles.
    doubles: TileSet,
    /// `scoring_at[p][r]`: the tiles that score at an open end showing `p`
    /// beside a positive count of `r` modulo 5, and at `r = 5` beside a
    /// count of 0 (see [`FullRules::scoring_at`]).
    scoring_at: [[TileSet; 6]; 10],
    /// The tiles that score as the lead.
    lead_scoring: TileSet,
    /// First OpenSpiel-style action offset of each tile within a seat's block.
    action_offset: [u16; 55],
    /// The tile each offset within a seat's block names (its inverse).
    action_tile: [u8; 165],
    actions_per_seat: u16,
    /// The set's byte tables of [`FullRules::tally`], looked up once here
    /// rather than on every call (a leaf of the learned evaluation tallies
    /// three sets).
    tally: TallyBytes,
}

/// The byte tables of a set's tallies (see [`tally_bytes`]); a function of
/// the set alone, so two rule sets' are equal when their sets are, and its
/// 1,792 words are left out of `Debug`.
#[derive(Clone, Copy)]
struct TallyBytes(&'static [[u32; 256]; 7]);

impl PartialEq for TallyBytes {
    fn eq(&self, other: &TallyBytes) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for TallyBytes {}

impl std::fmt::Debug for TallyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TallyBytes")
    }
}

impl FullRules {
    /// Rules of a preset at its defaults (double-6).
    pub fn preset(preset: Preset) -> FullRules {
        FullRules::new(FullConfig::preset(preset)).expect("the presets' defaults are valid")
    }

    /// Validates a rule set. A knob that contradicts its preset or another
    /// knob is refused naming both.
    pub fn new(config: FullConfig) -> Result<FullRules, RulesError> {
        let FullConfig {
            preset,
            set,
            seats,
            hand,
            teams,
            ..
        } = config;
        let err = |field: &'static str, value: String, reason: String| RulesError { field, value, reason };
        if preset != Preset::AllFives {
            // OpenSpiel's games exactly: their knobs are fixed.
            let d = FullConfig::preset(preset);
            let fixed: [(&'static str, String, String); 9] = [
                ("set", set.to_string(), d.set.to_string()),
                ("seats", seats.to_string(), d.seats.to_string()),
                ("hand", hand.to_string(), d.hand.to_string()),
                ("teams", teams.to_string(), d.teams.to_string()),
                ("keep", config.keep.to_string(), d.keep.to_string()),
                ("round", config.round.to_string(), d.round.to_string()),
                ("blocked", format!("{:?}", config.blocked), format!("{:?}", d.blocked)),
                ("lead", format!("{:?}", config.lead), format!("{:?}", d.lead)),
                ("to", config.to.to_string(), d.to.to_string()),
            ];
            if let Some((field, value, want)) = fixed.into_iter().find(|(_, v, w)| v != w) {
                return Err(err(
                    field,
                    value,
                    format!("preset = \"{preset}\" is OpenSpiel's game exactly and has {field} = {want}"),
                ));
            }
        }
        if !(1..=9).contains(&set) {
            return Err(err(
                "set",
                set.to_string(),
                "must be between 1 and 9 (double-1 to double-9)".into(),
            ));
        }
        if !(2..=MAX_SEATS as u8).contains(&seats) {
            return Err(err("seats", seats.to_string(), "must be 2, 3 or 4".into()));
        }
        if teams && seats != 4 {
            return Err(err(
                "teams",
                "true".into(),
                format!("partnerships need 4 seats, not seats = {seats}"),
            ));
        }
        let tiles = (set as u16 + 1) * (set as u16 + 2) / 2;
        if hand == 0 || seats as u16 * hand as u16 > tiles {
            return Err(err(
                "hand",
                hand.to_string(),
                format!("{seats} seats of {hand} need more than the {tiles} tiles of a double-{set} set"),
            ));
        }
        if !matches!(config.keep, 0 | 2) {
            return Err(err("keep", config.keep.to_string(), "must be 0 or 2".into()));
        }
        if seats as u16 * hand as u16 + config.keep as u16 > tiles {
            return Err(err(
                "keep",
                config.keep.to_string(),
                format!(
                    "{seats} seats of hand = {hand} leave fewer than {} tiles of the {tiles}",
                    config.keep
                ),
            ));
        }
        if !(1..=100_000).contains(&config.to) {
            return Err(err("to", config.to.to_string(), "must be between 1 and 100000".into()));
        }
        let mut pips = [(0, 0); 55];
        let mut pip_mask = [0; 10];
        let mut doubles = 0;
        let mut action_offset = [0; 55];
        let mut action_tile = [0; 165];
        let mut i = 0;
        let mut offset = 0u16;
        for a in 0..=set {
            for b in a..=set {
                pips[i] = (a, b);
                pip_mask[a as usize] |= bit(i as u8);
                pip_mask[b as usize] |= bit(i as u8);
                if a == b {
                    doubles |= bit(i as u8);
                }
                action_offset[i] = offset;
                let codes = if a == b { 2 } else { 3 };
                action_tile[offset as usize..(offset + codes) as usize].fill(i as u8);
                offset += codes;
                i += 1;
            }
        }
        let (scoring_at, lead_scoring) = scoring_tables(&pips[..tiles as usize]);
        let deal_order = match preset {
            Preset::Block | Preset::AllFives => DealOrder::Blocks,
            Preset::Team => DealOrder::RoundRobin,
        };
        Ok(FullRules {
            config,
            preset,
            set,
            seats,
            hand,
            teams,
            deal_order,
            tiles: tiles as u8,
            pips,
            pip_mask,
            doubles,
            scoring_at,
            lead_scoring,
            action_offset,
            action_tile,
            actions_per_seat: offset,
            tally: TallyBytes(tally_bytes(set, &pips[..tiles as usize])),
        })
    }

    /// The preset.
    pub fn kind(&self) -> Preset {
        self.preset
    }
    /// Every knob, as validated.
    pub fn config(&self) -> &FullConfig {
        &self.config
    }
    /// The highest pip: the set is double-`set`.
    pub fn set(&self) -> u8 {
        self.set
    }
    /// Seats at the table (2 to 4).
    pub fn seats(&self) -> u8 {
        self.seats
    }
    /// Tiles dealt to each seat.
    pub fn hand(&self) -> u8 {
        self.hand
    }
    /// Whether seats 0+2 and 1+3 play as partners.
    pub fn teams(&self) -> bool {
        self.teams
    }
    /// How chance deals the tiles.
    pub fn deal_order(&self) -> DealOrder {
        self.deal_order
    }
    /// Tiles in the set.
    pub fn tile_count(&self) -> u8 {
        self.tiles
    }
    /// Every tile of the set.
    pub fn all_tiles(&self) -> TileSet {
        if self.tiles == 64 {
            u64::MAX
        } else {
            (1u64 << self.tiles) - 1
        }
    }
    /// The two pips of a tile, low pip first.
    #[inline]
    pub fn pips(&self, tile: u8) -> (u8, u8) {
        self.pips[tile as usize]
    }
    /// The tiles that show pip `p`.
    #[inline]
    pub fn pip_mask(&self, p: u8) -> TileSet {
        self.pip_mask[p as usize]
    }
    /// Pips on the tiles of `set`: each pip value times the tiles showing
    /// it, a double's counted twice.
    #[inline]
    pub fn pip_total(&self, set: TileSet) -> u32 {
        self.packed_tally(set) & 0xffff
    }
    /// The pips, tiles and doubles of `set`, at the cost of its pips alone.
    #[inline(always)]
    pub fn tally(&self, set: TileSet) -> Tally {
        let packed = self.packed_tally(set);
        Tally {
            pips: packed & 0xffff,
            tiles: packed >> 16 & 0xff,
            doubles: packed >> 24,
        }
    }
    /// A [`Tally`] packed in one word (pips in the low 16 bits, then tiles
    /// and doubles a byte each), summed a byte of the set at a time from a
    /// table: no branch on the tiles held, no popcount (the default target
    /// has no instruction).
    #[inline(always)]
    fn packed_tally(&self, set: TileSet) -> u32 {
        let table = self.tally.0;
        let byte = |j: usize| table[j][(set >> (8 * j) & 0xff) as usize];
        if self.tiles <= 32 {
            byte(0) + byte(1) + byte(2) + byte(3)
        } else {
            (0..7).map(byte).sum()
        }
    }
    /// The doubles of the set.
    #[inline]
    pub fn doubles(&self) -> TileSet {
        self.doubles
    }
    /// The tiles that score (make a positive count, a multiple of 5) when
    /// played at an open end showing `p` of a board whose count without that
    /// end is `rest` (`Board::count_beside`): `p`'s double if `rest + 2p`
    /// scores, and each `(p, q)` whose `q` makes `rest + q` score.
    #[inline]
    pub fn scoring_at(&self, p: u8, rest: u32) -> TileSet {
        let r = if rest == 0 { 5 } else { rest % 5 };
        self.scoring_at[p as usize][r as usize]
    }
    /// The tiles that score as the lead: their pips are a positive multiple of 5.
    #[inline]
    pub fn lead_scoring(&self) -> TileSet {
        self.lead_scoring
    }
    /// The side a seat plays for: its partnership, or itself.
    #[inline]
    pub fn side(&self, seat: u8) -> u8 {
        if self.teams { seat % 2 } else { seat }
    }
    /// Sides at the table: 2 with partnerships, else one per seat.
    pub fn sides(&self) -> u8 {
        if self.teams { 2 } else { self.seats }
    }
    /// Tiles dealt in all.
    pub fn dealt(&self) -> u8 {
        self.seats * self.hand
    }
    /// Distinct actions of one seat in OpenSpiel's numbering: per tile, one
    /// opening action and one per distinct pip it can cover (77 for double-6).
    pub fn actions_per_seat(&self) -> u16 {
        self.actions_per_seat
    }
    /// The OpenSpiel-style id of tile `tile` at the start of its seat's block.
    #[inline]
    pub(crate) fn action_offset(&self, tile: u8) -> u16 {
        self.action_offset[tile as usize]
    }
    /// The tile whose block of ids holds `within` (below `actions_per_seat`).
    pub(crate) fn action_tile(&self, within: u16) -> u8 {
        self.action_tile[within as usize]
    }
    /// The seating in words: "2 seats of 7", "4 seats of 5 in partnerships".
    pub fn seating(&self) -> String {
        let teams = if self.teams { " in partnerships" } else { "" };
        format!("{} seats of {}{teams}", self.seats, self.hand)
    }

    /// The conventional name of a tile ("3-5").
    pub fn tile_name(&self, tile: u8) -> String {
        let (a, b) = self.pips(tile);
        format!("{a}-{b}")
    }
}

impl engine::PipTable for FullRules {
    #[inline]
    fn pips(&self, tile: u8) -> (u8, u8) {
        FullRules::pips(self, tile)
    }
}

/// [`FullRules::scoring_at`]'s table (by the rest modulo 5) and the lead's
/// scoring tiles, over the tiles' pips.
fn scoring_tables(pips: &[(u8, u8)]) -> ([[TileSet; 6]; 10], TileSet) {
    let mut at = [[0; 6]; 10];
    let mut lead = 0;
    for (i, &(a, b)) in pips.iter().enumerate() {
        let t = bit(i as u8);
        if a + b > 0 && (a + b).is_multiple_of(5) {
            lead |= t;
        }
        // Index 5 is a rest of 0, where a count of 0 does not score.
        let scores = |r: u8, added: u8| (r + added).is_multiple_of(5) && (r < 5 || added > 0);
        for r in 0..6u8 {
            // At an end showing one half, the tile adds its other half (a
            // double both).
            if a == b {
                if scores(r, 2 * a) {
                    at[a as usize][r as usize] |= t;
                }
            } else {
                if scores(r, b) {
                    at[a as usize][r as usize] |= t;
                }
                if scores(r, a) {
                    at[b as usize][r as usize] |= t;
                }
            }
        }
    }
    (at, lead)
}

/// Each byte of a tile set of double-`set` whose tiles show `pips`, as a
/// packed [`Tally`] (bit `i` of byte `j` is tile `8 j + i`): a table a set
/// size, built once. Fields cannot overflow into each other: a double-9
/// set has 495 pips, 55 tiles and 10 doubles.
fn tally_bytes(set: u8, pips: &[(u8, u8)]) -> &'static [[u32; 256]; 7] {
    static TABLES: [OnceLock<Box<[[u32; 256]; 7]>>; 10] = [const { OnceLock::new() }; 10];
    TABLES[set as usize].get_or_init(|| {
        let mut table = Box::new([[0u32; 256]; 7]);
        for (j, row) in table.iter_mut().enumerate() {
            for (byte, packed) in row.iter_mut().enumerate() {
                for &(a, b) in (0..8)
                    .filter(|k| byte >> k & 1 == 1)
                    .filter_map(|k| pips.get(8 * j + k))
                {
                    *packed += (a + b) as u32 + (1 << 16) + if a == b { 1 << 24 } else { 0 };
                }
            }
        }
        table
    })
}
