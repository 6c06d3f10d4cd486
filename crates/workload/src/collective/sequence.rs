//! Collectives one after another, each run by groups of ranks side by
//! side (a trace's operations: tensor-parallel groups, data-parallel
//! groups): one plan whose segments are the operations in order. Each
//! group's transfers are its collective's plan with the group's ranks;
//! a rank starts an operation once it is done with the one before and
//! has computed for the operation's delay (the executor keeps to the
//! segments). Touches only the plans it is given.

use super::{refuse, Builder, Plan, PlanError, Segment, MAX_TRANSFERS};

/// One operation: a collective's plan (of one segment) run by each of
/// `groups`, after `delay_ns` of compute.
#[derive(Clone, Debug)]
pub struct Op {
    /// As one group runs it: its ranks are a group's.
    pub plan: Plan,
    /// Each a list of `plan.ranks` distinct ranks of the whole.
    pub groups: Vec<Vec<u32>>,
    pub delay_ns: u64,
}

/// The plan of `ops` in order over `ranks` ranks. Refused (before it is
/// built) when it would hold more than [`MAX_TRANSFERS`] transfers.
pub fn sequence(ranks: u32, ops: &[Op]) -> Result<Plan, PlanError> {
    let total: u64 = ops
        .iter()
        .map(|o| o.plan.transfers.len() as u64 * o.groups.len() as u64)
        .sum();
    if total > MAX_TRANSFERS {
        return Err(refuse(
            "chunk_bytes",
            format!(
                "{total} messages in all; at most {MAX_TRANSFERS}: give larger chunks or fewer \
                 channels"
            ),
        ));
    }
    let mut b = Builder {
        plan: Plan {
            ranks,
            lanes: ops.iter().map(|o| o.plan.lanes).max().unwrap_or(1),
            ..Plan::default()
        },
    };
    b.plan.transfers.reserve(total as usize);
    for op in ops {
        let [seg] = op.plan.segments[..] else {
            return Err(refuse("trace", "an operation must be one collective"));
        };
        for g in &op.groups {
            if g.len() != op.plan.ranks as usize || g.iter().any(|&r| r >= ranks) {
                return Err(refuse(
                    "trace",
                    format!("group {g:?} is not {} ranks below {ranks}", op.plan.ranks),
                ));
            }
            b.append(&op.plan, g, 0);
        }
        b.plan.segments.push(Segment {
            end: b.plan.transfers.len() as u32,
            delay_ns: op.delay_ns,
            ..seg
        });
    }
    b.plan.check().map_err(|m| refuse("trace", m))?;
    Ok(b.plan)
}
