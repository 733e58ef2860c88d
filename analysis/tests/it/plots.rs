//! The plots' axes: round ticks with zero marked.

use crate::row;

#[test]
fn plot_ticks_are_round_and_mark_zero() {
    assert_eq!(analysis::nice_ticks(-0.055, 0.069, 5), vec![-0.05, 0.0, 0.05]);
    assert_eq!(
        analysis::nice_ticks(0.0, 443.9, 5),
        vec![0.0, 100.0, 200.0, 300.0, 400.0]
    );
    assert_eq!(analysis::nice_ticks(-3.0, 12.0, 4), vec![0.0, 5.0, 10.0]);
}

#[test]
fn the_bar_plots_have_round_ticks_with_zero() {
    use engine::PlayerEngine::{Expectimax, MStar};
    let mut rows = Vec::new();
    for (state, (m, e)) in [(0u64, (3, -1)), (1, (-2, 2)), (2, (7, 1)), (3, (1, 1))] {
        rows.push(row(jobs::Source::Oracle, MStar, state, m, m >= 0, (1, 1), "m"));
        rows.push(row(jobs::Source::Oracle, Expectimax, state, e, e >= 0, (0, 0), "m"));
    }
    let r = analysis::build_from_rows("t", &rows, None);
    let files = analysis::report_files(&r);
    for name in ["value_gain.svg", "win_gain.svg", "score_diff.svg"] {
        let svg = &files.iter().find(|(n, _)| *n == name).unwrap().1;
        let labels: Vec<&str> = svg
            .split("text-anchor=\"end\">")
            .skip(1)
            .map(|t| t.split('<').next().unwrap().trim_end_matches('%'))
            .collect();
        assert!(labels.len() >= 3, "{name}: {labels:?}");
        assert!(labels.contains(&"0"), "{name}: zero is not a tick: {labels:?}");
        let values: Vec<f64> = labels.iter().map(|l| l.parse().unwrap()).collect();
        let step = values[1] - values[0];
        let mag = 10f64.powf(step.abs().log10().floor());
        assert!(
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .any(|m| (step.abs() / mag - m).abs() < 1e-9),
            "{name}: step {step} in {labels:?}"
        );
        assert!(
            values.iter().all(|v| (v / step - (v / step).round()).abs() < 1e-9),
            "{name}: {labels:?}"
        );
    }
}
