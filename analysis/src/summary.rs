//! What `muggins run` prints at the end: one line per cell and engine.

use std::fmt::Write;

use engine::{Observability, PlayerEngine};

use crate::build::{CellReport, EngineSummary, Report};

/// A fixed-width table of the report's cells, one line per engine, ordered
/// by source, observability, target, then engine (Expectimax first).
pub fn summary_table(r: &Report) -> String {
    if let Some(t) = &r.tournament {
        return tournament_table(t);
    }
    let mut rows: Vec<(&CellReport, PlayerEngine, &EngineSummary)> = r
        .cells
        .iter()
        .flat_map(|c| {
            [
                (c, PlayerEngine::MStar, &c.mstar),
                (c, PlayerEngine::Expectimax, &c.expectimax),
            ]
            .into_iter()
            .chain(c.ismcts.as_ref().map(|e| (c, PlayerEngine::Ismcts, e)))
        })
        // An engine the grid did not ask for has no games in the cell.
        .filter(|&(c, e, s)| s.games > 0 || (c.ismcts.is_none() && e != PlayerEngine::Ismcts))
        .collect();
    // With a rules factor, the rule sets in the cells' (the grid's) order first.
    let sets = r.rule_sets();
    // A column for the rule set in every table, as wide as the longest name.
    let set_width = r
        .cells
        .iter()
        .map(|c| &c.rules)
        .chain(r.shaping.iter().map(|b| &b.rules))
        .chain(r.beliefs.iter().map(|b| &b.rules))
        .flatten()
        .map(|n| n.len().max(5))
        .max();
    let set_col = |name: Option<&str>| set_width.map_or(String::new(), |w| format!("{:<w$} ", name.unwrap_or("")));
    // With a budget factor, a column for the budget.
    let budgets = r.cells.iter().any(|c| c.budget.is_some());
    let budget_col = |b: Option<String>| budget_cell(budgets, b);
    rows.sort_by_key(|&(c, e, _)| {
        (
            sets.iter().position(|x| *x == c.rules.as_deref()),
            c.information_source,
            c.observability == Observability::Partial,
            // Targets in the spec's order: the cells' (the rows') order.
            r.cells.iter().position(|x| x.target == c.target),
            c.budget,
            // Engines in their declared order: Expectimax, M*, ISMCTS, ...
            e,
        )
    });
    let mut s = String::new();
    // A grid of the DominAI engine alone has no M*-versus-Expectimax cells.
    let dominai_only = r.cells.iter().all(|c| c.mstar.games + c.expectimax.games == 0) && !r.beliefs.is_empty();
    if dominai_only {
        rows.clear();
    } else {
        let _ = writeln!(
            s,
            "{}{}{:<10} {:<8} {:<9} {:<10} {:>9} {:>11} {:>10} {:>9}",
            set_col(Some("rules")),
            budget_col(Some("budget".into())),
            "source",
            "observe",
            "target",
            "engine",
            "games",
            "mean diff",
            "win/tie",
            "accuracy"
        );
    }
    for (c, engine, e) in rows {
        let acc = if e.predictions > 0 {
            format!("{:.1}%", 100.0 * e.predictions_correct as f64 / e.predictions as f64)
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "{}{}{:<10} {:<8} {:<9} {:<10} {:>9} {:>11.4} {:>10} {:>9}",
            set_col(c.rules.as_deref()),
            budget_col(c.budget.map(|b| b.to_string())),
            c.information_source.name(),
            c.observability.to_string(),
            c.target.to_string(),
            engine.to_string(),
            e.games,
            e.mean_score_diff,
            e.wins_or_ties,
            acc
        );
    }
    if !r.shaping.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&shaping_table(r, &set_col));
    }
    if !r.beliefs.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "{}{:<8} {:<9} {:<10} {:<12} {:>7} {:>11} {:>8} {:>9} {:>14}",
            set_col(Some("rules")),
            "observe",
            "target",
            "engine",
            "belief",
            "games",
            "mean diff",
            "win/tie",
            "log loss",
            "gain vs unif."
        );
        for b in &r.beliefs {
            let gain = b.score_gain.as_ref().map_or("-".to_string(), |t| {
                format!("{:+.2}{}", t.mean, if t.significant { "*" } else { "" })
            });
            let _ = writeln!(
                s,
                "{}{:<8} {:<9} {:<10} {:<12} {:>7} {:>11.4} {:>8} {:>9} {:>14}",
                set_col(b.rules.as_deref()),
                b.observability.to_string(),
                b.target.to_string(),
                b.engine.to_string(),
                b.belief.name(),
                b.games,
                b.mean_score_diff,
                b.wins_or_ties,
                b.log_loss.map_or("-".to_string(), |x| format!("{x:.4}")),
                gain
            );
        }
    }
    s
}

/// A budget column's cell (8 wide) when the table has budgets, else nothing.
fn budget_cell(on: bool, b: Option<String>) -> String {
    if on {
        format!("{:>8} ", b.unwrap_or_default())
    } else {
        String::new()
    }
}

/// The shaping levels, one line each, with their paired gain over `none`.
fn shaping_table(r: &Report, set_col: &dyn Fn(Option<&str>) -> String) -> String {
    let mut s = String::new();
    let budgets = r.shaping.iter().any(|b| b.budget.is_some());
    let shaping_budget_col = |b: Option<String>| budget_cell(budgets, b);
    let _ = writeln!(
        s,
        "{}{}{:<8} {:<9} {:<10} {:<24} {:>7} {:>11} {:>8} {:>11} {:>14}",
        set_col(Some("rules")),
        shaping_budget_col(Some("budget".into())),
        "observe",
        "target",
        "engine",
        "shaping",
        "games",
        "mean diff",
        "win/tie",
        "nodes/game",
        "gain vs none"
    );
    for b in &r.shaping {
        let gain = b.score_gain.as_ref().map_or("-".to_string(), |t| {
            if t.all_equal() {
                // Every paired game came out the same: nothing was shaped.
                return "identical".to_string();
            }
            format!("{:+.2}{}", t.mean, if t.significant { "*" } else { "" })
        });
        let _ = writeln!(
            s,
            "{}{}{:<8} {:<9} {:<10} {:<24} {:>7} {:>11.4} {:>8} {:>11.0} {:>14}",
            set_col(b.rules.as_deref()),
            shaping_budget_col(b.budget.map(|x| x.to_string())),
            b.observability.to_string(),
            b.target.to_string(),
            b.engine.to_string(),
            b.shaping,
            b.games,
            b.mean_score_diff,
            b.wins_or_ties,
            b.mean_nodes,
            gain
        );
    }
    s
}

/// Named agents: the Elo table, the pairings and the SPRT's verdict.
fn tournament_table(t: &crate::TournamentReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<4} {:<20} {:>8} {:>19} {:>8} {:>7} {:>8}",
        "rank", "agent", "BT Elo", "95% interval", "games", "score", "LOS"
    );
    for (i, r) in t.ratings.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:<4} {:<20} {:>8} {:>19} {:>8} {:>6.1}% {:>8}",
            i + 1,
            r.name,
            crate::tournament::f1(r.elo),
            format!(
                "[{}, {}]",
                crate::tournament::f1(r.ci_low),
                crate::tournament::f1(r.ci_high)
            ),
            r.games,
            100.0 * r.score,
            r.los_next.map_or("-".into(), |l| format!("{:.1}%", 100.0 * l))
        );
    }
    let _ = writeln!(
        s,
        "(BT Elo: Bradley-Terry ratings over every game, the pool's mean at 0)"
    );
    let _ = writeln!(
        s,
        "\n{:<20} {:<20} {:>7} {:>17} {:>11} {:>22}",
        "agent", "opponent", "games", "W / T / L", "mean diff", "pairs 0/.5/1/1.5/2"
    );
    for p in &t.pairings {
        let _ = writeln!(
            s,
            "{:<20} {:<20} {:>7} {:>17} {:>11.3} {:>22}",
            p.agent,
            p.opponent,
            p.games,
            format!("{} / {} / {}", p.wins, p.ties, p.losses),
            p.mean_score_diff,
            p.penta.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
        );
    }
    if let Some(sp) = &t.sprt {
        let _ = writeln!(
            s,
            "\nSPRT: {}; {} of the grid's {} games kept",
            sp.line(),
            sp.kept_games,
            sp.grid_games
        );
    }
    s
}
