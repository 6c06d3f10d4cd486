//! Fabric-wide counters: what was injected, delivered and dropped (with the
//! reason), PFC and ECN activity, and the work done (packet-hops, events).

/// Why a packet was lost. Every drop is counted under exactly one reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// Random loss configured on the link direction.
    LinkLoss,
    /// The link was down when the packet was sent or arrived.
    LinkDown,
    /// No route to the destination (e.g. every path failed).
    NoRoute,
    /// Lossy mode: the switch buffer was full.
    BufferFull,
    /// Lossy mode: the egress queue exceeded its dynamic threshold.
    EgressThreshold,
    /// Lossless mode: PFC headroom overflowed (a sizing error).
    HeadroomOverflow,
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::LinkLoss,
        DropReason::LinkDown,
        DropReason::NoRoute,
        DropReason::BufferFull,
        DropReason::EgressThreshold,
        DropReason::HeadroomOverflow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::LinkLoss => "link_loss",
            DropReason::LinkDown => "link_down",
            DropReason::NoRoute => "no_route",
            DropReason::BufferFull => "buffer_full",
            DropReason::EgressThreshold => "egress_threshold",
            DropReason::HeadroomOverflow => "headroom_overflow",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets (and wire bytes) hosts put on their links.
    pub injected_packets: u64,
    pub injected_bytes: u64,
    /// Packets (and wire bytes) that reached their destination host.
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Payload bytes of the data packets among them (retransmitted copies
    /// included): what the hosts moved, finished flows or not.
    pub delivered_payload_bytes: u64,
    /// Per [`DropReason`], in the order of `DropReason::ALL`.
    pub dropped_packets: [u64; 6],
    pub dropped_bytes: [u64; 6],
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub ecn_marked: u64,
    /// Data and control packets sent over a link (one per link crossed);
    /// PFC frames are not counted.
    pub packet_hops: u64,
    /// Packets a lossy switch deflected (DIBS) instead of dropping: one per
    /// deflection.
    pub deflected: u64,
    pub events: u64,
}

impl Counters {
    /// Adds another part's counts (a sharded run's shards).
    pub fn add(&mut self, o: &Counters) {
        // Destructured whole: a new counter must be added here.
        let Counters {
            injected_packets,
            injected_bytes,
            delivered_packets,
            delivered_bytes,
            delivered_payload_bytes,
            dropped_packets,
            dropped_bytes,
            pause_frames,
            resume_frames,
            ecn_marked,
            packet_hops,
            deflected,
            events,
        } = *o;
        self.injected_packets += injected_packets;
        self.injected_bytes += injected_bytes;
        self.delivered_packets += delivered_packets;
        self.delivered_bytes += delivered_bytes;
        self.delivered_payload_bytes += delivered_payload_bytes;
        for r in 0..dropped_packets.len() {
            self.dropped_packets[r] += dropped_packets[r];
            self.dropped_bytes[r] += dropped_bytes[r];
        }
        self.pause_frames += pause_frames;
        self.resume_frames += resume_frames;
        self.ecn_marked += ecn_marked;
        self.packet_hops += packet_hops;
        self.deflected += deflected;
        self.events += events;
    }

    pub fn drop(&mut self, reason: DropReason, bytes: u32) {
        self.dropped_packets[reason as usize] += 1;
        self.dropped_bytes[reason as usize] += bytes as u64;
    }

    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped_packets[reason as usize]
    }

    pub fn total_dropped_packets(&self) -> u64 {
        self.dropped_packets.iter().sum()
    }

    pub fn total_dropped_bytes(&self) -> u64 {
        self.dropped_bytes.iter().sum()
    }
}
