//! The report's Markdown as HTML, safely: raw HTML in it is shown as text,
//! links and images keep only relative targets (rewritten under `base`),
//! and every text is escaped. pulldown-cmark parses; this writes.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::html::{Esc, Html, html};

/// `md` as HTML; a relative link or image `x` points at `{base}x`.
pub fn to_html(md: &str, base: &str) -> Html {
    let mut out = Html::new();
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
                    let text = out.split_off(at + "<td>".len());
                    let numeric = text
                        .as_str()
                        .starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '[' | '.'))
                        && text.as_str().chars().any(|c| c.is_ascii_digit());
                    if numeric {
                        // The cell's `<td>` becomes `<td class="num">`.
                        let _open = out.split_off(at);
                        out.push_static("<td class=\"num\">");
                    }
                    out.push(text);
                }
                end(&mut out, tag, &mut in_image, &mut in_head);
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => {
                // An image's text becomes its alt attribute (already open).
                out.push_text(&t);
            }
            Event::Code(t) => {
                out.push(html!("<code>{}</code>", Esc(&t)));
            }
            Event::SoftBreak => out.push_static("\n"),
            Event::HardBreak => out.push_static("<br>"),
            Event::Rule => out.push_static("<hr>"),
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

fn start(out: &mut Html, tag: Tag<'_>, base: &str, in_image: &mut bool, in_head: &mut bool) {
    match tag {
        Tag::Paragraph => out.push_static("<p>"),
        Tag::Heading { level, .. } => {
            out.push(html!("<h{}>", heading(level)));
        }
        Tag::BlockQuote(_) => out.push_static("<blockquote>"),
        Tag::CodeBlock(_) => out.push_static("<pre><code>"),
        Tag::List(Some(n)) => {
            out.push(html!("<ol start=\"{n}\">", n = n));
        }
        Tag::List(None) => out.push_static("<ul>"),
        Tag::Item => out.push_static("<li>"),
        Tag::Emphasis => out.push_static("<em>"),
        Tag::Strong => out.push_static("<strong>"),
        Tag::Strikethrough => out.push_static("<s>"),
        Tag::Table(_) => out.push_static("<div class=\"scroll\"><table>"),
        Tag::TableHead => {
            *in_head = true;
            out.push_static("<thead><tr>");
        }
        Tag::TableRow => out.push_static("<tr>"),
        Tag::TableCell => out.push_static(if *in_head { "<th>" } else { "<td>" }),
        Tag::Link { dest_url, .. } => match relative(&dest_url, base) {
            Some(href) => {
                out.push(html!("<a href=\"{}\">", Esc(&href)));
            }
            None => out.push_static("<a>"),
        },
        Tag::Image { dest_url, .. } => {
            // The alt text follows as Text events, inside the attribute.
            let src = relative(&dest_url, base).unwrap_or_default();
            out.push(html!("<img src=\"{}\" alt=\"", Esc(&src)));
            *in_image = true;
        }
        _ => {}
    }
}

fn end(out: &mut Html, tag: TagEnd, in_image: &mut bool, in_head: &mut bool) {
    match tag {
        TagEnd::Paragraph => out.push_static("</p>\n"),
        TagEnd::Heading(level) => {
            out.push(html!("</h{}>\n", heading(level)));
        }
        TagEnd::BlockQuote(_) => out.push_static("</blockquote>"),
        TagEnd::CodeBlock => out.push_static("</code></pre>\n"),
        TagEnd::List(true) => out.push_static("</ol>\n"),
        TagEnd::List(false) => out.push_static("</ul>\n"),
        TagEnd::Item => out.push_static("</li>\n"),
        TagEnd::Emphasis => out.push_static("</em>"),
        TagEnd::Strong => out.push_static("</strong>"),
        TagEnd::Strikethrough => out.push_static("</s>"),
        TagEnd::Table => out.push_static("</tbody></table></div>\n"),
        TagEnd::TableHead => {
            *in_head = false;
            out.push_static("</tr></thead><tbody>\n");
        }
        TagEnd::TableRow => out.push_static("</tr>\n"),
        TagEnd::TableCell => out.push_static(if *in_head { "</th>" } else { "</td>" }),
        TagEnd::Link => out.push_static("</a>"),
        TagEnd::Image => {
            out.push_static("\">");
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
        let h = to_html(md, "/e/1/files/report/").into_string();
        for bad in ["<script", "<img src=x", "javascript:", "http://evil", "../"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("<img src=\"/e/1/files/report/elo.svg\" alt=\"Elo\">"), "{h}");
        assert!(h.contains("<th>agent</th>"), "{h}");
        assert!(h.contains("<h2>Report: &lt;script&gt;"), "{h}");
    }
}
