//! The shape of the workspace's source, checked so that it stays the shape
//! docs/extending.md describes: no crate's files import each other in a
//! circle, and no source file holds more than [`MAX_LINES`] lines of
//! non-test code, and no library built without its unit-test harness
//! (`[lib] test = false`) holds a `#[test]` that would never run.
//!
//! A file's dependencies are the modules its `crate::` and `super::` paths
//! name (resolved to the deepest module file that exists, through the
//! `pub use` re-exports of `lib.rs` and `mod.rs` files), and the children
//! a `mod.rs` imports by name (`use child::X`, re-exports too: a folder
//! that names its child's items depends on it; `mod child;` alone is
//! structure). A circle among one folder's own files (its `mod.rs` and
//! the children that use it back) is the folder's business; a circle that
//! leaves the folder is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// "About 800 lines" of non-test code per file.
const MAX_LINES: usize = 800;

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read source dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` -> `["a", "b"]`; `lib.rs`, `main.rs` -> `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The lines of a file without its `#[cfg(test)]` module (from the first
/// `#[cfg(test)]` that opens a `mod` to the end of the file, where such
/// modules live).
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// Every path that starts with `crate::` or `super::` (one or more), as
/// absolute segment lists, with `{a, b::c}` groups expanded.
fn paths_in(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let (base, skip): (Vec<String>, usize) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut base = here.to_vec();
            let mut skip = 0;
            while code[i + skip..].starts_with("super::") {
                base.pop();
                skip += "super::".len();
            }
            (base, skip)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let (tree, used) = use_tree(&code[i + skip..]);
        for t in tree {
            let mut p = base.clone();
            p.extend(t);
            out.push(p);
        }
        i += skip + used.max(1);
    }
    out
}

/// Parses `a::b::{c, d::e}` at the start of `s`: the expanded paths and
/// the bytes consumed.
fn use_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut i = 0;
    loop {
        let ident: String = s[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let named = !ident.is_empty();
        if named {
            i += ident.len();
            prefix.push(ident);
        }
        if s[i..].starts_with("::{") {
            i += 3;
            let mut all = Vec::new();
            loop {
                let ws = s[i..].len() - s[i..].trim_start().len();
                i += ws;
                if s[i..].starts_with('}') {
                    i += 1;
                    break;
                }
                let (sub, used) = use_tree(&s[i..]);
                for t in sub {
                    let mut p = prefix.clone();
                    p.extend(t);
                    all.push(p);
                }
                i += used;
                let ws = s[i..].len() - s[i..].trim_start().len();
                i += ws;
                if s[i..].starts_with(',') {
                    i += 1;
                } else if s[i..].starts_with('}') {
                    i += 1;
                    break;
                } else {
                    break;
                }
            }
            return (all, i);
        }
        if s[i..].starts_with("::") && named {
            i += 2;
            continue;
        }
        return (vec![prefix], i);
    }
}

struct Crate {
    /// Module path -> its file's code (comment lines and tests removed).
    modules: BTreeMap<Vec<String>, String>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let modules = files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).expect("read source");
                let code: Vec<&str> = code_lines(&text)
                    .into_iter()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                (module_of(src, f), code.join("\n"))
            })
            .collect();
        Crate { modules }
    }

    /// The module a path names: the deepest existing module along it,
    /// following one `pub use` re-export of a name in that module.
    fn resolve(&self, path: &[String], depth: usize) -> Vec<String> {
        let mut m: Vec<String> = Vec::new();
        for seg in path {
            let mut next = m.clone();
            next.push(seg.clone());
            if self.modules.contains_key(&next) {
                m = next;
            } else {
                if depth < 4 {
                    if let Some(target) = self.reexport(&m, seg) {
                        return self.resolve(&target, depth + 1);
                    }
                }
                break;
            }
        }
        m
    }

    /// Where module `m` re-exports `name` from, as an absolute path.
    fn reexport(&self, m: &[String], name: &str) -> Option<Vec<String>> {
        let code = self.modules.get(m)?;
        for line in code.split(';') {
            let t = line.trim();
            let Some(rest) = t
                .strip_prefix("pub use ")
                .or(t.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            let rest = rest.trim();
            let (paths, _) = if let Some(r) = rest.strip_prefix("crate::") {
                let (p, u) = use_tree(r);
                (p, u)
            } else if rest.starts_with("super::") {
                (paths_in(rest, m), 0)
            } else {
                let (p, u) = use_tree(rest);
                let p = p
                    .into_iter()
                    .map(|t| m.iter().cloned().chain(t).collect())
                    .collect();
                (p, u)
            };
            for p in paths {
                let last = p.last().map(String::as_str);
                let alias = rest.contains(&format!(" as {name}"));
                if last == Some(name) || alias {
                    return Some(p);
                }
            }
        }
        None
    }

    /// The paths module `m` imports from its own children by their bare
    /// names (`use child::X;`, `pub use child::{Y, Z};`, `self::child::X`),
    /// as absolute segment lists.
    fn child_paths(&self, code: &str, m: &[String]) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for stmt in code.split(';') {
            let t = stmt.trim();
            let t = t
                .strip_prefix("pub(crate) ")
                .or(t.strip_prefix("pub(super) "))
                .or(t.strip_prefix("pub "))
                .unwrap_or(t);
            let Some(rest) = t.strip_prefix("use ") else {
                continue;
            };
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("self::").unwrap_or(rest);
            for p in use_tree(rest).0 {
                let mut child = m.to_vec();
                child.push(p.first().cloned().unwrap_or_default());
                if self.modules.contains_key(&child) {
                    out.push(m.iter().cloned().chain(p).collect());
                }
            }
        }
        out
    }

    /// Module -> the modules it imports. A path into the module's own
    /// subtree counts only when the module imports its child by name (a
    /// `use` of `child::...`, re-exports included: a `mod.rs` that names
    /// its child's items depends on that child); `crate::` paths that
    /// come back into its own subtree are its children's, and `mod child;`
    /// declarations are structure.
    fn edges(&self) -> Graph {
        let mut edges = BTreeMap::new();
        for (m, code) in &self.modules {
            let mut to = BTreeSet::new();
            for p in paths_in(code, m) {
                let t = self.resolve(&p, 0);
                if !t.starts_with(m) {
                    to.insert(t);
                }
            }
            for p in self.child_paths(code, m) {
                let t = self.resolve(&p, 0);
                if t != *m {
                    to.insert(t);
                }
            }
            edges.insert(m.clone(), to);
        }
        edges
    }
}

type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// The graph's circles: its strongly connected components of more than
/// one module (Tarjan's algorithm), each as `crate::` paths.
fn cycles(edges: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        edges: &'a Graph,
        index: BTreeMap<&'a Vec<String>, (usize, usize)>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, n: &'a Vec<String>) -> usize {
            let i = self.index.len();
            self.index.insert(n, (i, i));
            self.stack.push(n);
            let mut low = i;
            for t in self.edges.get(n).into_iter().flatten() {
                match self.index.get(t) {
                    None => low = low.min(self.visit(t)),
                    Some(&(ti, _)) if self.stack.contains(&t) => low = low.min(ti),
                    Some(_) => {}
                }
            }
            self.index.insert(n, (i, low));
            if low == i {
                let at = self
                    .stack
                    .iter()
                    .rposition(|s| *s == n)
                    .expect("on the stack");
                let scc: Vec<String> = self
                    .stack
                    .drain(at..)
                    .map(|m| format!("crate::{}", m.join("::")))
                    .collect();
                if scc.len() > 1 && !within_one_folder(&scc) {
                    self.found.push(scc);
                }
            }
            low
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for n in edges.keys() {
        if !t.index.contains_key(n) {
            t.visit(n);
        }
    }
    t.found
}

/// A circle among one folder's files only: its `mod.rs` (a member) and
/// descendants of it, such as a `mod.rs` whose struct holds a child's type
/// while the child adds methods to the struct. The folder is one unit
/// seen from outside; a circle that leaves it is one between folders.
fn within_one_folder(scc: &[String]) -> bool {
    scc.iter().any(|root| {
        scc.iter()
            .all(|m| m == root || m.starts_with(&format!("{root}::")))
    })
}

fn crate_srcs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .expect("crates/")
        .map(|e| e.expect("entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn no_crate_imports_its_own_files_in_a_circle() {
    let mut found = Vec::new();
    for src in crate_srcs() {
        for c in cycles(&Crate::read(&src).edges()) {
            found.push(format!("{}: {}", src.display(), c.join(", ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let mut long = Vec::new();
    for src in crate_srcs() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read source");
            let n = code_lines(&text).len();
            if n > MAX_LINES {
                long.push(format!("{}: {n}", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines of non-test code:\n{}",
        long.join("\n")
    );
}

/// The checker itself: a cycle it must see, and a parent-child pair it
/// must not take for one.
#[test]
fn the_cycle_check_sees_a_circle_and_only_a_circle() {
    let m = |s: &str| -> Vec<String> {
        if s.is_empty() {
            Vec::new()
        } else {
            s.split("::").map(String::from).collect()
        }
    };
    let krate = |files: &[(&str, &str)]| Crate {
        modules: files.iter().map(|(p, c)| (m(p), c.to_string())).collect(),
    };
    let circle = krate(&[
        ("", "pub mod a; pub mod b; pub use b::Thing;"),
        ("a", "use crate::Thing;"),
        ("b", "use crate::a::{x, y::Z};"),
    ]);
    assert_eq!(cycles(&circle.edges()).len(), 1);
    let tree = krate(&[
        ("", "pub mod a; pub mod b;"),
        ("a", "mod inner; pub use inner::X; use crate::b::Y;"),
        ("a::inner", "use super::super::b::Y; use super::helper;"),
        ("b", "pub struct Y;"),
    ]);
    assert!(cycles(&tree.edges()).is_empty());
    // A folder's mod.rs importing its child by name, the child importing
    // another folder, and that folder the first: a circle between folders.
    let through_a_child = krate(&[
        ("", "pub mod a; pub mod b;"),
        ("a", "mod inner; use inner::X; pub struct Z;"),
        ("a::inner", "use crate::b::Y; pub struct X;"),
        ("b", "use crate::a::Z; pub struct Y;"),
    ]);
    assert_eq!(cycles(&through_a_child.edges()).len(), 1);
    // A mod.rs and its children using each other, and nothing outside.
    let one_folder = krate(&[
        ("", "pub mod a;"),
        ("a", "mod inner; use inner::X; pub struct Z;"),
        ("a::inner", "use super::Z; pub struct X;"),
    ]);
    assert!(cycles(&one_folder.edges()).is_empty());
}

/// A library whose Cargo.toml says `[lib] test = false` (to spare `cargo
/// test` compiling it twice) has its tests in tests/: a `#[test]` in its
/// src/ would be compiled out and never run, so there must be none.
#[test]
fn no_library_without_a_test_harness_holds_unit_tests() {
    let mut found = Vec::new();
    let mut untested = 0;
    for src in crate_srcs() {
        let manifest = std::fs::read_to_string(src.join("../Cargo.toml")).expect("Cargo.toml");
        let lib = manifest.split("\n[").find(|s| s.starts_with("lib]"));
        if !lib.is_some_and(|s| s.lines().any(|l| l.trim() == "test = false")) {
            continue;
        }
        untested += 1;
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read source");
            if text.contains("#[test]") || text.contains("#[cfg(test)]") {
                found.push(f.display().to_string());
            }
        }
    }
    assert!(
        untested > 0,
        "no crate has `[lib] test = false`: the check saw nothing"
    );
    assert!(
        found.is_empty(),
        "unit tests that never run (the crate's lib has test = false; move them to tests/it):\n{}",
        found.join("\n")
    );
}
