//! The dense layer `y = b + x W` for a block of rows, and the activation.
//!
//! Every output element is computed the same way whatever the path: start
//! from the bias, then one fused multiply-add for each input in order
//! (`acc = fma(x[i], w[i][j], acc)`). The AVX2/FMA path does 96 such sums
//! at once in registers (6 rows x 16 outputs; the rows left over one at a
//! time, 48 outputs at once; the columns left over 8 at a time, then one at
//! a time); the portable path
//! does them one at a time with `f32::mul_add`, which rounds exactly as the
//! hardware's FMA does. So a row's outputs are bit-identical whether it is
//! evaluated alone or in a batch, on one thread or many, with or without
//! AVX2: the tiling changes which sums run together, never a sum's order.
//!
//! This is the crate's one module with `unsafe`: the intrinsics read and
//! write through pointers, and calling a function compiled for AVX2/FMA is
//! sound only on a processor that has them, which [`dense`] checks at run
//! time (once; the answer is cached by the standard library).

#![allow(unsafe_code)]

/// Columns of a packed weight panel.
pub(crate) const PANEL: usize = 16;

/// `w` (`inputs x outputs`, row-major) repacked for the AVX2 path: each
/// whole panel of [`PANEL`] columns as `inputs x PANEL` floats in a row,
/// so a pass over a panel reads memory in order (the columns past the last
/// whole panel are read from `w`).
pub(crate) fn pack(w: &[f32], inputs: usize, outputs: usize) -> Vec<f32> {
    let panels = outputs / PANEL;
    let mut packed = Vec::with_capacity(panels * inputs * PANEL);
    for p in 0..panels {
        for i in 0..inputs {
            packed.extend_from_slice(&w[i * outputs + p * PANEL..i * outputs + (p + 1) * PANEL]);
        }
    }
    packed
}

/// `y[r][j] = b[j] + sum_i x[r][i] * w[i][j]` for `rows` rows; `x` is
/// `rows x inputs`, `w` is `inputs x outputs` (row-major) and `packed` is
/// [`pack`]`(w)`, `y` is `rows x outputs`.
pub(crate) fn dense(x: &[f32], rows: usize, w: &[f32], packed: &[f32], b: &[f32], y: &mut [f32]) {
    let (inputs, outputs) = (w.len() / b.len(), b.len());
    assert!(x.len() >= rows * inputs && y.len() >= rows * outputs && w.len() == inputs * outputs);
    assert_eq!(packed.len(), outputs / PANEL * PANEL * inputs, "packed is pack(w)");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA (checked just above), and
        // the slices' lengths were checked against the shapes.
        unsafe {
            avx::dense(
                &avx::Layer {
                    x,
                    inputs,
                    w,
                    packed,
                    b,
                },
                rows,
                y,
            )
        };
        return;
    }
    portable(x, rows, inputs, w, b, y, 0);
}

/// The portable path, from output column `from` on (the AVX2 path hands
/// it the columns left over after its tiles of 8).
#[inline(always)]
fn portable(x: &[f32], rows: usize, inputs: usize, w: &[f32], b: &[f32], y: &mut [f32], from: usize) {
    let outputs = b.len();
    for r in 0..rows {
        let xr = &x[r * inputs..(r + 1) * inputs];
        for j in from..outputs {
            let mut acc = b[j];
            for (i, &xi) in xr.iter().enumerate() {
                acc = xi.mul_add(w[i * outputs + j], acc);
            }
            y[r * outputs + j] = acc;
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
            sink += unsafe { avx::fma_loop(1 << 20) };
            flops += (1u64 << 20) as f64 * 12.0 * 8.0 * 2.0;
            continue;
        }
        let mut acc = [1.0f32; 12];
        for _ in 0..1 << 16 {
            for a in acc.iter_mut() {
                *a = a.mul_add(0.999_999, 1e-7);
            }
        }
        sink += acc.iter().sum::<f32>();
        flops += (1u64 << 16) as f64 * 12.0 * 2.0;
    }
    std::hint::black_box(sink);
    flops / start.elapsed().as_secs_f64()
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::PANEL;

    /// Rows a chunk of a batch holds (a multiple of 6): 48 rows of 256
    /// floats are 48 KB, beside a layer's weights in a 1 MB L2 cache.
    const CHUNK_ROWS: usize = 48;

    /// A layer's input rows (`inputs` floats each), weights (row-major and
    /// packed) and biases.
    #[derive(Clone, Copy)]
    pub(super) struct Layer<'a> {
        pub(super) x: &'a [f32],
        pub(super) inputs: usize,
        pub(super) w: &'a [f32],
        pub(super) packed: &'a [f32],
        pub(super) b: &'a [f32],
    }

    /// `n` rounds of 12 independent 8-wide fused multiply-adds (enough in
    /// flight to cover the instruction's latency on two pipes).
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fma_loop(n: usize) -> f32 {
        let mut acc = [_mm256_set1_ps(1.0); 12];
        let (m, c) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        for _ in 0..n {
            for a in acc.iter_mut() {
                *a = _mm256_fmadd_ps(*a, m, c);
            }
        }
        let mut out = [0.0f32; 8];
        // SAFETY: out holds 8 floats.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), acc[0]) };
        out[0]
    }

    /// [`super::dense`] with AVX2 and FMA. The packed panels of 16 columns
    /// (then the rest 8 at a time from the row-major weights) serve every
    /// block of rows before the next is read, so a panel (inputs x 16
    /// floats, 14 KB for 218 inputs) stays in the L1 cache while the rows
    /// go by six at a time, in chunks of [`CHUNK_ROWS`] that stay in L2.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; `l.x` holds `rows x inputs`,
    /// `l.w` `inputs x outputs`, `l.packed` `pack(l.w)`, `y` `rows x
    /// outputs` floats (`outputs` = `l.b.len()`).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dense(l: &Layer, rows: usize, y: &mut [f32]) {
        let (inputs, outputs) = (l.inputs, l.b.len());
        let whole = outputs / PANEL * PANEL;
        let rest = outputs - outputs % 8;
        // The start of packed panel p, and of row-major column j.
        let panel_at = |p: usize| unsafe { l.packed.as_ptr().add(p * inputs * PANEL) };
        let column_at = |j: usize| unsafe { l.w.as_ptr().add(j) };
        // Blocks of 6 rows x 16 columns: 12 accumulators, 2 weight vectors
        // and a broadcast fill 15 of AVX2's 16 registers.
        let blocked = rows - rows % 6;
        for start in (0..blocked).step_by(CHUNK_ROWS) {
            let end = (start + CHUNK_ROWS).min(blocked);
            for j in (0..whole).step_by(PANEL) {
                let p = panel_at(j / PANEL);
                for r in (start..end).step_by(6) {
                    // SAFETY: rows r..r+6, columns j..j+16 of packed panel j/16.
                    unsafe { panel::<6, 2>(l, y, r, j, [p, p.add(8)], PANEL) };
                }
            }
            for j in (whole..rest).step_by(8) {
                for r in (start..end).step_by(6) {
                    // SAFETY: rows r..r+6, columns j..j+8 of the row-major weights.
                    unsafe { panel::<6, 1>(l, y, r, j, [column_at(j)], outputs) };
                }
            }
        }
        // The rows left over (a single evaluation's one row) one at a time,
        // three packed panels at once: 6 accumulators on independent sums.
        for r in blocked..rows {
            let mut j = 0;
            while j + 3 * PANEL <= whole {
                let p = panel_at(j / PANEL);
                let q = panel_at(j / PANEL + 1);
                let s = panel_at(j / PANEL + 2);
                // SAFETY: row r, columns j..j+48 of three packed panels.
                unsafe { panel::<1, 6>(l, y, r, j, [p, p.add(8), q, q.add(8), s, s.add(8)], PANEL) };
                j += 3 * PANEL;
            }
            while j < whole {
                let p = panel_at(j / PANEL);
                // SAFETY: row r, columns j..j+16 of packed panel j/16.
                unsafe { panel::<1, 2>(l, y, r, j, [p, p.add(8)], PANEL) };
                j += PANEL;
            }
            for j in (whole..rest).step_by(8) {
                // SAFETY: row r, columns j..j+8 of the row-major weights.
                unsafe { panel::<1, 1>(l, y, r, j, [column_at(j)], outputs) };
            }
        }
        if rest < outputs {
            super::portable(l.x, rows, inputs, l.w, l.b, y, rest);
        }
    }

    /// Rows `r..r + R`, columns `j..j + 8 * C`: `R x C` accumulators of 8
    /// floats in registers, one fused multiply-add each per input. Input
    /// `i`'s weights for accumulator column `t` are the 8 floats at
    /// `from[t] + i * stride`.
    ///
    /// # Safety
    /// As [`dense`], `r + R <= rows`, `j + 8 * C <= outputs`, and each
    /// `from[t] + i * stride` (i < inputs) starts 8 floats of the weights.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn panel<const R: usize, const C: usize>(
        l: &Layer,
        y: &mut [f32],
        r: usize,
        j: usize,
        from: [*const f32; C],
        stride: usize,
    ) {
        let (inputs, outputs) = (l.inputs, l.b.len());
        let (xp, bp, yp) = (l.x.as_ptr(), l.b.as_ptr(), y.as_mut_ptr());
        // SAFETY (every pointer below): row k < r + R <= rows reads
        // x[k * inputs + i] with i < inputs; columns j..j + 8C <= outputs
        // read b[j..] and write y[k * outputs + j..]; the weights as the
        // caller promised.
        let mut acc = [[_mm256_setzero_ps(); C]; R];
        for row in acc.iter_mut() {
            for (t, a) in row.iter_mut().enumerate() {
                *a = unsafe { _mm256_loadu_ps(bp.add(j + 8 * t)) };
            }
        }
        for i in 0..inputs {
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
        for (k, row) in acc.iter().enumerate() {
            for (t, a) in row.iter().enumerate() {
                unsafe { _mm256_storeu_ps(yp.add((r + k) * outputs + j + 8 * t), *a) };
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
        ] {
            let x = uniform(&mut rng, rows * inputs);
            let w = uniform(&mut rng, inputs * outputs);
            let b = uniform(&mut rng, outputs);
            let packed = pack(&w, inputs, outputs);
            let mut fast = vec![0.0; rows * outputs];
            dense(&x, rows, &w, &packed, &b, &mut fast);
            let mut slow = vec![0.0; rows * outputs];
            portable(&x, rows, inputs, &w, &b, &mut slow, 0);
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
