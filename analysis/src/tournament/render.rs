//! The tournament's part of the report as the reader gets it: the
//! Markdown section (headline, Bradley-Terry table, pairings, agent
//! comparisons, SPRT), tournament.csv and elo.csv (the same tables as
//! CSV) and the two plots, elo.svg and sprt.svg.

use jobs::sprt::Verdict;

use super::{PairingSummary, Rating, SprtReport, TournamentReport};
use crate::table::{Entry, Table};

/// Pentanomial counts as `a / b / c / d / e`.
fn penta_text(p: &[u64; 5]) -> String {
    p.iter().map(u64::to_string).collect::<Vec<_>>().join(" / ")
}

/// `x` rounded to one decimal, signed, never `-0.0`; `-` when not finite.
pub(crate) fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}", no_negative_zero((x * 10.0).round() / 10.0))
    } else {
        "-".into()
    }
}

/// `x`, with `-0.0` (and anything that rounds to it) as `0.0`.
pub(crate) fn no_negative_zero(x: f64) -> f64 {
    if x == 0.0 { 0.0 } else { x }
}

/// A note for Elo values at the clamp (a score of 0 or 1 has no finite
/// Elo), or nothing.
pub(crate) fn clamp_note(values: &[f64]) -> &'static str {
    if values.iter().any(|v| v.abs() >= jobs::sprt::ELO_CLAMP) {
        " (clipped at +-1000: a score of 0 or 1 has no finite Elo)"
    } else {
        ""
    }
}

/// The ratings with their rank (1 for the best).
fn ranked(t: &TournamentReport) -> Vec<(usize, &Rating)> {
    t.ratings.iter().enumerate().map(|(i, r)| (i + 1, r)).collect()
}

/// The Bradley-Terry table, for report.md and elo.csv.
fn elo_table<'a, 'r>() -> Table<'a, (usize, &'r Rating)> {
    Table::new()
        .column("rank", &["rank"], |(rank, _): &(usize, &Rating)| Entry::same(rank))
        .column("agent", &["agent"], |(_, r)| Entry::same(&r.name))
        .column("Elo", &["elo"], |(_, r)| {
            Entry::new(f1(r.elo), [no_negative_zero(r.elo)])
        })
        .column("95% interval", &["ci_low", "ci_high"], |(_, r)| {
            Entry::new(
                format!("[{}, {}]", f1(r.ci_low), f1(r.ci_high)),
                [no_negative_zero(r.ci_low), no_negative_zero(r.ci_high)],
            )
        })
        .column("games", &["games"], |(_, r)| Entry::same(r.games))
        .column("score", &["score"], |(_, r)| {
            Entry::new(format!("{:.1}%", 100.0 * r.score), [r.score])
        })
        .column("LOS over next", &["los_next"], |(_, r)| {
            Entry::new(
                r.los_next.map_or("-".into(), |l| format!("{:.1}%", 100.0 * l)),
                [r.los_next.map_or(String::new(), |l| l.to_string())],
            )
        })
}

/// The pairings' table, for report.md and tournament.csv.
fn pairings_table<'a>() -> Table<'a, PairingSummary> {
    Table::new()
        .column("agent", &["agent"], |p: &PairingSummary| Entry::same(&p.agent))
        .column("opponent", &["opponent"], |p| Entry::same(&p.opponent))
        .column("observe", &["observability"], |p| Entry::same(p.observability))
        .column("games", &["games"], |p| Entry::same(p.games))
        .column("W / T / L", &["wins", "ties", "losses"], |p| {
            Entry::new(
                format!("{} / {} / {}", p.wins, p.ties, p.losses),
                [p.wins, p.ties, p.losses],
            )
        })
        .column("mean diff [95%]", &["mean_score_diff", "ci_low", "ci_high"], |p| {
            Entry::new(
                format!("{:+.2} [{:+.2}, {:+.2}]", p.mean_score_diff, p.ci_low, p.ci_high),
                [p.mean_score_diff, p.ci_low, p.ci_high],
            )
        })
        .column(
            "pairs 0 / .5 / 1 / 1.5 / 2",
            &["penta0", "penta1", "penta2", "penta3", "penta4"],
            |p| Entry::new(penta_text(&p.penta), p.penta),
        )
        .column("Elo [95%]", &["elo", "elo_low", "elo_high"], |p| {
            let text = p.elo.map_or("-".into(), |e| {
                format!(
                    "{} [{}, {}]{}",
                    f1(e[0]),
                    f1(e[1]),
                    f1(e[2]),
                    if clamp_note(&e).is_empty() { "" } else { " (clipped)" }
                )
            });
            Entry::new(text, p.elo.unwrap_or([f64::NAN; 3]).map(no_negative_zero))
        })
}

/// The tournament's Markdown: headline, Elo table, pairings, SPRT.
pub(crate) fn markdown(t: &TournamentReport) -> String {
    let mut s = String::from("## Agents\n\n");
    if let Some(best) = t.ratings.first() {
        s.push_str(&format!(
            "**Headline:** {} leads the pool at {} Elo [{}, {}]",
            best.name,
            f1(best.elo),
            f1(best.ci_low),
            f1(best.ci_high)
        ));
        match best.los_next {
            Some(los) => s.push_str(&format!(
                "; the likelihood that it is stronger than {} is {:.1}%.\n\n",
                t.ratings[1].name,
                100.0 * los
            )),
            None => s.push_str(".\n\n"),
        }
    }
    s.push_str(&format!(
        "Bradley-Terry ratings over every game of the {} (ties half a win; the pool's mean at 0; 95% intervals \
         from the Fisher information; LOS: the likelihood of superiority over the next agent down). `elo.svg` \
         plots them.\n\n",
        t.format
    ));
    s.push_str(&elo_table().markdown(&ranked(t)));
    s.push_str(&external_section(t));
    s.push_str(
        "\n### Pairings\n\nThe agent's side against the opponent's, per game: wins, ties and losses, the mean score \
         difference with its 95% interval; over paired deals (each deal played with the sides swapped) the \
         pentanomial counts (pairs scoring 0, 1/2, 1, 3/2, 2 of 2 points) and the pairing's logistic Elo of the \
         agent over its opponent (a pair one observation; \"clipped\": a bound at +-1000, where a score of 0 or 1 \
         has no finite Elo).\n\n",
    );
    s.push_str(&pairings_table().markdown(&t.pairings));
    if !t.comparisons.is_empty() {
        s.push_str(
            "\n### Agents against the same opponent on the same deals\n\nFor every two agents that faced one \
             opponent, the paired difference of their score differences (first minus second) over the same \
             deals, repeats and seatings, with its 95% interval and two-sided p.\n\n| first | second | opponent \
             | observe | deals | mean diff [95%] | p |\n|---|---|---|---|---|---|---|\n",
        );
        for c in &t.comparisons {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {:+.3} [{:+.3}, {:+.3}] | {:.4}{} |\n",
                c.a,
                c.b,
                c.opponent,
                c.observability,
                c.test.n,
                c.test.mean,
                c.test.ci_low,
                c.test.ci_high,
                c.test.p,
                if c.test.significant { "" } else { " †" }
            ));
        }
    }
    if let Some(sp) = &t.sprt {
        let what = if sp.on == "elo" {
            "Elo"
        } else {
            "score difference per game"
        };
        let verdict = match sp.verdict {
            Verdict::H1 => format!(
                "**H1 accepted**: the games favour {what} >= {} over {what} <= {} (the agent is the stronger)",
                sp.h1, sp.h0
            ),
            Verdict::H0 => format!(
                "**H0 accepted**: the games favour {what} <= {} over {what} >= {} (no gain of {} shown)",
                sp.h0, sp.h1, sp.h1
            ),
            Verdict::Undecided => "**undecided**: the grid ran out before either bound".into(),
        };
        s.push_str(&format!(
            "\n### Sequential test (SPRT)\n\n{verdict}. H0: {} = {}, H1: {} = {}, alpha = {}, beta = {}: {} \
             (the pentanomial GSPRT, evaluated after every pair in game order). The experiment kept {} of the \
             grid's {} games: every shard up to the one holding the deciding pair. Pentanomial counts {}; the \
             pairs' logistic Elo of the agent over its opponent {} [{}, {}]{}. `sprt.svg` plots the LLR over the \
             pairs.\n",
            what,
            sp.h0,
            what,
            sp.h1,
            sp.alpha,
            sp.beta,
            sp.line(),
            sp.kept_games,
            sp.grid_games,
            penta_text(&sp.penta),
            f1(sp.elo[0]),
            f1(sp.elo[1]),
            f1(sp.elo[2]),
            clamp_note(&sp.elo)
        ));
    }
    s.push('\n');
    s
}

/// tournament.csv: the pairings.
/// Which agents are programs outside muggins, and the games they forfeited.
fn external_section(t: &TournamentReport) -> String {
    if t.external.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nExternal agents (programs outside muggins, docs/agents.md): {}. Their games are not a pure function \
         of the spec, so no cross-check replays them.\n",
        t.external
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if t.forfeits.is_empty() {
        s.push_str("\nNo game was forfeited.\n");
    } else {
        s.push_str(
            "\n### Forfeits\n\nGames an external agent gave up (the other side won by the game's maximum; the \
             worker's log has each one's detail):\n\n| agent | reason | games |\n|---|---|---:|\n",
        );
        for f in &t.forfeits {
            s.push_str(&format!("| {} | {} | {} |\n", f.agent, f.reason, f.games));
        }
    }
    s
}

pub(crate) fn csv(t: &TournamentReport) -> String {
    pairings_table().csv(&t.pairings)
}

/// elo.csv: the ratings.
pub(crate) fn elo_csv(t: &TournamentReport) -> String {
    elo_table().csv(&ranked(t))
}

/// elo.svg: the ratings as bars with their 95% intervals, best first.
pub(crate) fn elo_plot(t: &TournamentReport) -> String {
    let bars: Vec<crate::svg::Bar> = t
        .ratings
        .iter()
        .map(|r| crate::svg::Bar {
            group: r.name.clone(),
            series: "Elo".into(),
            value: r.elo,
            interval: (r.ci_low.is_finite() && r.ci_high.is_finite()).then_some((r.ci_low, r.ci_high)),
        })
        .collect();
    crate::svg::bars("Bradley-Terry Elo (pool mean 0, 95% intervals)", "Elo", &bars)
}

/// sprt.svg: the LLR after every pair as a line over the pairs played,
/// the two bounds as horizontal lines.
pub(crate) fn sprt_plot(sp: &SprtReport) -> String {
    let line: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(sp.trace.iter().map(|p| (p.pairs as f64, p.llr)))
        .collect();
    crate::svg::line_chart(
        &format!("SPRT: LLR after every pair ({})", sp.verdict.words()),
        "pairs played",
        "LLR",
        &line,
        &[
            (format!("accept H1 ({:+.2})", sp.upper), sp.upper),
            (format!("accept H0 ({:+.2})", sp.lower), sp.lower),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_text_has_no_negative_zero_and_marks_the_clamp() {
        assert_eq!(f1(-0.0), "+0.0");
        assert_eq!(f1(-0.04), "+0.0");
        assert_eq!(f1(-0.06), "-0.1");
        assert_eq!(f1(f64::NAN), "-");
        assert_eq!(format!("{}", no_negative_zero(-0.0)), "0");
        assert!(clamp_note(&[12.0, 1000.0]).contains("clipped"));
        assert_eq!(clamp_note(&[12.0, -999.0]), "");
    }
}
