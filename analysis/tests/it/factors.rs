//! The by-factor section: every factor that varies, in the rows' order, and
//! a budget factor that splits the cells.

use crate::row;

/// The by-factor table: a factor with two levels gives each level's games,
/// mean and win/tie share; a factor with one level is left out.
#[test]
fn the_report_tables_every_factor_that_varies() {
    use engine::PlayerEngine::{Expectimax as EM, MStar as MS};
    use jobs::Source::Oracle as OR;
    let rows = [
        row(OR, MS, 0, 4, true, (0, 0), "a"),
        row(OR, MS, 1, -2, false, (0, 0), "b"),
        row(OR, EM, 0, 1, true, (0, 0), "c"),
        row(OR, EM, 1, 1, true, (0, 0), "d"),
    ];
    let r = analysis::build_from_rows("f", &rows, None);
    let engines: Vec<_> = r.factors.iter().filter(|l| l.factor == "engine").collect();
    assert_eq!(engines.len(), 2);
    let ms = engines.iter().find(|l| l.level == "mstar").unwrap();
    assert_eq!((ms.games, ms.mean_score_diff, ms.win_or_tie), (2, 1.0, 0.5));
    assert!(ms.ci_low < 1.0 && ms.ci_high > 1.0);
    assert!(
        r.factors.iter().all(|l| l.factor == "engine"),
        "the other factors have one level: {:?}",
        r.factors
    );
    let md = analysis::report_files(&r)
        .into_iter()
        .find(|(n, _)| *n == "report.md")
        .unwrap()
        .1;
    assert!(
        md.contains("## By factor") && md.contains("| engine | mstar | 2 |"),
        "{md}"
    );
    assert!(md.contains("**Headline:** M* scores more than Expectimax"), "{md}");
}

#[test]
fn by_factor_keeps_the_rows_order_and_an_agents_grid_lists_only_its_own_factors() {
    use engine::{PlayerEngine::MStar as MS, TargetKind};
    use full::FullTarget::Thesis;
    use jobs::Source::Oracle as OR;
    // The spec listed target = ["scorer", "random"]: scorer's games first.
    let mut rows = Vec::new();
    for (i, t) in [TargetKind::Scorer, TargetKind::Random].into_iter().enumerate() {
        for s in 0..3 {
            let mut r = row(OR, MS, s, s as i32 - 1, s > 0, (0, 0), "m");
            r.game_index = (i * 3) as u64 + s;
            r.target = Thesis(t);
            rows.push(r);
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let levels: Vec<&str> = r
        .factors
        .iter()
        .filter(|l| l.factor == "target")
        .map(|l| l.level.as_str())
        .collect();
    assert_eq!(levels, ["scorer", "random"]);
    // The cells (scores.csv, the run summary) keep that order too.
    let cells: Vec<String> = r.cells.iter().map(|c| c.target.to_string()).collect();
    assert_eq!(cells, ["scorer", "random"]);
    // Named agents: the opponent's kind and each agent's settings are not
    // factors of the grid.
    for (k, r) in rows.iter_mut().enumerate() {
        r.agent = Some(if k % 2 == 0 { "a" } else { "b" }.into());
        r.opponent = Some("random".into());
        r.budget = Some(100 * (k as u64 % 3));
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let factors: std::collections::BTreeSet<&str> = r.factors.iter().map(|l| l.factor.as_str()).collect();
    assert_eq!(factors.into_iter().collect::<Vec<_>>(), ["agent"]);
}

#[test]
fn a_budget_factor_splits_the_cells_instead_of_pooling_them() {
    use engine::PlayerEngine::{Expectimax as EM, MStar as MS};
    use jobs::Source::Oracle as OR;
    let mut rows = Vec::new();
    for (k, budget) in [500u64, 1000].into_iter().enumerate() {
        for s in 0..4u64 {
            for e in [MS, EM] {
                let mut r = row(OR, e, s, if e == MS { 2 } else { k as i32 }, true, (0, 0), "m");
                r.game_index = 100 * k as u64 + 10 * s + e as u64;
                r.budget = Some(budget);
                rows.push(r);
            }
        }
    }
    let r = analysis::build_from_rows("x", &rows, None);
    let budgets: Vec<Option<u64>> = r.cells.iter().map(|c| c.budget).collect();
    assert_eq!(budgets, [Some(500), Some(1000)]);
    assert!(
        r.cells.iter().all(|c| c.paired.n == 4),
        "4 deals a budget, not 8 pooled"
    );
    let files = analysis::report_files(&r);
    let get = |n: &str| &files.iter().find(|(f, _)| *f == n).unwrap().1;
    assert!(
        get("scores.csv").starts_with("budget,information_source,"),
        "{}",
        get("scores.csv")
    );
    assert!(
        get("paired.csv")
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("500,oracle,full,scorer,")
    );
    let md = get("report.md");
    assert!(
        md.contains("budget 500 nodes") && md.contains("budget 1000 nodes"),
        "{md}"
    );
    let table = analysis::summary_table(&r);
    assert!(table.lines().next().unwrap().contains("budget"), "{table}");
    assert!(table.contains("     500 ") && table.contains("    1000 "), "{table}");
}
