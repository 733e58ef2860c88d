//! The report's Markdown as HTML, safely: raw HTML in it is shown as text,
//! links and images keep only relative targets (rewritten under `base`),
//! and every text is escaped. pulldown-cmark parses; this writes.

use std::fmt::Write;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::html::Esc;

/// `md` as HTML; a relative link or image `x` points at `{base}x`.
pub fn to_html(md: &str, base: &str) -> String {
    let mut out = String::with_capacity(md.len() * 2);
    let mut in_image = false;
    let mut in_head = false;
    // Where the open body cell's tag starts: a cell that reads as a number
    // is right-aligned.
    let mut cell = None;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(tag) => {
                if matches!(tag, Tag::TableCell) && !in_head {
                    cell = Some(out.len());
                }
                start(&mut out, tag, base, &mut in_image, &mut in_head);
            }
            Event::End(tag) => {
                if let (TagEnd::TableCell, Some(at)) = (&tag, cell.take()) {
                    let text = &out[at + "<td>".len()..];
                    let numeric = text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '[' | '.'))
                        && text.chars().any(|c| c.is_ascii_digit());
                    if numeric {
                        out.replace_range(at..at + "<td>".len(), "<td class=\"num\">");
                    }
                }
                end(&mut out, tag, &mut in_image, &mut in_head);
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => {
                // An image's text becomes its alt attribute (already open).
                let _ = write!(out, "{}", Esc(&t));
            }
            Event::Code(t) => {
                let _ = write!(out, "<code>{}</code>", Esc(&t));
            }
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            _ => {}
        }
    }
    out
}

/// A link target kept only when relative (no scheme, not absolute, no
/// parent step): the report links its own files.
fn relative(url: &str, base: &str) -> Option<String> {
    let ok = !url.is_empty()
        && !url.contains(':')
        && !url.starts_with('/')
        && !url.starts_with('\\')
        && !url.split('/').any(|p| p == "..");
    ok.then(|| format!("{base}{url}"))
}

fn start(out: &mut String, tag: Tag<'_>, base: &str, in_image: &mut bool, in_head: &mut bool) {
    match tag {
        Tag::Paragraph => out.push_str("<p>"),
        Tag::Heading { level, .. } => {
            let _ = write!(out, "<h{}>", heading(level));
        }
        Tag::BlockQuote(_) => out.push_str("<blockquote>"),
        Tag::CodeBlock(_) => out.push_str("<pre><code>"),
        Tag::List(Some(n)) => {
            let _ = write!(out, "<ol start=\"{n}\">");
        }
        Tag::List(None) => out.push_str("<ul>"),
        Tag::Item => out.push_str("<li>"),
        Tag::Emphasis => out.push_str("<em>"),
        Tag::Strong => out.push_str("<strong>"),
        Tag::Strikethrough => out.push_str("<s>"),
        Tag::Table(_) => out.push_str("<div class=\"scroll\"><table>"),
        Tag::TableHead => {
            *in_head = true;
            out.push_str("<thead><tr>");
        }
        Tag::TableRow => out.push_str("<tr>"),
        Tag::TableCell => out.push_str(if *in_head { "<th>" } else { "<td>" }),
        Tag::Link { dest_url, .. } => match relative(&dest_url, base) {
            Some(href) => {
                let _ = write!(out, "<a href=\"{}\">", Esc(&href));
            }
            None => out.push_str("<a>"),
        },
        Tag::Image { dest_url, .. } => {
            // The alt text follows as Text events, inside the attribute.
            let src = relative(&dest_url, base).unwrap_or_default();
            let _ = write!(out, "<img src=\"{}\" alt=\"", Esc(&src));
            *in_image = true;
        }
        _ => {}
    }
}

fn end(out: &mut String, tag: TagEnd, in_image: &mut bool, in_head: &mut bool) {
    match tag {
        TagEnd::Paragraph => out.push_str("</p>\n"),
        TagEnd::Heading(level) => {
            let _ = writeln!(out, "</h{}>", heading(level));
        }
        TagEnd::BlockQuote(_) => out.push_str("</blockquote>"),
        TagEnd::CodeBlock => out.push_str("</code></pre>\n"),
        TagEnd::List(true) => out.push_str("</ol>\n"),
        TagEnd::List(false) => out.push_str("</ul>\n"),
        TagEnd::Item => out.push_str("</li>\n"),
        TagEnd::Emphasis => out.push_str("</em>"),
        TagEnd::Strong => out.push_str("</strong>"),
        TagEnd::Strikethrough => out.push_str("</s>"),
        TagEnd::Table => out.push_str("</tbody></table></div>\n"),
        TagEnd::TableHead => {
            *in_head = false;
            out.push_str("</tr></thead><tbody>\n");
        }
        TagEnd::TableRow => out.push_str("</tr>\n"),
        TagEnd::TableCell => out.push_str(if *in_head { "</th>" } else { "</td>" }),
        TagEnd::Link => out.push_str("</a>"),
        TagEnd::Image => {
            out.push_str("\">");
            *in_image = false;
        }
        _ => {}
    }
}

/// Report headings start at `#`; on a page they sit under its `h1`/`h2`.
fn heading(level: HeadingLevel) -> usize {
    (level as usize + 1).min(6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_and_foreign_links_are_text() {
        let md = "# Report: <script>alert(1)</script>\n\n| agent | x |\n|---|---|\n| \"><img src=x onerror=alert(1)> | 1 |\n\n\
                  [bad](javascript:alert(1)) [up](../../x) ![Elo](elo.svg) ![x](http://evil/x.png)\n";
        let h = to_html(md, "/e/1/files/report/");
        for bad in ["<script", "<img src=x", "javascript:", "http://evil", "../"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("<img src=\"/e/1/files/report/elo.svg\" alt=\"Elo\">"), "{h}");
        assert!(h.contains("<th>agent</th>"), "{h}");
        assert!(h.contains("<h2>Report: &lt;script&gt;"), "{h}");
    }
}
