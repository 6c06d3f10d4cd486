//! Time series sampled at a fixed interval (queue length, utilisation,
//! flow throughput and rate, ECN marking ratio, the ordering layer's NIC
//! memory, RCM's per-port state), run as a global event between windows. Reads the fabric; writes only its series.

use crate::host::{Host, Hosts};
use crate::link::Links;
use crate::net::core::Core;
use crate::net::event::Global;
use crate::net::NodeRole;
use crate::observe::{
    Observe, SampleSpec, Sampling, MAX_SAMPLED_VALUES, ORDERING_SERIES, RCM_SERIES,
};
use crate::switch::rcm::Point;
use crate::switch::Switches;
use crate::topo::topology::Topology;
use engine::stats::TimeSeries;
use engine::Time;

/// [`ORDERING_SERIES`]' values now (NICs without a bitmap layer count 0).
fn ordering_memory(hosts: &[Host]) -> [f64; 4] {
    let (mut bitmap, mut total) = ((0u64, 0u64), (0u64, 0u64));
    for h in hosts {
        let m = h.nic.order_memory().unwrap_or_default();
        let t = m.bitmap_bytes + m.metadata_bytes;
        bitmap = (bitmap.0 + m.bitmap_bytes, bitmap.1.max(m.bitmap_bytes));
        total = (total.0 + t, total.1.max(t));
    }
    let n = hosts.len().max(1) as f64;
    [
        bitmap.0 as f64 / n,
        bitmap.1 as f64,
        total.0 as f64 / n,
        total.1 as f64,
    ]
}

impl Observe {
    /// Records time series from now on (see [`SampleSpec`]); series names
    /// are `queue_bytes:<port>`, `util:<port>`, `throughput_gbps:flow<i>`,
    /// `rate_gbps:flow<i>`, `ecn_mark_ratio:<port>`, [`ORDERING_SERIES`]
    /// and [`RCM_SERIES`] (`rcm_fb:<port>`, ...), `buffer_bytes:<switch>`, ports named `<node>-><peer>`. Later kinds come
    /// after earlier ones, so a spec without them records exactly what it
    /// did before they existed.
    pub(crate) fn set_sampling(
        &mut self,
        spec: SampleSpec,
        (topo, links, sw): (&Topology, &Links, &Switches),
        hosts: &mut Hosts,
        core: &mut Core,
    ) -> Result<(), String> {
        if spec.interval == 0 {
            return Err("the sampling interval must be positive".into());
        }
        if spec.until.is_some_and(|u| u <= spec.from) {
            return Err("the sampling window must end after it starts".into());
        }
        if let Some(p) = spec
            .ports
            .iter()
            .chain(&spec.ecn_ports)
            .chain(&spec.rcm_ports)
            .find(|&&p| p as usize >= links.ports.len())
        {
            return Err(format!("no port {p}"));
        }
        let flows = hosts.flows.records.len();
        if let Some(f) = spec.flows.iter().find(|&&f| f as usize >= flows) {
            return Err(format!("no flow {f} (there are {flows})"));
        }
        let mut series = Vec::new();
        for &p in &spec.ports {
            let name = links.port_name(topo, p);
            series.push(TimeSeries::new(format!("queue_bytes:{name}")));
            series.push(TimeSeries::new(format!("util:{name}")));
        }
        for &f in &spec.flows {
            series.push(TimeSeries::new(format!("throughput_gbps:flow{f}")));
            series.push(TimeSeries::new(format!("rate_gbps:flow{f}")));
        }
        for &p in &spec.ecn_ports {
            let name = links.port_name(topo, p);
            series.push(TimeSeries::new(format!("ecn_mark_ratio:{name}")));
        }
        if spec.ordering_memory {
            series.extend(ORDERING_SERIES.map(TimeSeries::new));
        }
        if !spec.rcm_ports.is_empty() && !sw.rcm.on {
            return Err("RCM state series need [switch.rcm] enabled".into());
        }
        for &p in &spec.rcm_ports {
            let name = links.port_name(topo, p);
            for kind in RCM_SERIES {
                series.push(TimeSeries::new(format!("{kind}:{name}")));
            }
        }
        // Each sampled switch's index, by its node's role (not by a scan
        // of the ports for each: sampling every switch of a large fabric
        // would take switches x ports).
        let mut switches = Vec::with_capacity(spec.switches.len());
        for &n in &spec.switches {
            let s = match core.roles.get(n as usize) {
                Some(&NodeRole::Switch(s)) if !sw.nodes[s as usize].ports.is_empty() => s,
                _ => return Err(format!("node {n} is not a switch with ports")),
            };
            series.push(TimeSeries::new(format!(
                "buffer_bytes:{}",
                topo.nodes[n as usize].name
            )));
            switches.push(s);
        }
        if !spec.flows.is_empty() {
            hosts.flows.rx_bytes = vec![0; flows];
        }
        // Samples fall where they would without a window (every interval
        // from now); the first one the window keeps is primed by the one
        // before it, so every recorded value is the one a run without the
        // window records at that time.
        let wanted = spec.from.saturating_sub(core.now).div_ceil(spec.interval);
        let first = core.now + wanted.saturating_sub(1) * spec.interval;
        self.sampling = Some(Sampling {
            last_tx: vec![0; spec.ports.len()],
            last_rx: vec![0; spec.flows.len()],
            last_ecn: vec![(0, 0); spec.ecn_ports.len()],
            switches,
            series,
            spec,
            stopped: None,
            recorded: 0,
        });
        core.globals.push(first, Global::Sample);
        Ok(())
    }

    /// The ports whose ECN marking is sampled (see [`SampleSpec::ecn_ports`]).
    pub(crate) fn sampled_ecn_ports(&self) -> &[u32] {
        self.sampling.as_ref().map_or(&[], |s| &s.spec.ecn_ports)
    }

    /// When sampling stopped at [`MAX_SAMPLED_VALUES`], if it did.
    pub(crate) fn sampling_stopped(&self) -> Option<Time> {
        self.sampling.as_ref().and_then(|s| s.stopped)
    }

    pub(crate) fn series(&self) -> &[TimeSeries] {
        self.sampling.as_ref().map_or(&[], |s| &s.series)
    }

    // Once per interval: kept out of the event loop, whose code layout it
    // would otherwise change (0.8% more instructions per hop when the ECN
    // series were added).
    #[inline(never)]
    pub(crate) fn sample(
        &mut self,
        now: Time,
        (links, sw, hosts): (&Links, &Switches, &Hosts),
        core: &mut Core,
    ) {
        let Some(s) = self.sampling.as_mut() else {
            return;
        };
        let secs = s.spec.interval as f64 / engine::time::SEC as f64;
        // Before the window (the priming sample), counters are read and
        // nothing is recorded.
        let record = now >= s.spec.from;
        let mut k = 0;
        for (i, &p) in s.spec.ports.iter().enumerate() {
            let port = &links.ports[p as usize];
            let tx = port.tx_bytes;
            let util = (tx - s.last_tx[i]) as f64 * 8.0 / secs / port.rate_bps() as f64;
            s.last_tx[i] = tx;
            if record {
                s.series[k].push(now, sw.queues.queued_bytes(p) as f64);
                s.series[k + 1].push(now, util);
            }
            k += 2;
        }
        for (i, &f) in s.spec.flows.iter().enumerate() {
            let rx = hosts.flows.rx_bytes[f as usize];
            let thr = (rx - s.last_rx[i]) as f64 * 8.0 / secs / 1e9;
            s.last_rx[i] = rx;
            let r = &hosts.flows.records[f as usize];
            let rate = if r.finish.is_some() {
                0.0
            } else {
                let h = &hosts.nodes[r.requester() as usize];
                // 0 before the flow's QP exists.
                h.nic.qp_rate_bps_at(r.requester_qp, now).unwrap_or(0) as f64 / 1e9
            };
            if record {
                s.series[k].push(now, thr);
                s.series[k + 1].push(now, rate);
            }
            k += 2;
        }
        for (i, &p) in s.spec.ecn_ports.iter().enumerate() {
            let m = &sw.markers[p as usize];
            let (marked, eligible) = (m.ecn_marked, m.ecn_eligible);
            let (m0, e0) = s.last_ecn[i];
            s.last_ecn[i] = (marked, eligible);
            // An interval in which no data packet left has no ratio.
            if record && eligible > e0 {
                s.series[k].push(now, (marked - m0) as f64 / (eligible - e0) as f64);
            }
            k += 1;
        }
        if !record {
            // Everything below is a reading of the moment, with no
            // counter to prime.
            return self.next_sample(now, core);
        }
        s.recorded += 1;
        if s.spec.ordering_memory {
            let [bitmap_mean, bitmap_max, total_mean, total_max] = ordering_memory(&hosts.nodes);
            for (i, v) in [bitmap_mean, bitmap_max, total_mean, total_max]
                .into_iter()
                .enumerate()
            {
                s.series[k + i].push(now, v);
            }
            k += 4;
        }
        for &p in &s.spec.rcm_ports {
            let pc = &sw.rcm.ports[p as usize];
            let point = match pc.point(now) {
                Point::None => 0.0,
                Point::Root => 1.0,
                Point::Edge => 2.0,
                Point::Inner => 3.0,
            };
            let fbr = if pc.remote(now) { pc.fbr } else { 0 };
            let wc = if pc.controlling {
                pc.wc
            } else {
                sw.rcm.p.window
            };
            let values = [
                pc.out.fb as f64,
                pc.input.fb as f64,
                fbr as f64,
                point,
                wc as f64,
            ];
            for (i, v) in values.into_iter().enumerate() {
                s.series[k + i].push(now, v);
            }
            k += RCM_SERIES.len();
        }
        for (i, &sw_index) in s.switches.iter().enumerate() {
            s.series[k + i].push(now, sw.nodes[sw_index as usize].mmu.used() as f64);
        }
        self.next_sample(now, core);
    }

    /// Schedules the sample after the one at `now`, unless it falls after
    /// the window.
    fn next_sample(&mut self, now: Time, core: &mut Core) {
        let Some(s) = self.sampling.as_mut() else {
            return;
        };
        // A run with no known end would sample without bound: it stops
        // at the most the series may hold (a sample adds at most one
        // value per series; counted so, not by the values held, so that
        // every shard of a sharded run stops at the same sample).
        let values = s.recorded * s.series.len() as u64;
        if values + s.series.len() as u64 > MAX_SAMPLED_VALUES {
            s.stopped = Some(now);
            return;
        }
        let next = now + s.spec.interval;
        if s.spec.until.is_none_or(|u| next <= u) {
            core.globals.push(next, Global::Sample);
        }
    }
}

/// Where a sampled series' values come from in a sharded run
/// (`net/shard.rs`).
pub(crate) enum Source {
    /// The shard that runs what the series reads.
    Shard(usize),
    /// Every shard's added up: a flow's throughput, counted only where its
    /// data lands (0 elsewhere).
    Sum,
}

impl Sampling {
    /// Each series' source, given the shard of a node and of a host, in
    /// the order the series are recorded (`Observe::sample`).
    pub(crate) fn sources(
        &self,
        (port_node, host_node): (&[u32], &[u32]),
        hosts: &Hosts,
        shard_of: impl Fn(u32) -> usize,
    ) -> Vec<Source> {
        let s = &self.spec;
        let port = |p: u32| Source::Shard(shard_of(port_node[p as usize]));
        let mut out = Vec::with_capacity(self.series.len());
        for &p in &s.ports {
            out.extend([port(p), port(p)]);
        }
        for &f in &s.flows {
            let requester = hosts.flows.records[f as usize].requester();
            out.extend([
                Source::Sum,
                Source::Shard(shard_of(host_node[requester as usize])),
            ]);
        }
        out.extend(s.ecn_ports.iter().map(|&p| port(p)));
        // The ordering memory and RCM's series never run sharded
        // (`Network::cannot_shard`).
        out.extend(s.switches.iter().map(|&n| Source::Shard(shard_of(n))));
        out
    }

    /// Takes each series, and the counts behind the next sample, from its
    /// source among this shard (0) and `others` (1, 2, ...).
    pub(crate) fn merge(&mut self, sources: &[Source], others: &mut [&mut Sampling]) {
        let (ports, flows) = (self.spec.ports.len(), self.spec.flows.len());
        for i in 0..ports {
            if let Source::Shard(k @ 1..) = sources[2 * i] {
                std::mem::swap(&mut self.last_tx[i], &mut others[k - 1].last_tx[i]);
            }
        }
        for o in others.iter() {
            for (a, b) in self.last_rx.iter_mut().zip(&o.last_rx) {
                *a += b;
            }
        }
        for i in 0..self.spec.ecn_ports.len() {
            if let Source::Shard(k @ 1..) = sources[2 * (ports + flows) + i] {
                std::mem::swap(&mut self.last_ecn[i], &mut others[k - 1].last_ecn[i]);
            }
        }
        for (k, src) in sources.iter().enumerate() {
            match *src {
                Source::Shard(0) => {}
                Source::Shard(i) => {
                    std::mem::swap(&mut self.series[k], &mut others[i - 1].series[k]);
                }
                Source::Sum => {
                    for o in others.iter() {
                        for (p, q) in self.series[k].points.iter_mut().zip(&o.series[k].points) {
                            p.1 += q.1;
                        }
                    }
                }
            }
        }
    }
}

impl Links {
    /// `<node>-><peer>` for a port.
    pub(crate) fn port_name(&self, topo: &Topology, p: u32) -> String {
        let node = self.ports[p as usize].node as usize;
        let peer = self.ports[p as usize ^ 1].node as usize;
        format!("{}->{}", topo.nodes[node].name, topo.nodes[peer].name)
    }
}
