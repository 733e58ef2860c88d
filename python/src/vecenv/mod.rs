//! The batched environment's core (`muggins.VecEnv`, docs/rl.md): `N`
//! games stepped together inside Rust, the chance nodes and the engines'
//! seats played here, the learner's observations written into arrays that
//! Python owns. Each game has its own stream (keyed by the seed and the
//! game's index), so the results are a function of the seed alone, whatever
//! the thread count. The work runs with the GIL released, the games split
//! over `threads` threads: the caller's and `threads - 1` kept for the
//! environment's life (a `rayon_core` pool).

use numpy::{Element as NpElement, PyReadwriteArrayDyn, PyUntypedArrayMethods};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rand_chacha::ChaCha20Rng;

use full::spiel::Encoding;

mod play;

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
    /// The kept mask (what `step` checks: one bit an action, in words of
    /// 64), and Python's (a byte an action, which Python may write).
    mask: &'a mut [u64],
    py_mask: &'a mut [u8],
    legal: &'a mut [i32],
    count: &'a mut i32,
    reward: &'a mut f32,
    terminated: &'a mut u8,
    seat: &'a mut i32,
    /// Written only when the game ends.
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
    /// The threads beside the caller's that step the games (`threads - 1`
    /// of them, kept for the environment's life: starting a thread a step
    /// cost more than a tenth of a step of 4,096 games); `None` on one.
    pool: Option<rayon_core::ThreadPool>,
    illegal: Illegal,
    obs_size: usize,
    actions: usize,
    seats: usize,
    /// The most legal actions a node has (the `legal` array's width).
    width: usize,
    /// Each game's legal actions as a mask of `mask_words` words, kept
    /// here: what `step` checks the learner's actions against (Python's
    /// copy may be written). Bits, not bytes: every step rewrites it, and
    /// at 4,096 games of team a byte mask is 1.2 MB more to write.
    mask: Vec<u64>,
    mask_words: usize,
    /// Whether each game awaits an action (false before the first reset).
    live: bool,
}

/// Whether action `a` is set in a kept mask (words of 64 bits).
fn has(mask: &[u64], a: u32) -> bool {
    mask[a as usize / 64] >> (a % 64) & 1 == 1
}

/// `v` as a writable C-contiguous buffer of `len` items of `T`.
pub(crate) fn buffer<T: Element>(v: &Bound<'_, PyAny>, what: &str, len: usize) -> PyResult<PyBuffer<T>> {
    let b = PyBuffer::<T>::get(v).map_err(|e| PyTypeError::new_err(format!("{what}: {e}")))?;
    if b.item_count() != len || !b.is_c_contiguous() || b.readonly() {
        return Err(PyValueError::new_err(format!(
            "{what}: a writable contiguous array of {len} items is needed"
        )));
    }
    Ok(b)
}

/// The arrays Python owns, in the order `muggins.VecEnv` passes them:
/// observations, masks, legal ids, their counts, rewards, terminations,
/// seats, last observations and returns (written only in the rows of the
/// games that end); borrowed for writing (numpy's borrow checking refuses an array
/// borrowed twice), so that the threads write into them directly.
struct PyArrays<'py> {
    obs: PyReadwriteArrayDyn<'py, f32>,
    mask: PyReadwriteArrayDyn<'py, u8>,
    legal: PyReadwriteArrayDyn<'py, i32>,
    count: PyReadwriteArrayDyn<'py, i32>,
    reward: PyReadwriteArrayDyn<'py, f32>,
    terminated: PyReadwriteArrayDyn<'py, u8>,
    seat: PyReadwriteArrayDyn<'py, i32>,
    final_obs: PyReadwriteArrayDyn<'py, f32>,
    returns: PyReadwriteArrayDyn<'py, f32>,
}

/// One thread's games: their slots, their rows of Python's arrays and of
/// the kept mask; `first` is the index of its first game.
struct Part<'a> {
    first: usize,
    slots: &'a mut [Slot],
    to: Views<'a>,
    mask: &'a mut [u64],
}

/// Those arrays as slices, one item per game and column.
struct Views<'a> {
    obs: &'a mut [f32],
    mask: &'a mut [u8],
    legal: &'a mut [i32],
    count: &'a mut [i32],
    reward: &'a mut [f32],
    terminated: &'a mut [u8],
    seat: &'a mut [i32],
    final_obs: &'a mut [f32],
    returns: &'a mut [f32],
}

impl<'py> PyArrays<'py> {
    fn views(&mut self) -> Views<'_> {
        // Each was checked contiguous when borrowed.
        fn s<T>(r: Result<&mut [T], numpy::AsSliceError>) -> &mut [T] {
            r.expect("checked contiguous when borrowed")
        }
        Views {
            obs: s(self.obs.as_slice_mut()),
            mask: s(self.mask.as_slice_mut()),
            legal: s(self.legal.as_slice_mut()),
            count: s(self.count.as_slice_mut()),
            reward: s(self.reward.as_slice_mut()),
            terminated: s(self.terminated.as_slice_mut()),
            seat: s(self.seat.as_slice_mut()),
            final_obs: s(self.final_obs.as_slice_mut()),
            returns: s(self.returns.as_slice_mut()),
        }
    }
}

/// `v` as a writable C-contiguous numpy array of `len` items of `T`.
fn array<'py, T: NpElement>(v: &Bound<'py, PyAny>, what: &str, len: usize) -> PyResult<PyReadwriteArrayDyn<'py, T>> {
    let mut a: PyReadwriteArrayDyn<'py, T> = v.extract().map_err(|e: PyErr| {
        let why = e.to_string().replace('\n', "");
        PyTypeError::new_err(format!(
            "{what}: a writable numpy array of {len} items is needed: {why}"
        ))
    })?;
    // A Fortran-ordered array is contiguous too, but its items are not in
    // the games' order.
    if !a.is_c_contiguous() || a.as_slice_mut().map_or(true, |s| s.len() != len) {
        return Err(PyValueError::new_err(format!(
            "{what}: a writable contiguous array of {len} items is needed"
        )));
    }
    Ok(a)
}

impl VecCore {
    fn arrays<'py>(&self, arrays: &Bound<'py, PyTuple>) -> PyResult<PyArrays<'py>> {
        let n = self.slots.len();
        if arrays.len() != 9 {
            return Err(PyValueError::new_err(format!(
                "arrays: 9 arrays are needed, {} given",
                arrays.len()
            )));
        }
        let at = |i: usize| arrays.get_item(i);
        Ok(PyArrays {
            obs: array(&at(0)?, "obs", n * self.obs_size)?,
            mask: array(&at(1)?, "mask", n * self.actions)?,
            legal: array(&at(2)?, "legal", n * self.width)?,
            count: array(&at(3)?, "count", n)?,
            reward: array(&at(4)?, "reward", n)?,
            terminated: array(&at(5)?, "terminated", n)?,
            seat: array(&at(6)?, "seat", n)?,
            final_obs: array(&at(7)?, "final_obs", n * self.obs_size)?,
            returns: array(&at(8)?, "returns", n * self.seats)?,
        })
    }
}

/// The setting `key` of `options`, if given.
fn option<'py>(options: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    options.get_item(key)
}

#[pymethods]
impl VecCore {
    /// `engines`: per seat, a `Bot` that plays it or `None` for the
    /// learner; `options`: `seed`, `threads`, `encoding`, `illegal`.
    #[new]
    #[pyo3(signature = (game, knobs, num_envs, engines, options))]
    fn new(
        game: &str,
        knobs: Option<&Bound<'_, PyDict>>,
        num_envs: &Bound<'_, PyAny>,
        engines: Vec<Option<PyRef<'_, Bot>>>,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        for key in options.keys() {
            let key: String = key.extract()?;
            if !["seed", "threads", "encoding", "illegal"].contains(&key.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "unknown option {key:?}: a VecEnv takes seed, threads, encoding, illegal"
                )));
            }
        }
        let game = Game::from_py(game, knobs)?;
        let n = args::int_in(num_envs, "num_envs", 1..=MAX_ENVS, || {
            format!(": an environment steps 1 to {MAX_ENVS} games")
        })? as usize;
        let seed = match option(options, "seed")? {
            Some(v) => args::seed(&v, "seed")?,
            None => 0,
        };
        let threads = match option(options, "threads")? {
            Some(v) => args::int_in(&v, "threads", 0..=1024, || ": 0 (every core) to 1024".into())? as usize,
            None => 0,
        };
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        let text = |key: &str, default: &str| -> PyResult<String> {
            match option(options, key)? {
                Some(v) => v
                    .extract::<String>()
                    .map_err(|_| PyTypeError::new_err(format!("{key} must be a str, not {}", args::type_name(&v)))),
                None => Ok(default.to_string()),
            }
        };
        let encoding: Encoding = text("encoding", "info_state")?.parse().map_err(PyValueError::new_err)?;
        let illegal = match text("illegal", "raise")?.as_str() {
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
        let mask_words = actions.div_ceil(64);
        let pool = match threads.min(n) {
            0 | 1 => None,
            t => Some(
                rayon_core::ThreadPoolBuilder::new()
                    .num_threads(t - 1)
                    .thread_name(|i| format!("muggins-vecenv-{i}"))
                    .build()
                    .map_err(|e| PyRuntimeError::new_err(format!("threads = {threads}: cannot start them: {e}")))?,
            ),
        };
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
            pool,
            illegal,
            obs_size,
            actions,
            seats,
            width,
            mask: vec![0; n * mask_words],
            mask_words,
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

    /// Deals every game anew and fills the arrays' observations, masks,
    /// legal ids and seats. `seed` starts every stream again from it;
    /// without one the streams go on.
    #[pyo3(signature = (arrays, seed=None))]
    fn reset(&mut self, py: Python<'_>, arrays: &Bound<'_, PyTuple>, seed: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut to = self.arrays(arrays)?;
        let rekey = match seed {
            Some(s) if !s.is_none() => {
                self.seed = args::seed(s, "seed")?;
                true
            }
            _ => false,
        };
        let (seed, live) = (self.seed, self.live);
        let views = to.views();
        py.detach(|| {
            self.run(views, |core, i, slot, out| {
                if rekey {
                    slot.chance = engine::seed::keyed_rng(seed, i as u64, 0, engine::seed::PYTHON, CHANCE_STREAM);
                    slot.episode = 0;
                } else if live {
                    slot.episode += 1;
                }
                core.start(i, slot, out)
            })
        })?;
        self.live = true;
        Ok(())
    }

    /// Plays `actions[i]` (an int64 array) in game `i`, then the chance
    /// nodes and the engines' seats up to the learner's next turn, and
    /// fills the arrays (a game that ends writes its last observation and
    /// returns in its rows of those arrays, and is dealt again).
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
        arrays: &Bound<'py, PyTuple>,
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
        let mut to = self.arrays(arrays)?;
        if self.illegal == Illegal::Raise {
            self.check_actions(&acts)?;
        }
        let views = to.views();
        py.detach(|| self.run(views, |core, i, slot, out| core.advance(i, slot, acts[i], out)))
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
                .filter(|&a| (a as usize) < self.actions && has(&self.mask[i * self.mask_words..], a));
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

    /// Runs `each` on every game, the games split over the threads (the
    /// first part on this one), each writing its own rows of Python's
    /// arrays (`to`) and of the kept masks, terminations and last
    /// observations.
    fn run<F>(&mut self, to: Views<'_>, each: F) -> PyResult<()>
    where
        F: Fn(&Shared<'_>, usize, &mut Slot, Out<'_>) -> Result<(), String> + Sync,
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
        let (d, a, s, w, m) = (self.obs_size, self.actions, self.seats, self.width, self.mask_words);
        let mut parts = self
            .slots
            .chunks_mut(chunk)
            .zip(to.obs.chunks_mut(chunk * d))
            .zip(to.mask.chunks_mut(chunk * a))
            .zip(self.mask.chunks_mut(chunk * m))
            .zip(to.legal.chunks_mut(chunk * w))
            .zip(to.count.chunks_mut(chunk))
            .zip(to.reward.chunks_mut(chunk))
            .zip(to.terminated.chunks_mut(chunk))
            .zip(to.seat.chunks_mut(chunk))
            .zip(to.final_obs.chunks_mut(chunk * d))
            .zip(to.returns.chunks_mut(chunk * s))
            .enumerate()
            .map(
                |(
                    c,
                    (
                        (((((((((slots, obs), py_mask), mask), legal), count), reward), terminated), seat), final_obs),
                        returns,
                    ),
                )| Part {
                    first: c * chunk,
                    slots,
                    to: Views {
                        obs,
                        mask: py_mask,
                        legal,
                        count,
                        reward,
                        terminated,
                        seat,
                        final_obs,
                        returns,
                    },
                    mask,
                },
            );
        let (shared, each) = (&shared, &each);
        let part = move |p: Part<'_>| {
            let Part { first, slots, to, mask } = p;
            for (k, slot) in slots.iter_mut().enumerate() {
                let out = Out {
                    obs: &mut to.obs[k * d..(k + 1) * d],
                    mask: &mut mask[k * m..(k + 1) * m],
                    py_mask: &mut to.mask[k * a..(k + 1) * a],
                    legal: &mut to.legal[k * w..(k + 1) * w],
                    count: &mut to.count[k],
                    reward: &mut to.reward[k],
                    terminated: &mut to.terminated[k],
                    seat: &mut to.seat[k],
                    final_obs: &mut to.final_obs[k * d..(k + 1) * d],
                    returns: &mut to.returns[k * s..(k + 1) * s],
                };
                each(shared, first + k, slot, out)?;
            }
            Ok::<(), String>(())
        };
        // A panic in a part is that part's error, on whichever thread.
        let part = move |p: Part<'_>| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| part(p)))
                .unwrap_or_else(|_| Err("a worker thread panicked".into()))
        };
        let first = parts.next().expect("at least one game");
        let rest: Vec<Part<'_>> = parts.collect();
        let mut results: Vec<Result<(), String>> = (0..=rest.len()).map(|_| Ok(())).collect();
        let (own, others) = results.split_first_mut().expect("one result a part");
        match &self.pool {
            // The other parts go to the kept threads, the first is played
            // on this one.
            Some(pool) => pool.in_place_scope(|scope| {
                for (p, r) in rest.into_iter().zip(others.iter_mut()) {
                    scope.spawn(move |_| *r = part(p));
                }
                *own = part(first);
            }),
            None => {
                *own = part(first);
                for (p, r) in rest.into_iter().zip(others.iter_mut()) {
                    *r = part(p);
                }
            }
        }
        results
            .into_iter()
            .collect::<Result<(), String>>()
            .map_err(PyValueError::new_err)
    }
}
