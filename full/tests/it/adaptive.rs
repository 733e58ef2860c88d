//! Adaptive effort (docs/search.md, "Adaptive effort"): a decision's worlds
//! stop once its best play is decided, exactly as if only those worlds had
//! been given; without it, nothing changes.

use engine::PlayerEngine;
use engine::seed::keyed_rng;
use engine::{ActionList, Belief, TargetKind};
use full::{
    ADAPTIVE_MIN_WORLDS, Adaptive, AlphaBeta, Evaluation, FivesPosition, FivesTable, FullDecision, FullRules,
    FullTarget, Limits, Seen, WorldSampler, WorldSource,
};

use crate::alphabeta::{position, rules};

pub(crate) const MODELS: [FullTarget; 4] = [FullTarget::Thesis(TargetKind::Scorer); 4];
const LIMITS: Limits = Limits {
    depth: 60,
    budget: 2_000,
};

/// A decision of M* against the scorer in every seat: the position of
/// `seed` after `plays` plays if its mover has two plays or more, and `k`
/// worlds of it drawn uniformly with `rng`.
pub(crate) fn decision(
    r: &FullRules,
    seed: u64,
    plays: u64,
    k: usize,
    rng: &mut impl rand_core::RngCore,
) -> Option<(FivesPosition, Vec<FivesPosition>)> {
    let pos = position(r, seed, plays)?;
    let mut list = ActionList::default();
    pos.actions(r, &mut list);
    if list.len() < 2 {
        return None;
    }
    let mut sampler = WorldSampler::default();
    let source = WorldSource {
        belief: Belief::Uniform,
        models: &MODELS,
        worlds: k,
    };
    sampler.prepare(r, &pos, &Seen::default(), source, rng);
    let mut worlds = Vec::new();
    sampler.worlds(k, rng, &mut worlds);
    Some((pos, worlds))
}

fn decide(r: &FullRules, pos: &FivesPosition, worlds: &[FivesPosition], adaptive: Option<Adaptive>) -> FullDecision {
    let mut table = FivesTable::with_mb(16);
    AlphaBeta::new(r, pos.mover, PlayerEngine::MStar, MODELS, Evaluation::Score, &mut table)
        .decide_with(worlds, LIMITS, adaptive)
}

#[test]
fn adaptive_effort_is_the_decision_of_the_worlds_it_searched() {
    let r = rules(6, 2, false);
    let (mut decisions, mut stopped, mut sooner) = (0, 0, 0);
    for seed in 0..40u64 {
        let mut rng = keyed_rng(seed, 1, 2, b"testadap", 0);
        let Some((pos, worlds)) = decision(&r, seed, 1 + seed % 6, 16, &mut rng) else {
            continue;
        };
        let all = decide(&r, &pos, &worlds, None);
        let mut table = FivesTable::with_mb(16);
        let plain = AlphaBeta::new(
            &r,
            pos.mover,
            PlayerEngine::MStar,
            MODELS,
            Evaluation::Score,
            &mut table,
        )
        .decide(&worlds, LIMITS);
        assert_eq!(all, plain, "seed {seed}: without adaptive nothing changes");
        // It is exactly the decision over its first m worlds, m >= the
        // minimum; a lower confidence stops no later.
        let prefix = |d: &FullDecision| {
            (ADAPTIVE_MIN_WORLDS..=16)
                .find(|&m| decide(&r, &pos, &worlds[..m], None) == *d)
                .unwrap_or_else(|| panic!("seed {seed}: no prefix of the worlds gives {d:?}"))
        };
        let adaptive = decide(&r, &pos, &worlds, Some(Adaptive::DEFAULT));
        assert!(adaptive.nodes <= all.nodes, "seed {seed}");
        let m = prefix(&adaptive);
        let lower = decide(&r, &pos, &worlds, Some(Adaptive::with_confidence(0.9).unwrap()));
        let m_lower = prefix(&lower);
        assert!(m_lower <= m, "seed {seed}: 90% searched {m_lower} worlds, 99% {m}");
        stopped += usize::from(m < 16);
        sooner += usize::from(m_lower < m);
        decisions += 1;
    }
    assert!(decisions >= 15, "{decisions} decisions");
    assert!(
        stopped >= 5,
        "the stop saves worlds: {stopped} of {decisions} stopped early"
    );
    assert!(
        sooner >= 1,
        "90% stopped sooner than 99% in {sooner} of {decisions} decisions"
    );
}

#[test]
fn a_confidence_is_a_level_in_thousandths_with_its_quantile() {
    let at = |c: f64| Adaptive::with_confidence(c);
    assert_eq!(at(0.99), Ok(Adaptive::DEFAULT));
    // The quantiles rounded to three decimals: the default's is the
    // constant adaptive effort was first measured with.
    assert_eq!(Adaptive::DEFAULT.z(), 2.326);
    assert_eq!(at(0.95).unwrap().z(), 1.645);
    assert_eq!(at(0.999).unwrap().z(), 3.09);
    assert_eq!(at(0.95).unwrap().to_string(), "95%");
    assert_eq!(at(0.999).unwrap().to_string(), "99.9%");
    for bad in [0.5, 1.0, 0.2, 1.5, 0.9555, f64::NAN] {
        let e = at(bad).expect_err("refused");
        assert!(e.0.to_bits() == bad.to_bits(), "{bad}: {e:?}");
        assert!(e.to_string().contains("above 0.5 and below 1"), "{bad}: {e}");
    }
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
    let adaptive = decide(&r, &pos, &copies, Some(Adaptive::DEFAULT));
    let minimum = decide(&r, &pos, &copies[..ADAPTIVE_MIN_WORLDS], None);
    assert_eq!(adaptive, minimum);
    assert_eq!(adaptive.index, decide(&r, &pos, &copies, None).index);
}
