//! DominAI's belief: seed 002's per-player probability matrices (binary,
//! relative, absolute) for one observation, settled by the report's two
//! corrections.

use engine::{TileSet, bits};

use crate::belief::{HOLDERS, Marginals, Observation};
use crate::rules::{FullRules, MAX_SEATS};

/// Seed 002's matrices for one observation: one profile per other holder
/// (the other seats, and the boneyard when there is one: a profile that
/// never passes, which the report, with no boneyard, does not have).
#[derive(Clone, Debug, PartialEq)]
pub struct DominaiMatrices {
    /// Whether a holder has a profile (another seat with tiles, or a
    /// non-empty boneyard).
    pub profiled: [bool; HOLDERS],
    /// Binary: 1 unless the tile is the observer's, played, or of a value
    /// the holder passed on (after the corrections).
    pub binary: [TileSet; HOLDERS],
    /// Accumulated: per tile, how many profiles have a 1.
    pub accumulated: [u8; 64],
    /// Relative: binary / accumulated.
    pub relative: [[f64; HOLDERS]; 64],
    /// Indeterminate tiles: the holder's tiles minus its cells of relative 1.
    pub indeterminate: [i32; HOLDERS],
    /// Absolute: 1 where relative is 1; else, with a binary 1, the holder's
    /// indeterminate tiles over the sum of the indeterminate tiles of the
    /// holders with a 1 for the tile.
    pub absolute: [[f64; HOLDERS]; 64],
    /// Rounds of the two corrections until nothing changed.
    pub rounds: u32,
    hidden: TileSet,
    size: [u8; HOLDERS],
}

impl DominaiMatrices {
    /// The matrices of `obs` (`rules` gives the tiles' pips).
    pub fn new(rules: &FullRules, obs: &Observation) -> DominaiMatrices {
        let mut m = DominaiMatrices {
            profiled: [false; HOLDERS],
            binary: [0; HOLDERS],
            accumulated: [0; 64],
            relative: [[0.0; HOLDERS]; 64],
            indeterminate: [0; HOLDERS],
            absolute: [[0.0; HOLDERS]; 64],
            rounds: 0,
            hidden: obs.hidden,
            size: obs.size,
        };
        for h in 0..HOLDERS {
            if obs.size[h] == 0 {
                continue;
            }
            m.profiled[h] = true;
            let mut b = obs.hidden;
            if h < MAX_SEATS {
                // "The player passed to that specific value": every tile
                // with that value is set to 0.
                for p in 0..=rules.set() {
                    if obs.void_pips[h] >> p & 1 == 1 {
                        b &= !rules.pip_mask(p);
                    }
                }
            }
            m.binary[h] = b;
        }
        m.settle();
        m
    }

    /// The corrections, repeated "until no modifications are needed", then
    /// the absolute matrix.
    fn settle(&mut self) {
        let m = self;
        loop {
            m.rounds += 1;
            m.relative_and_indeterminate();
            let mut changed = false;
            for h in (0..HOLDERS).filter(|&h| m.profiled[h]) {
                // (a) No indeterminate tiles: the holder has exactly its
                // certain tiles, so every uncertain cell is 0.
                if m.indeterminate[h] == 0 {
                    let certain = m.certain(h);
                    if m.binary[h] & !certain != 0 {
                        m.binary[h] = certain;
                        changed = true;
                    }
                }
                // (b) As many possible tiles as tiles in hand: it holds
                // them all, so no other holder can.
                let possible = m.binary[h];
                if possible.count_ones() == m.size[h] as u32 {
                    for g in (0..HOLDERS).filter(|&g| g != h && m.profiled[g]) {
                        if m.binary[g] & possible != 0 {
                            m.binary[g] &= !possible;
                            changed = true;
                        }
                    }
                }
            }
            if !changed || m.rounds > 64 {
                break;
            }
        }
        m.absolute = [[0.0; HOLDERS]; 64];
        for t in bits(m.hidden) {
            let with = |h: &usize| m.profiled[*h] && m.binary[*h] >> t & 1 == 1;
            let sum: i32 = (0..HOLDERS).filter(with).map(|h| m.indeterminate[h].max(0)).sum();
            for h in (0..HOLDERS).filter(with) {
                m.absolute[t as usize][h] = if m.relative[t as usize][h] >= 1.0 {
                    1.0
                } else if sum > 0 {
                    m.indeterminate[h].max(0) as f64 / sum as f64
                } else {
                    0.0
                };
            }
        }
    }

    fn relative_and_indeterminate(&mut self) {
        for t in bits(self.hidden) {
            let a = (0..HOLDERS)
                .filter(|&h| self.profiled[h] && self.binary[h] >> t & 1 == 1)
                .count() as u8;
            self.accumulated[t as usize] = a;
            for h in 0..HOLDERS {
                self.relative[t as usize][h] = if a > 0 && self.binary[h] >> t & 1 == 1 {
                    1.0 / a as f64
                } else {
                    0.0
                };
            }
        }
        for h in 0..HOLDERS {
            self.indeterminate[h] = if self.profiled[h] {
                self.size[h] as i32 - self.certain(h).count_ones() as i32
            } else {
                0
            };
        }
    }

    /// The tiles only holder `h` may have (relative probability 1).
    fn certain(&self, h: usize) -> TileSet {
        bits(self.binary[h] & self.hidden)
            .filter(|&t| self.accumulated[t as usize] == 1)
            .fold(0, |s, t| s | 1 << t)
    }

    /// The report's "value probability": the chance that holder `h` has
    /// any tile with pip `v`, chaining P(A or B) = P(A) + P(B) - P(A)P(B)
    /// over those tiles' absolute probabilities (independence assumed).
    pub fn value_probability(&self, rules: &FullRules, h: usize, v: u8) -> f64 {
        bits(rules.pip_mask(v) & self.hidden).fold(0.0, |p, t| {
            let q = self.absolute[t as usize][h];
            p + q - p * q
        })
    }

    /// The absolute matrix as marginals, renormalised per tile over the
    /// holders (the report's rows need not sum to 1); a tile no profile
    /// may hold is shared by the holders' sizes.
    pub fn marginals(&self, out: &mut Marginals) {
        for row in out.iter_mut() {
            *row = [0.0; HOLDERS];
        }
        let total: f64 = self.size.iter().map(|&s| s as f64).sum();
        for t in bits(self.hidden) {
            let row = &self.absolute[t as usize];
            let sum: f64 = row.iter().sum();
            for h in 0..HOLDERS {
                out[t as usize][h] = if sum > 0.0 {
                    row[h] / sum
                } else {
                    self.size[h] as f64 / total
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FullConfig;

    #[test]
    fn the_reports_absolute_probabilities() {
        // Three players holding 4, 4 and 5 tiles with 3, 2 and 5
        // indeterminate: a tile all three may hold is 3/10, 2/10, 5/10;
        // one only players 1 and 2 may hold is 3/5 and 2/5; players 2 and
        // 3: 2/7 and 5/7 (the report prints 0.3, 0.2, 0.5, 0.6, 0.4, 0.3
        // and 0.7).
        let rules = FullRules::new(FullConfig::all_fives(4)).unwrap();
        let t = |a: u8, b: u8| {
            (0..rules.tile_count())
                .find(|&t| rules.pips(t) == (a.min(b), a.max(b)))
                .unwrap()
        };
        let mut obs = Observation {
            seat: 0,
            seats: 4,
            hidden: 0,
            size: [0, 4, 4, 5, 0],
            void: [0; HOLDERS],
            void_pips: [0; MAX_SEATS],
        };
        // Player 1 certainly holds 4-6; player 2 holds 1-3 and 3-4.
        let p1_only = [t(4, 6)];
        let p2_only = [t(1, 3), t(3, 4)];
        let p12 = [t(0, 4)];
        let p23 = [t(0, 3), t(3, 5)];
        let shared = [t(0, 1), t(1, 1), t(1, 2), t(2, 2), t(1, 4), t(0, 5)];
        let mut hidden = 0u64;
        for &x in p1_only.iter().chain(&p2_only).chain(&p12).chain(&p23).chain(&shared) {
            hidden |= 1 << x;
        }
        obs.hidden = hidden;
        // Binary matrices by hand (passes would give them; set directly).
        let mut m = DominaiMatrices::new(&rules, &obs);
        let set = |list: &[u8]| list.iter().fold(0u64, |s, &x| s | 1 << x);
        m.binary[1] = set(&p1_only) | set(&p12) | set(&shared);
        m.binary[2] = set(&p2_only) | set(&p12) | set(&p23) | set(&shared);
        m.binary[3] = set(&p23) | set(&shared);
        m.rounds = 0;
        m.settle();
        assert_eq!(m.rounds, 1, "no correction applies");
        assert_eq!(m.indeterminate[1..4], [3, 2, 5]);
        let abs = |m: &DominaiMatrices, tile: u8, h: usize| m.absolute[tile as usize][h];
        let s = shared[0];
        assert!((abs(&m, s, 1) - 0.3).abs() < 1e-12);
        assert!((abs(&m, s, 2) - 0.2).abs() < 1e-12);
        assert!((abs(&m, s, 3) - 0.5).abs() < 1e-12);
        assert!((abs(&m, p12[0], 1) - 0.6).abs() < 1e-12);
        assert!((abs(&m, p12[0], 2) - 0.4).abs() < 1e-12);
        assert!((abs(&m, p23[0], 2) - 2.0 / 7.0).abs() < 1e-12);
        assert!((abs(&m, p23[0], 3) - 5.0 / 7.0).abs() < 1e-12);
        assert_eq!(abs(&m, p1_only[0], 1), 1.0);
        assert!((m.relative[s as usize][1] - 1.0 / 3.0).abs() < 1e-12);
        assert!((m.relative[p12[0] as usize][2] - 0.5).abs() < 1e-12);
    }
}
