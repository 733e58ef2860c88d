//! The batched environment's core (`muggins.VecEnv`, docs/rl.md): `N`
//! games stepped together inside Rust, the chance nodes and the engines'
//! seats played here, the learner's observations written into arrays that
//! Python owns. Each game has its own stream (keyed by the seed and the
//! game's index), so the results are a function of the seed alone, whatever
//! the thread count. The work runs with the GIL released, the games split
//! over `threads` scoped threads.

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use rand_chacha::ChaCha20Rng;

use full::spiel::{CHANCE, Encoding, SpielState};

use super::args;
use super::bot::Bot;
use super::game::Game;
use super::state::Core;

/// Stream tags (engine::seed's scheme): the chance of game `i`, and an
/// engine's decisions in it.
const CHANCE_STREAM: u64 = 4;
const ENGINE_STREAM: u64 = 5;

/// The most games one environment steps.
pub const MAX_ENVS: i128 = 1 << 20;

/// What an illegal action from the learner does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Illegal {
    /// `step` raises ValueError naming the game and the action, and changes nothing.
    Raise,
    /// The learner's side loses the game with the worst return.
    Forfeit,
}

/// One game and its streams.
#[derive(Clone)]
struct Slot {
    state: Core,
    chance: ChaCha20Rng,
    /// Games finished in this slot so far.
    episode: u64,
}

/// What one step writes for one game.
struct Out<'a> {
    obs: &'a mut [f32],
    mask: &'a mut [u8],
    legal: &'a mut [i32],
    count: &'a mut i32,
    reward: &'a mut f32,
    terminated: &'a mut u8,
    seat: &'a mut i32,
    final_obs: &'a mut [f32],
    returns: &'a mut [f32],
}

/// The batched core; `muggins.VecEnv` (Python) holds the arrays.
#[pyclass(module = "muggins._muggins")]
pub struct VecCore {
    game: Game,
    encoding: Encoding,
    slots: Vec<Slot>,
    /// Per seat, the engine that plays it; `None`: the learner's seat.
    engines: Vec<Option<Bot>>,
    seed: u64,
    threads: usize,
    illegal: Illegal,
    obs_size: usize,
    actions: usize,
    seats: usize,
    /// The most legal actions a node has (the `legal` array's width).
    width: usize,
    /// The arrays one step fills, copied into Python's afterwards.
    obs: Vec<f32>,
    mask: Vec<u8>,
    legal: Vec<i32>,
    count: Vec<i32>,
    reward: Vec<f32>,
    terminated: Vec<u8>,
    seat: Vec<i32>,
    final_obs: Vec<f32>,
    returns: Vec<f32>,
    /// Whether each game awaits an action (false before the first reset).
    live: bool,
}

fn buffer<T: Element>(v: &Bound<'_, PyAny>, what: &str, len: usize) -> PyResult<PyBuffer<T>> {
    let b = PyBuffer::<T>::get(v).map_err(|e| PyTypeError::new_err(format!("{what}: {e}")))?;
    if b.item_count() != len || !b.is_c_contiguous() || b.readonly() {
        return Err(PyValueError::new_err(format!(
            "{what}: a writable contiguous array of {len} items is needed"
        )));
    }
    Ok(b)
}

#[pymethods]
impl VecCore {
    /// `engines`: per seat, a `Bot` that plays it or `None` for the learner.
    #[new]
    #[pyo3(signature = (game, knobs, num_envs, engines, seed, threads, encoding, illegal))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        game: &str,
        knobs: Option<&Bound<'_, pyo3::types::PyDict>>,
        num_envs: &Bound<'_, PyAny>,
        engines: Vec<Option<PyRef<'_, Bot>>>,
        seed: &Bound<'_, PyAny>,
        threads: &Bound<'_, PyAny>,
        encoding: &str,
        illegal: &str,
    ) -> PyResult<Self> {
        let game = Game::from_py(game, knobs)?;
        let n = args::int_in(num_envs, "num_envs", 1..=MAX_ENVS, || {
            format!(": an environment steps 1 to {MAX_ENVS} games")
        })? as usize;
        let seed = args::seed(seed, "seed")?;
        let threads = args::int_in(threads, "threads", 0..=1024, || ": 0 (every core) to 1024".into())? as usize;
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        let encoding: Encoding = encoding.parse().map_err(PyValueError::new_err)?;
        let illegal = match illegal {
            "raise" => Illegal::Raise,
            "forfeit" => Illegal::Forfeit,
            other => {
                return Err(PyValueError::new_err(format!(
                    "illegal = {other:?}: expected \"raise\" or \"forfeit\""
                )));
            }
        };
        let engines: Vec<Option<Bot>> = engines.into_iter().map(|b| b.map(|b| b.clone())).collect();
        let seats = game.rules.seats() as usize;
        if engines.len() != seats {
            return Err(PyValueError::new_err(format!(
                "opponents: {} has {seats} seats, {} were given",
                game.name,
                engines.len()
            )));
        }
        if engines.iter().all(Option::is_some) {
            return Err(PyValueError::new_err(
                "opponents: every seat has an engine; leave the learner one",
            ));
        }
        let probe = Core::new(game.rules.clone(), game.to);
        let (obs_size, actions) = (probe.encoding_size(encoding), probe.action_count() as usize);
        let width = probe.max_legal();
        let slots = (0..n as u64)
            .map(|i| Slot {
                state: probe.clone(),
                chance: engine::seed::keyed_rng(seed, i, 0, engine::seed::PYTHON, CHANCE_STREAM),
                episode: 0,
            })
            .collect();
        Ok(VecCore {
            game,
            encoding,
            slots,
            engines,
            seed,
            threads,
            illegal,
            obs_size,
            actions,
            seats,
            width,
            obs: vec![0.0; n * obs_size],
            mask: vec![0; n * actions],
            legal: vec![-1; n * width],
            count: vec![0; n],
            reward: vec![0.0; n],
            terminated: vec![0; n],
            seat: vec![0; n],
            final_obs: vec![0.0; n * obs_size],
            returns: vec![0.0; n * seats],
            live: false,
        })
    }

    /// (observation size, action count, seats, the most legal actions a node has).
    fn shape(&self) -> (usize, usize, usize, usize) {
        (self.obs_size, self.actions, self.seats, self.width)
    }

    /// The encoding's pieces: (name, shape) in order.
    fn pieces(&self) -> Vec<(&'static str, Vec<usize>)> {
        self.slots[0].state.encoding_pieces(self.encoding)
    }

    /// Starts every game anew (the streams restart from the seed, or from
    /// `seed` when given) and fills `obs`, `mask` and `seat`.
    #[pyo3(signature = (obs, mask, legal, count, seat, seed=None))]
    fn reset(
        &mut self,
        py: Python<'_>,
        obs: &Bound<'_, PyAny>,
        mask: &Bound<'_, PyAny>,
        legal: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
        seat: &Bound<'_, PyAny>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let n = self.slots.len();
        let (ob, mb, lb, cb, sb) = (
            buffer::<f32>(obs, "obs", n * self.obs_size)?,
            buffer::<u8>(mask, "mask", n * self.actions)?,
            buffer::<i32>(legal, "legal", n * self.width)?,
            buffer::<i32>(count, "count", n)?,
            buffer::<i32>(seat, "seat", n)?,
        );
        // A new seed starts every stream again; without one the streams go on.
        let rekey = match seed {
            Some(s) if !s.is_none() => {
                self.seed = args::seed(s, "seed")?;
                true
            }
            _ => false,
        };
        let (seed, live) = (self.seed, self.live);
        py.detach(|| {
            self.run(|core, i, slot, scratch, out| {
                if rekey {
                    slot.chance = engine::seed::keyed_rng(seed, i as u64, 0, engine::seed::PYTHON, CHANCE_STREAM);
                    slot.episode = 0;
                } else if live {
                    slot.episode += 1;
                }
                core.start(i, slot, scratch, out)
            })
        })?;
        self.live = true;
        ob.copy_from_slice(py, &self.obs)?;
        mb.copy_from_slice(py, &self.mask)?;
        lb.copy_from_slice(py, &self.legal)?;
        cb.copy_from_slice(py, &self.count)?;
        sb.copy_from_slice(py, &self.seat)?;
        Ok(())
    }

    /// Plays `actions[i]` in game `i` (then the chance nodes and the
    /// engines' seats up to the learner's next turn), filling the arrays;
    /// a game that ends is started anew, its last observation in
    /// `final_obs` and every seat's return in `returns`.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
        obs: &Bound<'_, PyAny>,
        mask: &Bound<'_, PyAny>,
        legal: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
        reward: &Bound<'_, PyAny>,
        terminated: &Bound<'_, PyAny>,
        seat: &Bound<'_, PyAny>,
        final_obs: &Bound<'_, PyAny>,
        returns: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if !self.live {
            return Err(PyValueError::new_err("step before reset: call reset() first"));
        }
        let n = self.slots.len();
        let ab = PyBuffer::<i64>::get(actions).map_err(|e| PyTypeError::new_err(format!("actions: {e}")))?;
        if ab.item_count() != n {
            return Err(PyValueError::new_err(format!(
                "actions: {} given, one for each of the {n} games is needed",
                ab.item_count()
            )));
        }
        let acts = ab.to_vec(py)?;
        let bufs = (
            buffer::<f32>(obs, "obs", n * self.obs_size)?,
            buffer::<u8>(mask, "mask", n * self.actions)?,
            buffer::<i32>(legal, "legal", n * self.width)?,
            buffer::<i32>(count, "count", n)?,
            buffer::<f32>(reward, "reward", n)?,
            buffer::<u8>(terminated, "terminated", n)?,
            buffer::<i32>(seat, "seat", n)?,
            buffer::<f32>(final_obs, "final_obs", n * self.obs_size)?,
            buffer::<f32>(returns, "returns", n * self.seats)?,
        );
        if self.illegal == Illegal::Raise {
            self.check_actions(&acts)?;
        }
        py.detach(|| self.run(|core, i, slot, scratch, out| core.advance(i, slot, acts[i], scratch, out)))?;
        bufs.0.copy_from_slice(py, &self.obs)?;
        bufs.1.copy_from_slice(py, &self.mask)?;
        bufs.2.copy_from_slice(py, &self.legal)?;
        bufs.3.copy_from_slice(py, &self.count)?;
        bufs.4.copy_from_slice(py, &self.reward)?;
        bufs.5.copy_from_slice(py, &self.terminated)?;
        bufs.6.copy_from_slice(py, &self.seat)?;
        // The last observations and the returns: only the rows of the games that ended.
        let (d, s) = (self.obs_size, self.seats);
        let (Some(fobs), Some(rets)) = (bufs.7.as_mut_slice(py), bufs.8.as_mut_slice(py)) else {
            return Err(PyValueError::new_err("final_obs, returns: writable arrays are needed"));
        };
        for (i, _) in self.terminated.iter().enumerate().filter(|(_, t)| **t == 1) {
            for (cell, &v) in fobs[i * d..(i + 1) * d].iter().zip(&self.final_obs[i * d..(i + 1) * d]) {
                cell.set(v);
            }
            for (cell, &v) in rets[i * s..(i + 1) * s].iter().zip(&self.returns[i * s..(i + 1) * s]) {
                cell.set(v);
            }
        }
        Ok(())
    }

    /// Game `i`'s state (a copy, as a `muggins.State`).
    fn state(&self, i: &Bound<'_, PyAny>) -> PyResult<super::state::State> {
        let n = self.slots.len() as i128;
        let i = args::int_in(i, "index", 0..=n - 1, || format!(": the environment has {n} games"))? as usize;
        Ok(super::state::State {
            game: self.game.clone(),
            core: self.slots[i].state.clone(),
        })
    }
}

/// What the workers share: the settings, read only.
struct Shared<'a> {
    engines: &'a [Option<Bot>],
    encoding: Encoding,
    illegal: Illegal,
    actions: usize,
    seats: usize,
}

impl VecCore {
    /// Every action in range and legal in its game, else a ValueError
    /// naming the first that is not.
    fn check_actions(&self, acts: &[i64]) -> PyResult<()> {
        for (i, (&a, slot)) in acts.iter().zip(&self.slots).enumerate() {
            let legal = u32::try_from(a)
                .ok()
                .filter(|&a| (a as usize) < self.actions && self.mask[i * self.actions + a as usize] == 1);
            if legal.is_none() {
                let seat = slot.state.current_player();
                return Err(PyValueError::new_err(format!(
                    "actions[{i}] = {a}: not a legal action of game {i} (seat {seat} to act; legal: {:?}); \
                     nothing was played",
                    slot.state.legal_actions()
                )));
            }
        }
        Ok(())
    }

    /// Runs `each` on every game, the games split over the threads, each
    /// writing its own part of the arrays.
    fn run<F>(&mut self, each: F) -> PyResult<()>
    where
        F: Fn(&Shared<'_>, usize, &mut Slot, &mut Vec<f32>, Out<'_>) -> Result<(), String> + Sync,
    {
        let shared = Shared {
            engines: &self.engines,
            encoding: self.encoding,
            illegal: self.illegal,
            actions: self.actions,
            seats: self.seats,
        };
        let n = self.slots.len();
        let chunk = n.div_ceil(self.threads.min(n).max(1));
        let (d, a, s, w) = (self.obs_size, self.actions, self.seats, self.width);
        let parts = self
            .slots
            .chunks_mut(chunk)
            .zip(self.obs.chunks_mut(chunk * d))
            .zip(self.mask.chunks_mut(chunk * a))
            .zip(self.legal.chunks_mut(chunk * w))
            .zip(self.count.chunks_mut(chunk))
            .zip(self.reward.chunks_mut(chunk))
            .zip(self.terminated.chunks_mut(chunk))
            .zip(self.seat.chunks_mut(chunk))
            .zip(self.final_obs.chunks_mut(chunk * d))
            .zip(self.returns.chunks_mut(chunk * s))
            .enumerate();
        let (shared, each) = (&shared, &each);
        let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .map(
                    |(c, (((((((((slots, obs), mask), legal), count), reward), term), seat), fobs), rets))| {
                        scope.spawn(move || {
                            let mut scratch = Vec::with_capacity(d);
                            for (k, slot) in slots.iter_mut().enumerate() {
                                let out = Out {
                                    obs: &mut obs[k * d..(k + 1) * d],
                                    mask: &mut mask[k * a..(k + 1) * a],
                                    legal: &mut legal[k * w..(k + 1) * w],
                                    count: &mut count[k],
                                    reward: &mut reward[k],
                                    terminated: &mut term[k],
                                    seat: &mut seat[k],
                                    final_obs: &mut fobs[k * d..(k + 1) * d],
                                    returns: &mut rets[k * s..(k + 1) * s],
                                };
                                each(shared, c * chunk + k, slot, &mut scratch, out)?;
                            }
                            Ok(())
                        })
                    },
                )
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("a worker thread panicked".into())))
                .collect()
        });
        results
            .into_iter()
            .collect::<Result<(), String>>()
            .map_err(PyValueError::new_err)
    }
}

impl Shared<'_> {
    fn engine_stream(&self, bot: &Bot, i: usize, slot: &Slot, player: u8) -> ChaCha20Rng {
        let at = (slot.state.history().len() as u64) << 8 | player as u64;
        engine::seed::keyed_rng(
            bot.seed(),
            (i as u64) << 32 | slot.episode,
            at,
            engine::seed::PYTHON,
            ENGINE_STREAM,
        )
    }

    /// Plays the chance nodes and the engines' seats until a learner's seat
    /// acts or the game ends.
    fn play_out(&self, i: usize, slot: &mut Slot) -> Result<(), String> {
        loop {
            let player = slot.state.current_player();
            if player == CHANCE {
                slot.state.apply_chance(&mut slot.chance)?;
                continue;
            }
            let Ok(p) = u8::try_from(player) else {
                return Ok(());
            };
            let Some(bot) = &self.engines[p as usize] else {
                return Ok(());
            };
            let mut rng = self.engine_stream(bot, i, slot, p);
            let a = bot.decide(&slot.state, p, &mut rng)?;
            slot.state.apply(a)?;
        }
    }

    /// A new game in `slot`, played to the learner's first turn (a game
    /// that ends before it is dealt again), its observation written.
    fn start(&self, i: usize, slot: &mut Slot, scratch: &mut Vec<f32>, out: Out<'_>) -> Result<(), String> {
        loop {
            slot.state.restart_in_place();
            self.play_out(i, slot)?;
            if !slot.state.is_terminal() {
                break;
            }
            slot.episode += 1;
        }
        self.observe(&slot.state, scratch, out);
        Ok(())
    }

    /// The acting seat's observation, its legal actions as a mask and as
    /// a list (ascending, padded with -1).
    fn observe(&self, state: &SpielState, scratch: &mut Vec<f32>, out: Out<'_>) {
        let p = state.current_player();
        *out.seat = p as i32;
        state.encode(p.max(0) as u8, self.encoding, scratch);
        out.obs.copy_from_slice(scratch);
        out.mask.fill(0);
        let count = state.legal_mask(out.mask);
        out.legal.fill(-1);
        // The ids ascending: the mask's ones, read until all are found.
        let ids = out.mask.iter().enumerate().filter(|(_, m)| **m == 1).take(count);
        for (slot, (id, _)) in out.legal.iter_mut().zip(ids) {
            *slot = id as i32;
        }
        *out.count = count as i32;
    }

    /// One learner action in game `i`, then the others' to its next turn;
    /// a finished game is recorded and started anew.
    fn advance(
        &self,
        i: usize,
        slot: &mut Slot,
        action: i64,
        scratch: &mut Vec<f32>,
        out: Out<'_>,
    ) -> Result<(), String> {
        let actor = slot.state.current_player() as u8;
        let legal = u32::try_from(action)
            .ok()
            .filter(|&a| (a as usize) < self.actions && out.mask[a as usize] == 1);
        let forfeit = match legal {
            Some(a) => {
                slot.state.apply(a)?;
                self.play_out(i, slot)?;
                None
            }
            None if self.illegal == Illegal::Forfeit => Some(actor),
            None => return Err(format!("actions[{i}] = {action}: not a legal action of game {i}")),
        };
        *out.reward = 0.0;
        *out.terminated = 0;
        out.returns.fill(0.0);
        if forfeit.is_none() && !slot.state.is_terminal() {
            self.observe(&slot.state, scratch, out);
            return Ok(());
        }
        let returns = match forfeit {
            Some(seat) => self.forfeit_returns(&slot.state, seat),
            None => slot.state.returns(),
        };
        for (r, &v) in out.returns.iter_mut().zip(&returns) {
            *r = v as f32;
        }
        // The learner's reward: its seat's, the one that acted last if several.
        *out.reward = returns[actor as usize] as f32;
        *out.terminated = 1;
        slot.state.encode(actor, self.encoding, scratch);
        out.final_obs.copy_from_slice(scratch);
        slot.episode += 1;
        self.start(i, slot, scratch, out)
    }

    /// The returns when `seat` forfeits: its side gets the game's worst
    /// return, the other sides share its opposite.
    fn forfeit_returns(&self, state: &SpielState, seat: u8) -> Vec<f64> {
        let rules = state.rules();
        let low = state.min_utility();
        let sides = rules.sides() as f64;
        (0..self.seats as u8)
            .map(|s| {
                if rules.side(s) == rules.side(seat) {
                    low
                } else {
                    -low / (sides - 1.0)
                }
            })
            .collect()
    }
}
