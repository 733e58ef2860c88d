//! The `net` engine: a network's policy playing the seat to act from that
//! seat's observation alone (the encoding its model file names), the
//! illegal actions masked out: the highest logit (`temperature` 0), or a
//! draw from the softmax of the logits over `temperature`. The model is
//! checked against the game on every decision (its preset, the
//! observation's width, the action ids), which costs nothing beside the
//! forward pass. A decision is a pure function of the model file, the
//! observation and the stream (net's forward pass is the same bits on any
//! machine and thread count).

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use rand_core::RngCore;

use super::{Encoding, SpielState};

/// A network's policy as a player.
#[derive(Clone, Debug)]
pub struct NetPolicy {
    model: Arc<net::Model>,
    encoding: Encoding,
    temperature: f64,
    /// Guided simulations a decision (0: the policy alone).
    simulations: u32,
    /// Whether a guided search stops once its play is decided
    /// ([`super::Guided::adaptive`]).
    adaptive: bool,
    /// Where a guided search's worlds come from.
    belief: super::GuidedBelief,
    /// M* or Expectimax on sampled worlds with the network's value at the
    /// leaves, instead of the policy or a guided search.
    leaves: Option<super::LeafSearch>,
    /// M* or Expectimax with the learned leaves on the worlds the network
    /// draws ([`super::world_decide`]), and the leaves' evaluation.
    worlds: Option<(super::WorldSearch, Arc<crate::LinearEval>)>,
    path: String,
}

/// The most guided simulations a decision may take.
pub const MAX_SIMULATIONS: u32 = 1_000_000;

/// The most a temperature may be (beyond it the draw is all but uniform).
pub const MAX_TEMPERATURE: f64 = 100.0;

#[derive(Default)]
struct Buffers {
    obs: Vec<f32>,
    logits: Vec<f32>,
    scratch: net::Scratch,
    tree: super::GuidedTree,
    leaves: super::LeafBuffers,
    worlds: super::WorldBuffers,
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// Why a network's policy was refused or could not decide.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// Guided simulations out of range.
    #[error("simulations = {0}: 0 (the policy alone) to {MAX_SIMULATIONS}")]
    Simulations(u64),
    /// `adaptive` asked of the policy alone (it stops a guided search).
    #[error("adaptive = true: it stops a guided search early, and simulations = 0 (the policy alone) searches nothing")]
    AdaptiveWithoutSearch,
    /// A belief for the worlds asked of the policy alone.
    #[error(
        "belief = {0:?}: it weighs a guided search's worlds, and simulations = 0 (the policy alone) searches nothing"
    )]
    BeliefWithoutSearch(&'static str),
    /// `head` asked of a model without a belief head.
    #[error("model file {0}: belief = \"head\", and it has no belief head (docs/train.md, \"A belief head\")")]
    NoBeliefHead(String),
    /// Value leaves asked of a network that also has guided simulations,
    /// or whose game has more than two sides.
    #[error("{0}")]
    Leaves(String),
    /// A guided search that could not draw a world (a bug, or a state
    /// the network's seat could not have seen).
    #[error("a guided search: {0}")]
    Search(String),
    /// A temperature out of range.
    #[error("temperature = {0}: 0 (the highest logit) to {MAX_TEMPERATURE}")]
    Temperature(f64),
    /// A model whose encoding this build does not know.
    #[error("model file {path}: its encoding: {why}")]
    Encoding { path: String, why: String },
    /// A model of another version of its encoding.
    #[error(
        "model file {path}: encoding {encoding:?} version {have}, this build's is version {}",
        super::ENCODING_VERSION
    )]
    EncodingVersion { path: String, encoding: String, have: u32 },
    /// A model for another game, encoding or shape.
    #[error("model file {path}: {why}")]
    Mismatch { path: String, why: String },
    /// A decision asked of a state where no player acts.
    #[error("no legal action: not a player node")]
    NotAPlayer,
}

impl NetPolicy {
    /// The policy of `model` (read by the caller from the file `path`:
    /// the cores do no I/O), played at `temperature`.
    pub fn new(model: Arc<net::Model>, path: &str, temperature: f64) -> Result<NetPolicy, PolicyError> {
        if !(0.0..=MAX_TEMPERATURE).contains(&temperature) {
            return Err(PolicyError::Temperature(temperature));
        }
        let encoding: Encoding = model
            .meta
            .encoding
            .parse()
            .map_err(|why: String| PolicyError::Encoding {
                path: path.to_string(),
                why,
            })?;
        if model.meta.encoding_version != super::ENCODING_VERSION {
            return Err(PolicyError::EncodingVersion {
                path: path.to_string(),
                encoding: model.meta.encoding.clone(),
                have: model.meta.encoding_version,
            });
        }
        Ok(NetPolicy {
            model,
            encoding,
            temperature,
            simulations: 0,
            adaptive: false,
            belief: super::GuidedBelief::Constraints,
            leaves: None,
            worlds: None,
            path: path.to_string(),
        })
    }

    /// The same network searched by M* or Expectimax on sampled worlds with
    /// its value at the leaves ([`super::leaf_decide`]); refused beside
    /// guided simulations (the two are different searches).
    pub fn with_leaves(mut self, leaves: super::LeafSearch) -> Result<NetPolicy, PolicyError> {
        if self.simulations > 0 || self.belief != super::GuidedBelief::Constraints || self.worlds.is_some() {
            return Err(PolicyError::Leaves(
                "a network's value leaves (engine = \"mstar\" or \"expectimax\") are a search of their own: \
                 simulations, adaptive and belief belong to the guided search (engine = \"net\" or \"ismcts\")"
                    .into(),
            ));
        }
        self.leaves = Some(leaves);
        Ok(self)
    }

    /// The same network's worlds searched by M* or Expectimax with the
    /// learned leaves `eval` ([`super::world_decide`]); refused beside
    /// guided simulations or value leaves, and by [`Self::check`] in a game
    /// other than All Fives.
    pub fn with_world_search(
        mut self,
        search: super::WorldSearch,
        eval: Arc<crate::LinearEval>,
    ) -> Result<NetPolicy, PolicyError> {
        if self.simulations > 0 || self.leaves.is_some() || self.belief != super::GuidedBelief::Constraints {
            return Err(PolicyError::Leaves(
                "the learned leaves over a network's worlds (engine = \"mstar\" or \"expectimax\" with \
                 evaluation = \"learned\") are a search of their own: simulations, adaptive and value leaves \
                 belong to the others"
                    .into(),
            ));
        }
        self.worlds = Some((search, eval));
        Ok(self)
    }

    /// Its value-leaf search, if it plays by one.
    pub fn leaves(&self) -> Option<super::LeafSearch> {
        self.leaves
    }

    /// The same network deciding by `simulations` guided simulations
    /// ([`super::guided_decide`]: PUCT over its policy, its value at the
    /// leaves), 0 for the policy alone; a searched decision takes the most
    /// visited play (the temperature is not used).
    pub fn with_simulations(mut self, simulations: u64) -> Result<NetPolicy, PolicyError> {
        if simulations > MAX_SIMULATIONS as u64 {
            return Err(PolicyError::Simulations(simulations));
        }
        if simulations > 0 && (self.leaves.is_some() || self.worlds.is_some()) {
            return Err(PolicyError::Leaves(
                "guided simulations and value leaves are two searches: a network plays by one".into(),
            ));
        }
        self.simulations = simulations as u32;
        Ok(self)
    }

    /// Guided simulations a decision (0: the policy alone).
    pub fn simulations(&self) -> u32 {
        self.simulations
    }

    /// The same network whose guided search stops once no remaining
    /// simulation could change its play ([`super::Guided::adaptive`]);
    /// refused without simulations.
    pub fn with_adaptive(mut self, adaptive: bool) -> Result<NetPolicy, PolicyError> {
        if adaptive && self.simulations == 0 {
            return Err(PolicyError::AdaptiveWithoutSearch);
        }
        self.adaptive = adaptive;
        Ok(self)
    }

    /// Whether its guided search stops once its play is decided.
    pub fn adaptive(&self) -> bool {
        self.adaptive
    }

    /// The same network whose guided search draws its worlds by `belief`
    /// ([`super::GuidedBelief`]); anything but `constraints` is refused
    /// without simulations, and `head` for a model without a belief head.
    pub fn with_belief(mut self, belief: super::GuidedBelief) -> Result<NetPolicy, PolicyError> {
        if belief != super::GuidedBelief::Constraints && self.simulations == 0 {
            return Err(PolicyError::BeliefWithoutSearch(belief.name()));
        }
        if belief == super::GuidedBelief::Head && self.model.mlp.belief().is_none() {
            return Err(PolicyError::NoBeliefHead(self.path.clone()));
        }
        self.belief = belief;
        Ok(self)
    }

    /// Where its guided search's worlds come from.
    pub fn belief(&self) -> super::GuidedBelief {
        self.belief
    }

    /// The model.
    pub fn model(&self) -> &net::Model {
        &self.model
    }

    /// As agents are named: `net (FILE sha256[..8], greedy | T 0.5)`.
    pub fn name(&self) -> String {
        let file = Path::new(&self.path)
            .file_name()
            .map_or(self.path.clone(), |f| f.to_string_lossy().into_owned());
        let play = if let Some((w, _)) = &self.worlds {
            let worlds = match w.belief {
                super::GuidedBelief::Policy => " (policy)",
                _ => "",
            };
            // The adaptive stop, and its level when not the default 99%.
            let adaptive = match w.adaptive {
                None => String::new(),
                Some(crate::Adaptive::DEFAULT) => ", adaptive".to_string(),
                Some(a) => format!(", adaptive {a}"),
            };
            format!(
                "{} {} nodes x {} worlds{worlds}{adaptive}, learned leaves",
                w.engine.name(),
                w.budget,
                w.worlds
            )
        } else if let Some(l) = self.leaves {
            format!(
                "{} depth {} x {} worlds, value leaves",
                l.engine.name(),
                l.depth,
                l.worlds
            )
        } else if self.simulations > 0 {
            let adaptive = if self.adaptive { ", adaptive" } else { "" };
            let worlds = match self.belief {
                super::GuidedBelief::Constraints => String::new(),
                b => format!(", {} worlds", b.name()),
            };
            format!("{} guided simulations{adaptive}{worlds}", self.simulations)
        } else if self.temperature == 0.0 {
            "greedy".to_string()
        } else {
            format!("temperature {}", self.temperature)
        };
        format!("net ({file} {}, {play})", &self.model.sha256[..8])
    }

    /// The observation encoding its model file names.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Whether the model plays `state`'s game; if not, why.
    pub fn check(&self, state: &SpielState) -> Result<(), PolicyError> {
        self.model
            .check(&state.model_expect(self.encoding))
            .map_err(|why| PolicyError::Mismatch {
                path: self.path.clone(),
                why,
            })?;
        if self.worlds.is_some() && !matches!(state, SpielState::Fives(_)) {
            return Err(PolicyError::Leaves(format!(
                "model file {}: the learned leaves (evaluation = \"learned\") value All-Fives positions, and this \
                 game is {}",
                self.path,
                state.rules().config().preset.name()
            )));
        }
        if self.leaves.is_some() && state.rules().sides() != 2 {
            return Err(PolicyError::Leaves(format!(
                "model file {}: value leaves turn a seat's value into its side's against one other side, and this \
                 game has {} sides",
                self.path,
                state.rules().sides()
            )));
        }
        Ok(())
    }

    /// The action id for `player`, the seat to act in `state`.
    pub fn decide(&self, state: &SpielState, player: u8, rng: &mut impl RngCore) -> Result<u32, PolicyError> {
        let mut ids = [0u32; 128];
        let n = state.legal_ids(&mut ids);
        if n == 0 {
            return Err(PolicyError::NotAPlayer);
        }
        let meta = &self.model.meta;
        BUFFERS.with_borrow_mut(|b| {
            state.encode(player, self.encoding, &mut b.obs);
            let preset = state.rules().config().preset.name();
            if b.obs.len() != meta.inputs || state.action_count() as usize != meta.actions || meta.game != preset {
                return Err(self.check(state).err().unwrap_or_else(|| PolicyError::Mismatch {
                    path: self.path.clone(),
                    why: "not for this game".into(),
                }));
            }
            // The learned leaves value All-Fives positions, value leaves
            // two sides' (`check` says why); checked, like the model above,
            // before a forced move is played, so that a mismatch is met at
            // the first decision, whatever it is.
            if (self.worlds.is_some() && !matches!(state, SpielState::Fives(_)))
                || (self.leaves.is_some() && state.rules().sides() != 2)
            {
                return Err(self.check(state).expect_err("refused by the checks of a choice"));
            }
            if n == 1 {
                return Ok(ids[0]);
            }
            if let Some((how, eval)) = &self.worlds {
                let models = super::WorldModels {
                    model: &self.model,
                    encoding: self.encoding,
                    eval,
                };
                return super::world_decide(&mut b.worlds, models, state, player, *how, rng)
                    .map_err(|e| PolicyError::Search(e.to_string()));
            }
            if let Some(how) = self.leaves {
                return super::leaf_decide(&mut b.leaves, &self.model, self.encoding, state, player, how, rng)
                    .map_err(|e| PolicyError::Search(e.to_string()));
            }
            if self.simulations > 0 {
                return super::guided_decide(
                    &mut b.tree,
                    &self.model,
                    self.encoding,
                    state,
                    player,
                    super::Guided {
                        belief: self.belief,
                        simulations: self.simulations,
                        noise: None,
                        adaptive: self.adaptive,
                    },
                    rng,
                )
                .map_err(|e| PolicyError::Search(e.to_string()));
            }
            b.logits.resize(meta.actions, 0.0);
            let mut value = [0.0f32];
            self.model
                .mlp
                .forward(&b.obs, 1, &mut b.logits, &mut value, &mut b.scratch);
            Ok(self.choose(&b.logits, &ids[..n], rng))
        })
    }

    fn choose(&self, logits: &[f32], legal: &[u32], rng: &mut impl RngCore) -> u32 {
        let best = legal.iter().copied().fold(
            legal[0],
            |b, a| if logits[a as usize] > logits[b as usize] { a } else { b },
        );
        if self.temperature == 0.0 {
            return best;
        }
        let top = logits[best as usize] as f64;
        let weight = |a: u32| ((logits[a as usize] as f64 - top) / self.temperature).exp();
        let total: f64 = legal.iter().map(|&a| weight(a)).sum();
        let mut u = engine::seed::unit(rng) * total;
        for &a in legal {
            let w = weight(a);
            if u < w {
                return a;
            }
            u -= w;
        }
        best
    }
}

/// Seats played by a network's policy inside a game loop that knows the
/// deal: the loop calls [`ExternalSeats::begin_hand`] with the hands, and
/// this keeps the OpenSpiel state beside it (block and team), applying the
/// plays each question's history adds, so that the policy reads exactly the
/// asking seat's information state (never another seat's tiles: the
/// encodings read the player's own hand and the public plays). Draws at a
/// temperature come from `rng`, the caller's stream for the game.
///
/// In a hand of All Fives ([`NetSeats::all_fives`]) the loop tells no deal
/// and no draw: each question's state is built from the asking seat's view
/// (its tiles and the hand's public actions, [`super::FivesState::from_view`],
/// the others' tiles and the seat's own past drawn from `rng`). The `rich`
/// encoding reads nothing else (the seat's tiles, the board, each seat's
/// plays, the voids, the ends, the sizes, the points), so the policy reads
/// what it would read in the true state; the `info_state` encoding also
/// shows which of the seat's tiles it drew, which the view does not tell,
/// and a spec refuses it there.
#[derive(Debug)]
pub struct NetSeats<R> {
    policy: NetPolicy,
    state: Option<SpielState>,
    applied: usize,
    /// All Fives: the rules each question's state is built under.
    fives: Option<crate::FullRules>,
    rng: R,
}

impl<R: RngCore> NetSeats<R> {
    /// `policy`'s seats, drawing with `rng`.
    pub fn new(policy: NetPolicy, rng: R) -> NetSeats<R> {
        NetSeats {
            policy,
            state: None,
            applied: 0,
            fives: None,
            rng,
        }
    }

    /// `policy`'s seats in one hand of All Fives under `rules` (see above).
    pub fn all_fives(policy: NetPolicy, rules: crate::FullRules, rng: R) -> NetSeats<R> {
        NetSeats {
            fives: Some(rules),
            ..NetSeats::new(policy, rng)
        }
    }
}

impl<R: RngCore + std::fmt::Debug> crate::ExternalSeats for NetSeats<R> {
    fn begin_hand(&mut self, rules: &crate::FullRules, hands: &[engine::TileSet; crate::MAX_SEATS]) {
        self.state = super::OpenSpielState::dealt(rules, hands).ok().map(SpielState::Open);
        self.applied = 0;
    }

    fn decide(&mut self, view: &crate::SeatView) -> Result<u32, String> {
        if let Some(rules) = &self.fives {
            let fives = super::FivesState::from_view(rules, view.seat, view.tiles, view.history, None, &mut self.rng)
                .map_err(|e| e.to_string())?;
            return self
                .policy
                .decide(&SpielState::Fives(fives), view.seat, &mut self.rng)
                .map_err(|e| e.to_string());
        }
        let Some(state) = self.state.as_mut() else {
            return Err(format!(
                "model file {}: plays block and team hands only",
                self.policy.path
            ));
        };
        for &id in &view.history[self.applied.min(view.history.len())..] {
            state.apply(id).map_err(|e| e.to_string())?;
        }
        self.applied = view.history.len();
        self.policy
            .decide(state, view.seat, &mut self.rng)
            .map_err(|e| e.to_string())
    }
}
