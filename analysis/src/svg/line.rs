//! A line over a whole-number x axis with labelled reference lines (the
//! SPRT's LLR over pairs played, with its bounds).

use std::fmt::Write;

use super::{BOTTOM, COLORS, H, LEFT, RIGHT, TOP, W, esc, header, nice_ticks, y_grid};

/// One line over x (drawn in order, thinned to at most 2,000 points), with
/// labelled horizontal reference lines; x ticks are whole numbers (x
/// counts something, e.g. pairs played).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, line: &[(f64, f64)], hlines: &[(String, f64)]) -> String {
    let mut s = header(title, W, H);
    let x1 = line.iter().map(|p| p.0).fold(1.0f64, f64::max);
    let x0 = line.iter().map(|p| p.0).fold(0.0f64, f64::min);
    let ys = line.iter().map(|p| p.1).chain(hlines.iter().map(|h| h.1));
    let (mut y0, mut y1) = ys.fold((0.0f64, 0.0f64), |(l, h), y| (l.min(y), h.max(y)));
    let ypad = ((y1 - y0) * 0.08).max(0.5);
    y0 -= ypad;
    y1 += ypad;
    let (ax, ay, aw, ah) = (LEFT, TOP, W - LEFT - RIGHT - 110.0, H - TOP - BOTTOM + 30.0);
    let px = |x: f64| ax + (x - x0) / (x1 - x0) * aw;
    let py = |y: f64| ay + (y1 - y) / (y1 - y0) * ah;
    let _ = writeln!(
        s,
        r##"<rect x="{ax}" y="{ay}" width="{aw}" height="{ah}" fill="none" stroke="#888"/>"##
    );
    y_grid(&mut s, (ax, aw), nice_ticks(y0, y1, 6), py);
    let mut xt: Vec<f64> = nice_ticks(x0, x1, 6).into_iter().filter(|v| v.fract() == 0.0).collect();
    if xt.len() < 2 {
        xt = vec![x0.ceil(), x1.floor()];
        xt.dedup();
    }
    for v in &xt {
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{}" x2="{:.1}" y2="{}" stroke="black"/>"#,
            px(*v),
            ay + ah,
            px(*v),
            ay + ah + 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(*v),
            ay + ah + 18.0,
            *v as i64
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        ax + aw / 2.0,
        ay + ah + 40.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
        ay + ah / 2.0,
        ay + ah / 2.0,
        esc(y_label)
    );
    for (k, (name, y)) in hlines.iter().enumerate() {
        let c = COLORS[(k + 1) % COLORS.len()];
        let _ = writeln!(
            s,
            r#"<line x1="{ax}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{c}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
            py(*y),
            ax + aw,
            py(*y)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" fill="{c}">{}</text>"#,
            ax + aw + 6.0,
            py(*y) + 4.0,
            esc(name)
        );
    }
    let stride = line.len().div_ceil(2000).max(1);
    let pts: Vec<String> = line
        .iter()
        .enumerate()
        .filter(|(i, _)| i % stride == 0 || *i + 1 == line.len())
        .map(|(_, (x, y))| format!("{:.1},{:.1}", px(*x), py(*y)))
        .collect();
    let _ = writeln!(
        s,
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
        pts.join(" "),
        COLORS[0]
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::svg::text_labels as labels;

    #[test]
    fn a_line_chart_has_whole_number_x_ticks_and_its_reference_lines() {
        let line: Vec<(f64, f64)> = (0..=3).map(|i| (i as f64, i as f64 * 0.9)).collect();
        let svg = line_chart(
            "t",
            "pairs",
            "LLR",
            &line,
            &[("upper".into(), 2.94), ("lower".into(), -2.94)],
        );
        let l = labels(&svg);
        for t in ["0", "1", "2", "3", "upper", "lower", "pairs", "LLR"] {
            assert!(l.contains(&t.to_string()), "{t} in {l:?}");
        }
        assert!(!l.iter().any(|t| t.contains(".5")), "{l:?}");
        assert_eq!(svg.matches("stroke-dasharray").count(), 2);
    }
}
