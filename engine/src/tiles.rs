//! Tiles are indices into the set's canonical order (0|0), (0|1), ..., (N|N);
//! a set of tiles is a bitmask over those indices.

/// A set of tiles as a bitmask over tile indices (at most 55 tiles).
pub type TileSet = u64;

/// The tiles in each of two sets: both counted at once (SWAR in one word)
/// where both lie in the first 32 tiles, as the default target has no
/// popcount instruction.
#[inline(always)]
pub fn count_two(a: TileSet, b: TileSet) -> (u32, u32) {
    if (a | b) >> 32 != 0 {
        return (a.count_ones(), b.count_ones());
    }
    let mut x = a | b << 32;
    x -= (x >> 1) & 0x5555_5555_5555_5555;
    x = (x & 0x3333_3333_3333_3333) + ((x >> 2) & 0x3333_3333_3333_3333);
    x = (x + (x >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Each byte now holds its count; bytes 3 and 7 of the product sum
    // each half's four (at most 32 apiece: no carry between bytes).
    let y = x.wrapping_mul(0x0101_0101);
    ((y >> 24 & 0xff) as u32, (y >> 56) as u32)
}

/// Iterates the indices of a tile set in ascending order.
#[inline]
pub fn bits(mut set: TileSet) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let i = set.trailing_zeros() as u8;
            set &= set - 1;
            Some(i)
        }
    })
}

/// The set holding just `tile`.
#[inline]
pub const fn bit(tile: u8) -> TileSet {
    1u64 << tile
}

/// The two pips of every tile index of a double-`n` set, low pip first.
pub(crate) fn tile_pips(n: u8) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    for a in 0..=n {
        for b in a..=n {
            out.push((a, b));
        }
    }
    out
}

/// The conventional two-digit name of a tile ("03" for (0|3)).
pub fn tile_name(pips: (u8, u8)) -> String {
    format!("{}{}", pips.0, pips.1)
}

/// Whatever knows the two pips of each tile index: the thesis rules and the
/// full game's, so that the board serves both.
pub trait PipTable {
    /// The two pips of `tile`, low pip first.
    fn pips(&self, tile: u8) -> (u8, u8);
}
