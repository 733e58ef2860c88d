//! The beliefs' table: each belief paired with `uniform` on the same deals,
//! and which grids get the table and the M*-versus-Expectimax cells.

use crate::{close, row};

#[test]
fn the_beliefs_table_pairs_each_belief_with_uniform_on_the_same_deals() {
    use engine::Belief;
    let b = |belief: Belief, state: u64, diff: i32, ll: f64| {
        let mut r = row(
            jobs::Source::Oracle,
            engine::PlayerEngine::MStar,
            state,
            diff,
            diff >= 0,
            (0, 0),
            "m",
        );
        r.observability = engine::Observability::Partial;
        r.belief = Some(belief);
        r.belief_log_loss = Some(ll);
        r.belief_brier = Some(ll / 2.0);
        r.belief_ess = (belief == Belief::Model).then_some(10.0 + state as f64);
        r.game_index = state * 4 + belief as u64;
        r
    };
    // Three deals; constraints gains +2, +4, -1 over uniform, model +5, +5, +2.
    let rows = vec![
        b(Belief::Uniform, 0, -1, 0.9),
        b(Belief::Constraints, 0, 1, 0.7),
        b(Belief::Model, 0, 4, 0.5),
        b(Belief::Uniform, 1, 3, 0.8),
        b(Belief::Constraints, 1, 7, 0.6),
        b(Belief::Model, 1, 8, 0.4),
        b(Belief::Uniform, 2, 0, 0.7),
        b(Belief::Constraints, 2, -1, 0.5),
        b(Belief::Model, 2, 2, 0.3),
    ];
    let r = analysis::build_from_rows("b", &rows, None);
    assert_eq!(r.beliefs.len(), 3);
    let get = |belief| r.beliefs.iter().find(|s| s.belief == belief).unwrap();
    let u = get(Belief::Uniform);
    assert_eq!((u.games, u.wins_or_ties), (3, 2));
    assert!(close(u.log_loss.unwrap(), 0.8, 1e-12));
    assert!(u.score_gain.is_none() && u.ess.is_none());
    let c = get(Belief::Constraints);
    let g = c.score_gain.as_ref().unwrap();
    assert_eq!(g.n, 3);
    assert!(close(g.mean, 5.0 / 3.0, 1e-12));
    // sd of (2, 4, -1): sqrt(((1/3)^2 + (7/3)^2 + (8/3)^2) / 2).
    assert!(close(g.sd, (114.0f64 / 18.0).sqrt(), 1e-12));
    // Wins/ties: deal 0 only constraints, deal 2 only uniform.
    let w = c.win_gain.as_ref().unwrap();
    assert_eq!((w.b, w.c), (1, 1));
    let m = get(Belief::Model);
    assert!(close(m.score_gain.as_ref().unwrap().mean, 4.0, 1e-12));
    assert!(close(m.ess.unwrap(), 11.0, 1e-12));
    assert!(close(m.brier.unwrap(), 0.2, 1e-12));
    // Only uniform rows enter the M*-versus-Expectimax cells.
    assert_eq!(r.cells.iter().map(|c| c.mstar.games).sum::<u64>(), 3);
    // The report's files carry the table.
    let files = analysis::report_files(&r);
    let csv = &files.iter().find(|(n, _)| *n == "beliefs.csv").unwrap().1;
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.contains("partial,scorer,mstar,model,3,"));
    let md = &files.iter().find(|(n, _)| *n == "report.md").unwrap().1;
    assert!(md.contains("## Beliefs") && md.contains("| partial | scorer | mstar | constraints | 3 |"));
    assert!(analysis::summary_table(&r).contains("constraints"));
    // A uniform hand with no decision to score still counts and pairs in a
    // grid of several beliefs.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(3);
    for mut r in rows {
        if r.belief == Some(Belief::Uniform) && r.starting_state == 2 {
            r.belief_log_loss = None;
            r.belief_brier = None;
        }
        acc.add("b", &r);
    }
    let r = acc.finish(None);
    let u = r.beliefs.iter().find(|s| s.belief == Belief::Uniform).unwrap();
    assert_eq!(u.games, 3);
    assert!(close(u.log_loss.unwrap(), 0.85, 1e-12));
    let c = r.beliefs.iter().find(|s| s.belief == Belief::Constraints).unwrap();
    assert_eq!(c.score_gain.as_ref().unwrap().n, 3);
}

#[test]
fn one_belief_gets_no_beliefs_table_and_full_observation_never_enters_it() {
    use engine::{Belief, Observability, PlayerEngine::MStar as MS};
    let mut rows = Vec::new();
    for (k, obs) in [Observability::Full, Observability::Partial].into_iter().enumerate() {
        for s in 0..3u64 {
            let mut r = row(jobs::Source::Oracle, MS, s, 1, true, (0, 0), "m");
            r.game_index = 10 * k as u64 + s;
            r.observability = obs;
            r.belief = (obs == Observability::Partial).then_some(Belief::Model);
            r.belief_log_loss = (obs == Observability::Partial).then_some(1.5);
            rows.push(r);
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    assert!(r.beliefs.is_empty(), "one belief compares nothing: {:?}", r.beliefs);
    assert!(!analysis::summary_table(&r).contains("belief"));
    // Two beliefs: the table, of partial-observation rows only.
    let mut two = rows.clone();
    for mut r in rows {
        r.game_index += 100;
        r.belief = r.belief.map(|_| Belief::Uniform);
        two.push(r);
    }
    let r = analysis::build_from_rows("x", &two, None);
    assert!(!r.beliefs.is_empty());
    assert!(
        r.beliefs.iter().all(|b| b.observability == Observability::Partial),
        "{:?}",
        r.beliefs
    );
}

#[test]
fn a_grid_of_one_belief_gets_its_m_star_versus_expectimax_cells_whatever_the_belief() {
    use engine::{Belief, PlayerEngine};
    let rows: Vec<jobs::GameRow> = (0..4u64)
        .flat_map(|s| {
            [PlayerEngine::MStar, PlayerEngine::Expectimax].map(|e| {
                let d = if e == PlayerEngine::MStar { 5 } else { 2 } + s as i32;
                jobs::GameRow {
                    observability: engine::Observability::Partial,
                    belief: Some(Belief::Model),
                    ..row(jobs::Source::Oracle, e, s, d, true, (0, 0), "")
                }
            })
        })
        .collect();
    // The grid's one belief is `model` (double6.toml's): the cells are its games.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(1);
    rows.iter().for_each(|r| acc.add("d6", r));
    let r = acc.finish(None);
    assert_eq!(r.cells.len(), 1);
    assert_eq!((r.cells[0].mstar.games, r.cells[0].expectimax.games), (4, 4));
    assert!(close(r.cells[0].paired.mean, 3.0, 1e-12));
    // A grid that varies the belief compares engines on `uniform` only (the
    // beliefs' section has the rest): no uniform rows, no cells.
    let mut acc = analysis::Accumulator::default();
    acc.set_belief_levels(2);
    rows.iter().for_each(|r| acc.add("d6", r));
    assert!(acc.finish(None).cells.is_empty());
}
