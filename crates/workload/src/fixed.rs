//! Static traffic patterns: every flow starts at one instant (permutation,
//! incast, all-to-all), the shapes of the P128, A2A128 and incast
//! benchmarks. Flows get class 0 and ids 0.. in the order listed below.

use engine::{Rng, Time};

use crate::error::WorkloadError;
use crate::flow::FlowSpec;
use crate::generate::check_hosts;
use crate::pattern::derangement;

fn flow(id: usize, src: u32, dst: u32, bytes: u64, start: Time) -> FlowSpec {
    FlowSpec {
        id: id as u32,
        src,
        dst,
        bytes,
        start,
        class: 0,
    }
}

fn check_bytes(bytes: u64) -> Result<(), WorkloadError> {
    if bytes == 0 {
        return Err(WorkloadError::config("flow bytes must be positive"));
    }
    Ok(())
}

/// One flow per host, in host-list order, to its partner in a random
/// derangement: every host sends once and receives once, never to itself.
pub fn permutation_flows(
    hosts: &[u32],
    bytes: u64,
    start: Time,
    rng: &mut Rng,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_hosts(hosts, "permutation", 2)?;
    check_bytes(bytes)?;
    let partner = derangement(hosts.len(), rng);
    Ok(hosts
        .iter()
        .zip(&partner)
        .enumerate()
        .map(|(i, (&src, &p))| flow(i, src, hosts[p], bytes, start))
        .collect())
}

/// One flow from each sender, in order, to `receiver`.
pub fn incast_flows(
    senders: &[u32],
    receiver: u32,
    bytes: u64,
    start: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_hosts(senders, "incast senders", 1)?;
    check_bytes(bytes)?;
    if senders.contains(&receiver) {
        return Err(WorkloadError::config(format!(
            "incast receiver {receiver} is also a sender"
        )));
    }
    Ok(senders
        .iter()
        .enumerate()
        .map(|(i, &src)| flow(i, src, receiver, bytes, start))
        .collect())
}

/// A flow from every host to every other host, ordered by source then
/// destination in host-list order (the order of bench/flows-a2a128.txt).
pub fn all_to_all_flows(
    hosts: &[u32],
    bytes: u64,
    start: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_hosts(hosts, "all-to-all", 2)?;
    check_bytes(bytes)?;
    let mut flows = Vec::with_capacity(hosts.len() * (hosts.len() - 1));
    for &src in hosts {
        for &dst in hosts.iter().filter(|&&d| d != src) {
            flows.push(flow(flows.len(), src, dst, bytes, start));
        }
    }
    Ok(flows)
}
