//! The source checks that need the code's structure, read with a real
//! parser (`syn`) rather than grepped (ARCHITECTURE.md, "Checks"):
//!
//! - **No function over [`MAX_FN_LINES`] lines**, from its `fn` to its
//!   closing brace: free functions, methods, trait defaults and functions
//!   nested in others, in every crate's `src/`, `tests/` and `benches/`.
//!   String literals, comments and macros cannot fool the count: the spans
//!   are the parser's.
//! - **Wire types stay at the edges**: outside the coordinator's service,
//!   wire conversion and server setup and the worker's lease loop, task and
//!   assignment, no path names the `proto` crate, whether in a `use`, a type,
//!   an expression or a macro's tokens.
//! - **Messages from rows are built in one place per edge**: in the
//!   coordinator and the worker, only `wire.rs` and `assignment.rs` build
//!   a `proto` `Experiment`, `Stage`, `Task` or `Chunk`, whether by a
//!   struct literal or by `default()` (then field writes), however the type
//!   was imported or renamed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

/// The longest function allowed, in lines from `fn` to its closing brace.
pub const MAX_FN_LINES: usize = 150;

/// The messages that carry store rows over the wire.
const ROW_MESSAGES: [&str; 4] = ["Experiment", "Stage", "Task", "Chunk"];

/// One broken rule at a place in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The file, relative to the checked root.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// Why the tree could not be checked.
#[derive(Debug)]
pub enum CheckError {
    /// A directory or file could not be read.
    Read(PathBuf, std::io::Error),
    /// A source file does not parse.
    Parse(String, syn::Error),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Read(p, e) => write!(f, "{}: {e}", p.display()),
            CheckError::Parse(file, e) => {
                let at = e.span().start();
                write!(f, "{file}:{}:{}: does not parse: {e}", at.line, at.column + 1)
            }
        }
    }
}

impl std::error::Error for CheckError {}

/// Which rules apply to a file, by its path from the root (`/`-separated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Function lengths (every source, test and bench file).
    pub lengths: bool,
    /// No `proto` path (the inner layers).
    pub no_wire: bool,
    /// No row message built (the coordinator and the worker, but their
    /// two conversion modules).
    pub no_messages: bool,
}

impl Rules {
    /// The rules of the file at `path`.
    pub fn of(path: &str) -> Rules {
        let in_dir = |dir: &str| path.starts_with(dir) && !path[dir.len()..].contains('/');
        let edge = [
            "coordinator/src/service.rs",
            "coordinator/src/wire.rs",
            "coordinator/src/lib.rs",
        ]
        .contains(&path)
            || ["worker/src/assignment.rs", "worker/src/task.rs", "worker/src/lib.rs"].contains(&path);
        let inner_crate = [
            "engine/src/",
            "full/src/",
            "classifier/src/",
            "jobs/src/",
            "analysis/src/",
        ]
        .iter()
        .any(|d| path.starts_with(d));
        let inner_coordinator = path.starts_with("coordinator/src/store/") || path.starts_with("coordinator/src/web/");
        let no_wire =
            inner_crate || inner_coordinator || ((in_dir("coordinator/src/") || in_dir("worker/src/")) && !edge);
        let messages_here = in_dir("coordinator/src/") || in_dir("coordinator/src/store/") || in_dir("worker/src/");
        let no_messages = messages_here && path != "coordinator/src/wire.rs" && path != "worker/src/assignment.rs";
        let lengths = ["/src/", "/tests/", "/benches/"].iter().any(|d| path.contains(d)) || path.starts_with("src/");
        Rules {
            lengths,
            no_wire,
            no_messages,
        }
    }
}

/// Checks one source file's text under `rules`; `file` names it in the
/// violations.
pub fn check_source(file: &str, text: &str, rules: Rules) -> Result<Vec<Violation>, CheckError> {
    let ast = syn::parse_file(text).map_err(|e| CheckError::Parse(file.to_string(), e))?;
    let mut v = Visitor {
        file,
        rules,
        proto_names: proto_imports(&ast),
        found: Vec::new(),
    };
    v.visit_file(&ast);
    v.found.sort_by_key(|x| x.line);
    Ok(v.found)
}

/// Checks every `.rs` file under `root` (but `target/`, `fuzz/` and hidden
/// directories), in path order.
pub fn check_tree(root: &Path) -> Result<Vec<Violation>, CheckError> {
    let mut files = Vec::new();
    walk(root, root, &mut files)?;
    files.sort();
    let mut found = Vec::new();
    for rel in files {
        let rules = Rules::of(&rel);
        if !(rules.lengths || rules.no_wire || rules.no_messages) {
            continue;
        }
        let path = root.join(&rel);
        let text = std::fs::read_to_string(&path).map_err(|e| CheckError::Read(path.clone(), e))?;
        found.extend(check_source(&rel, &text, rules)?);
    }
    Ok(found)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), CheckError> {
    let entries = std::fs::read_dir(dir).map_err(|e| CheckError::Read(dir.to_path_buf(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| CheckError::Read(dir.to_path_buf(), e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(|e| CheckError::Read(path.clone(), e))?;
        if kind.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "fuzz" || name == "build") {
                walk(root, &path, out)?;
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// The names a file's `use` items bind to a row message of `proto`, with
/// the message each names (`use proto::Task;`, `use proto::{Task as T};`;
/// `use proto::*;` binds every row message's own name).
fn proto_imports(ast: &syn::File) -> BTreeMap<String, String> {
    struct Uses(BTreeMap<String, String>);
    impl Uses {
        fn tree(&mut self, tree: &syn::UseTree, in_proto: bool) {
            match tree {
                syn::UseTree::Path(p) => self.tree(&p.tree, in_proto || p.ident == "proto"),
                syn::UseTree::Name(n) if in_proto && ROW_MESSAGES.contains(&n.ident.to_string().as_str()) => {
                    self.0.insert(n.ident.to_string(), n.ident.to_string());
                }
                syn::UseTree::Rename(r) if in_proto && ROW_MESSAGES.contains(&r.ident.to_string().as_str()) => {
                    self.0.insert(r.rename.to_string(), r.ident.to_string());
                }
                syn::UseTree::Glob(_) if in_proto => {
                    for m in ROW_MESSAGES {
                        self.0.insert(m.to_string(), m.to_string());
                    }
                }
                syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.tree(t, in_proto)),
                _ => {}
            }
        }
    }
    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            self.tree(&u.tree, false);
        }
    }
    let mut uses = Uses(BTreeMap::new());
    uses.visit_file(ast);
    uses.0
}

struct Visitor<'a> {
    file: &'a str,
    rules: Rules,
    /// Local names of `proto`'s row messages (see [`proto_imports`]).
    proto_names: BTreeMap<String, String>,
    found: Vec<Violation>,
}

impl Visitor<'_> {
    fn report(&mut self, line: usize, what: String) {
        self.found.push(Violation {
            file: self.file.to_string(),
            line,
            what,
        });
    }

    fn length(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        if !self.rules.lengths {
            return;
        }
        let first = fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > MAX_FN_LINES {
            self.report(
                first,
                format!("function {name} is {lines} lines (over {MAX_FN_LINES}): split it"),
            );
        }
    }

    /// The row message the path of `segments` names (`proto::Task`, or a
    /// name imported from `proto`), if any.
    fn row_message(&self, segments: &[String]) -> Option<String> {
        let last = segments.last()?;
        if segments.len() >= 2 && segments.iter().any(|s| s == "proto") && ROW_MESSAGES.contains(&last.as_str()) {
            return Some(format!("proto::{last}"));
        }
        if segments.len() == 1 {
            return self.proto_names.get(last).map(|m| format!("proto::{m}"));
        }
        None
    }

    /// Reports a row message `m` built at `line` (`how`: "built", "::default()").
    fn built(&mut self, line: usize, m: &str, how: &str) {
        self.report(
            line,
            format!("{m}{how} here: only wire.rs / assignment.rs build messages from rows"),
        );
    }

    fn tokens(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                TokenTree::Group(g) => self.tokens(&g.stream()),
                TokenTree::Ident(id) if id == "proto" => {
                    let colons = matches!(
                        (trees.get(i + 1), trees.get(i + 2)),
                        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
                    );
                    if colons {
                        self.report(
                            id.span().start().line,
                            "proto:: in a macro beyond the wire's edges".into(),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.length(&f.sig.ident, &f.sig.fn_token, &f.block);
        visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.length(&f.sig.ident, &f.sig.fn_token, &f.block);
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.length(&f.sig.ident, &f.sig.fn_token, block);
        }
        visit::visit_trait_item_fn(self, f);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if self.rules.no_wire && p.segments.first().is_some_and(|s| s.ident == "proto") {
            self.report(p.span().start().line, "proto:: beyond the wire's edges".into());
        }
        visit::visit_path(self, p);
    }

    fn visit_use_path(&mut self, u: &'ast syn::UsePath) {
        if self.rules.no_wire && u.ident == "proto" {
            self.report(
                u.ident.span().start().line,
                "use of proto beyond the wire's edges".into(),
            );
        }
        visit::visit_use_path(self, u);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if self.rules.no_wire {
            self.tokens(&m.tokens);
        }
        visit::visit_macro(self, m);
    }

    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if self.rules.no_messages
            && let Some(m) = self.row_message(&names(&e.path))
        {
            self.built(e.path.span().start().line, &m, " built");
        }
        visit::visit_expr_struct(self, e);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if self.rules.no_messages
            && let syn::Expr::Path(f) = &*c.func
            && let Some((last, owner)) = names(&f.path).split_last()
            && last == "default"
            && let Some(m) = self.row_message(owner)
        {
            self.built(f.path.span().start().line, &m, "::default()");
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        // `let t: proto::Task = Default::default();`
        if self.rules.no_messages
            && let syn::Pat::Type(pt) = &l.pat
            && let syn::Type::Path(tp) = &*pt.ty
            && let Some(m) = self.row_message(&names(&tp.path))
            && l.init.is_some()
        {
            self.built(tp.path.span().start().line, &m, " made");
        }
        visit::visit_local(self, l);
    }
}

/// A path's segments' names.
fn names(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

#[cfg(test)]
mod tests;
