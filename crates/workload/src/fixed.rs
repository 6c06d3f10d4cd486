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

#[cfg(test)]
mod tests {
    use super::*;
    use engine::StreamKind;

    #[test]
    fn permutation_is_a_derangement_bijection() {
        let hosts: Vec<u32> = (100..228).collect();
        let mut rng = Rng::new(7, StreamKind::Workload, 0);
        let flows = permutation_flows(&hosts, 2_000_000, 5, &mut rng).unwrap();
        assert_eq!(flows.len(), 128);
        let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
        for (f, &h) in flows.iter().zip(&hosts) {
            assert_eq!(f.src, h);
            assert_ne!(f.src, f.dst);
            assert_eq!((f.bytes, f.start), (2_000_000, 5));
        }
        dsts.sort();
        assert_eq!(dsts, hosts);
    }

    #[test]
    fn incast_and_all_to_all_shapes() {
        let inc = incast_flows(&[1, 2, 3], 0, 500, 9).unwrap();
        let pairs: Vec<(u32, u32)> = inc.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(pairs, vec![(1, 0), (2, 0), (3, 0)]);
        let a2a = all_to_all_flows(&[0, 1, 2], 100, 0).unwrap();
        let pairs: Vec<(u32, u32)> = a2a.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
        assert!(a2a.iter().enumerate().all(|(i, f)| f.id == i as u32));
    }

    #[test]
    fn static_patterns_reject_bad_input() {
        let mut rng = Rng::new(7, StreamKind::Workload, 0);
        assert!(permutation_flows(&[3], 1, 0, &mut rng).is_err());
        assert!(permutation_flows(&[3, 3], 1, 0, &mut rng).is_err());
        assert!(incast_flows(&[1, 2], 2, 1, 0)
            .unwrap_err()
            .to_string()
            .contains("also a sender"));
        assert!(incast_flows(&[], 2, 1, 0).is_err());
        assert!(all_to_all_flows(&[0, 1], 0, 0).is_err());
    }
}
