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
    for k in 0..=4 {
        let v = lo + (hi - lo) * k as f64 / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{v:.3}</text>"#,
            LEFT - 6.0,
            y(v) + 4.0
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
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            gx + gw / 2.0,
            H - BOTTOM + 16.0,
            esc(g)
        );
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
    for k in 0..=4 {
        let v = ymax * k as f64 / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{:.3}</text>"#,
            LEFT - 6.0,
            y(v) + 4.0,
            v
        );
    }
    let step = ((xmax - xmin) / 10).max(1);
    let mut t = xmin;
    while t <= xmax {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{t}</text>"#,
            x(t as f64),
            H - BOTTOM + 16.0
        );
        t += step;
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
