//! The report of a training run (`[train]`): each generation's fit, its
//! gate's verdict and the best network's Elo against the anchors, as a
//! table (`report.md`) and a plot (`curve.svg`).

use std::fmt::Write;

use jobs::train::{MatchRecord, Summary, TrainSpec};

use crate::svg::{Panel, Point, panels};

fn point(x: f64, m: &MatchRecord) -> Point {
    Point {
        x,
        y: m.elo,
        lo: m.elo_low,
        hi: m.elo_high,
    }
}

/// Three panels over the generations: the best network's Elo against
/// each anchor, the candidate's Elo against the best at the gate, and the
/// fit's value loss and entropy.
pub fn curve_svg(s: &Summary) -> String {
    let mut anchors: Vec<(String, Vec<Point>)> = Vec::new();
    let mut add = |x: f64, list: &[(String, MatchRecord)]| {
        for (name, m) in list {
            match anchors.iter_mut().find(|(n, _)| n == name) {
                Some((_, pts)) => pts.push(point(x, m)),
                None => anchors.push((name.clone(), vec![point(x, m)])),
            }
        }
    };
    add(0.0, &s.first_anchors);
    for g in &s.generations {
        add(g.generation as f64, &g.anchors);
    }
    let gate: Vec<Point> = s
        .generations
        .iter()
        .map(|g| point(g.generation as f64, &g.gate.result))
        .collect();
    let exact = |y: f64, x: f64| Point { x, y, lo: y, hi: y };
    let value: Vec<Point> = s
        .generations
        .iter()
        .map(|g| exact(g.fit.value_loss_last, g.generation as f64))
        .collect();
    let entropy: Vec<Point> = s
        .generations
        .iter()
        .map(|g| exact(g.fit.entropy_last, g.generation as f64))
        .collect();
    let mut fit = vec![("value loss".into(), value), ("entropy (nats)".into(), entropy)];
    if spec_belief(s) {
        let belief = s
            .generations
            .iter()
            .map(|g| exact(g.fit.belief_loss_last, g.generation as f64))
            .collect();
        fit.push(("belief loss (nats a tile)".into(), belief));
    }
    panels(
        &format!("{}: training by generation", s.name),
        "generation",
        "Elo / loss",
        false,
        &[
            Panel {
                title: "best network vs anchors (Elo)".into(),
                series: anchors,
            },
            Panel {
                title: "gate: candidate vs best (Elo)".into(),
                series: vec![("candidate".into(), gate)],
            },
            Panel {
                title: "fit (last epoch)".into(),
                series: fit,
            },
        ],
    )
}

/// Whether the training taught a belief head (its fits have a belief loss).
fn spec_belief(s: &Summary) -> bool {
    s.generations.iter().any(|g| g.fit.belief_loss_last > 0.0)
}

fn elo(m: &MatchRecord) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", m.elo, m.elo_low, m.elo_high)
}

/// Writes a training run's report into its directory `dir`: `report.json`
/// (the summary), `curve.svg` and `report.md`.
pub fn write(dir: &std::path::Path, spec: &TrainSpec, s: &Summary) -> Result<(), jobs::IoError> {
    use jobs::layout::{REPORT_JSON_FILE, REPORT_MD_FILE, TRAIN_CURVE, write_atomic};
    let json = serde_json::to_vec_pretty(s).expect("a summary serialises");
    write_atomic(&dir.join(REPORT_JSON_FILE), &json)?;
    write_atomic(&dir.join(TRAIN_CURVE), curve_svg(s).as_bytes())?;
    write_atomic(&dir.join(REPORT_MD_FILE), markdown(spec, s).as_bytes())
}

/// The report as Markdown: the spec, one row a generation, the commands.
pub fn markdown(spec: &TrainSpec, s: &Summary) -> String {
    let t = &spec.train;
    let mut md = String::new();
    let _ = writeln!(md, "# Training: {}\n", s.name);
    let _ = writeln!(
        md,
        "{} on {}: {} generations of {} self-play games (temperature {}, {:.0}% of games against {:?}), \
         a {:?} network on the `{}` encoding; spec id `{}`.\n",
        spec.name,
        t.game,
        t.generations,
        t.games,
        t.temperature,
        t.population_share * 100.0,
        t.population,
        t.hidden,
        t.encoding,
        s.spec_id
    );
    let _ = writeln!(md, "![curve](curve.svg)\n");
    let anchors: Vec<&str> = s.first_anchors.iter().map(|(n, _)| n.as_str()).collect();
    let mut head = "| generation | rows | value loss | entropy | gate (candidate vs best) | pairs | kept |".to_string();
    let mut rule = "|---|---|---|---|---|---|---|".to_string();
    for a in &anchors {
        let _ = write!(head, " vs {a} (Elo) |");
        rule.push_str("---|");
    }
    let _ = writeln!(md, "{head}\n{rule}");
    let mut row0 = "| 0 (untrained) | | | | | | |".to_string();
    for (_, m) in &s.first_anchors {
        let _ = write!(row0, " {} |", elo(m));
    }
    let _ = writeln!(md, "{row0}");
    for g in &s.generations {
        let mut row = format!(
            "| {} | {} | {:.4} -> {:.4} | {:.3} -> {:.3} | {}: {} | {} | {} |",
            g.generation,
            g.rows,
            g.fit.value_loss_first,
            g.fit.value_loss_last,
            g.fit.entropy_first,
            g.fit.entropy_last,
            g.gate.verdict.words(),
            elo(&g.gate.result),
            g.gate.result.pairs,
            if g.gate.kept_candidate { "candidate" } else { "best" },
        );
        for (_, m) in &g.anchors {
            let _ = write!(row, " {} |", elo(m));
        }
        let _ = writeln!(md, "{row}");
    }
    if spec_belief(s) {
        let prior = s.generations.iter().any(|g| g.fit.belief_prior_loss > 0.0);
        let _ = writeln!(
            md,
            "\n| generation | belief loss (nats a hidden tile) |{}\n|---|---|{}",
            if prior { " the constraints prior's |" } else { "" },
            if prior { "---|" } else { "" }
        );
        for g in &s.generations {
            let _ = write!(
                md,
                "| {} | {:.4} -> {:.4} |",
                g.generation, g.fit.belief_loss_first, g.fit.belief_loss_last
            );
            let _ = if prior {
                writeln!(md, " {:.4} |", g.fit.belief_prior_loss)
            } else {
                writeln!(md)
            };
        }
    }
    let _ = writeln!(
        md,
        "\nThe best network: `nets/{}.safetensors` (copied to `best.safetensors`). \
         Elo is the logistic Elo of the pairs' score (each deal played from both seatings, greedy play), \
         with its 95% interval.",
        s.best
    );
    md
}
