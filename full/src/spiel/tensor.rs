//! Where a tensor is written: appended to a vector (a network's input
//! batch), or over a slice (a row of a vector environment's numpy array,
//! written in place: no copy through a scratch vector). The games' writers
//! ([`super::OpenSpielState`], [`super::FivesState`], the rich encoding)
//! are generic over [`TensorOut`], so both have one definition.

use engine::TileSet;

/// A tensor's entries, appended piece by piece, each entry of a piece
/// written (a slice's old values are not cleared first: one pass, no
/// `memset` a piece).
pub trait TensorOut {
    /// `n` entries appended, each of which the caller writes (a vector's
    /// are zeros, a slice's whatever it held).
    fn take(&mut self, n: usize) -> &mut [f32];

    /// One entry.
    fn value(&mut self, x: f32) {
        self.take(1)[0] = x;
    }

    /// `n` entries, 1 at `i`.
    fn one_hot(&mut self, n: usize, i: Option<usize>) {
        for (k, z) in self.take(n).iter_mut().enumerate() {
            *z = (Some(k) == i) as u8 as f32;
        }
    }

    /// `tiles` entries, 1 at each tile of `set`: four at a time from a
    /// table of the sixteen patterns (a set is most of a tensor).
    fn set(&mut self, tiles: usize, set: TileSet) {
        let z = self.take(tiles);
        let mut quads = z.chunks_exact_mut(4);
        for (k, quad) in quads.by_ref().enumerate() {
            quad.copy_from_slice(&NIBBLES[(set >> (4 * k) & 15) as usize]);
        }
        let done = tiles - tiles % 4;
        for (t, z) in quads.into_remainder().iter_mut().enumerate() {
            *z = if set >> (done + t) & 1 == 1 { 1.0 } else { 0.0 };
        }
    }
}

/// Each 4-bit pattern's entries, lowest bit first.
const NIBBLES: [[f32; 4]; 16] = {
    let mut t = [[0.0; 4]; 16];
    let mut n = 0;
    while n < 16 {
        let mut b = 0;
        while b < 4 {
            if n >> b & 1 == 1 {
                t[n][b] = 1.0;
            }
            b += 1;
        }
        n += 1;
    }
    t
};

impl TensorOut for Vec<f32> {
    fn take(&mut self, n: usize) -> &mut [f32] {
        let at = self.len();
        self.resize(at + n, 0.0);
        &mut self[at..]
    }
}

/// A slice written from its start; [`SliceOut::finish`] checks that the
/// tensor filled it exactly.
#[derive(Debug)]
pub struct SliceOut<'a> {
    buf: &'a mut [f32],
    at: usize,
}

impl<'a> SliceOut<'a> {
    pub fn new(buf: &'a mut [f32]) -> SliceOut<'a> {
        SliceOut { buf, at: 0 }
    }

    /// Panics unless the tensor was exactly the slice's length (the caller
    /// sized it by `encoding_size`: a mismatch is a bug, not bad input).
    pub fn finish(self) {
        assert_eq!(
            self.at,
            self.buf.len(),
            "a tensor of {} entries written over {}",
            self.at,
            self.buf.len()
        );
    }
}

impl TensorOut for SliceOut<'_> {
    fn take(&mut self, n: usize) -> &mut [f32] {
        let at = self.at;
        self.at += n;
        &mut self.buf[at..at + n]
    }
}
