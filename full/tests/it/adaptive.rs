//! Adaptive effort (docs/search.md, "Adaptive effort"): a decision's worlds
//! stop once its best play is decided, exactly as if only those worlds had
//! been given; without it, nothing changes.

use engine::seed::keyed_rng;
use engine::{ActionList, Belief, TargetKind};
use full::{
    ADAPTIVE_MIN_WORLDS, AlphaBeta, Evaluation, FivesPosition, FivesTable, FullDecision, FullEngine, FullRules,
    FullTarget, Limits, Seen, WorldSampler, WorldSource,
};

use crate::alphabeta::{position, rules};

const MODELS: [FullTarget; 4] = [FullTarget::Thesis(TargetKind::Scorer); 4];
const LIMITS: Limits = Limits {
    depth: 60,
    budget: 2_000,
};

fn decide(r: &FullRules, pos: &FivesPosition, worlds: &[FivesPosition], adaptive: bool) -> FullDecision {
    let mut table = FivesTable::with_mb(16);
    AlphaBeta::new(r, pos.mover, FullEngine::MStar, MODELS, Evaluation::Score, &mut table)
        .decide_with(worlds, LIMITS, adaptive)
}

#[test]
fn adaptive_effort_is_the_decision_of_the_worlds_it_searched() {
    let r = rules(6, 2, false);
    let (mut decisions, mut stopped) = (0, 0);
    for seed in 0..40u64 {
        let Some(pos) = position(&r, seed, 1 + seed % 6) else {
            continue;
        };
        let mut list = ActionList::default();
        pos.actions(&r, &mut list);
        if list.len() < 2 {
            continue;
        }
        let mut rng = keyed_rng(seed, 1, 2, b"testadap", 0);
        let mut sampler = WorldSampler::default();
        let source = WorldSource {
            belief: Belief::Uniform,
            models: &MODELS,
            worlds: 16,
        };
        sampler.prepare(&r, &pos, &Seen::default(), source, &mut rng);
        let mut worlds = Vec::new();
        sampler.worlds(16, &mut rng, &mut worlds);
        let all = decide(&r, &pos, &worlds, false);
        let mut table = FivesTable::with_mb(16);
        let plain = AlphaBeta::new(&r, pos.mover, FullEngine::MStar, MODELS, Evaluation::Score, &mut table)
            .decide(&worlds, LIMITS);
        assert_eq!(all, plain, "seed {seed}: without adaptive nothing changes");
        let adaptive = decide(&r, &pos, &worlds, true);
        assert!(adaptive.nodes <= all.nodes, "seed {seed}");
        // It is exactly the decision over its first m worlds, m >= the minimum.
        let m = (ADAPTIVE_MIN_WORLDS..=16)
            .find(|&m| decide(&r, &pos, &worlds[..m], false) == adaptive)
            .unwrap_or_else(|| panic!("seed {seed}: no prefix of the worlds gives {adaptive:?}"));
        stopped += usize::from(m < 16);
        decisions += 1;
    }
    assert!(decisions >= 15, "{decisions} decisions");
    assert!(
        stopped >= 5,
        "the stop saves worlds: {stopped} of {decisions} stopped early"
    );
}

#[test]
fn a_position_that_decides_itself_stops_at_the_minimum() {
    let r = rules(6, 2, false);
    let pos = (0..)
        .filter_map(|s| position(&r, s, 2))
        .find(|p| {
            let mut list = ActionList::default();
            p.actions(&r, &mut list);
            list.len() >= 2
        })
        .unwrap();
    // Sixteen copies of one world: every paired difference is the same in
    // every world, so the leader is decided after the minimum.
    let copies = vec![pos; 16];
    let adaptive = decide(&r, &pos, &copies, true);
    let minimum = decide(&r, &pos, &copies[..ADAPTIVE_MIN_WORLDS], false);
    assert_eq!(adaptive, minimum);
    assert_eq!(adaptive.index, decide(&r, &pos, &copies, false).index);
}
