//! Line-oriented reading shared by the ns-3 parsers: non-blank lines split
//! into whitespace-separated fields, each with its 1-based line number, and
//! typed field parsing whose errors name origin, line and field.

use std::str::FromStr;

use crate::error::WorkloadError;

/// One non-blank line: its number and its fields.
pub(crate) struct Record<'a> {
    pub line: usize,
    pub fields: Vec<&'a str>,
}

/// The non-blank lines of `text`. ns-3 reads these files as a token stream,
/// but every file it is given has one record a line, and reading by line
/// lets a short or long record be reported where it is, not one line later.
pub(crate) fn records(text: &str) -> impl Iterator<Item = Record<'_>> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let fields: Vec<&str> = l.split_whitespace().collect();
        (!fields.is_empty()).then_some(Record {
            line: i + 1,
            fields,
        })
    })
}

/// The number of the last line (for errors about the file as a whole).
pub(crate) fn last_line(text: &str) -> usize {
    text.lines().count().max(1)
}

/// Parses a field as `T`, or an error saying which field had what text.
pub(crate) fn field<T: FromStr>(
    tok: &str,
    what: &str,
    expected: &str,
    origin: &str,
    line: usize,
) -> Result<T, WorkloadError> {
    tok.parse().map_err(|_| {
        WorkloadError::parse(origin, line, format!("{what} '{tok}' is not {expected}"))
    })
}

/// Checks a record has exactly `n` fields, described by `layout`.
pub(crate) fn expect_fields(
    rec: &Record<'_>,
    n: usize,
    layout: &str,
    origin: &str,
) -> Result<(), WorkloadError> {
    if rec.fields.len() != n {
        return Err(WorkloadError::parse(
            origin,
            rec.line,
            format!("expected {n} fields '{layout}', found {}", rec.fields.len()),
        ));
    }
    Ok(())
}
