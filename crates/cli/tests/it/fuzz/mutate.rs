//! The inputs the fuzz targets try: valid inputs (scenario files, control
//! messages, request frames) changed a few places at a time, as a
//! mutation fuzzer does. Every choice is drawn from one seeded stream, so
//! a finding is reproduced by its seed and iteration alone. Touches
//! nothing outside itself.

use engine::{Rng, StreamKind};
use serde_json::Value;

/// Values that break parsers and checks: bounds of integer types, the
/// float edge cases, wrong types, empty and huge text.
const TOML_VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2147483647",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "-0.0",
    "0.5",
    "\"\"",
    "\"x\"",
    "\"0..999999999\"",
    "\"all\"",
    "[]",
    "[0, 0]",
    "[1e308]",
    "{}",
    "true",
    "1979-05-27",
];

pub struct Mutator {
    rng: Rng,
}

impl Mutator {
    /// The stream of iteration `i` of a run seeded `seed`.
    pub fn new(seed: u64, i: u64) -> Mutator {
        Mutator {
            rng: Rng::new(seed, StreamKind::Host, i),
        }
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }

    /// An integer near a bound or small, of either sign.
    fn number(&mut self) -> i64 {
        match self.below(4) {
            0 => self.rng.next_u64() as i64,
            1 => [0, 1, -1, i64::MAX, i64::MIN, u32::MAX as i64, 1 << 24][self.below(7)],
            _ => self.below(70_000) as i64 - 1000,
        }
    }

    /// `text` (a TOML file) with 1 to 4 of its lines changed: a value
    /// replaced, a line dropped, doubled or moved, a line of another file
    /// of `corpus` spliced in, a number scaled, or the text cut short.
    pub fn toml(&mut self, text: &str, corpus: &[String]) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for _ in 0..1 + self.below(4) {
            if lines.is_empty() {
                break;
            }
            let at = self.below(lines.len());
            match self.below(8) {
                0 | 1 => {
                    if let Some(eq) = lines[at].find('=') {
                        let v = self.pick(TOML_VALUES).to_string();
                        lines[at] = format!("{}= {v}", &lines[at][..eq]);
                    }
                }
                2 => {
                    lines.remove(at);
                }
                3 => {
                    let l = lines[at].clone();
                    lines.insert(self.below(lines.len() + 1), l);
                }
                4 => {
                    let other = self.pick(corpus);
                    let theirs: Vec<&str> = other.lines().collect();
                    if !theirs.is_empty() {
                        let l = theirs[self.below(theirs.len())].to_string();
                        lines.insert(at, l);
                    }
                }
                5 => {
                    // A number scaled up or down a few decades: sizes,
                    // rates and counts past what the checks expect.
                    if let Some(eq) = lines[at].find('=') {
                        let digits: String = lines[at][eq + 1..]
                            .trim()
                            .chars()
                            .take_while(|c| c.is_ascii_digit() || *c == '.')
                            .collect();
                        if let Ok(x) = digits.parse::<f64>() {
                            let scaled = x * 10f64.powi(self.below(13) as i32 - 6);
                            lines[at] = format!("{}= {scaled}", &lines[at][..eq]);
                        }
                    }
                }
                6 => {
                    if let Some(eq) = lines[at].find('=') {
                        let n = self.number();
                        lines[at] = format!("{}= {n}", &lines[at][..eq]);
                    }
                }
                _ => {
                    // Cut at a character's start, so the text stays UTF-8.
                    let chars = lines[at].chars().count();
                    let cut = self.below(chars + 1);
                    let keep = lines[at]
                        .char_indices()
                        .nth(cut)
                        .map_or(lines[at].len(), |(i, _)| i);
                    lines[at].truncate(keep);
                    lines.truncate(at + 1);
                }
            }
        }
        lines.join("\n")
    }

    /// `v` (a JSON message) with 1 to 3 of its values replaced by values
    /// of any type, or a key dropped, and sometimes its text cut short.
    pub fn json(&mut self, v: &Value) -> Vec<u8> {
        let mut v = v.clone();
        for _ in 0..1 + self.below(3) {
            self.json_once(&mut v);
        }
        let mut text = serde_json::to_vec(&v).expect("a JSON value serialises");
        if self.below(8) == 0 {
            let n = self.below(text.len() + 1);
            text.truncate(n);
        }
        text
    }

    fn json_once(&mut self, v: &mut Value) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                let k = self.pick(&keys).clone();
                match self.below(6) {
                    0 => {
                        m.remove(&k);
                    }
                    1 => *m.get_mut(&k).expect("a key just listed") = self.json_value(),
                    _ => self.json_once(m.get_mut(&k).expect("a key just listed")),
                }
            }
            Value::Array(a) if !a.is_empty() => match self.below(4) {
                0 => {
                    let n = 1 + self.below(100_000);
                    let first = a[0].clone();
                    a.resize(n, first);
                }
                1 => a.clear(),
                _ => {
                    let i = self.below(a.len());
                    self.json_once(&mut a[i]);
                }
            },
            _ => *v = self.json_value(),
        }
    }

    fn json_value(&mut self) -> Value {
        match self.below(7) {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 0),
            2 | 3 => Value::from(self.number()),
            4 => Value::from([1e308, -1.5, 0.5, 5e-324][self.below(4)]),
            5 => Value::from(["", "x", "read", "irn", "é", "0"][self.below(6)]),
            _ => Value::Array(vec![Value::from(self.number()); self.below(4)]),
        }
    }

    /// `b` with 1 to 4 bytes or spans changed: a byte set to an edge
    /// value, a little-endian u32 set to a bound, bytes cut or added.
    pub fn bytes(&mut self, b: &[u8]) -> Vec<u8> {
        let mut b = b.to_vec();
        for _ in 0..1 + self.below(4) {
            match self.below(5) {
                0 if !b.is_empty() => {
                    let i = self.below(b.len());
                    b[i] = [0, 1, 0x7f, 0x80, 0xff][self.below(5)];
                }
                1 if b.len() >= 4 => {
                    let i = self.below(b.len() - 3);
                    let v =
                        [0u32, 1, u32::MAX, 1 << 20, (1 << 20) + 65, 0x8000_0000][self.below(6)];
                    b[i..i + 4].copy_from_slice(&v.to_le_bytes());
                }
                2 => {
                    let n = self.below(b.len() + 1);
                    b.truncate(n);
                }
                3 => {
                    let n = self.below(64);
                    b.extend((0..n).map(|_| self.rng.next_u64() as u8));
                }
                _ if !b.is_empty() => {
                    let i = self.below(b.len());
                    b[i] ^= 1 << self.below(8);
                }
                _ => {}
            }
        }
        b
    }
}

/// Which inputs a target tries: a short run in the suite;
/// `scripts/fuzz.sh` sets `RDMALAB_FUZZ_ITERATIONS` and
/// `RDMALAB_FUZZ_SEED` for a long one, and `RDMALAB_FUZZ_ONLY=I` tries
/// iteration I alone and prints its input (a finding's reproduction).
pub struct Budget {
    pub seed: u64,
    pub iterations: std::ops::Range<u64>,
    pub show: bool,
}

pub fn budget(default: u64) -> Budget {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    let seed = var("RDMALAB_FUZZ_SEED").unwrap_or(1);
    match var("RDMALAB_FUZZ_ONLY") {
        Some(i) => Budget {
            seed,
            iterations: i..i + 1,
            show: true,
        },
        None => Budget {
            seed,
            iterations: 0..var("RDMALAB_FUZZ_ITERATIONS").unwrap_or(default),
            show: false,
        },
    }
}
