//! Deals of the full game: every deal has an index (multinomial ranking:
//! seat 0's hand, then seat 1's among the tiles left, ...), both ways, and
//! uniform random deals and playouts from a seeded stream.

use rand_core::RngCore;

use engine::seed::below_u32;
use engine::{TileSet, bit, bits};

use super::position::{FullActions, FullPosition};
use super::rules::{FullRules, MAX_SEATS};

/// `n` choose `k` (0 when k > n), exact in u128 for every set up to double-9.
pub fn binom(n: u32, k: u32) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * (n - i) as u128 / (i + 1) as u128;
    }
    r
}

/// How many deals the rules have: hands in seat order, boneyard the rest;
/// `None` when the count does not fit a u64 (beyond double-6 with many seats).
pub fn deal_count(rules: &FullRules) -> Option<u64> {
    let mut left = rules.tile_count() as u32;
    let mut count: u128 = 1;
    for _ in 0..rules.seats() {
        count = count.checked_mul(binom(left, rules.hand() as u32))?;
        left -= rules.hand() as u32;
    }
    u64::try_from(count).ok()
}

/// The rank of `hand` among the `hand`-tile subsets of `pool` (colex order
/// of the tiles' positions within the pool).
fn rank_in(pool: TileSet, hand: TileSet) -> u128 {
    bits(hand)
        .enumerate()
        .map(|(i, t)| binom((pool & (bit(t) - 1)).count_ones(), i as u32 + 1))
        .sum()
}

/// The `k`-tile subset of `pool` with colex rank `r`.
fn unrank_in(pool: TileSet, k: u32, mut r: u128) -> TileSet {
    let positions: Vec<u8> = bits(pool).collect();
    let mut hand = 0;
    for i in (1..=k).rev() {
        // The largest position p with C(p, i) <= r.
        let mut p = i - 1;
        while binom(p + 1, i) <= r {
            p += 1;
        }
        r -= binom(p, i);
        hand |= bit(positions[p as usize]);
    }
    hand
}

/// The index of a deal (`hands[s]` for each seat), in `0..deal_count`.
pub fn deal_index(rules: &FullRules, hands: &[TileSet; MAX_SEATS]) -> u64 {
    let mut pool = rules.all_tiles();
    let mut index: u128 = 0;
    let mut scale: u128 = 1;
    for s in 0..rules.seats() as usize {
        index += scale * rank_in(pool, hands[s]);
        scale *= binom(pool.count_ones(), rules.hand() as u32);
        pool &= !hands[s];
    }
    index as u64
}

/// The deal with index `index`, or `None` when it is not below
/// [`deal_count`].
pub fn deal_from_index(rules: &FullRules, index: u64) -> Option<[TileSet; MAX_SEATS]> {
    if index >= deal_count(rules)? {
        return None;
    }
    let mut pool = rules.all_tiles();
    let mut rest = index as u128;
    let mut hands = [0; MAX_SEATS];
    for hand in hands.iter_mut().take(rules.seats() as usize) {
        let n = binom(pool.count_ones(), rules.hand() as u32);
        *hand = unrank_in(pool, rules.hand() as u32, rest % n);
        rest /= n;
        pool &= !*hand;
    }
    Some(hands)
}

/// A uniform random deal: each seat's hand drawn in turn from a shuffled set.
pub fn random_deal(rules: &FullRules, rng: &mut impl RngCore) -> [TileSet; MAX_SEATS] {
    let mut tiles = [0u8; 64];
    let n = rules.tile_count() as usize;
    for (i, t) in tiles.iter_mut().enumerate().take(n) {
        *t = i as u8;
    }
    let mut hands = [0; MAX_SEATS];
    let mut k = 0;
    for hand in hands.iter_mut().take(rules.seats() as usize) {
        for _ in 0..rules.hand() {
            let j = k + below_u32(rng, (n - k) as u32) as usize;
            tiles.swap(k, j);
            *hand |= bit(tiles[k]);
            k += 1;
        }
    }
    hands
}

/// A hand played to its end by uniformly random legal plays from a random
/// deal; returns the final position.
pub fn random_playout(rules: &FullRules, rng: &mut impl RngCore) -> FullPosition {
    let mut pos = FullPosition::deal(rules, random_deal(rules, rng));
    let mut list = FullActions::default();
    while pos.end.is_none() {
        pos.actions(rules, &mut list);
        let k = below_u32(rng, list.len() as u32) as usize;
        pos.play(rules, list.as_slice()[k]);
    }
    pos
}

/// Plays `games` random hands from one ChaCha8 stream seeded with `seed`
/// (the playout benchmark); returns the sum of seat 0's returns, a
/// checksum of the rules' behaviour.
pub fn playouts(rules: &FullRules, seed: u64, games: u64) -> i64 {
    playout_sum(seed, games, |rng| random_playout(rules, rng).returns(rules)[0] as i64)
}

/// Seat 0's return in each of `games` random hands (as [`playouts`] plays
/// them, from one ChaCha8 stream seeded with `seed`): the Python package's
/// batch playouts.
pub fn playout_returns(rules: &FullRules, seed: u64, games: u64) -> Vec<i32> {
    use rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..games)
        .map(|_| random_playout(rules, &mut rng).returns(rules)[0])
        .collect()
}

/// The sum of `one` over `games` draws from one ChaCha8 stream seeded with
/// `seed` (the playout benchmarks' loop).
pub(crate) fn playout_sum(seed: u64, games: u64, mut one: impl FnMut(&mut rand_chacha::ChaCha8Rng) -> i64) -> i64 {
    use rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..games).map(|_| one(&mut rng)).sum()
}
