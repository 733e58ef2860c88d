//! Small multiples: one panel per cell, each series a line of points with
//! 95% intervals (shaping's score against nodes searched, the predictors'
//! top-N curves), one colour per series name across panels, and a legend.

use std::fmt::Write;

use super::{TOP, esc, header, nice_ticks, tick_label, y_grid};

/// One point of a series: x, y and y's 95% interval.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// One labelled panel of [`panels`]: its series by name.
pub struct Panel {
    pub title: String,
    pub series: Vec<(String, Vec<Point>)>,
}

/// A panel's size.
const PW: f64 = 300.0;
const PH: f64 = 240.0;
/// The margins around a panel's plot area: left, right, top, bottom.
const PL: f64 = 62.0;
const PR: f64 = 14.0;
const PT: f64 = 30.0;
const PB: f64 = 44.0;
/// Black first (plain search, the baseline), then colour-blind safe hues.
const PALETTE: [&str; 10] = [
    "#000000", "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#994400", "#332288",
];

/// Small multiples: one panel per cell, each series a line of points with
/// 95% intervals (x on a log scale when `log_x`), one colour per series
/// name across panels, round ticks with zero marked, a shared legend.
pub fn panels(title: &str, x_label: &str, y_label: &str, log_x: bool, data: &[Panel]) -> String {
    let cols = data.len().clamp(1, 3);
    let rows = data.len().div_ceil(cols).max(1);
    let mut names: Vec<&str> = Vec::new();
    for p in data {
        for (n, _) in &p.series {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    // As many legend entries a row as fit the plots' width (up to 3).
    let legend_cols = ((cols as f64 * PW) / 300.0).floor().clamp(1.0, 3.0) as usize;
    let legend_rows = names.len().div_ceil(legend_cols);
    let w = cols as f64 * PW + 20.0;
    let h = TOP + rows as f64 * PH + 20.0 + legend_rows as f64 * 18.0;
    let mut s = header(title, w, h);
    let axes = Axes {
        x_label,
        y_label,
        log_x,
    };
    for (i, p) in data.iter().enumerate() {
        let origin = (10.0 + (i % cols) as f64 * PW, TOP + (i / cols) as f64 * PH);
        panel(&mut s, p, origin, &axes, &names);
    }
    for (k, name) in names.iter().enumerate() {
        let lx = 20.0 + (k % legend_cols) as f64 * 300.0;
        let ly = TOP + rows as f64 * PH + 14.0 + (k / legend_cols) as f64 * 18.0;
        let c = PALETTE[k % PALETTE.len()];
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="{c}" stroke-width="3"/>"#,
            ly - 4.0,
            lx + 20.0,
            ly - 4.0
        );
        let _ = writeln!(s, r#"<text x="{}" y="{ly}">{}</text>"#, lx + 26.0, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

/// What every panel's axes share: their labels and the x scale.
struct Axes<'a> {
    x_label: &'a str,
    y_label: &'a str,
    log_x: bool,
}

impl Axes<'_> {
    /// x as plotted: its log10 on a log scale (at least 1).
    fn fx(&self, x: f64) -> f64 {
        if self.log_x { x.max(1.0).log10() } else { x }
    }
}

/// The plot area of one panel, its data ranges (padded) and where a value
/// lands on it.
struct Frame {
    /// Left, top, width and height of the plot area.
    ax: f64,
    ay: f64,
    aw: f64,
    ah: f64,
    /// The ranges shown, x as plotted (log10 on a log scale).
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    /// The panel whose top left corner is `(ox, oy)`, over its points;
    /// `None` without any.
    fn new(p: &Panel, (ox, oy): (f64, f64), axes: &Axes) -> Option<Frame> {
        let pts = p.series.iter().flat_map(|(_, v)| v.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
        for q in pts {
            x0 = x0.min(axes.fx(q.x));
            x1 = x1.max(axes.fx(q.x));
            y0 = y0.min(q.lo.min(q.y));
            y1 = y1.max(q.hi.max(q.y));
        }
        if !x0.is_finite() {
            return None;
        }
        let xpad = ((x1 - x0) * 0.08).max(if axes.log_x { 0.1 } else { 1.0 });
        let ypad = ((y1 - y0) * 0.08).max(0.5);
        Some(Frame {
            ax: ox + PL,
            ay: oy + PT,
            aw: PW - PL - PR,
            ah: PH - PT - PB,
            x0: x0 - xpad,
            x1: x1 + xpad,
            y0: y0 - ypad,
            y1: y1 + ypad,
        })
    }

    /// Where an x already as plotted lands.
    fn pxr(&self, v: f64) -> f64 {
        self.ax + (v - self.x0) / (self.x1 - self.x0) * self.aw
    }

    fn py(&self, y: f64) -> f64 {
        self.ay + (self.y1 - y) / (self.y1 - self.y0) * self.ah
    }
}

/// One panel at `origin` (its top left corner): title, frame, grid, ticks,
/// axis labels and its series.
fn panel(s: &mut String, p: &Panel, origin: (f64, f64), axes: &Axes, names: &[&str]) {
    let Some(f) = Frame::new(p, origin, axes) else {
        return;
    };
    let (ox, oy) = origin;
    let (ax, ay, aw, ah) = (f.ax, f.ay, f.aw, f.ah);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{}</text>"#,
        ax + aw / 2.0,
        oy + 18.0,
        esc(&p.title)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{ax}" y="{ay}" width="{aw}" height="{ah}" fill="none" stroke="#888"/>"##
    );
    y_grid(s, (ax, aw), nice_ticks(f.y0, f.y1, 5), |y| f.py(y));
    x_ticks(s, p, &f, axes);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text>"#,
        ax + aw / 2.0,
        ay + ah + 32.0,
        esc(axes.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="11" transform="rotate(-90 {} {})">{}</text>"#,
        ox + 14.0,
        ay + ah / 2.0,
        ox + 14.0,
        ay + ah / 2.0,
        esc(axes.y_label)
    );
    for (name, pts) in &p.series {
        let c = PALETTE[names.iter().position(|n| n == name).unwrap_or(0) % PALETTE.len()];
        series(s, name, pts, c, |x| f.pxr(axes.fx(x)), |y| f.py(y));
    }
}

/// The x axis's ticks and their labels: powers of ten on a log scale
/// (or, with none in view, the data's own x values), round values else.
fn x_ticks(s: &mut String, p: &Panel, f: &Frame, axes: &Axes) {
    let xt = if axes.log_x {
        let decades: Vec<f64> = (f.x0.ceil() as i64..=f.x1.floor() as i64).map(|k| k as f64).collect();
        if !decades.is_empty() {
            decades
        } else {
            // No power of ten in view: tick the data's own x values
            // (e.g. the budgets), so the axis is never bare.
            let mut xs: Vec<f64> = p
                .series
                .iter()
                .flat_map(|(_, v)| v.iter().map(|q| axes.fx(q.x)))
                .collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            xs
        }
    } else {
        nice_ticks(f.x0, f.x1, 4)
    };
    let xstep = if xt.len() > 1 { xt[1] - xt[0] } else { 1.0 };
    for v in &xt {
        let label = if axes.log_x {
            let n = (10f64.powf(*v) * 1000.0).round() / 1000.0;
            if n >= 1e6 {
                format!("{}M", n / 1e6)
            } else if n >= 1e3 {
                format!("{}k", n / 1e3)
            } else {
                format!("{n}")
            }
        } else {
            tick_label(*v, xstep)
        };
        let (ay, ah) = (f.ay, f.ah);
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{}" x2="{:.1}" y2="{}" stroke="black"/>"#,
            f.pxr(*v),
            ay + ah,
            f.pxr(*v),
            ay + ah + 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{label}</text>"#,
            f.pxr(*v),
            ay + ah + 16.0
        );
    }
}

/// One series in colour `c`: a line through its points (by x), each point
/// with its interval and a tooltip.
fn series(s: &mut String, name: &str, pts: &[Point], c: &str, px: impl Fn(f64) -> f64, py: impl Fn(f64) -> f64) {
    let mut sorted = pts.to_vec();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
    let line: Vec<String> = sorted
        .iter()
        .map(|q| format!("{:.1},{:.1}", px(q.x), py(q.y)))
        .collect();
    let _ = writeln!(
        s,
        r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1.5"/>"#,
        line.join(" ")
    );
    for q in &sorted {
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}"/>"#,
            px(q.x),
            py(q.lo),
            px(q.x),
            py(q.hi)
        );
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: {:.0} nodes, {:.2} [{:.2}, {:.2}]</title></circle>"#,
            px(q.x),
            py(q.y),
            esc(name),
            q.x,
            q.y,
            q.lo,
            q.hi
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::svg::text_labels as labels;

    #[test]
    fn a_log_axis_within_one_decade_ticks_the_data() {
        let pt = |x: f64| Point {
            x,
            y: 1.0,
            lo: 0.5,
            hi: 1.5,
        };
        let svg = panels(
            "t",
            "nodes",
            "gain",
            true,
            &[Panel {
                title: "p".into(),
                series: vec![("a".into(), vec![pt(200.0), pt(500.0)])],
            }],
        );
        let l = labels(&svg);
        assert!(
            l.contains(&"200".to_string()) && l.contains(&"500".to_string()),
            "{l:?}"
        );
    }
}
