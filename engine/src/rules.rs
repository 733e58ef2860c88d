//! The validated rule set: which set, deal sizes, the lead and blocked-game rules,
//! and the lookup tables the hot path uses.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::tiles::{TileSet, bit, tile_pips};

/// Largest supported set (double-9, 55 tiles).
pub const MAX_SET: u8 = 9;

/// Who opens the game (docs/rules.md section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lead {
    /// The holder of the highest double in either hand opens with it; without
    /// doubles, the holder of the heaviest tile opens with that tile.
    HighestDouble,
    /// The player opens with any tile of its choice.
    Player,
    /// The target opens with any tile of its choice.
    Target,
}

/// How a blocked game is scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Blocked {
    /// The seat with the lower pip total scores the difference of the totals.
    Difference,
    /// No one scores.
    None,
}

impl FromStr for Lead {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, RulesError> {
        match s {
            "highest-double" => Ok(Lead::HighestDouble),
            "player" => Ok(Lead::Player),
            "target" => Ok(Lead::Target),
            _ => Err(RulesError::new(
                "lead",
                s,
                "expected one of highest-double, player, target",
            )),
        }
    }
}

impl FromStr for Blocked {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, RulesError> {
        match s {
            "difference" => Ok(Blocked::Difference),
            "none" => Ok(Blocked::None),
            _ => Err(RulesError::new("blocked", s, "expected one of difference, none")),
        }
    }
}

impl fmt::Display for Lead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Lead::HighestDouble => "highest-double",
            Lead::Player => "player",
            Lead::Target => "target",
        })
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Blocked::Difference => "difference",
            Blocked::None => "none",
        })
    }
}

/// A rule set as written by a person; [`Rules::new`] validates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    /// The set is double-`set`: tiles (a|b) with 0 <= a <= b <= set.
    pub set: u8,
    /// Tiles dealt to each seat.
    pub hand: u8,
    /// Tiles left in the boneyard; 2 * hand + boneyard is the whole set.
    pub boneyard: u8,
    /// Who opens the game (default [`Lead::HighestDouble`]).
    pub lead: Lead,
    /// How a blocked game is scored (default [`Blocked::Difference`]).
    pub blocked: Blocked,
}

impl Default for RulesConfig {
    /// The thesis rules: double-3, hands of 3, boneyard of 4.
    fn default() -> Self {
        RulesConfig {
            set: 3,
            hand: 3,
            boneyard: 4,
            lead: Lead::HighestDouble,
            blocked: Blocked::Difference,
        }
    }
}

/// A rule set that failed validation: the field, the value given, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid rules.{field} = {value}: {reason}")]
pub struct RulesError {
    /// The [`RulesConfig`] field at fault: `set`, `hand`, `boneyard`, `lead`
    /// or `blocked`.
    pub field: &'static str,
    /// The value given, as written.
    pub value: String,
    /// Why the value is rejected, saying what is expected.
    pub reason: String,
}

impl RulesError {
    pub(crate) fn new(field: &'static str, value: impl fmt::Display, reason: impl Into<String>) -> Self {
        RulesError {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// A validated rule set with the tables the search core reads on its hot path.
#[derive(Clone, Debug)]
pub struct Rules {
    config: RulesConfig,
    tiles: u8,
    lo: [u8; 64],
    hi: [u8; 64],
    pip_sum: [u8; 64],
    /// Tiles that show pip `p` on either half.
    with_pip: [TileSet; MAX_SET as usize + 1],
    all: TileSet,
    states: u64,
}

impl Rules {
    /// Validates a rule set; the error names the field and the value.
    pub fn new(config: RulesConfig) -> Result<Rules, RulesError> {
        if !(1..=MAX_SET).contains(&config.set) {
            return Err(RulesError::new(
                "set",
                config.set,
                format!("the set must be double-1 to double-{MAX_SET}"),
            ));
        }
        let pips = tile_pips(config.set);
        let tiles = pips.len() as u8;
        if config.hand == 0 {
            return Err(RulesError::new(
                "hand",
                config.hand,
                "each seat needs at least one tile",
            ));
        }
        let dealt = 2 * config.hand as u32 + config.boneyard as u32;
        if dealt != tiles as u32 {
            return Err(RulesError::new(
                "boneyard",
                config.boneyard,
                format!(
                    "2 * hand ({}) + boneyard must equal the {} tiles of a double-{} set, got {}",
                    config.hand, tiles, config.set, dealt
                ),
            ));
        }
        let l = tiles as u32;
        let b = config.boneyard as u32;
        let h = config.hand as u32;
        let states = binom(l, b) as u128 * binom(l - b, h) as u128;
        if binom(l, b) == u64::MAX || states >= u64::MAX as u128 {
            return Err(RulesError::new(
                "set",
                config.set,
                "the number of starting states does not fit in 64 bits for these deal sizes",
            ));
        }
        let mut lo = [0u8; 64];
        let mut hi = [0u8; 64];
        let mut pip_sum = [0u8; 64];
        let mut with_pip = [0u64; MAX_SET as usize + 1];
        for (i, &(a, b)) in pips.iter().enumerate() {
            lo[i] = a;
            hi[i] = b;
            pip_sum[i] = a + b;
            with_pip[a as usize] |= bit(i as u8);
            with_pip[b as usize] |= bit(i as u8);
        }
        let all = if tiles == 64 { u64::MAX } else { (1u64 << tiles) - 1 };
        Ok(Rules {
            config,
            tiles,
            lo,
            hi,
            pip_sum,
            with_pip,
            all,
            states: states as u64,
        })
    }

    /// The thesis rules (double-3, hands of 3, boneyard of 4, defaults).
    pub fn thesis() -> Rules {
        Rules::new(RulesConfig::default()).expect("the default rules are valid")
    }

    /// The rule set as given, now known to be valid.
    pub fn config(&self) -> &RulesConfig {
        &self.config
    }
    /// Number of tiles in the set (L).
    pub fn tile_count(&self) -> u8 {
        self.tiles
    }
    /// Every tile of the set.
    pub fn all_tiles(&self) -> TileSet {
        self.all
    }
    /// Number of starting states, C(L, B) * C(L - B, H).
    pub fn starting_states(&self) -> u64 {
        self.states
    }
    /// The pips of a tile, low first.
    #[inline]
    pub fn pips(&self, tile: u8) -> (u8, u8) {
        (self.lo[tile as usize], self.hi[tile as usize])
    }
    #[inline]
    pub(crate) fn pip_sum(&self, tile: u8) -> u32 {
        self.pip_sum[tile as usize] as u32
    }
    #[inline]
    pub(crate) fn with_pip(&self, pip: u8) -> TileSet {
        self.with_pip[pip as usize]
    }
    /// Total pips of a set of tiles.
    #[inline]
    pub fn pip_total(&self, set: TileSet) -> u32 {
        crate::tiles::bits(set).map(|t| self.pip_sum(t)).sum()
    }
    /// Index of the tile (a|b) in canonical order.
    pub fn tile_index(&self, a: u8, b: u8) -> Option<u8> {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        if b > self.config.set {
            return None;
        }
        (0..self.tiles).find(|&t| self.pips(t) == (a, b))
    }
    /// The name of a tile, "03" for (0|3).
    pub fn tile_name(&self, tile: u8) -> String {
        crate::tiles::tile_name(self.pips(tile))
    }
    /// C(n, k), saturating at u64::MAX.
    #[inline]
    pub fn binom(&self, n: u32, k: u32) -> u64 {
        binom(n, k)
    }
}

/// C(n, k) for n <= 64, saturating at u64::MAX (0 when k > n).
fn binom(n: u32, k: u32) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k) as u128;
    let mut c: u128 = 1;
    for i in 0..k {
        // Exact at every step: c * (n - i) / (i + 1) is C(n, i + 1).
        c = c * (n as u128 - i) / (i + 1);
        if c > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    c as u64
}

impl crate::tiles::PipTable for Rules {
    #[inline]
    fn pips(&self, tile: u8) -> (u8, u8) {
        Rules::pips(self, tile)
    }
}
