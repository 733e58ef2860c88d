//! HTML by hand: escaping (every string from a spec, a worker or a file
//! goes through [`Esc`]), the page frame, numbers, times and the spec's
//! TOML highlighted.

use std::fmt::{self, Display, Write};

/// Text escaped for HTML content and quoted attribute values.
#[derive(Clone, Copy, Debug)]
pub struct Esc<'a>(pub &'a str);

impl Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut last = 0;
        for (i, c) in self.0.char_indices() {
            let rep = match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&#39;",
                _ => continue,
            };
            f.write_str(&self.0[last..i])?;
            f.write_str(rep)?;
            last = i + c.len_utf8();
        }
        f.write_str(&self.0[last..])
    }
}

/// The navigation's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nav {
    Experiments,
    Workers,
    None,
}

/// A whole page: `title` (escaped here), `body` (already HTML). `live`:
/// the page's `[data-live]` parts refresh themselves (live.js) every
/// `refresh_ms`.
pub fn page(title: &str, nav: Nav, body: &str, live: Option<u32>) -> String {
    let mut out = String::with_capacity(body.len() + 1024);
    let refresh = live.map(|ms| format!(" data-refresh=\"{ms}\"")).unwrap_or_default();
    let cur = |n: Nav| if n == nav { " aria-current=\"page\"" } else { "" };
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · muggins</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
         <script src=\"/assets/live.js\" defer></script></head>\n\
         <body{refresh}><header><nav><a class=\"brand\" href=\"/\">muggins</a>\
         <a href=\"/\"{}>Experiments</a><a href=\"/workers\"{}>Workers</a>\
         <span id=\"updated\" class=\"muted\" aria-live=\"polite\"></span></nav></header>\n<main id=\"main\">{body}</main>\n</body></html>\n",
        Esc(title),
        cur(Nav::Experiments),
        cur(Nav::Workers),
    );
    out
}

/// `n` with thousands separated by commas.
pub fn int(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate's number (the heading or text gives the unit): "1,234",
/// "0.52", "-" when none.
pub fn rate(r: f64) -> String {
    if r.is_nan() || r <= 0.0 {
        "-".into()
    } else if r >= 100.0 {
        int(r.round() as u64)
    } else {
        format!("{r:.2}")
    }
}

/// A duration in seconds for people: "45 s", "12 min 05 s", "3 h 20 min".
pub fn secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "-".into();
    }
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// A Unix time in ms as "2026-11-26 05:40:12 UTC" (none for 0).
pub fn time(ms: i64) -> String {
    if ms <= 0 {
        return "-".into();
    }
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A `<progress>` bar with its text: "done / total unit (pct%)".
pub fn progress(done: u64, total: u64, unit: &str) -> String {
    let pct = 100.0 * done as f64 / total.max(1) as f64;
    format!(
        "<progress value=\"{done}\" max=\"{}\" aria-label=\"{pct:.1}% done\"></progress> \
         <span class=\"num\">{} / {} {}</span> <span class=\"muted\">({pct:.1}%)</span>",
        total.max(1),
        int(done),
        int(total),
        Esc(unit)
    )
}

/// The spec's TOML, escaped, with comments, table headers, keys, strings
/// and numbers marked for the stylesheet.
pub fn toml(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        out.push_str(indent);
        if trimmed.starts_with('#') {
            let _ = write!(out, "<span class=\"t-c\">{}</span>", Esc(trimmed));
        } else if trimmed.starts_with('[') {
            let (head, rest) = split_comment(trimmed);
            let _ = write!(out, "<span class=\"t-h\">{}</span>{}", Esc(head), comment(rest));
        } else if let Some(eq) = key_end(trimmed) {
            let (key, value) = trimmed.split_at(eq);
            let (value, rest) = split_comment(value);
            let _ = write!(
                out,
                "<span class=\"t-k\">{}</span>{}{}",
                Esc(key),
                value_html(value),
                comment(rest)
            );
        } else {
            let (value, rest) = split_comment(trimmed);
            let _ = write!(out, "{}{}", value_html(value), comment(rest));
        }
        out.push('\n');
    }
    out
}

/// Where a `key = value` line's key ends (the `=` outside quotes).
fn key_end(line: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('=', None) => return Some(i),
            _ => {}
        }
    }
    None
}

/// A line cut where a `#` outside quotes starts its comment.
fn split_comment(s: &str) -> (&str, &str) {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match (c, quote) {
            ('\\', Some('"')) if !escaped => {
                escaped = true;
                continue;
            }
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open && !escaped => quote = None,
            ('#', None) => return s.split_at(i),
            _ => {}
        }
        escaped = false;
    }
    (s, "")
}

fn comment(c: &str) -> String {
    if c.is_empty() {
        String::new()
    } else {
        format!("<span class=\"t-c\">{}</span>", Esc(c))
    }
}

/// A value: strings and numbers marked, the rest plain.
fn value_html(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while !rest.is_empty() {
        let Some(start) = rest.find(['"', '\'']) else {
            out.push_str(&numbers(rest));
            break;
        };
        out.push_str(&numbers(&rest[..start]));
        let q = rest[start..].chars().next().unwrap_or('"');
        let body = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            if c == q && !escaped {
                end = Some(i);
                break;
            }
            escaped = q == '"' && c == '\\' && !escaped;
        }
        let stop = end.map_or(rest.len(), |e| start + 1 + e + 1);
        let _ = write!(out, "<span class=\"t-s\">{}</span>", Esc(&rest[start..stop]));
        rest = &rest[stop..];
    }
    out
}

/// Plain text with its numbers marked.
fn numbers(s: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let numeric = word
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+')
            && word.chars().any(|c| c.is_ascii_digit());
        if numeric || word == "true" || word == "false" {
            let _ = write!(out, "<span class=\"t-n\">{}</span>", Esc(word));
        } else {
            let _ = write!(out, "{}", Esc(word));
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            let mut b = [0; 4];
            let _ = write!(out, "{}", Esc(c.encode_utf8(&mut b)));
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        let s = Esc("<script>alert(\"x\")</script> & '\"><img src=x onerror=alert(1)>").to_string();
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('"') && !s.contains('\''),
            "{s}"
        );
        assert_eq!(Esc("a&b").to_string(), "a&amp;b");
    }

    #[test]
    fn toml_highlighting_escapes_every_part() {
        let text = "# <script>x</script>\nname = \"<b>\" # \"><img onerror=1>\n[agents.\"<i>\"]\nbudget = 10_000\n";
        let h = toml(text);
        for bad in ["<script", "<b>", "<img", "<i>"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("<span class=\"t-c\"># &lt;script&gt;"), "{h}");
        assert!(h.contains("<span class=\"t-n\">10_000</span>"), "{h}");
        assert!(h.contains("<span class=\"t-k\">name </span>"), "{h}");
    }

    #[test]
    fn numbers_and_times_read_well() {
        assert_eq!(int(1_234_567), "1,234,567");
        assert_eq!(int(12), "12");
        assert_eq!(secs(3725.0), "1 h 02 min");
        assert_eq!(secs(75.0), "1 min 15 s");
        assert_eq!(time(0), "-");
        assert_eq!(time(1_795_000_000_000), "2026-11-18 11:06:40 UTC");
    }
}
