//! The README's contents list every section and subsection, in order, with
//! the anchors GitHub gives their headings, so that a section added or
//! renamed cannot leave the contents stale; on failure the test prints the
//! list to paste.

use std::path::Path;

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as dashes.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn the_contents_list_every_heading() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(path).expect("README.md");
    let mut fenced = false;
    let mut want = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if fenced || line == "## Contents" {
        } else if let Some(h) = line.strip_prefix("## ") {
            want.push(format!("- [{h}](#{})", anchor(h)));
        } else if let Some(h) = line.strip_prefix("### ") {
            want.push(format!("  - [{h}](#{})", anchor(h)));
        }
    }
    let got: Vec<&str> = text
        .split("## Contents\n")
        .nth(1)
        .expect("a ## Contents section")
        .lines()
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        got == want,
        "README's contents differ from its headings; they should read:\n\n{}\n",
        want.join("\n")
    );
}
