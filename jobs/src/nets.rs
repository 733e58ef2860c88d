//! Networks as agents (`engine = "net"`): a model file read at the edge
//! (the spec, `muggins play`), checked against the game, its content hash
//! in the spec's id; and the seats it plays in a block or team hand
//! ([`GameSeats`]: a network's side beside a program's, one
//! [`full::ExternalSeats`] for the game loop). A network's game is a pure
//! function of its coordinates, the spec and the model's bytes: its draws at
//! a temperature come from a stream keyed by the game (`NET_SEATS`).

use std::sync::Arc;

use full::spiel::{NetPolicy, NetSeats, SpielState};
use full::{ExternalSeats, FullRules, MAX_SEATS, SeatView};
use rand_chacha::ChaCha20Rng;

/// A named agent that plays a network's policy.
#[derive(Clone, Debug)]
pub struct NetAgent {
    /// The model file as the spec names it.
    pub path: String,
    /// The file's SHA-256 (what the spec's id covers).
    pub sha256: String,
    /// 0: the highest logit; above 0, a draw from the softmax at it.
    pub temperature: f64,
    /// Guided simulations a decision (`simulations`; 0: the policy alone).
    pub simulations: u32,
    /// Whether the guided search stops once its play is decided
    /// (`adaptive`).
    pub adaptive: bool,
    /// Where the guided search's worlds come from (`belief`).
    pub belief: full::spiel::GuidedBelief,
    /// M* or Expectimax with the network's value at the leaves
    /// (`engine = "mstar"` or `"expectimax"` with `net`).
    pub leaves: Option<full::spiel::LeafSearch>,
    /// M* or Expectimax with the learned leaves on the network's worlds
    /// (`engine = "mstar"` with `net` and `evaluation = "learned"`).
    pub world_search: Option<full::spiel::WorldSearch>,
    /// The policy read from the file.
    pub policy: NetPolicy,
}

impl PartialEq for NetAgent {
    fn eq(&self, other: &NetAgent) -> bool {
        (
            &self.path,
            &self.sha256,
            self.temperature.to_bits(),
            self.simulations,
            self.adaptive,
            self.belief,
            self.leaves,
            self.world_search,
        ) == (
            &other.path,
            &other.sha256,
            other.temperature.to_bits(),
            other.simulations,
            other.adaptive,
            other.belief,
            other.leaves,
            other.world_search,
        )
    }
}

impl Eq for NetAgent {}

/// A model file that cannot play: unreadable or not a model
/// ([`net::NetError`]), or refused by its policy (its encoding, its game, the
/// temperature: [`full::spiel::PolicyError`]). Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum NetFileError {
    /// The file could not be read as a model.
    #[error(transparent)]
    Read(#[from] net::NetError),
    /// The model or the temperature was refused.
    #[error(transparent)]
    Policy(#[from] full::spiel::PolicyError),
}

/// Reads the model file `path` (its game is checked by the caller, which
/// knows the rules: [`load`]); the error names the file and what is wrong.
pub fn read(path: &str, temperature: f64) -> Result<NetAgent, NetFileError> {
    let model = net::Model::load(std::path::Path::new(path))?;
    let sha256 = model.sha256.clone();
    let policy = NetPolicy::new(Arc::new(model), path, temperature)?;
    Ok(NetAgent {
        path: path.to_string(),
        sha256,
        temperature,
        simulations: 0,
        adaptive: false,
        belief: full::spiel::GuidedBelief::Constraints,
        leaves: None,
        world_search: None,
        policy,
    })
}

impl NetAgent {
    /// The same network deciding by `simulations` guided simulations
    /// (`full::spiel::guided_decide`), 0 for its policy alone.
    pub fn with_simulations(mut self, simulations: u64) -> Result<NetAgent, NetFileError> {
        self.policy = self.policy.with_simulations(simulations)?;
        self.simulations = simulations as u32;
        Ok(self)
    }

    /// The same network whose guided search stops once its play is
    /// decided (`full::spiel::Guided::adaptive`); refused without
    /// simulations.
    pub fn with_adaptive(mut self, adaptive: bool) -> Result<NetAgent, NetFileError> {
        self.policy = self.policy.with_adaptive(adaptive)?;
        self.adaptive = adaptive;
        Ok(self)
    }
}

impl NetAgent {
    /// The same network whose guided search draws its worlds by `belief`
    /// (`full::spiel::GuidedBelief`).
    pub fn with_belief(mut self, belief: full::spiel::GuidedBelief) -> Result<NetAgent, NetFileError> {
        self.policy = self.policy.with_belief(belief)?;
        self.belief = belief;
        Ok(self)
    }
}

impl NetAgent {
    /// The same network searched by M* or Expectimax on sampled worlds
    /// with its value at the leaves (`full::spiel::leaf_decide`).
    pub fn with_leaves(mut self, leaves: full::spiel::LeafSearch) -> Result<NetAgent, NetFileError> {
        self.policy = self.policy.with_leaves(leaves)?;
        self.leaves = Some(leaves);
        Ok(self)
    }
}

impl NetAgent {
    /// The same network's worlds searched by M* or Expectimax with the
    /// shipped learned leaves (`full::spiel::world_decide`).
    pub fn with_world_search(mut self, search: full::spiel::WorldSearch) -> Result<NetAgent, NetFileError> {
        let eval = Arc::new(crate::evals::shipped_eval().clone());
        self.policy = self.policy.with_world_search(search, eval)?;
        self.world_search = Some(search);
        Ok(self)
    }
}

/// [`read`], and a check that the model plays `rules`' game.
pub fn load(path: &str, temperature: f64, rules: &FullRules) -> Result<NetAgent, NetFileError> {
    let agent = read(path, temperature)?;
    agent.policy.check(&SpielState::new(rules.clone(), 0))?;
    Ok(agent)
}

/// The seats of a game decided outside the searches: a
/// network's side (`nets`, by side) and a program's (`programs`).
#[derive(Debug)]
pub struct GameSeats<'a> {
    /// Each side's network, if it plays one.
    pub nets: [Option<NetSeats<ChaCha20Rng>>; 2],
    /// The programs outside muggins, if a side is one.
    pub programs: Option<&'a mut dyn ExternalSeats>,
    /// The seats' sides.
    pub sides: [u8; MAX_SEATS],
}

impl<'a> GameSeats<'a> {
    /// The seats of the game at (`seed`, `deal`, `repeat`): `nets[side]`
    /// plays that side's seats.
    pub fn new(
        rules: &FullRules,
        key: (u64, u64, u64),
        nets: [Option<&NetAgent>; 2],
        programs: Option<&'a mut dyn ExternalSeats>,
    ) -> GameSeats<'a> {
        let (seed, deal, repeat) = key;
        let seats = |side: usize| {
            nets[side].map(|n| {
                let rng = engine::seed::keyed_rng(seed, deal, repeat, engine::seed::NET_SEATS, side as u64);
                if rules.kind() == full::Preset::AllFives {
                    NetSeats::all_fives(n.policy.clone(), rules.clone(), rng)
                } else {
                    NetSeats::new(n.policy.clone(), rng)
                }
            })
        };
        GameSeats {
            nets: [seats(0), seats(1)],
            programs,
            sides: std::array::from_fn(|s| {
                if s < rules.seats() as usize {
                    rules.side(s as u8)
                } else {
                    0
                }
            }),
        }
    }
}

impl ExternalSeats for GameSeats<'_> {
    fn begin_hand(&mut self, rules: &FullRules, hands: &[engine::TileSet; MAX_SEATS]) {
        for n in self.nets.iter_mut().flatten() {
            n.begin_hand(rules, hands);
        }
        if let Some(p) = self.programs.as_deref_mut() {
            p.begin_hand(rules, hands);
        }
    }

    fn decide(&mut self, view: &SeatView) -> Result<u32, String> {
        let side = self.sides[view.seat as usize] as usize;
        match (
            self.nets.get_mut(side).and_then(Option::as_mut),
            self.programs.as_deref_mut(),
        ) {
            (Some(net), _) => net.decide(view),
            (None, Some(p)) => p.decide(view),
            (None, None) => Err(format!("seat {} is decided by no one (a bug)", view.seat)),
        }
    }
}
