//! report.md: the thesis's tables per quadrant, the side by side with the
//! thesis, the classifier and the plots.

use std::fmt::Write as _;

use engine::{Observability, PlayerEngine};
use jobs::Source;
use jobs::training::Report as ClassifierReport;
use serde_json::Value;

use super::{confusion_json, evaluations, thesis};
use crate::build::{CellReport, Consistency, Report};

/// Quadrants in Table 6 order, then any others (bayes); with a rules
/// factor, per rule set in the grid's order.
/// A quadrant's key: rule set, observability, source and budget (where the
/// grid lists several).
type QuadrantKey<'a> = (Option<&'a str>, Observability, Source, Option<u64>);

fn quadrants(r: &Report) -> Vec<QuadrantKey<'_>> {
    let mut q: Vec<QuadrantKey> = Vec::new();
    for c in &r.cells {
        let k = (c.rules.as_deref(), c.observability, c.information_source, c.budget);
        if !q.contains(&k) {
            q.push(k);
        }
    }
    // The rule sets in the grid's order, sorted within.
    let order = r.rule_sets();
    q.sort_by_key(|&(rules, o, s, b)| {
        (
            order.iter().position(|x| *x == rules),
            s == Source::Bayes,
            o == Observability::Partial,
            s,
            b,
        )
    });
    q
}

fn quadrant_title(r: &Report, rules: Option<&str>, o: Observability, s: Source, budget: Option<u64>) -> String {
    let title = quadrant_title_of(r, rules, o, s);
    match budget {
        Some(b) => format!("{title}, budget {b} nodes"),
        None => title,
    }
}

fn quadrant_title_of(r: &Report, rules: Option<&str>, o: Observability, s: Source) -> String {
    if let Some(n) = rules {
        return format!("Rule set {n} — {o} observation, {} source (no thesis table)", s.name());
    }
    if let Some(game) = &r.game {
        return format!("{game} — {o} observation, {} source (no thesis table)", s.name());
    }
    use Observability::{Full, Partial};
    use Source::{Classifier, Oracle};
    let (n, tables) = match (o, s) {
        (Full, Oracle) => ("Quadrant 1: expected value gain upper bound", "Tables 19 and 20"),
        (Full, Classifier) => ("Quadrant 2: actual value", "Tables 21 and 22"),
        (Partial, Oracle) => ("Quadrant 3: expected value gain", "Tables 23 and 24"),
        (Partial, Classifier) => ("Quadrant 4: actual value, real world", "Tables 25 and 26"),
        _ => ("Beyond the thesis", "no thesis table"),
    };
    format!("{n} — {o} observation, {} source ({tables})", s.name())
}

fn f3(x: f64) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{x:.3}") }
}

fn p(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x < 1e-4 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// A mark for values whose test is not significant at 95% (the thesis shades them grey).
fn mark(significant: bool) -> &'static str {
    if significant { "" } else { " †" }
}

fn acc(c: &CellReport) -> String {
    c.mstar.accuracy.map_or("-".into(), |a| format!("{a:.3}"))
}

/// The title, what the report is built from, and how its tests read.
fn intro(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Report: {}\n", r.experiment);
    let _ = writeln!(
        s,
        "{} games. Built from the Parquet partitions under `games/` and, if present, `classifier/report.json`.\n",
        r.games
    );
    let rules = r
        .game
        .as_deref()
        .unwrap_or("the thesis's (double-3, hands of 3, one hand a game)");
    let seed = r.seed.map_or(String::new(), |x| format!("; seed {x}"));
    let _ = writeln!(s, "Rules: {rules}{seed}.\n");
    let _ = writeln!(s, "{}", headline(r));
    if r.cells.is_empty() && r.tournament.is_some() {
        return s;
    }
    let _ = writeln!(
        s,
        "Tests at 95%: score gains use the thesis's one-tailed difference of means (Eq. 10), win/tie gains its two-tailed binomial test (Eq. 11); \
         **†** marks a value whose test is not significant (the thesis shades those cells grey). Because both engines face the same deals and draws \
         for each (starting state, repeat), the paired tests follow: the mean per-pair difference with its 95% interval, and McNemar's test on win/tie.\n"
    );
    s
}

/// One paragraph at the top: what the experiment found, in a sentence.
fn headline(r: &Report) -> String {
    if let Some(t) = &r.tournament {
        return match (t.ratings.first(), &t.sprt) {
            (_, Some(sp)) => format!(
                "**Headline:** SPRT {}, {} of the grid's {} games kept; the pairs' logistic Elo of the agent over its \
                 opponent {:+.1} [{:+.1}, {:+.1}]{} (the Agents section's Bradley-Terry Elo is relative to the pool's \
                 mean, so it is about half of this for two agents).\n",
                sp.line(),
                sp.kept_games,
                sp.grid_games,
                sp.elo[0],
                sp.elo[1],
                sp.elo[2],
                crate::tournament::clamp_note(&sp.elo)
            ),
            (Some(best), None) => format!(
                "**Headline:** {} leads the pool of {} at {:+.1} Elo [{:+.1}, {:+.1}] (section Agents).\n",
                best.name,
                t.ratings.len(),
                best.elo,
                best.ci_low,
                best.ci_high
            ),
            (None, None) => String::new(),
        };
    }
    let compared: Vec<&CellReport> = r
        .cells
        .iter()
        .filter(|c| c.mstar.games > 0 && c.expectimax.games > 0)
        .collect();
    if compared.is_empty() {
        return String::new();
    }
    let better = compared
        .iter()
        .filter(|c| c.paired.significant && c.paired.mean > 0.0)
        .count();
    let worse = compared
        .iter()
        .filter(|c| c.paired.significant && c.paired.mean < 0.0)
        .count();
    let gain = compared.iter().map(|c| c.paired.mean).sum::<f64>() / compared.len() as f64;
    format!(
        "**Headline:** M* scores more than Expectimax on the same deals in {better} of {} cells and less in {worse} \
         (paired test, 95%); the mean paired gain over the cells is {gain:+.3} points a game.\n",
        compared.len()
    )
}

/// The Expectimax consistency check's paragraph.
fn consistency(c: &Consistency) -> String {
    if c.compared == 0 {
        "Consistency: this experiment has one information source, so Expectimax games cannot be compared across sources.\n\n"
            .into()
    } else if c.mismatches == 0 {
        format!(
            "Consistency: Expectimax ignores the information source, and its {} games compared across sources are identical. ✔\n\n",
            c.compared
        )
    } else {
        format!(
            "**Consistency warning:** {} of {} Expectimax games differ across information sources, which should never happen.\n\n",
            c.mismatches, c.compared
        )
    }
}

/// One quadrant's two tables (scores, then wins and ties), one column pair
/// per target; empty if the quadrant has no cells.
fn quadrant(r: &Report, t: &Value, (rules, o, src, budget): QuadrantKey) -> String {
    // The quadrant's cells, in the report's (the spec's) target order.
    let cells: Vec<&CellReport> = r
        .cells
        .iter()
        .filter(|c| {
            c.rules.as_deref() == rules && c.observability == o && c.information_source == src && c.budget == budget
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    let label = if src == Source::Oracle { "EVG" } else { "actual value" };
    let mut head = String::from("| Targets |");
    let mut sep = String::from("|---|");
    for c in &cells {
        let _ = write!(head, " {0} M* ({1}) | {0} Expectimax |", c.target, src.name());
        sep.push_str("---|---|");
    }
    let head = format!("{head}\n{sep}");
    format!(
        "## {}\n\n{}{}{}",
        quadrant_title(r, rules, o, src, budget),
        score_table(&cells, t, label, &head),
        win_table(&cells, t, label, &head),
        ismcts_table(&cells)
    )
}

/// ISMCTS's games of a quadrant, when the grid asked for them: mean score
/// difference and wins or ties per target.
fn ismcts_table(cells: &[&CellReport]) -> String {
    let rows: Vec<(&CellReport, &crate::build::EngineSummary)> = cells
        .iter()
        .filter_map(|c| c.ismcts.as_ref().map(|e| (*c, e)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "ISMCTS (information-set MCTS) in the same cells:\n\n| target | games | mean score_diff | win/tie |\n|---|---|---|---|\n",
    );
    for (c, e) in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({:.1}%) |",
            c.target,
            e.games,
            f3(e.mean_score_diff),
            e.wins_or_ties,
            100.0 * e.wins_or_ties as f64 / e.games.max(1) as f64
        );
    }
    s.push('\n');
    s
}

/// A quadrant's score table: means, Eq. 10, the paired test, accuracy, the thesis's.
fn score_table(cells: &[&CellReport], t: &Value, label: &str, head: &str) -> String {
    let mut row = String::from("| mean score_diff |");
    let mut gain = format!("| {label} (score) |");
    let mut paired = String::from("| paired mean [95% CI], p |");
    let mut accuracy = String::from("| prediction accuracy |");
    let mut th = String::from("| thesis |");
    for c in cells {
        let _ = write!(
            row,
            " {} | {} |",
            f3(c.mstar.mean_score_diff),
            f3(c.expectimax.mean_score_diff)
        );
        let _ = write!(
            gain,
            " {}{} (p = {}) ||",
            f3(c.score_test.diff),
            mark(c.score_test.significant),
            p(c.score_test.p)
        );
        let _ = write!(
            paired,
            " {} [{}, {}]{}, p = {} ||",
            f3(c.paired.mean),
            f3(c.paired.ci_low),
            f3(c.paired.ci_high),
            mark(c.paired.significant),
            p(c.paired.p)
        );
        let _ = write!(accuracy, " {} ||", acc(c));
        match thesis::cell(t, c) {
            Some(x) => {
                let _ = write!(
                    th,
                    " {} | {} |",
                    x[PlayerEngine::MStar.name()],
                    x[PlayerEngine::Expectimax.name()]
                );
            }
            None => th.push_str(" - | - |"),
        }
    }
    let th = if t.is_null() { String::new() } else { format!("{th}\n") };
    format!("Mean per-game score difference:\n\n{head}\n{row}\n{gain}\n{paired}\n{accuracy}\n{th}\n")
}

/// A quadrant's win/tie table: totals, Eq. 11, McNemar, the thesis's.
fn win_table(cells: &[&CellReport], t: &Value, label: &str, head: &str) -> String {
    let mut row = String::from("| wins + ties |");
    let mut gain = format!("| {label} (wins/ties) |");
    let mut mcn = String::from("| McNemar b / c, p |");
    let mut th = String::from("| thesis |");
    for c in cells {
        let _ = write!(
            row,
            " {} of {} | {} of {} |",
            c.mstar.wins_or_ties, c.mstar.games, c.expectimax.wins_or_ties, c.expectimax.games
        );
        let _ = write!(
            gain,
            " {}{} (p = {}) ||",
            c.win_test.diff,
            mark(c.win_test.significant),
            p(c.win_test.p)
        );
        let _ = write!(
            mcn,
            " {} / {}{}, p = {} ||",
            c.mcnemar.b,
            c.mcnemar.c,
            mark(c.mcnemar.significant),
            p(c.mcnemar.p)
        );
        match thesis::cell(t, c) {
            Some(x) => {
                let _ = write!(
                    th,
                    " {} of 50400 | {} of 50400 |",
                    x["mstar_wins"], x["expectimax_wins"]
                );
            }
            None => th.push_str(" - | - |"),
        }
    }
    let th = if t.is_null() { String::new() } else { format!("{th}\n") };
    format!("Win/tie totals:\n\n{head}\n{row}\n{gain}\n{mcn}\n{th}\n")
}

/// The side by side with the thesis; empty if the thesis has none of the cells.
fn side_by_side(r: &Report) -> String {
    let cmp = thesis::comparison(r);
    if cmp.is_empty() {
        return String::new();
    }
    let mut s = String::from("## Side by side with the thesis\n\n");
    s.push_str("Win/tie figures are shares of games (the thesis's totals over its 50,400 games per cell).\n\n");
    s.push_str(
        "| table | source | observability | target | quantity | thesis | ours | ours - thesis |\n|---|---|---|---|---|---|---|---|\n",
    );
    for c in &cmp {
        let _ = writeln!(s, "| {} |", c.columns().join(" | "));
    }
    s.push('\n');
    s
}

/// The classifier's section (Tables 13-18): the chosen model, then every
/// evaluation beside the thesis's nearest.
fn classifier(cl: &ClassifierReport, t: &Value) -> String {
    let mut s = String::from("## The classifier (Tables 13-18)\n\n");
    let _ = writeln!(
        s,
        "Chosen: **{}** on {} samples (prior: {}), model `{}`.\n",
        cl.chosen_kind, cl.chosen.samples, cl.prior, cl.model_file
    );
    let _ = writeln!(
        s,
        "| kind | samples | held out | CV accuracy | holdout accuracy | thesis accuracy (table) | fit ms | predict ms | confusion (rows actual R/S/D) |\n|---|---|---|---|---|---|---|---|---|"
    );
    for (chosen, e) in evaluations(cl) {
        let th = thesis::classifier(t, e);
        let _ = writeln!(
            s,
            "| {}{} | {} | {} | {:.3} | {:.3} | {} | {:.1} | {:.1} | {} |",
            e.kind,
            if chosen { " (the grid's model)" } else { "" },
            e.samples,
            e.holdout,
            e.cv_accuracy,
            e.accuracy,
            th.map_or("-".into(), |x| format!("{} (Table {})", x["accuracy"], x["table"])),
            e.fit_ms,
            e.predict_ms,
            confusion_json(&e.confusion)
        );
    }
    s.push('\n');
    s
}

/// The plots' links (the confusion matrices only with a classifier).
fn plots(r: &Report) -> String {
    let mut s = String::from(
        "## Plots\n\n![value gain](value_gain.svg)\n\n![win/tie gain](win_gain.svg)\n\n![score differences](score_diff.svg)\n\n",
    );
    if r.classifier.is_some() {
        s.push_str("![confusion matrices](confusion.svg)\n\n");
    }
    s
}

/// report.md.
pub(super) fn report(r: &Report) -> String {
    let t = thesis::data(r);
    let mut s = intro(r);
    if let Some(t) = &r.tournament {
        s.push_str(&crate::tournament::markdown(t));
        if r.cells.is_empty() {
            // Named agents only: none of the thesis's cells, tests or plots.
            s.push_str(&crate::factors::markdown(&r.factors));
            if let Some(w) = &r.workers {
                s.push_str(&crate::workers::markdown(w));
            }
            s.push_str("## Plots\n\n![Elo](elo.svg)\n\n");
            if t.sprt.is_some() {
                s.push_str("![SPRT](sprt.svg)\n\n");
            }
            return s;
        }
    }
    s.push_str(&consistency(&r.consistency));
    for q in quadrants(r) {
        s.push_str(&quadrant(r, &t, q));
    }
    s.push_str(&crate::factors::markdown(&r.factors));
    s.push_str(&crate::beliefs::markdown(&r.beliefs));
    if let Some(p) = &r.prediction {
        s.push_str(&crate::shaping::prediction_markdown(p));
    }
    s.push_str(&crate::shaping::markdown(&r.shaping));
    s.push_str(&side_by_side(r));
    if let Some(cl) = &r.classifier {
        s.push_str(&classifier(cl, &t));
    }
    if let Some(w) = &r.workers {
        s.push_str(&crate::workers::markdown(w));
    }
    s.push_str(&plots(r));
    s
}
