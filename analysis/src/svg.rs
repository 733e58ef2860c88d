//! Small SVG charts written by hand: grouped bars with 95% intervals,
//! heatmaps, and histograms. (Plotting crates measure text with system
//! fonts; plain SVG needs none and any browser or viewer shows it.)

use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 90.0;
const COLORS: [&str; 6] = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn header(title: &str, w: f64, h: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="16">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    s
}

/// One bar: its group label, series name, value and optional interval.
pub struct Bar {
    pub group: String,
    pub series: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
}

/// Grouped bars (one colour per series) with error bars and a zero line.
/// A group's label under its bars, centred at `x`: one line when it fits
/// the group's `width` (12px sans-serif is about 6.8px a character), else
/// its first word over the rest, so neighbouring labels never overlap.
fn group_label(g: &str, x: f64, y: f64, width: f64) -> String {
    match g.split_once(' ') {
        Some((first, rest)) if g.chars().count() as f64 * 6.8 > width * 0.95 => format!(
            r#"<text x="{x}" y="{y}" text-anchor="middle"><tspan x="{x}">{}</tspan><tspan x="{x}" dy="14">{}</tspan></text>"#,
            esc(first),
            esc(rest)
        ),
        _ => format!(r#"<text x="{x}" y="{y}" text-anchor="middle">{}</text>"#, esc(g)),
    }
}

pub fn bars(title: &str, y_label: &str, data: &[Bar]) -> String {
    let mut groups: Vec<String> = Vec::new();
    let mut series: Vec<String> = Vec::new();
    for b in data {
        if !groups.contains(&b.group) {
            groups.push(b.group.clone());
        }
        if !series.contains(&b.series) {
            series.push(b.series.clone());
        }
    }
    let lo = data
        .iter()
        .map(|b| b.interval.map_or(b.value, |i| i.0).min(b.value))
        .fold(0.0f64, f64::min);
    let hi = data
        .iter()
        .map(|b| b.interval.map_or(b.value, |i| i.1).max(b.value))
        .fold(0.0f64, f64::max);
    let span = if hi - lo > 0.0 { hi - lo } else { 1.0 };
    let (lo, hi) = (lo - 0.05 * span, hi + 0.05 * span);
    let plot_h = H - TOP - BOTTOM;
    let y = |v: f64| TOP + (hi - v) / (hi - lo) * plot_h;
    let mut s = header(title, W, H);
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        y(0.0),
        W - RIGHT,
        y(0.0)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="black"/>"#,
        H - BOTTOM
    );
    // Round ticks (1, 2 or 5 x 10^k), zero among them, with light grid lines.
    let ticks = nice_ticks(lo, hi, 5);
    let step = if ticks.len() > 1 { ticks[1] - ticks[0] } else { 1.0 };
    for &v in &ticks {
        if v != 0.0 {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#e4e4e4"/>"##,
                y(v),
                W - RIGHT,
                y(v)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y(v) + 4.0,
            tick_label(v, step)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        esc(y_label)
    );
    let gw = (W - LEFT - RIGHT) / groups.len().max(1) as f64;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    for (gi, g) in groups.iter().enumerate() {
        let gx = LEFT + gi as f64 * gw;
        let _ = writeln!(s, "{}", group_label(g, gx + gw / 2.0, H - BOTTOM + 16.0, gw));
        for b in data.iter().filter(|b| &b.group == g) {
            let si = series.iter().position(|x| x == &b.series).unwrap_or(0);
            let x = gx + gw * 0.1 + si as f64 * bw;
            let (y0, y1) = (y(0.0).min(y(b.value)), y(0.0).max(y(b.value)));
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {:.4}</title></rect>"#,
                bw * 0.9,
                (y1 - y0).max(0.5),
                COLORS[si % COLORS.len()],
                esc(g),
                esc(&b.series),
                b.value
            );
            if let Some((a, c)) = b.interval {
                let cx = x + bw * 0.45;
                let _ = writeln!(
                    s,
                    r#"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="black"/>"#,
                    y(a),
                    y(c)
                );
                for v in [a, c] {
                    let _ = writeln!(
                        s,
                        r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
                        cx - 4.0,
                        y(v),
                        cx + 4.0,
                        y(v)
                    );
                }
            }
        }
    }
    for (si, name) in series.iter().enumerate() {
        let lx = LEFT + 10.0 + si as f64 * 160.0;
        let ly = H - 30.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{}"/>"#,
            ly - 10.0,
            COLORS[si % COLORS.len()]
        );
        let _ = writeln!(s, r#"<text x="{}" y="{ly}">{}</text>"#, lx + 16.0, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

/// Heatmaps of 3x3 confusion matrices side by side.
pub fn confusions(title: &str, mats: &[(String, [[u64; 3]; 3])]) -> String {
    let cell = 46.0;
    let block = cell * 3.0 + 110.0;
    let w = (LEFT + block * mats.len().max(1) as f64).max(400.0);
    let h = 330.0;
    let mut s = header(title, w, h);
    let names = ["random", "scorer", "defender"];
    for (k, (label, m)) in mats.iter().enumerate() {
        let x0 = LEFT + k as f64 * block + 30.0;
        let y0 = 90.0;
        let max = m.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="60" text-anchor="middle">{}</text>"#,
            x0 + cell * 1.5,
            esc(label)
        );
        for (i, row) in m.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end" font-size="10">{}</text>"#,
                x0 - 4.0,
                y0 + cell * i as f64 + cell / 2.0 + 4.0,
                names[i]
            );
            for (j, &v) in row.iter().enumerate() {
                let shade = (255.0 - 200.0 * v as f64 / max) as u8;
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="{cell}" height="{cell}" fill="rgb({shade},{shade},255)" stroke="white"/>"#,
                    x0 + cell * j as f64,
                    y0 + cell * i as f64
                );
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">{v}</text>"#,
                    x0 + cell * j as f64 + cell / 2.0,
                    y0 + cell * i as f64 + cell / 2.0 + 4.0
                );
            }
        }
        for (j, n) in names.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle" font-size="10">{n}</text>"#,
                x0 + cell * j as f64 + cell / 2.0,
                y0 + cell * 3.0 + 14.0
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">rows: actual target, columns: predicted</text>"#,
        w / 2.0,
        h - 20.0
    );
    s.push_str("</svg>\n");
    s
}

/// Histograms (as step lines) of several distributions over the same axis.
pub fn histograms(title: &str, series: &[(String, std::collections::BTreeMap<i32, u64>)]) -> String {
    let xs: Vec<i32> = series.iter().flat_map(|(_, h)| h.keys().copied()).collect();
    let (xmin, xmax) = (
        xs.iter().copied().min().unwrap_or(0),
        xs.iter()
            .copied()
            .max()
            .unwrap_or(1)
            .max(xs.iter().copied().min().unwrap_or(0) + 1),
    );
    let shares: Vec<(String, Vec<(i32, f64)>)> = series
        .iter()
        .map(|(n, h)| {
            let total = h.values().sum::<u64>().max(1) as f64;
            (n.clone(), h.iter().map(|(&k, &v)| (k, v as f64 / total)).collect())
        })
        .collect();
    let ymax = shares
        .iter()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.05;
    let plot_h = H - TOP - BOTTOM;
    let x = |v: f64| LEFT + (v - xmin as f64) / (xmax - xmin) as f64 * (W - LEFT - RIGHT);
    let y = |v: f64| TOP + (ymax - v) / ymax * plot_h;
    let mut s = header(title, W, H);
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        y(0.0),
        W - RIGHT,
        y(0.0)
    );
    // Shares as round percentages; score differences at round steps, 0 among them.
    let yt = nice_ticks(0.0, ymax * 100.0, 4);
    let ystep = if yt.len() > 1 { yt[1] - yt[0] } else { 1.0 };
    for &v in &yt {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}%</text>"#,
            LEFT - 6.0,
            y(v / 100.0) + 4.0,
            tick_label(v, ystep)
        );
    }
    for t in nice_ticks(xmin as f64, xmax as f64, 10)
        .into_iter()
        .filter(|t| t.fract() == 0.0)
    {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            x(t),
            H - BOTTOM + 16.0,
            tick_label(t, 1.0)
        );
        if t == 0.0 {
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{TOP}" x2="{:.1}" y2="{}" stroke="#888" stroke-dasharray="3,3"/>"##,
                x(t),
                x(t),
                H - BOTTOM
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">score_diff (player - target); share of games</text>"#,
        W / 2.0,
        H - BOTTOM + 36.0
    );
    for (si, (name, pts)) in shares.iter().enumerate() {
        let path: Vec<String> = pts
            .iter()
            .map(|&(k, v)| format!("{:.1},{:.1}", x(k as f64), y(v)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>"#,
            path.join(" "),
            COLORS[si % COLORS.len()]
        );
        let lx = LEFT + 10.0 + (si % 4) as f64 * 200.0;
        let ly = H - 30.0 + (si / 4) as f64 * 14.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{}" width="12" height="4" fill="{}"/>"#,
            ly - 6.0,
            COLORS[si % COLORS.len()]
        );
        let _ = writeln!(s, r#"<text x="{}" y="{ly}">{}</text>"#, lx + 16.0, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

/// Round tick values covering [lo, hi]: steps of 1, 2 or 5 x 10^k, about
/// `n` of them, zero among them when in range.
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).abs().max(1e-9);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick's label: as many decimals as the step needs, no more.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        "0".to_string()
    } else {
        s
    }
}

/// Horizontal grid lines at the y ticks `yt` across the plot area (`ax`
/// wide `aw`), zero darker, with their labels left of it.
fn y_grid(s: &mut String, (ax, aw): (f64, f64), yt: Vec<f64>, py: impl Fn(f64) -> f64) {
    let ystep = if yt.len() > 1 { yt[1] - yt[0] } else { 1.0 };
    for v in &yt {
        let (stroke, width) = if *v == 0.0 { ("#000", 1.2) } else { ("#ddd", 0.6) };
        let _ = writeln!(
            s,
            r#"<line x1="{ax}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{stroke}" stroke-width="{width}"/>"#,
            py(*v),
            ax + aw,
            py(*v)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            ax - 4.0,
            py(*v) + 4.0,
            tick_label(*v, ystep)
        );
    }
}

mod line;
mod panels;
pub use line::line_chart;
pub use panels::{Panel, Point, panels};

/// The text of every `<text>` element of an SVG, in order (tests).
#[cfg(test)]
fn text_labels(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once('<')?.0.to_string()))
        .collect()
}
