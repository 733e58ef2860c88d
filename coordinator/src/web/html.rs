//! HTML by hand, typed. Markup is an [`Html`], and only this module makes
//! one: from text through the escaper ([`Html::text`], or [`Esc`] in a
//! template), from literal markup ([`Html::trusted_static`]), by the
//! [`html!`] template, and by the helpers here (the page frame, numbers,
//! times, the spec's TOML highlighted). Every string from a spec, a worker
//! or a file is text, so it reaches a page escaped or not at all.
//!
//! The guarantee is the compiler's: `Html` has no `From<String>` or
//! `From<&str>`, no `fmt::Write` and no public field, and [`html!`]'s
//! arguments must be [`Markup`] (markup, escaped text or numbers: never
//! `str`, `String` or `char`). Its template is a literal, checked when
//! compiled to name only its own arguments, so no variable is captured
//! into it unchecked. So `html!("<p>{}</p>", name)` with `name: &str`
//! fails to compile, as does `Html::from(name)`; `html!("<p>{}</p>",
//! Esc(name))` escapes.

use std::fmt::{self, Display, Write};

/// Markup for a page (see the module's documentation for who makes it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Html(String);

impl Html {
    /// No markup yet.
    pub fn new() -> Html {
        Html(String::new())
    }

    /// `text` escaped: what a page shows of any string.
    pub fn text(text: &str) -> Html {
        Html(Esc(text).to_string())
    }

    /// Literal markup written in this crate's source (a `&'static str`:
    /// never a string made at run time, which is text).
    pub fn trusted_static(markup: &'static str) -> Html {
        Html(markup.to_string())
    }

    /// Appends markup, escaped text ([`Esc`]) or a number.
    pub fn push(&mut self, m: impl Markup) {
        let _ = write!(self.0, "{m}");
    }

    /// Appends literal markup.
    pub fn push_static(&mut self, markup: &'static str) {
        self.0.push_str(markup);
    }

    /// Appends `text` escaped.
    pub fn push_text(&mut self, text: &str) {
        self.push(Esc(text));
    }

    /// The markup's bytes so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The markup after byte `at` (where an earlier [`Self::len`] was),
    /// taken off the end.
    pub fn split_off(&mut self, at: usize) -> Html {
        Html(self.0.split_off(at))
    }

    /// The parts, `sep` between each two.
    pub fn join(parts: impl IntoIterator<Item = Html>, sep: &'static str) -> Html {
        let mut out = Html::new();
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push_static(sep);
            }
            out.push(part);
        }
        out
    }

    /// The page's bytes, for the response.
    pub fn into_string(self) -> String {
        self.0
    }

    /// [`html!`]'s output; call [`html!`] instead (its checks are what make
    /// this safe).
    #[doc(hidden)]
    pub fn __template(args: fmt::Arguments<'_>) -> Html {
        Html(args.to_string())
    }
}

impl Display for Html {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a template may hold: markup, escaped text and numbers, whose
/// `Display` writes no markup but their own. Not `str`, `String` or `char`:
/// text goes through [`Esc`] or [`Html::text`].
pub trait Markup: Display {}

impl Markup for Html {}
impl Markup for Esc<'_> {}
impl<T: Markup + ?Sized> Markup for &T {}
macro_rules! numbers_are_markup {
    ($($t:ty),*) => { $(impl Markup for $t {})* };
}
numbers_are_markup!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

/// `x`, checked to be [`Markup`] ([`html!`]'s arguments).
#[doc(hidden)]
pub fn markup<T: Markup + ?Sized>(x: &T) -> &T {
    x
}

/// Fails to compile a template that names an argument it was not given:
/// `{name}` must be one of `names` (given as `name = value`), never a
/// variable captured from around the call, and no width or precision
/// comes from an argument (`$`). Positional `{}`, `{0}`, `{:.1}` are
/// checked by `format_args!` itself.
#[doc(hidden)]
pub const fn check_template(template: &str, names: &[&str]) {
    let b = template.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' && i + 1 < b.len() && b[i + 1] == b'{' {
            i += 2;
            continue;
        }
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end] != b':' && b[end] != b'}' {
            end += 1;
        }
        if end > start && !b[start].is_ascii_digit() && !named(names, b, start, end) {
            panic!("html!: the template names a variable it was not given: pass it as `name = value`");
        }
        while end < b.len() && b[end] != b'}' {
            if b[end] == b'$' {
                panic!("html!: no width or precision from an argument (`$`)");
            }
            end += 1;
        }
        i = end;
    }
}

/// Whether `b[start..end]` is one of `names`.
const fn named(names: &[&str], b: &[u8], start: usize, end: usize) -> bool {
    let mut k = 0;
    while k < names.len() {
        let n = names[k].as_bytes();
        if n.len() == end - start {
            let mut j = 0;
            while j < n.len() && n[j] == b[start + j] {
                j += 1;
            }
            if j == n.len() {
                return true;
            }
        }
        k += 1;
    }
    false
}

/// An [`Html`] from a literal template, as `format!` takes one: each
/// argument (`value` or `name = value`) must be [`Markup`], and the
/// template names only its own arguments (checked when compiled).
macro_rules! html {
    (@args $fmt:literal [$($pos:expr,)*] [$($name:ident = $val:expr,)*]) => {{
        const _: () = $crate::web::html::check_template($fmt, &[$(stringify!($name)),*]);
        $crate::web::html::Html::__template(format_args!(
            $fmt,
            $($crate::web::html::markup(&$pos),)*
            $($name = $crate::web::html::markup(&$val),)*
        ))
    }};
    (@args $fmt:literal [$($pos:expr,)*] [$($n:ident = $v:expr,)*] $name:ident = $val:expr $(, $($rest:tt)*)?) => {
        $crate::web::html::html!(@args $fmt [$($pos,)*] [$($n = $v,)* $name = $val,] $($($rest)*)?)
    };
    (@args $fmt:literal [$($pos:expr,)*] [$($n:ident = $v:expr,)*] $val:expr $(, $($rest:tt)*)?) => {
        $crate::web::html::html!(@args $fmt [$($pos,)* $val,] [$($n = $v,)*] $($($rest)*)?)
    };
    ($fmt:literal $(, $($rest:tt)*)?) => {
        $crate::web::html::html!(@args $fmt [] [] $($($rest)*)?)
    };
}
pub(crate) use html;

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
    Training,
    None,
}

/// A whole page: `title` (text, escaped here) around `body`. `live`: the
/// page's `[data-live]` parts refresh themselves (live.js) every
/// `refresh_ms`.
pub fn page(title: &str, nav: Nav, body: &Html, live: Option<u32>) -> Html {
    let refresh = live.map_or_else(Html::new, |ms| html!(" data-refresh=\"{ms}\"", ms = ms));
    let cur = |n: Nav| Html::trusted_static(if n == nav { " aria-current=\"page\"" } else { "" });
    html!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · muggins</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
         <script src=\"/assets/live.js\" defer></script></head>\n\
         <body{refresh}><header><nav><a class=\"brand\" href=\"/\">muggins</a>\
         <a href=\"/\"{}>Experiments</a><a href=\"/workers\"{}>Workers</a><a href=\"/training\"{}>Training</a>\
         <span id=\"updated\" class=\"muted\" aria-live=\"polite\"></span></nav></header>\n<main id=\"main\">{body}</main>\n</body></html>\n",
        Esc(title),
        cur(Nav::Experiments),
        cur(Nav::Workers),
        cur(Nav::Training),
        refresh = refresh,
        body = body,
    )
}

/// `n` with thousands separated by commas.
pub fn int(n: u64) -> Html {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    Html(out)
}

/// A rate's number (the heading or text gives the unit): "1,234",
/// "0.52", "-" when none.
pub fn rate(r: f64) -> Html {
    if r.is_nan() || r <= 0.0 {
        Html::trusted_static("-")
    } else if r >= 100.0 {
        int(r.round() as u64)
    } else {
        html!("{r:.2}", r = r)
    }
}

/// A duration in seconds for people: "45 s", "12 min 05 s", "3 h 20 min".
pub fn secs(s: f64) -> Html {
    if !s.is_finite() || s < 0.0 {
        return Html::trusted_static("-");
    }
    let s = s.round() as u64;
    match s {
        0..60 => html!("{s} s", s = s),
        60..3600 => html!("{} min {:02} s", s / 60, s % 60),
        _ => html!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// A Unix time in ms as "2026-11-26 05:40:12 UTC" (none for 0).
pub fn time(ms: i64) -> Html {
    if ms <= 0 {
        return Html::trusted_static("-");
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
    html!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        y = y,
        m = m,
        d = d,
    )
}

/// A `<progress>` bar with its text: "done / total unit (pct%)".
pub fn progress(done: u64, total: u64, unit: &str) -> Html {
    let pct = 100.0 * done as f64 / total.max(1) as f64;
    html!(
        "<progress value=\"{done}\" max=\"{}\" aria-label=\"{pct:.1}% done\"></progress> \
         <span class=\"num\">{} / {} {}</span> <span class=\"muted\">({pct:.1}%)</span>",
        total.max(1),
        int(done),
        int(total),
        Esc(unit),
        done = done,
        pct = pct,
    )
}

/// The spec's TOML, escaped, with comments, table headers, keys, strings
/// and numbers marked for the stylesheet.
pub fn toml(text: &str) -> Html {
    let mut out = Html::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        out.push_text(&line[..line.len() - trimmed.len()]);
        if trimmed.starts_with('#') {
            out.push(html!("<span class=\"t-c\">{}</span>", Esc(trimmed)));
        } else if trimmed.starts_with('[') {
            let (head, rest) = split_comment(trimmed);
            out.push(html!("<span class=\"t-h\">{}</span>{}", Esc(head), comment(rest)));
        } else if let Some(eq) = key_end(trimmed) {
            let (key, value) = trimmed.split_at(eq);
            let (value, rest) = split_comment(value);
            out.push(html!(
                "<span class=\"t-k\">{}</span>{}{}",
                Esc(key),
                value_html(value),
                comment(rest)
            ));
        } else {
            let (value, rest) = split_comment(trimmed);
            out.push(value_html(value));
            out.push(comment(rest));
        }
        out.push_static("\n");
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

fn comment(c: &str) -> Html {
    if c.is_empty() {
        Html::new()
    } else {
        html!("<span class=\"t-c\">{}</span>", Esc(c))
    }
}

/// A value: strings and numbers marked, the rest plain.
fn value_html(v: &str) -> Html {
    let mut out = Html::new();
    let mut rest = v;
    while !rest.is_empty() {
        let Some(start) = rest.find(['"', '\'']) else {
            out.push(numbers(rest));
            break;
        };
        out.push(numbers(&rest[..start]));
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
        out.push(html!("<span class=\"t-s\">{}</span>", Esc(&rest[start..stop])));
        rest = &rest[stop..];
    }
    out
}

/// Plain text with its numbers marked.
fn numbers(s: &str) -> Html {
    let mut out = Html::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Html| {
        if word.is_empty() {
            return;
        }
        let numeric = word
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+')
            && word.chars().any(|c| c.is_ascii_digit());
        if numeric || word == "true" || word == "false" {
            out.push(html!("<span class=\"t-n\">{}</span>", Esc(word)));
        } else {
            out.push_text(word);
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            let mut b = [0; 4];
            out.push_text(c.encode_utf8(&mut b));
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails to compile when `$t` implements `$tr` (the trick of the
    /// static_assertions crate: with an impl, the `_` is ambiguous).
    macro_rules! assert_not_impl {
        ($t:ty: $tr:path) => {{
            trait AmbiguousIfImpl<A> {
                fn some_item() {}
            }
            impl<T: ?Sized> AmbiguousIfImpl<()> for T {}
            impl<T: ?Sized + $tr> AmbiguousIfImpl<u8> for T {}
            let _ = <$t as AmbiguousIfImpl<_>>::some_item;
        }};
    }

    /// User text reaches markup only escaped: `Html::text`, `push_text`
    /// and `Esc` in a template all escape, and the compiler refuses every
    /// other way in (no `From` a string, no `fmt::Write`, no string,
    /// `char` or `String` as a template's argument).
    #[test]
    fn user_text_becomes_markup_only_escaped() {
        let evil = "<script>alert(\"x\")</script> & '\"><img src=x onerror=alert(1)>";
        let escaped =
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";
        assert_eq!(Html::text(evil).as_str(), escaped);
        let mut h = Html::trusted_static("<p>");
        h.push_text(evil);
        h.push_static("</p>");
        assert_eq!(h.as_str(), format!("<p>{escaped}</p>"));
        assert_eq!(html!("<p>{}</p>", Esc(evil)), h);
        assert_eq!(html!("<b>{n}</b>{}", 1.5, n = 7u64).as_str(), "<b>7</b>1.5");
        let page = page(evil, Nav::None, &Html::text(evil), None);
        assert!(
            !page.as_str().contains("<script>") && !page.as_str().contains("<img"),
            "{page}"
        );
        assert_not_impl!(Html: From<String>);
        assert_not_impl!(Html: From<&'static str>);
        assert_not_impl!(Html: std::fmt::Write);
        assert_not_impl!(String: Markup);
        assert_not_impl!(str: Markup);
        assert_not_impl!(char: Markup);
    }

    /// A template names only its own arguments: a variable captured from
    /// around it (`{name}` not given as `name = value`) does not compile.
    #[test]
    fn templates_name_only_their_arguments() {
        let ok = |t: &'static str, names: &'static [&'static str]| {
            std::panic::catch_unwind(|| check_template(t, names)).is_ok()
        };
        assert!(ok("<p>{}{0}{:.1}{{x}}</p>", &[]));
        assert!(ok("{a}{b:02}", &["a", "b"]));
        assert!(!ok("<p>{user}</p>", &[]));
        assert!(!ok("<p>{user}</p>", &["use", "users"]));
        assert!(!ok("{:w$}", &["w"]));
    }

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
        let h = toml(text).into_string();
        for bad in ["<script", "<b>", "<img", "<i>"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("<span class=\"t-c\"># &lt;script&gt;"), "{h}");
        assert!(h.contains("<span class=\"t-n\">10_000</span>"), "{h}");
        assert!(h.contains("<span class=\"t-k\">name </span>"), "{h}");
    }

    #[test]
    fn numbers_and_times_read_well() {
        assert_eq!(int(1_234_567).as_str(), "1,234,567");
        assert_eq!(int(12).as_str(), "12");
        assert_eq!(secs(3725.0).as_str(), "1 h 02 min");
        assert_eq!(secs(75.0).as_str(), "1 min 15 s");
        assert_eq!(rate(0.516).as_str(), "0.52");
        assert_eq!(time(0).as_str(), "-");
        assert_eq!(time(1_795_000_000_000).as_str(), "2026-11-18 11:06:40 UTC");
    }
}
