//! The dense layer `y = b + x W` for a block of rows, and the activation.
//!
//! Every output element is computed the same way whatever the path: start
//! from the bias, then one fused multiply-add for each input in order
//! (`acc = fma(x[i], w[i][j], acc)`), then `+ 0.0` (a sum that came out as
//! -0 is stored as +0). The AVX2/FMA path does 96 such sums at once in
//! registers (6 rows x 16 outputs; the rows left over one at a time, 48
//! outputs at once), over weights packed in panels of 16 columns whose
//! last is padded with zeros to a multiple of 8, so every column takes the
//! vector path; the portable path does them one at a time with
//! `f32::mul_add`, which rounds exactly as the hardware's FMA does.
//!
//! A row left over (a single evaluation's one row) whose inputs are mostly
//! zeros (a one-hot observation) skips the zero inputs: `fma(0, w, acc)` is
//! `acc` except that a zero `acc` may change sign, which the final `+ 0.0`
//! erases. So a row's outputs are bit-identical whether it is evaluated
//! alone or in a batch, on one thread or many, with or without AVX2: the
//! tiling changes which sums run together, never a sum's value.
//!
//! This is the crate's one module with `unsafe`: the intrinsics read and
//! write through pointers, and calling a function compiled for AVX2/FMA is
//! sound only on a processor that has them, which [`dense`] checks at run
//! time (once; the answer is cached by the standard library).

#![allow(unsafe_code)]

/// Columns of a packed weight panel.
pub(crate) const PANEL: usize = 16;

/// The width of packed panel `p` of a layer with `outputs` columns: 16, or
/// for the last the columns left rounded up to 8 (the rest zeros).
fn panel_width(outputs: usize, p: usize) -> usize {
    (outputs - p * PANEL).min(PANEL).next_multiple_of(8)
}

/// `w` (`inputs x outputs`, row-major) repacked for the AVX2 path: each
/// panel of [`PANEL`] columns as `inputs x width` floats in a row (width
/// 16, the last panel's 8 or 16 with zeros past the last column), so a
/// pass over a panel reads memory in order. Panel `p` starts at
/// `p * PANEL * inputs`.
pub(crate) fn pack(w: &[f32], inputs: usize, outputs: usize) -> Vec<f32> {
    let panels = outputs.div_ceil(PANEL);
    let mut packed = Vec::with_capacity(panels * inputs * PANEL);
    for p in 0..panels {
        let (from, width) = (p * PANEL, panel_width(outputs, p));
        for i in 0..inputs {
            let row = &w[i * outputs..(i + 1) * outputs];
            packed.extend((from..from + width).map(|c| row.get(c).copied().unwrap_or(0.0)));
        }
    }
    packed
}

/// The length of [`pack`]`(w, inputs, outputs)`.
fn packed_len(inputs: usize, outputs: usize) -> usize {
    (0..outputs.div_ceil(PANEL))
        .map(|p| inputs * panel_width(outputs, p))
        .sum()
}

/// `y[r][j] = b[j] + sum_i x[r][i] * w[i][j]` for `rows` rows; `x` is
/// `rows x inputs`, `w` is `inputs x outputs` (row-major) and `packed` is
/// [`pack`]`(w)`, `y` is `rows x outputs`.
pub(crate) fn dense(x: &[f32], rows: usize, w: &[f32], packed: &[f32], b: &[f32], y: &mut [f32]) {
    let (inputs, outputs) = (w.len() / b.len(), b.len());
    assert!(x.len() >= rows * inputs && y.len() >= rows * outputs && w.len() == inputs * outputs);
    assert_eq!(packed.len(), packed_len(inputs, outputs), "packed is pack(w)");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA (checked just above), and
        // the slices' lengths were checked against the shapes.
        unsafe { avx::dense(&avx::Layer { x, inputs, packed, b }, rows, y) };
        return;
    }
    portable(x, rows, inputs, w, b, y);
}

/// The portable path.
fn portable(x: &[f32], rows: usize, inputs: usize, w: &[f32], b: &[f32], y: &mut [f32]) {
    let outputs = b.len();
    for r in 0..rows {
        let xr = &x[r * inputs..(r + 1) * inputs];
        for j in 0..outputs {
            let mut acc = b[j];
            for (i, &xi) in xr.iter().enumerate() {
                acc = xi.mul_add(w[i * outputs + j], acc);
            }
            y[r * outputs + j] = acc + 0.0;
        }
    }
}

/// `tanh` on every element, in place: a rational approximation (odd
/// polynomial of degree 13 over even of degree 6, the inputs clamped to
/// +-7.905, beyond which tanh is within 2.1e-7 of +-1), within 5e-7 of the
/// true value (tested); plain f32 arithmetic, so the same bits on every
/// machine and vectorized by the compiler.
pub(crate) fn tanh_in_place(v: &mut [f32]) {
    const CLAMP: f32 = 7.905_311;
    const A1: f32 = 4.893_524_6e-3;
    const A3: f32 = 6.372_619_3e-4;
    const A5: f32 = 1.485_722_4e-5;
    const A7: f32 = 5.122_297e-8;
    const A9: f32 = -8.604_672e-11;
    const A11: f32 = 2.000_188e-13;
    const A13: f32 = -2.760_768_5e-16;
    const B0: f32 = 4.893_525e-3;
    const B2: f32 = 2.268_434_6e-3;
    const B4: f32 = 1.185_347e-4;
    const B6: f32 = 1.198_258_4e-6;
    for x in v.iter_mut() {
        let t = x.clamp(-CLAMP, CLAMP);
        let t2 = t * t;
        let p = ((((((A13 * t2 + A11) * t2 + A9) * t2 + A7) * t2 + A5) * t2 + A3) * t2 + A1) * t;
        let q = ((B6 * t2 + B4) * t2 + B2) * t2 + B0;
        *x = p / q;
    }
}

/// The FMA ceiling's loop: [`FMA_LANES`] chains of fused multiply-adds
/// (12 vectors of 8 on AVX2), each started at its own value so that none
/// is a copy of another the compiler could merge, all summed at the end so
/// that none is dead code. (Until stop 65 the chains started equal and one
/// was read: the compiler kept that one, and the "ceiling" was 12 times one
/// chain's latency-bound rate, 1.5 times what the pipes do here.)
const FMA_LANES: usize = 96;
const FMA_M: f32 = 0.999_999;
const FMA_C: f32 = 1e-7;

/// Where lane `k` of the ceiling's loop starts.
fn fma_start(k: usize) -> f32 {
    1.0 + k as f32 / 128.0
}

/// `n` rounds of the ceiling's loop over every lane, one at a time, and
/// the sum of the lanes: the portable loop, and the value the AVX2 loop
/// must give.
fn fma_loop_portable(n: usize) -> f32 {
    let mut acc: [f32; FMA_LANES] = std::array::from_fn(fma_start);
    for _ in 0..n {
        for a in acc.iter_mut() {
            *a = a.mul_add(FMA_M, FMA_C);
        }
    }
    acc.iter().sum()
}

/// This thread's rate of f32 flops (a fused multiply-add is two) in a loop
/// that does nothing else, for `seconds`: the ceiling a dense layer's rate
/// is measured against (benchmarks). The portable rate where the processor
/// has no AVX2/FMA.
pub fn fma_peak_flops(seconds: f64) -> f64 {
    let start = std::time::Instant::now();
    let mut flops = 0.0;
    let mut sink = 0.0f32;
    while start.elapsed().as_secs_f64() < seconds {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            sink += unsafe { avx::fma_loop(1 << 18) };
            flops += (1u64 << 18) as f64 * FMA_LANES as f64 * 2.0;
            continue;
        }
        sink += fma_loop_portable(1 << 14);
        flops += (1u64 << 14) as f64 * FMA_LANES as f64 * 2.0;
    }
    std::hint::black_box(sink);
    flops / start.elapsed().as_secs_f64()
}

/// The rate of `threads` threads running [`fma_peak_flops`] at once,
/// summed: the cores' ceiling when they all work (a processor may run
/// slower with more of its cores busy).
pub fn fma_peak_flops_on(seconds: f64, threads: usize) -> f64 {
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..threads.max(1))
            .map(|_| s.spawn(move || fma_peak_flops(seconds)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("the FMA loop does not panic"))
            .sum()
    })
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::{FMA_C, FMA_LANES, FMA_M, PANEL, fma_start, panel_width};

    /// Rows a chunk of a batch holds (a multiple of 6): 48 rows of 256
    /// floats are 48 KB, beside a layer's weights in the L2 cache.
    const CHUNK_ROWS: usize = 48;

    /// The most inputs a row left over may have to skip its zeros (their
    /// indices are kept on the stack); it skips them when at most a third
    /// of its inputs are nonzero.
    const SPARSE_MAX: usize = 1024;

    /// A layer's input rows (`inputs` floats each), packed weights and
    /// biases.
    #[derive(Clone, Copy)]
    pub(super) struct Layer<'a> {
        pub(super) x: &'a [f32],
        pub(super) inputs: usize,
        pub(super) packed: &'a [f32],
        pub(super) b: &'a [f32],
    }

    impl Layer<'_> {
        /// The start of packed panel `p` (every panel before the last is
        /// `inputs x 16` floats).
        fn panel_at(&self, p: usize) -> *const f32 {
            self.packed.as_ptr().wrapping_add(p * self.inputs * PANEL)
        }
    }

    /// [`super::fma_loop_portable`] in 12 vectors of 8 lanes: 12
    /// independent multiply-adds a round, enough in flight to cover the
    /// instruction's latency on two pipes; the same sum.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fma_loop(n: usize) -> f32 {
        let mut lanes: [f32; FMA_LANES] = std::array::from_fn(fma_start);
        // SAFETY: chain k reads lanes 8k..8k + 8 of 96.
        let mut acc: [__m256; FMA_LANES / 8] =
            std::array::from_fn(|k| unsafe { _mm256_loadu_ps(lanes.as_ptr().add(8 * k)) });
        let (m, c) = (_mm256_set1_ps(FMA_M), _mm256_set1_ps(FMA_C));
        for _ in 0..n {
            for a in acc.iter_mut() {
                *a = _mm256_fmadd_ps(*a, m, c);
            }
        }
        for (k, a) in acc.iter().enumerate() {
            // SAFETY: chain k writes lanes 8k..8k + 8 of 96.
            unsafe { _mm256_storeu_ps(lanes.as_mut_ptr().add(8 * k), *a) };
        }
        lanes.iter().sum()
    }

    /// [`super::dense`] with AVX2 and FMA. Each packed panel of 16 columns
    /// serves every block of rows before the next is read, so a panel
    /// (inputs x 16 floats, 14 KB for 218 inputs) stays in the L1 cache
    /// while the rows go by six at a time, in chunks of [`CHUNK_ROWS`] that
    /// stay in L2.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; `l.x` holds `rows x inputs`,
    /// `l.packed` `pack(w)` of an `inputs x outputs` `w`, `y` `rows x
    /// outputs` floats (`outputs` = `l.b.len()`).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dense(l: &Layer, rows: usize, y: &mut [f32]) {
        let (inputs, outputs) = (l.inputs, l.b.len());
        // Blocks of 6 rows x 16 columns: 12 accumulators, 2 weight vectors
        // and a broadcast fill 15 of AVX2's 16 registers.
        let blocked = rows - rows % 6;
        for start in (0..blocked).step_by(CHUNK_ROWS) {
            let end = (start + CHUNK_ROWS).min(blocked);
            for p in 0..outputs.div_ceil(PANEL) {
                let (a, j) = (l.panel_at(p), p * PANEL);
                for r in (start..end).step_by(6) {
                    // SAFETY: rows r..r+6, the columns of packed panel p.
                    unsafe {
                        if panel_width(outputs, p) == PANEL {
                            panel::<6, 2>(l, y, r, j, [a, a.add(8)], PANEL, 0..inputs)
                        } else {
                            panel::<6, 1>(l, y, r, j, [a], 8, 0..inputs)
                        }
                    };
                }
            }
        }
        // The rows left over one at a time, over their nonzero inputs only
        // when few are. Not zeroed (4 KB a call): nonzero_inputs writes
        // what is read.
        let mut nonzero = std::mem::MaybeUninit::<[u32; SPARSE_MAX]>::uninit();
        for r in blocked..rows {
            match nonzero_inputs(&l.x[r * inputs..(r + 1) * inputs], &mut nonzero) {
                Some(n) => {
                    // SAFETY: nonzero_inputs wrote the first n indices.
                    let nz = unsafe { std::slice::from_raw_parts(nonzero.as_ptr().cast::<u32>(), n) };
                    // SAFETY: as this function's, for row r < rows.
                    unsafe { one_row(l, y, r, nz.iter().map(|&i| i as usize)) };
                }
                // SAFETY: as this function's, for row r < rows.
                None => unsafe { one_row(l, y, r, 0..inputs) },
            }
        }
    }

    /// Row `r` of [`dense`] with sums over the inputs `over` yields: four
    /// whole panels at once (8 independent sums), then a panel at a time.
    ///
    /// # Safety
    /// As [`dense`], `r < rows`, and `over` yields inputs below `l.inputs`
    /// in order.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn one_row(l: &Layer, y: &mut [f32], r: usize, over: impl Iterator<Item = usize> + Clone) {
        let outputs = l.b.len();
        let (panels, full) = (outputs.div_ceil(PANEL), outputs / PANEL);
        let mut p = 0;
        while p + 4 <= full {
            let [a, b, c, d] = [p, p + 1, p + 2, p + 3].map(|q| l.panel_at(q));
            // SAFETY: row r, the columns of packed panels p..p+4 (whole
            // panels of 16: the second half starts 8 floats on).
            unsafe {
                let from = [a, a.add(8), b, b.add(8), c, c.add(8), d, d.add(8)];
                panel::<1, 8>(l, y, r, p * PANEL, from, PANEL, over.clone())
            };
            p += 4;
        }
        for p in p..panels {
            let (a, j) = (l.panel_at(p), p * PANEL);
            // SAFETY: row r, the columns of packed panel p.
            unsafe {
                if panel_width(outputs, p) == PANEL {
                    panel::<1, 2>(l, y, r, j, [a, a.add(8)], PANEL, over.clone())
                } else {
                    panel::<1, 1>(l, y, r, j, [a], 8, over.clone())
                }
            };
        }
    }

    /// Writes the indices of `row`'s nonzero entries into `to` and says
    /// how many there are, if they are at most a third of the row (and the
    /// row at most [`SPARSE_MAX`] long); `None` for a denser row, found
    /// after a look at its first entries (a hidden layer's, after tanh).
    fn nonzero_inputs(row: &[f32], to: &mut std::mem::MaybeUninit<[u32; SPARSE_MAX]>) -> Option<usize> {
        if row.len() > SPARSE_MAX {
            return None;
        }
        let to = to.as_mut_ptr().cast::<u32>();
        let most = row.len() / 3;
        let mut n = 0;
        for (c, chunk) in row.chunks(32).enumerate() {
            for (k, &v) in chunk.iter().enumerate() {
                // Branch-free: the index is written, and kept if nonzero.
                // SAFETY: n <= the entries seen so far < row.len() <= SPARSE_MAX.
                unsafe { to.add(n).write((c * 32 + k) as u32) };
                n += (v != 0.0) as usize;
            }
            if n > most {
                return None;
            }
        }
        Some(n)
    }

    /// A mask of the first `n` of 8 lanes (`n` <= 8).
    #[target_feature(enable = "avx2,fma")]
    fn first_lanes(n: usize) -> __m256i {
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), lane)
    }

    /// Rows `r..r + R`, columns `j..j + 8 * C` (those below `outputs`):
    /// `R x C` accumulators of 8 floats in registers, one fused
    /// multiply-add each for each input `i` of `over` (every input, or the
    /// row's nonzero ones, in order). Input `i`'s weights for accumulator
    /// column `t` are the 8 floats at `from[t] + i * stride`.
    ///
    /// # Safety
    /// As [`dense`], `r + R <= rows`, `j + 8 * (C - 1) < outputs`, each
    /// `from[t] + i * stride` (i < inputs) starts 8 floats of the packed
    /// weights, and `over` yields inputs below `l.inputs`.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn panel<const R: usize, const C: usize>(
        l: &Layer,
        y: &mut [f32],
        r: usize,
        j: usize,
        from: [*const f32; C],
        stride: usize,
        over: impl Iterator<Item = usize>,
    ) {
        let (inputs, outputs) = (l.inputs, l.b.len());
        let (xp, bp, yp) = (l.x.as_ptr(), l.b.as_ptr(), y.as_mut_ptr());
        // The last vector's columns below `outputs` (8 but at a layer's end).
        let last = (outputs - j - 8 * (C - 1)).min(8);
        let mask = first_lanes(last);
        // SAFETY (every pointer below): row k < r + R <= rows reads
        // x[k * inputs + i] with i < inputs; the columns below outputs read
        // b[j..] and write y[k * outputs + j..] (the last vector masked);
        // the weights as the caller promised.
        let mut bias = [_mm256_setzero_ps(); C];
        for (t, v) in bias.iter_mut().enumerate() {
            *v = unsafe {
                if t + 1 < C || last == 8 {
                    _mm256_loadu_ps(bp.add(j + 8 * t))
                } else {
                    _mm256_maskload_ps(bp.add(j + 8 * t), mask)
                }
            };
        }
        let mut acc = [bias; R];
        for i in over {
            let mut ws = [_mm256_setzero_ps(); C];
            for (t, v) in ws.iter_mut().enumerate() {
                *v = unsafe { _mm256_loadu_ps(from[t].add(i * stride)) };
            }
            for (k, row) in acc.iter_mut().enumerate() {
                let xv = _mm256_set1_ps(unsafe { *xp.add((r + k) * inputs + i) });
                for t in 0..C {
                    row[t] = _mm256_fmadd_ps(xv, ws[t], row[t]);
                }
            }
        }
        let zero = _mm256_setzero_ps();
        for (k, row) in acc.iter().enumerate() {
            for (t, a) in row.iter().enumerate() {
                let (to, v) = (
                    unsafe { yp.add((r + k) * outputs + j + 8 * t) },
                    _mm256_add_ps(*a, zero),
                );
                unsafe {
                    if t + 1 < C || last == 8 {
                        _mm256_storeu_ps(to, v)
                    } else {
                        _mm256_maskstore_ps(to, mask, v)
                    }
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test values in [-1, 1): splitmix64 (a fixed sequence, not a stream
    /// of the experiments').
    fn uniform(state: &mut u64, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            })
            .collect()
    }

    /// The ceiling's AVX2 loop computes every one of its 96 lanes: its
    /// result is the sum the portable loop gives, bit for bit, and each
    /// lane changes it (a loop whose lanes were merged or dropped, as the
    /// compiler did with the old loop's equal chains of which one was read,
    /// gives another sum and measures a rate that is not the pipes').
    #[test]
    fn the_ceiling_loop_computes_every_lane() {
        let n = 1000;
        let all = fma_loop_portable(n);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            assert_eq!(unsafe { avx::fma_loop(n) }.to_bits(), all.to_bits());
        }
        // One chain's lane, what the old loop returned, is far from the sum.
        let mut one = fma_start(0);
        for _ in 0..n {
            one = one.mul_add(FMA_M, FMA_C);
        }
        assert!(all > 90.0 * one, "96 lanes sum to {all}, one lane is {one}");
    }

    /// The SIMD path equals the portable one bit for bit, for shapes with
    /// every kind of leftover row and column, and a row alone equals the
    /// same row in a batch.
    #[test]
    fn every_path_gives_the_same_bits() {
        let mut rng = 7u64;
        for &(rows, inputs, outputs) in &[
            (1, 5, 1),
            (3, 17, 9),
            (4, 64, 32),
            (9, 218, 154),
            (6, 33, 71),
            (13, 40, 100),
            (1, 30, 57),
            (8, 218, 1),
            (7, 340, 308),
        ] {
            let mut x = uniform(&mut rng, rows * inputs);
            // Every third row mostly zeros (a one-hot observation, whose
            // zeros a row left over skips), some of them -0.
            for (k, v) in x.iter_mut().enumerate() {
                if (k / inputs) % 3 == 1 && k % 5 != 0 {
                    *v = if k % 2 == 0 { 0.0 } else { -0.0 };
                }
            }
            let w = uniform(&mut rng, inputs * outputs);
            let mut b = uniform(&mut rng, outputs);
            b[0] = -0.0;
            let packed = pack(&w, inputs, outputs);
            let mut fast = vec![0.0; rows * outputs];
            dense(&x, rows, &w, &packed, &b, &mut fast);
            let mut slow = vec![0.0; rows * outputs];
            portable(&x, rows, inputs, &w, &b, &mut slow);
            assert_eq!(fast, slow, "{rows} x {inputs} -> {outputs}");
            for r in 0..rows {
                let mut one = vec![0.0; outputs];
                dense(&x[r * inputs..(r + 1) * inputs], 1, &w, &packed, &b, &mut one);
                assert_eq!(one, fast[r * outputs..(r + 1) * outputs], "row {r} alone");
            }
            // And the sums are the layer's (to rounding).
            for r in 0..rows {
                for j in 0..outputs {
                    let exact: f64 = b[j] as f64
                        + (0..inputs)
                            .map(|i| x[r * inputs + i] as f64 * w[i * outputs + j] as f64)
                            .sum::<f64>();
                    assert!((fast[r * outputs + j] as f64 - exact).abs() < 1e-4, "{r},{j}");
                }
            }
        }
    }

    /// A sum that comes out as zero is +0 on every path (a row that skips
    /// its zero inputs could otherwise keep a bias's -0 that the full sum
    /// turns into +0).
    #[test]
    fn a_zero_sum_is_positive_zero_on_every_path() {
        let (inputs, outputs) = (12, 24);
        let w: Vec<f32> = (0..inputs * outputs)
            .map(|k| if k % 2 == 0 { 0.5 } else { -0.25 })
            .collect();
        let b = vec![-0.0f32; outputs];
        let packed = pack(&w, inputs, outputs);
        for rows in [1, 6, 7] {
            let x = vec![0.0f32; rows * inputs];
            let mut y = vec![1.0; rows * outputs];
            dense(&x, rows, &w, &packed, &b, &mut y);
            assert!(y.iter().all(|v| v.to_bits() == 0), "{rows} rows: {y:?}");
            portable(&x, rows, inputs, &w, &b, &mut y);
            assert!(y.iter().all(|v| v.to_bits() == 0), "{rows} rows, portable: {y:?}");
        }
    }

    #[test]
    fn tanh_is_within_5e7_of_the_true_value() {
        let mut v: Vec<f32> = (-2_000_000..=2_000_000).map(|i| i as f32 * 1e-5).collect();
        v.extend([-20.0, 20.0, -8.0, 8.0, f32::MAX, f32::MIN]);
        let want: Vec<f64> = v.iter().map(|&x| (x as f64).tanh()).collect();
        tanh_in_place(&mut v);
        let worst = v
            .iter()
            .zip(&want)
            .map(|(g, w)| (*g as f64 - w).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 5e-7, "tanh is off by {worst}");
    }
}
