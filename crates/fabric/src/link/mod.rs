//! Links: ports and their queues (`port.rs`), what crosses a wire
//! (`frame.rs`), sending (`transmit.rs`: serialisation, random loss, a
//! down link), arriving (`arrive.rs`) and faults (`faults.rs`). Link `i`
//! owns ports `2i` (at its `a` end) and `2i + 1` (at `b`), so a port's
//! partner is `port ^ 1`.

mod arrive;
pub mod faults;
pub mod frame;
pub mod port;
mod transmit;
