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

    /// `tiles` entries, 1 at each tile of `set`.
    fn set(&mut self, tiles: usize, set: TileSet) {
        for (t, z) in self.take(tiles).iter_mut().enumerate() {
            *z = (set >> t & 1) as f32;
        }
    }
}

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
