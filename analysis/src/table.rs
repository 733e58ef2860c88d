//! The report's tables, each defined once and written both ways: as a
//! Markdown table in report.md and as its CSV file. A [`Table`] is a list
//! of columns; a column has its Markdown heading, its CSV field names and
//! the entry it makes of a row, so the two renderings cannot drift apart.
//!
//! Markdown shows an entry for reading (`+1.25 [-0.40, +2.90]`, `62.5%`),
//! CSV keeps the numbers whole, so an entry has a text for each: one
//! Markdown column may be several CSV fields (that interval is
//! `mean,ci_low,ci_high`). Names in a report (agents, workers) may be any
//! text: a CSV field with a comma, quote or line break is quoted (RFC
//! 4180), and a `|` in Markdown is escaped; plain words are written as
//! they are.

/// One row's entry in one column: its Markdown text and its CSV fields (as
/// many as the column has field names).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    markdown: String,
    csv: Vec<String>,
}

impl Entry {
    /// The same text in Markdown and in CSV (one field).
    pub(crate) fn same(text: impl ToString) -> Entry {
        let text = text.to_string();
        Entry {
            csv: vec![text.clone()],
            markdown: text,
        }
    }

    /// A Markdown text and the CSV fields of the same numbers.
    pub(crate) fn new<T: ToString>(markdown: impl Into<String>, csv: impl IntoIterator<Item = T>) -> Entry {
        Entry {
            markdown: markdown.into(),
            csv: csv.into_iter().map(|f| f.to_string()).collect(),
        }
    }
}

/// How a column makes its entry of a row.
type MakeEntry<'a, R> = Box<dyn Fn(&R) -> Entry + 'a>;

struct Column<'a, R> {
    heading: &'a str,
    fields: Vec<&'a str>,
    entry: MakeEntry<'a, R>,
}

/// A table over rows of type `R`, defined by its columns.
pub(crate) struct Table<'a, R> {
    columns: Vec<Column<'a, R>>,
}

impl<R> std::fmt::Debug for Table<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headings: Vec<&str> = self.columns.iter().map(|c| c.heading).collect();
        f.debug_struct("Table").field("columns", &headings).finish()
    }
}

impl<'a, R> Table<'a, R> {
    pub(crate) fn new() -> Self {
        Table { columns: Vec::new() }
    }

    /// Adds a column: its Markdown heading, its CSV field names, and how a
    /// row becomes its entry.
    pub(crate) fn column(mut self, heading: &'a str, fields: &[&'a str], entry: impl Fn(&R) -> Entry + 'a) -> Self {
        self.columns.push(Column {
            heading,
            fields: fields.to_vec(),
            entry: Box::new(entry),
        });
        self
    }

    /// Adds a column only when `on` (a factor that only some grids have).
    pub(crate) fn column_if(
        self,
        on: bool,
        heading: &'a str,
        fields: &[&'a str],
        entry: impl Fn(&R) -> Entry + 'a,
    ) -> Self {
        if on { self.column(heading, fields, entry) } else { self }
    }

    /// The Markdown table: heading line, separator, one line per row.
    pub(crate) fn markdown(&self, rows: &[R]) -> String {
        let line = |texts: Vec<String>| format!("| {} |\n", texts.join(" | "));
        let mut s = line(self.columns.iter().map(|c| c.heading.to_string()).collect());
        s.push_str(&"|---".repeat(self.columns.len()));
        s.push_str("|\n");
        for r in rows {
            s.push_str(&line(
                self.columns
                    .iter()
                    .map(|c| (c.entry)(r).markdown.replace('|', "\\|"))
                    .collect(),
            ));
        }
        s
    }

    /// The CSV file: field names, then one line per row.
    pub(crate) fn csv(&self, rows: &[R]) -> String {
        let mut s = self
            .columns
            .iter()
            .flat_map(|c| c.fields.clone())
            .collect::<Vec<_>>()
            .join(",");
        s.push('\n');
        for r in rows {
            let mut fields = Vec::new();
            for c in &self.columns {
                let entry = (c.entry)(r);
                debug_assert_eq!(entry.csv.len(), c.fields.len(), "column {:?}", c.heading);
                fields.extend(entry.csv.into_iter().map(csv_field));
            }
            s.push_str(&fields.join(","));
            s.push('\n');
        }
        s
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(f: String) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_definition_writes_markdown_and_csv() {
        let t = Table::<(u32, f64)>::new()
            .column_if(false, "never", &["never"], |_| Entry::same("x"))
            .column("n", &["n"], |r| Entry::same(r.0))
            .column("mean [95%]", &["mean", "low", "high"], |r| {
                Entry::new(
                    format!("{:.1} [{:.1}, {:.1}]", r.1, r.1 - 1.0, r.1 + 1.0),
                    [r.1, r.1 - 1.0, r.1 + 1.0],
                )
            });
        let rows = [(3, 0.25), (4, 1.5)];
        assert_eq!(
            t.markdown(&rows),
            "| n | mean [95%] |\n|---|---|\n| 3 | 0.2 [-0.8, 1.2] |\n| 4 | 1.5 [0.5, 2.5] |\n"
        );
        assert_eq!(t.csv(&rows), "n,mean,low,high\n3,0.25,-0.75,1.25\n4,1.5,0.5,2.5\n");
        assert_eq!(
            Table::<u8>::new().column("a", &["a"], |_| Entry::same("")).csv(&[]),
            "a\n"
        );
    }
}
