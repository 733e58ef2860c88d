//! The Python module `muggins._muggins`: OpenSpiel's block and team as
//! game states with OpenSpiel's action ids (chance actions deal the tiles
//! one by one, as OpenSpiel does), and random playouts in batch.

use full::openspiel::{action_from_id, action_id, deal_seat};
use full::{FullActions, FullPosition, FullRules, MAX_SEATS, Preset};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// OpenSpiel's player id of a chance node.
const CHANCE: i64 = -1;
/// OpenSpiel's player id of a terminal state.
const TERMINAL: i64 = -4;

/// A block or team state, from the deal's first chance node.
#[pyclass(module = "muggins._muggins")]
#[derive(Clone)]
struct OpenState {
    rules: FullRules,
    hands: [u64; MAX_SEATS],
    dealt: u64,
    pos: Option<FullPosition>,
    history: Vec<u32>,
}

fn preset_of(name: &str) -> PyResult<Preset> {
    match name {
        "block" => Ok(Preset::Block),
        "team" => Ok(Preset::Team),
        other => Err(PyValueError::new_err(format!(
            "game {other:?}: expected \"block\" or \"team\""
        ))),
    }
}

#[pymethods]
impl OpenState {
    /// A new game of `game` ("block" or "team"), before the deal.
    #[new]
    fn new(game: &str) -> PyResult<Self> {
        Ok(OpenState {
            rules: FullRules::preset(preset_of(game)?),
            hands: [0; MAX_SEATS],
            dealt: 0,
            pos: None,
            history: Vec::new(),
        })
    }

    /// The player to act: a seat, -1 at a chance node, -4 when over.
    fn current_player(&self) -> i64 {
        match &self.pos {
            None => CHANCE,
            Some(p) if p.end.is_some() => TERMINAL,
            Some(p) => p.mover as i64,
        }
    }

    fn is_chance_node(&self) -> bool {
        self.pos.is_none()
    }

    fn is_terminal(&self) -> bool {
        self.pos.is_some_and(|p| p.end.is_some())
    }

    /// The legal actions, ascending: the tiles not yet dealt at a chance
    /// node, OpenSpiel's action ids of the mover's plays otherwise.
    fn legal_actions(&self) -> Vec<u32> {
        match &self.pos {
            None => (0..self.rules.tile_count() as u32)
                .filter(|&t| self.dealt >> t & 1 == 0)
                .collect(),
            Some(p) if p.end.is_some() => Vec::new(),
            Some(p) => {
                let mut list = FullActions::default();
                p.actions(&self.rules, &mut list);
                let mut ids: Vec<u32> = list
                    .as_slice()
                    .iter()
                    .map(|&a| action_id(&self.rules, p.mover, a))
                    .collect();
                ids.sort_unstable();
                ids
            }
        }
    }

    /// A chance node's outcomes and their probabilities (uniform).
    fn chance_outcomes(&self) -> Vec<(u32, f64)> {
        if self.pos.is_some() {
            return Vec::new();
        }
        let left = self.legal_actions();
        let p = 1.0 / left.len() as f64;
        left.into_iter().map(|a| (a, p)).collect()
    }

    /// Applies a legal action; an illegal one is refused, naming it.
    fn apply_action(&mut self, action: u32) -> PyResult<()> {
        match self.pos.as_mut() {
            None => {
                if action >= self.rules.tile_count() as u32 || self.dealt >> action & 1 == 1 {
                    return Err(PyValueError::new_err(format!(
                        "action {action}: not a tile left to deal"
                    )));
                }
                let k = self.dealt.count_ones() as u8;
                self.dealt |= 1 << action;
                self.hands[deal_seat(&self.rules, k) as usize] |= 1 << action;
                if k + 1 == self.rules.dealt() {
                    self.pos = Some(FullPosition::deal(&self.rules, self.hands));
                }
            }
            Some(p) => {
                let legal = p.end.is_none()
                    && matches!(action_from_id(&self.rules, action as u64),
                        Some((seat, a)) if seat == p.mover && p.is_legal(&self.rules, a));
                if !legal {
                    return Err(PyValueError::new_err(format!("action {action}: not legal here")));
                }
                let (_, a) = action_from_id(&self.rules, action as u64).expect("checked above");
                p.play(&self.rules, a);
            }
        }
        self.history.push(action);
        Ok(())
    }

    /// Every player's return (0 until the end), OpenSpiel's.
    fn returns(&self) -> Vec<f64> {
        let seats = self.rules.seats() as usize;
        match &self.pos {
            Some(p) if p.end.is_some() => p.returns(&self.rules)[..seats].iter().map(|&r| r as f64).collect(),
            _ => vec![0.0; seats],
        }
    }

    fn history(&self) -> Vec<u32> {
        self.history.clone()
    }

    fn num_players(&self) -> usize {
        self.rules.seats() as usize
    }

    fn clone(&self) -> Self {
        Clone::clone(self)
    }
}

/// `n` random hands of `game` (uniform deals and uniform legal plays, one
/// stream seeded with `seed`; `full::playout_returns`): seat 0's return in
/// each, computed with the GIL released.
#[pyfunction]
fn playouts(py: Python<'_>, game: &str, n: u64, seed: u64) -> PyResult<Vec<i32>> {
    let rules = FullRules::preset(preset_of(game)?);
    Ok(py.detach(|| full::playout_returns(&rules, seed, n)))
}

/// [`playouts`] as little-endian `i32` bytes, for a numpy array without a
/// Python int per hand (`muggins.playouts` wraps it).
#[pyfunction]
fn playouts_bytes<'py>(py: Python<'py>, game: &str, n: u64, seed: u64) -> PyResult<Bound<'py, PyBytes>> {
    let rules = FullRules::preset(preset_of(game)?);
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
    m.add_class::<OpenState>()?;
    m.add_function(wrap_pyfunction!(playouts, m)?)?;
    m.add_function(wrap_pyfunction!(playouts_bytes, m)?)?;
    Ok(())
}
