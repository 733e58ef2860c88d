//! External agents at play (docs/agents.md): a playing thread's agent
//! processes, one per agent, kept across the task's games
//! ([`ExternalPool`]), and the seats they decide ([`full::ExternalSeats`]).
//! A crash, a time-out, or a reply that is not the protocol forfeits the
//! game being played and ends the process, which the next game restarts
//! (up to the agent's `restarts`); an illegal action forfeits the game and
//! keeps the process. An agent that cannot start fails the task.

mod messages;
mod process;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use full::SeatView;

pub use messages::{Decide, End, ForfeitNote, FromAgent, Game, GameRules, PROTOCOL, PROTOCOLS, SEED_BITS, ToAgent};
pub use process::{AgentProcess, Failure, MAX_LINE, STOPPING};
/// The target of the log lines about agents (their stderr, forfeits,
/// the sandbox): `muggins run` shows them at `info` (`MUGGINS_LOG`).
pub const LOG_TARGET: &str = "agents";
/// Paths no sandboxed agent may read (the results root, the state, the
/// token file): the worker and the CLI name theirs.
pub use sandbox::protect;

use crate::spec::ExternalAgent;

/// An agent's process and what is left of its restarts.
#[derive(Debug)]
struct Slot {
    process: Option<AgentProcess>,
    restarts_left: u32,
    /// Set when the process ended and no restart is left: why.
    dead: Option<String>,
    /// Decisions answered and the time they took (for the log).
    decisions: u64,
    thinking: Duration,
}

/// An external agent in the game being played.
#[derive(Debug)]
struct Current {
    agent: String,
    spec: ExternalAgent,
    /// The seats it decides.
    seats: Vec<u8>,
    /// The game's number of seats and of sides (the lengths of `sizes`
    /// and of `points` / `totals` in its `decide` messages).
    counts: (usize, usize),
    used: Duration,
}

/// A playing thread's agent processes.
#[derive(Debug)]
pub struct ExternalPool<'c> {
    slots: HashMap<String, Slot>,
    /// The game's external agents (two when both sides are external).
    current: Vec<Current>,
    /// Set when the work is stopped: every wait on an agent ends at once.
    cancel: &'c AtomicBool,
}

/// How a game with an external agent could not begin.
#[derive(Debug)]
pub enum BeginError {
    /// The game is forfeited (the agent is out of restarts).
    Forfeit(String),
    /// The task fails: the agent cannot start.
    Fatal(String),
}

impl<'c> ExternalPool<'c> {
    /// No process yet; `cancel` stops every wait on one.
    pub fn new(cancel: &'c AtomicBool) -> ExternalPool<'c> {
        ExternalPool {
            slots: HashMap::new(),
            current: Vec::new(),
            cancel,
        }
    }

    /// Begins a game of agent `name` (`spec`) deciding `seats`: its
    /// process, started or restarted as needed, gets `game` (the `game`
    /// message). Two agents may begin one game (one a side); the same agent
    /// on both sides is one process told both seats' decisions.
    pub fn begin(&mut self, name: &str, spec: &ExternalAgent, seats: &[u8], game: &Game) -> Result<(), BeginError> {
        if let Some(cur) = self.current.iter_mut().find(|c| c.agent == name) {
            cur.seats.extend_from_slice(seats);
            return Ok(());
        }
        let slot = self.slots.entry(name.to_string()).or_insert_with(|| Slot {
            process: None,
            restarts_left: spec.restarts,
            dead: None,
            decisions: 0,
            thinking: Duration::ZERO,
        });
        if let Some(why) = &slot.dead {
            return Err(BeginError::Forfeit(format!("crash: no restarts left ({why})")));
        }
        if slot.process.is_none() {
            slot.process = Some(AgentProcess::start(name, spec, game.game, self.cancel).map_err(BeginError::Fatal)?);
        }
        let p = slot.process.as_mut().expect("started above");
        if let Err(f) = p.send(&ToAgent::Game(game)) {
            let why = f.describe();
            self.lost(name, &why);
            return Err(BeginError::Forfeit(format!("{}: {why}", f.kind())));
        }
        self.current.push(Current {
            agent: name.to_string(),
            spec: spec.clone(),
            seats: seats.to_vec(),
            counts: game.counts(),
            used: Duration::ZERO,
        });
        Ok(())
    }

    /// Ends the game: the agent is told the result (`end`, the protocol's
    /// `end` message); a process that cannot hear it is let go.
    pub fn end(&mut self, end: End) {
        let end = ToAgent::End(end);
        for cur in std::mem::take(&mut self.current) {
            if let Some(p) = self.slots.get_mut(&cur.agent).and_then(|s| s.process.as_mut())
                && p.send(&end).is_err()
            {
                self.lost(&cur.agent, "it could not be told the game's end");
            }
        }
    }

    /// Forgets the game being begun (the task fails).
    pub fn abandon(&mut self) {
        self.current.clear();
    }

    /// The process of `name` ended or was ended: the next game restarts it
    /// if a restart is left.
    fn lost(&mut self, name: &str, why: &str) {
        let Some(slot) = self.slots.get_mut(name) else { return };
        if let Some(mut p) = slot.process.take() {
            p.kill();
        }
        if slot.restarts_left == 0 {
            slot.dead = Some(why.to_string());
        } else {
            slot.restarts_left -= 1;
        }
    }

    /// Every process is asked to quit, then ended; the log gets each
    /// agent's decisions and mean time per decision (this thread's).
    pub fn shutdown(&mut self) {
        for (name, slot) in self.slots.drain() {
            if slot.decisions > 0 {
                tracing::info!(
                    target: LOG_TARGET,
                    "[agent {name}] {} decisions, {:.1} ms per decision on average",
                    slot.decisions,
                    slot.thinking.as_secs_f64() * 1000.0 / slot.decisions as f64
                );
            }
            if let Some(p) = slot.process {
                p.quit();
            }
        }
    }

    /// Which of the game's agents decides `seat`.
    fn deciding(&self, seat: u8) -> Option<usize> {
        self.current.iter().position(|c| c.seats.contains(&seat))
    }

    fn ask(&mut self, view: &SeatView) -> Result<u32, Failure> {
        let Some(k) = self.deciding(view.seat) else {
            return Err(Failure::Crash(format!("no external agent decides seat {}", view.seat)));
        };
        let cur = &mut self.current[k];
        let spec = &cur.spec;
        let left = Duration::from_millis(spec.game_ms).saturating_sub(cur.used);
        let limit = Duration::from_millis(spec.time_ms).min(left);
        let slot = self
            .slots
            .get_mut(&cur.agent)
            .ok_or_else(|| Failure::Crash("no process".into()))?;
        let p = slot
            .process
            .as_mut()
            .ok_or_else(|| Failure::Crash("no process".into()))?;
        // A line waiting before the question answers nothing.
        p.nothing_pending()?;
        let id = p.next_id();
        p.send(&decide_message(view, id, cur.counts))?;
        let start = Instant::now();
        let reply = p.receive(limit, self.cancel);
        let took = start.elapsed();
        cur.used += took;
        slot.decisions += 1;
        slot.thinking += took;
        let FromAgent::Action { id: answered, action } = reply? else {
            return Err(Failure::Protocol(format!(
                "expected {{\"type\": \"action\", \"id\": {id}, \"action\": N}}, got a hello"
            )));
        };
        match answered {
            Some(a) if a != id => {
                return Err(Failure::Protocol(format!("the answer to decide {id} names id {a}")));
            }
            None if p.protocol() >= 2 => {
                return Err(Failure::Protocol(format!("the answer to decide {id} has no \"id\"")));
            }
            _ => {}
        }
        u32::try_from(action).map_err(|_| Failure::Protocol(format!("action {action} is no action id")))
    }
}

/// The `decide` message of `view` (question `id`; `counts`: the game's
/// seats and sides): only what the seat may know.
fn decide_message<'v>(v: &'v SeatView, id: u64, (seats, sides): (usize, usize)) -> ToAgent<'v> {
    ToAgent::Decide(Decide {
        id,
        seat: v.seat,
        hand: v.hand_no + 1,
        tiles: engine::bits(v.tiles).collect(),
        history: v.history,
        sizes: &v.sizes[..seats],
        boneyard: v.boneyard,
        points: &v.points[..sides],
        totals: &v.totals[..sides],
        legal: v.legal,
    })
}

impl full::ExternalSeats for ExternalPool<'_> {
    fn decide(&mut self, view: &SeatView) -> Result<u32, String> {
        match self.ask(view) {
            Ok(a) => Ok(a),
            Err(f) => {
                let name = self
                    .deciding(view.seat)
                    .map(|k| self.current[k].agent.clone())
                    .unwrap_or_default();
                let why = f.describe();
                self.lost(&name, &why);
                Err(match f {
                    Failure::Time => "time".to_string(),
                    other => other.describe(),
                })
            }
        }
    }
}

impl Drop for ExternalPool<'_> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
