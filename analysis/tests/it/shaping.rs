//! The shaping table: each shaping paired with plain search at its budget,
//! and its plot.

use crate::{close, row};

#[test]
fn the_shaping_table_pairs_each_shaping_with_plain_search_at_its_budget_and_plots_them() {
    use full::Shaping;
    use full::predict::PredictModel;
    let level = |shaping: Shaping| jobs::ShapingLevel {
        shaping,
        predictor: PredictModel::Logit,
    };
    let prune = level(Shaping::Prune {
        top_n: 2,
        epsilon_ppm: 0,
    });
    let s = |shaping: jobs::ShapingLevel, budget: u64, state: u64, diff: i32, nodes: u64| {
        let mut r = row(
            jobs::Source::Oracle,
            engine::PlayerEngine::Expectimax,
            state,
            diff,
            diff >= 0,
            (0, 0),
            "m",
        );
        r.shaping = shaping;
        r.budget = Some(budget);
        r.nodes = nodes;
        r.game_index = state * 4 + (shaping != jobs::ShapingLevel::NONE) as u64 * 2 + (budget > 100) as u64;
        r
    };
    // Two budgets, three deals; at 100 nodes prune gains +2, +4, -1 over
    // plain search; at 1,000, +1 on every deal.
    let rows = vec![
        s(jobs::ShapingLevel::NONE, 100, 0, -1, 500),
        s(prune, 100, 0, 1, 480),
        s(jobs::ShapingLevel::NONE, 100, 1, 3, 500),
        s(prune, 100, 1, 7, 490),
        s(jobs::ShapingLevel::NONE, 100, 2, 0, 500),
        s(prune, 100, 2, -1, 470),
        s(jobs::ShapingLevel::NONE, 1000, 0, 2, 5000),
        s(prune, 1000, 0, 3, 5000),
        s(jobs::ShapingLevel::NONE, 1000, 1, 4, 5000),
        s(prune, 1000, 1, 5, 5000),
        s(jobs::ShapingLevel::NONE, 1000, 2, -2, 5000),
        s(prune, 1000, 2, -1, 5000),
    ];
    let r = analysis::build_from_rows("s", &rows, None);
    assert_eq!(r.shaping.len(), 4);
    let get = |name: &str, budget: u64| {
        r.shaping
            .iter()
            .find(|x| x.shaping == name && x.budget == Some(budget))
            .unwrap()
    };
    let p = get("prune/logit", 100);
    let g = p.score_gain.as_ref().unwrap();
    assert_eq!(g.n, 3);
    assert!(close(g.mean, 5.0 / 3.0, 1e-12));
    assert!(close(p.mean_nodes, 480.0, 1e-12));
    let w = p.win_gain.as_ref().unwrap();
    assert_eq!((w.b, w.c), (1, 1));
    let q = get("prune/logit", 1000).score_gain.as_ref().unwrap();
    assert!(close(q.mean, 1.0, 1e-12) && q.sd == 0.0);
    assert!(get("none", 1000).score_gain.is_none());
    // Shaped rows stay out of the M*-versus-Expectimax cells.
    assert_eq!(r.cells.iter().map(|c| c.expectimax.games).sum::<u64>(), 6);
    let files = analysis::report_files(&r);
    let csv = &files.iter().find(|(n, _)| *n == "shaping.csv").unwrap().1;
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.contains("full,scorer,expectimax,100,prune/logit,3,"), "{csv}");
    let md = &files.iter().find(|(n, _)| *n == "report.md").unwrap().1;
    assert!(md.contains("## Shaping") && md.contains("| full | scorer | expectimax | 1000 | prune/logit | 3 |"));
    // The plot: one panel, plain search and prune as lines over the budgets,
    // round ticks with zero marked, on a log scale of nodes.
    let svg = &files.iter().find(|(n, _)| *n == "shaping.svg").unwrap().1;
    assert!(svg.contains("scorer, expectimax (full)") && svg.contains("nodes per game (log scale)"));
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    assert!(svg.contains(">1k<") && svg.contains(">0<"), "{svg}");
    assert!(analysis::summary_table(&r).contains("prune/logit"));
}
