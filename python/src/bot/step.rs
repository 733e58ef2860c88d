//! A [`Bot`]'s decision in a state: whether it plays the state's game at
//! all, checked first (a forced move included, so that a bot that cannot
//! play a game is refused at its first decision whatever that decision
//! is), then its engine's choice from the player's information only.

use engine::{Observability, PlayerEngine};
use full::{
    FullAgent, FullRules, FullTarget, MAX_SEATS, MatchContext, MatchOptions, Observation, Scratch, SearchSettings,
    full_choice, heaviest_play, search_decision,
};
use rand_chacha::ChaCha20Rng;

use super::{Bot, Player, shipped_eval};
use crate::state::Core;
use full::spiel::{FivesState, OpenSpielState, play_id};

impl Bot {
    /// The action for `player` in `core` (a player node), from `player`'s
    /// information only, drawn with `rng`. A bot that cannot play the
    /// game is refused even where `player` has one legal action.
    pub fn decide(&self, core: &Core, player: u8, rng: &mut ChaCha20Rng) -> Result<u32, String> {
        let agent = match &self.player {
            Player::Net(p) => return p.decide(core, player, rng).map_err(|e| e.to_string()),
            Player::Agent(a) => *a,
        };
        match core {
            Core::Fives(c) => self.fives_step(agent, c, player, rng),
            Core::Open(c) => self.open_step(agent, c, player, rng),
        }
    }

    /// The bot's seed (its decisions' streams are keyed by it).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn fives_step(
        &self,
        agent: FullAgent,
        core: &FivesState,
        player: u8,
        rng: &mut ChaCha20Rng,
    ) -> Result<u32, String> {
        // Fitted on two seats of double-6; at three and four seats its
        // features sum each side's seats, as `muggins run` plays it.
        if let FullAgent::Search(s) = agent
            && s.learned
            && core.rules().set() != 6
        {
            return Err("evaluation = \"learned\": the shipped evaluation is for double-6".into());
        }
        let legal = core.legal_actions();
        if legal.len() == 1 {
            return Ok(legal[0]);
        }
        let mut list = engine::ActionList::default();
        let settings = match agent {
            FullAgent::Fixed(t) => {
                // A fixed strategy reads the board and the mover's own plays
                // (`full::fixed_choice`), the same in every world the player
                // cannot tell apart: no world is drawn, as in the game loop.
                let pos = core.pos.expect("a player node has a position");
                pos.actions(core.rules(), &mut list);
                let index = full_choice(core.rules(), t, &pos, list.as_slice(), rng);
                return Ok(play_id(list.as_slice()[index]));
            }
            FullAgent::External => unreachable!("a bot is muggins' own"),
            FullAgent::Search(settings) => settings,
        };
        let world = core.resample(player, rng).map_err(|e| e.to_string())?;
        let rules = world.rules();
        let pos = world.pos.expect("a player node has a position");
        pos.actions(rules, &mut list);
        let opts = MatchOptions {
            eval: settings.learned.then(shipped_eval),
            table_mb: self.table_mb,
            agent_side: rules.side(player),
            ..MatchOptions::default()
        };
        let models = [self.opponent; MAX_SEATS];
        let index = Scratch::with_thread_scratch(&[agent], self.table_mb, |scratch| {
            let mut ctx = MatchContext::new(rules, &opts, scratch);
            search_decision(&mut ctx, &pos, &world.seen, settings, models, rng)
                .0
                .index
        });
        Ok(play_id(list.as_slice()[index]))
    }

    fn open_step(
        &self,
        agent: FullAgent,
        core: &OpenSpielState,
        player: u8,
        rng: &mut ChaCha20Rng,
    ) -> Result<u32, String> {
        let rules = &core.rules;
        open_playable(agent, rules)?;
        let legal = core.legal_actions();
        if legal.len() == 1 {
            return Ok(legal[0]);
        }
        let pos = core.pos.expect("a player node has a position");
        let mut list = full::FullActions::default();
        pos.actions(rules, &mut list);
        let index = match agent {
            FullAgent::Fixed(FullTarget::Heaviest) => heaviest_play(rules, list.as_slice()),
            // `random`: `open_playable` refused every other fixed strategy.
            FullAgent::Fixed(_) => engine::seed::below_u32(rng, list.len() as u32) as usize,
            FullAgent::Search(s) => open_search(rules, core, player, s, self.opponent, rng),
            FullAgent::External => unreachable!("a bot is muggins' own"),
        };
        Ok(full::openspiel::action_id(rules, player, list.as_slice()[index]))
    }
}

/// Whether `agent` plays block or team (`rules`): `heaviest`, `random`,
/// and Expectimax, M* and ISMCTS with settings that the game allows.
fn open_playable(agent: FullAgent, rules: &FullRules) -> Result<(), String> {
    match agent {
        FullAgent::Fixed(FullTarget::Heaviest) => Ok(()),
        FullAgent::Fixed(t) if t.name() == "random" => Ok(()),
        FullAgent::Fixed(t) => Err(format!("engine = {:?} plays All Fives only", t.name())),
        FullAgent::Search(s) if s.engine == PlayerEngine::Dominai => Err(format!(
            "engine = {:?}: a bot plays block and team with Expectimax and M* (to a depth, or a node budget a \
             world) and ISMCTS",
            s.engine.name()
        )),
        FullAgent::Search(s) => s
            .check(Some(rules.kind()), Some(Observability::Partial))
            .map_err(|e| e.to_string()),
        FullAgent::External => unreachable!("a bot is muggins' own"),
    }
}

/// A search's decision in a block or team hand from the player's view only
/// ([`full::decide_open`], the game loop's): Expectimax or M* to the
/// settings' depth (or node budget) on `worlds` sampled worlds, or ISMCTS
/// on `budget` x `worlds` nodes; [`open_playable`] has checked the settings.
fn open_search(
    rules: &FullRules,
    core: &OpenSpielState,
    player: u8,
    s: SearchSettings,
    opponent: FullTarget,
    rng: &mut ChaCha20Rng,
) -> usize {
    let pos = core.pos.expect("a player node has a position");
    let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, player, &core.void, &[0; MAX_SEATS]);
    let mut tree = full::IsmctsTree::default();
    full::decide_open(rules, &pos, &obs, s, [opponent; MAX_SEATS], &mut tree, rng).index
}
