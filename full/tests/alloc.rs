//! "The hot path does not allocate" (ARCHITECTURE.md), checked: a counting
//! global allocator (this test binary's own) counts the allocations each
//! thread makes, and every search is run once to warm its reused buffers
//! and tables, then again under the count, which must be zero.
//!
//! The counts are per thread (`allocation_counter`, whose global allocator
//! this test binary links), so the tests may run in parallel.

use engine::seed::keyed_rng;
use engine::{
    ActionList, Belief, Deal, EngineKind, LocalTable, PlayerEngine, Position, Rules, SearchConfig, Searcher,
    TargetKind, ValueStore,
};
use full::spiel::SpielState;
use full::{
    AlphaBeta, Evaluation, FEATURE_COUNT, FEATURES, FivesPosition, FivesTable, FullConfig, FullRules, FullTarget,
    IsmctsTree, Limits, LinearEval, Opening, Preset, Seen, WorldSampler, WorldSource, default_training, random_deal,
};

/// The allocations this thread makes while `f` runs, and `f`'s result.
fn allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (info.count_total, out.expect("run"))
}

#[test]
fn the_counter_sees_an_allocation() {
    // The check that the others cannot pass vacuously.
    let (n, v) = allocations(|| std::hint::black_box(vec![1u8; 100]));
    assert_eq!(v.len(), 100);
    assert_eq!(n, 1);
}

fn double_six() -> FullRules {
    let mut c = FullConfig::all_fives(2);
    c.set = 6;
    c.hand = 7;
    FullRules::new(c).expect("valid rules")
}

/// A position a few plies into a hand (each mover playing its first
/// play), with the mover holding two or more plays.
fn position(rules: &FullRules, seed: u64) -> FivesPosition {
    let mut list = ActionList::default();
    (seed..)
        .find_map(|s| {
            let mut rng = keyed_rng(s, 0, 0, b"testallc", 0);
            let hands = random_deal(rules, &mut rng);
            let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
            for _ in 0..4 {
                pos.actions(rules, &mut list);
                if pos.end.is_some() || list.len() >= 2 {
                    break;
                }
                if list.is_empty() {
                    return None;
                }
                pos.play(rules, list.as_slice()[0]);
            }
            pos.actions(rules, &mut list);
            (pos.end.is_none() && list.len() >= 2).then_some(pos)
        })
        .expect("a deal with a choice")
}

fn learned() -> LinearEval {
    LinearEval {
        features: FEATURES.iter().map(|s| s.to_string()).collect(),
        weights: (0..FEATURE_COUNT).map(|k| (k as f64 + 0.5) / 10.0 - 0.6).collect(),
        training: default_training(),
        samples: 0,
        holdout_mse: 0.0,
        holdout_mse_score: 0.0,
    }
}

#[test]
fn m_star_over_sampled_worlds_allocates_nothing() {
    // The double-6 hand's decision: 16 worlds drawn from the belief, each
    // searched to 20,000 nodes with score and with learned leaves.
    let rules = double_six();
    let pos = position(&rules, 1);
    let eval = learned();
    let models = [FullTarget::Thesis(TargetKind::Scorer); 4];
    let mut table = FivesTable::for_budget(20_000, 0);
    let mut sampler = WorldSampler::default();
    let mut worlds = Vec::with_capacity(16);
    let limits = Limits {
        depth: full::DEEPEST,
        budget: 20_000,
    };
    for leaves in [Evaluation::Score, Evaluation::Learned(&eval)] {
        for belief in [Belief::Uniform, Belief::Constraints] {
            let mut decide = |table: &mut FivesTable| {
                let mut rng = keyed_rng(7, 0, 0, b"testallc", 1);
                let source = WorldSource {
                    belief,
                    models: &models,
                    worlds: 16,
                };
                sampler.prepare(&rules, &pos, &Seen::default(), source, &mut rng);
                sampler.worlds(16, &mut rng, &mut worlds);
                let mut search = AlphaBeta::new(&rules, pos.mover, PlayerEngine::MStar, models, leaves, table);
                search.decide(&worlds, limits)
            };
            let warm = decide(&mut table);
            let (n, again) = allocations(|| decide(&mut table));
            assert_eq!(again, warm, "{belief:?}: the search is deterministic");
            assert!(again.nodes >= 16 * 20_000, "{belief:?}: {} nodes", again.nodes);
            assert_eq!(n, 0, "{belief:?}, learned {}: allocations", leaves.limit() > 0.0);
        }
    }
}

#[test]
fn ismcts_allocates_nothing_once_its_tree_is_grown() {
    let rules = double_six();
    let pos = position(&rules, 2);
    let models = [FullTarget::Searcher; 4];
    let mut tree = IsmctsTree::default();
    let mut sampler = WorldSampler::default();
    let mut decide = |tree: &mut IsmctsTree| {
        let mut rng = keyed_rng(3, 0, 0, b"testallc", 2);
        let source = WorldSource {
            belief: Belief::Constraints,
            models: &models,
            worlds: 1,
        };
        sampler.prepare(&rules, &pos, &Seen::default(), source, &mut rng);
        tree.decide(&rules, &pos, 20_000, Some(&mut sampler), &mut rng)
    };
    let warm = decide(&mut tree);
    let (n, again) = allocations(|| decide(&mut tree));
    assert_eq!(again, warm);
    assert_eq!(n, 0, "allocations in a decision of 20,000 nodes");
}

#[test]
fn the_thesis_search_allocates_nothing_once_its_table_is_sized() {
    // The table is a map: a search into one sized by an earlier search of
    // the same position never grows it.
    let rules = Rules::thesis();
    let new = |capacity| {
        Searcher::new(
            rules.clone(),
            SearchConfig::default(),
            LocalTable::with_capacity(capacity),
        )
    };
    let kinds = [
        EngineKind::Expectimax,
        EngineKind::MStar(TargetKind::Scorer),
        EngineKind::MStar(TargetKind::Random),
    ];
    let mut nodes = 0;
    for state in (0..rules.starting_states()).step_by(97) {
        let pos = Position::start(&rules, &Deal::from_index(&rules, state).expect("a state"));
        for kind in kinds {
            let mut first = new(0);
            let warm = first.value_of(&pos, kind);
            let mut searcher = new(first.store().len());
            let (n, again) = allocations(|| searcher.value_of(&pos, kind));
            assert_eq!(again.to_bits(), warm.to_bits());
            nodes += searcher.nodes();
            assert_eq!(n, 0, "state {state}, {kind}: allocations");
        }
    }
    assert!(nodes > 10_000, "{nodes} nodes");
}

#[test]
fn the_vector_environments_steps_allocate_nothing() {
    // What `muggins.VecEnv` does per step and per reset, on every preset
    // that it serves.
    for preset in [Preset::Block, Preset::Team, Preset::AllFives] {
        let name = format!("{preset:?}");
        let mut state = SpielState::new(FullRules::preset(preset), 0);
        let mut ids = [0u32; 128];
        let mut play_out = |state: &mut SpielState, rng: &mut rand_chacha::ChaCha20Rng| {
            let mut moves = 0;
            state.restart_in_place();
            while !state.is_terminal() {
                if state.current_player() < 0 {
                    state.apply_chance(rng).expect("a chance outcome");
                } else {
                    let n = state.legal_ids(&mut ids);
                    state.apply(ids[moves % n]).expect("a legal action");
                    moves += 1;
                }
            }
            moves
        };
        // The same games once to grow the lists, then under the count.
        let mut rng = keyed_rng(5, 0, 0, b"testallc", 3);
        (0..20).for_each(|_| {
            play_out(&mut state, &mut rng);
        });
        let mut rng = keyed_rng(5, 0, 0, b"testallc", 3);
        let (n, moves) = allocations(|| (0..20).map(|_| play_out(&mut state, &mut rng)).sum::<usize>());
        assert!(moves > 20, "{name}: {moves} moves");
        assert_eq!(n, 0, "{name}: allocations in 20 games of {moves} moves");
    }
}
