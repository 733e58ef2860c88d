//! The Python module `muggins._muggins` (docs/python.md): game states of
//! every preset with OpenSpiel's conventions (`State`), the engines as bots
//! (`Bot`, engine "net" included), networks' forward passes (`NetCore`),
//! and random playouts in batch. `muggins.openspiel` (Python)
//! registers them with OpenSpiel.

mod args;
mod bot;
mod game;
mod net;
mod state;
mod vecenv;

use full::{FullRules, Preset};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn playout_rules(name: &str) -> PyResult<FullRules> {
    match name {
        "block" => Ok(FullRules::preset(Preset::Block)),
        "team" => Ok(FullRules::preset(Preset::Team)),
        other => Err(PyValueError::new_err(format!(
            "game {other:?}: playouts play \"block\" or \"team\""
        ))),
    }
}

/// The most hands one call plays (their returns are held in memory: 4 GB).
const MAX_PLAYOUTS: i128 = 1_000_000_000;

/// `n` and `seed` checked: `n` from 0 to [`MAX_PLAYOUTS`], the seed any u64.
fn playout_args(n: &Bound<'_, PyAny>, seed: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    let n = args::int_in(n, "n", 0..=MAX_PLAYOUTS, || {
        format!(": playouts play 0 to {MAX_PLAYOUTS} hands a call")
    })?;
    Ok((n as u64, args::seed(seed, "seed")?))
}

/// `n` random hands of `game` (uniform deals and uniform legal plays, one
/// stream seeded with `seed`; `full::playout_returns`): seat 0's return in
/// each, computed with the GIL released.
#[pyfunction]
fn playouts(py: Python<'_>, game: &str, n: &Bound<'_, PyAny>, seed: &Bound<'_, PyAny>) -> PyResult<Vec<i32>> {
    let rules = playout_rules(game)?;
    let (n, seed) = playout_args(n, seed)?;
    Ok(py.detach(|| full::playout_returns(&rules, seed, n)))
}

/// [`playouts`] as little-endian `i32` bytes, for a numpy or Arrow array
/// without a Python int per hand (`muggins.playouts` wraps it).
#[pyfunction]
fn playouts_bytes<'py>(
    py: Python<'py>,
    game: &str,
    n: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let rules = playout_rules(game)?;
    let (n, seed) = playout_args(n, seed)?;
    let bytes: Vec<u8> = py.detach(|| {
        full::playout_returns(&rules, seed, n)
            .into_iter()
            .flat_map(i32::to_le_bytes)
            .collect()
    });
    Ok(PyBytes::new(py, &bytes))
}

#[pymodule]
fn _muggins(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<state::State>()?;
    m.add_class::<bot::Bot>()?;
    m.add_class::<vecenv::VecCore>()?;
    m.add_class::<net::NetCore>()?;
    m.add_function(wrap_pyfunction!(state::state_from_history, m)?)?;
    m.add_function(wrap_pyfunction!(bot::bot_from_settings, m)?)?;
    m.add_function(wrap_pyfunction!(playouts, m)?)?;
    m.add_function(wrap_pyfunction!(playouts_bytes, m)?)?;
    // The names a Bot takes, read from muggins' one engine type (and its
    // strategies), so that a new engine reaches Python without a list here.
    let engines: Vec<&str> = engine::PlayerEngine::NAMED.iter().map(|e| e.name()).collect();
    m.add("ENGINES", pyo3::types::PyTuple::new(m.py(), engines)?)?;
    let strategies = full::FullTarget::ALL.map(|t| t.name());
    m.add("STRATEGIES", pyo3::types::PyTuple::new(m.py(), strategies)?)?;
    Ok(())
}
