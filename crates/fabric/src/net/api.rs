//! What the network offers its users: setting a run up (flows, engines,
//! applications, faults, failure schedules, FKSP, sampling, a pcap trace)
//! and reading it back (paths, checks, statistics); and the global events
//! that act on several parts at once between windows (faults, failure
//! schedules, samples). Each asks the part that owns the state, handing
//! it what else it reads; nothing here keeps state of its own.

use crate::host::app::{App, AppId};
use crate::host::flows::Flow;
use crate::link::{Fault, FaultAction, RandomFailures};
use crate::net::event::Global;
use crate::net::Network;
use crate::observe::checks::Books;
use crate::observe::footprint::{self, Footprint};
use crate::observe::pcap::PcapSpec;
use crate::observe::pfc_log::PfcEvent;
use crate::observe::SampleSpec;
use crate::switch::lb::ConweaveStats;
use crate::switch::rcm::RcmStats;
use crate::topo::fksp::{Built, KspError, PathChoice};
use crate::topo::paths;
use engine::stats::TimeSeries;
use engine::Time;
use std::collections::BTreeSet;
use transport::Engine;

impl Network {
    /// Adds a flow; it starts at `flow.start`. Returns its id.
    pub fn add_flow(&mut self, flow: Flow) -> Result<u32, String> {
        let (links, routes) = (&self.links, &self.sw.routes);
        let (roles, host_port) = (&self.core.roles, &self.core.host_port);
        let (nic, headers) = (&self.cfg.nic, self.cfg.ideal_headers());
        // Asked once the flow is known to be valid (its hosts exist).
        let ideal = || {
            let from = host_port[flow.src as usize];
            paths::ideal_fct(
                links, roles, routes, nic, headers, from, flow.dst, flow.bytes,
            )
        };
        let events = (&mut self.core.globals, self.core.now);
        self.hosts
            .add_flow(flow, &self.cfg, &mut self.sw.lb, events, ideal)
    }

    /// The engines flows chose instead of their NICs' own.
    pub fn flow_engines(&self) -> &[Engine] {
        self.hosts.flow_engines()
    }

    /// Registers an engine flows can choose instead of their NICs' own;
    /// returns the value for `Flow::engine`.
    pub fn add_engine(&mut self, r: Engine) -> Result<u8, String> {
        self.hosts.add_engine(r)
    }

    /// The destination port of the flows under the ns-3 ECMP hash
    /// (`ecmp_hash = "ns3"`: the flow file's; 100 unless set); an error
    /// under any other hash.
    pub fn set_ns3_dport(&mut self, dport: u16) -> Result<(), String> {
        match self.sw.lb.ns3() {
            Some(e) => {
                e.set_dport(dport);
                Ok(())
            }
            None => Err("the destination port is hashed only by the ns-3 ECMP hash".into()),
        }
    }

    /// Adds an application; its `on_start` runs at `start` (not before
    /// now). Returns its id.
    pub fn add_app(&mut self, app: Box<dyn App>, start: Time) -> Result<AppId, String> {
        let id = self.hosts.apps.add(app)?;
        let at = start.max(self.core.now);
        self.core.globals.push(at, Global::AppStart(id));
        Ok(id)
    }

    /// Application `id` (not the flows), as its own type: what it
    /// recorded. None if there is no such application or it is not a `T`.
    pub fn app<T: App>(&self, id: AppId) -> Option<&T> {
        self.hosts.apps.get(id)
    }

    /// Adds a fault; it applies at `fault.at` (not before now).
    pub fn add_fault(&mut self, fault: Fault) -> Result<(), String> {
        self.links.add_fault(&mut self.core, fault)
    }

    /// The link index joining two named nodes, and whether it runs from
    /// `a` to `b`.
    pub fn find_link(&self, a: &str, b: &str) -> Option<(u32, bool)> {
        self.topo.find_link(a, b)
    }

    /// Fault `i` applies (a global event): the routes recomputed when a
    /// link went down or up (with `reroute_on_failure`), the switches'
    /// window budgets when a rate or a reordering changed, the ports that
    /// came up kicked.
    pub(crate) fn apply_fault(&mut self, now: Time, i: u32) {
        let (f, reroute) = self
            .links
            .apply_fault(i, &mut self.sw.markers, self.cfg.seed);
        if reroute && self.cfg.reroute_on_failure {
            self.rebuild_routes();
        }
        if let FaultAction::Rate(_) | FaultAction::Reorder { .. } = f.action {
            self.window_bytes_changed();
        }
        if matches!(f.action, FaultAction::Up) {
            // In a sharded run, each shard kicks its own ports.
            for p in f.ports() {
                if self.core.owns(self.core.port_node[p as usize]) {
                    self.kick(now, p);
                }
            }
        }
    }

    /// The links joining two switches: what random failures draw from.
    pub fn switch_links(&self) -> Vec<u32> {
        self.links.switch_links(&self.core.roles)
    }

    /// Adds a failure schedule; its first set fails at `spec.start`.
    pub fn add_random_failures(&mut self, spec: RandomFailures) -> Result<(), String> {
        let seed = self.cfg.seed;
        self.links.add_random_failures(&mut self.core, seed, spec)
    }

    /// Links the failure schedules hold down now, sorted.
    pub fn randomly_failed_links(&self) -> Vec<u32> {
        self.links.randomly_failed_links()
    }

    /// With failure schedules, the flows that lost at least one packet
    /// (data or control, either direction) to a link a schedule failed:
    /// queued at its ports or on its wire when it failed (with
    /// `reroute_on_failure` off, packets sent onto it later are not
    /// counted); None without schedules.
    pub fn flows_hit_by_failures(&self) -> Option<BTreeSet<u32>> {
        if self.links.failures.is_empty() {
            return None;
        }
        let qps = &self.links.link_down_qps;
        Some(
            qps.iter()
                .filter_map(|&(h, qp)| self.hosts.flow_of_qp(h, qp))
                .collect(),
        )
    }

    /// Failure schedule `i`'s event (a global event): its last set back
    /// up, the next set failed port by port (each one's queues dropped
    /// and its wire's flows noted as it goes down), the routes
    /// recomputed, the ports that came back kicked.
    #[inline(never)]
    pub(crate) fn apply_failures(&mut self, now: Time, i: u32) {
        let (back, failed) = self.links.draw_failures(now, i, &mut self.core);
        for &l in &failed {
            for p in [2 * l, 2 * l + 1] {
                self.links.ports[p as usize].up = false;
                self.at_switch().drop_queued(now, p);
                self.links.note_wire(&self.core.arena, p);
            }
        }
        self.links.failures[i as usize].down = failed;
        if self.cfg.reroute_on_failure {
            self.rebuild_routes();
        }
        // In a sharded run, each shard kicks its own ports (another
        // shard's queues here are empty: dropping them above did
        // nothing, and a wire's frames are noted by the shard that holds
        // them, its far end's).
        for &l in &back {
            for p in [2 * l, 2 * l + 1] {
                if self.core.owns(self.core.port_node[p as usize]) {
                    self.kick(now, p);
                }
            }
        }
    }

    /// Recomputes the routing tables over the links that are up.
    pub(crate) fn rebuild_routes(&mut self) {
        self.sw
            .rebuild_routes(&self.links, &self.core.roles, &self.core.host_node);
    }

    /// Base RTT between two hosts as HPCC ns-3 defines it: twice the path
    /// delay plus one MTU serialised per hop.
    pub fn base_rtt(&self, src: u32, dst: u32) -> Time {
        let from = self.core.host_port[src as usize];
        let mtu = self.cfg.nic.mtu as u64;
        let (delay, per_hop, _, _) = paths::path(
            &self.links,
            &self.core.roles,
            &self.sw.routes,
            mtu,
            from,
            dst,
            0,
        );
        2 * delay + per_hop
    }

    /// The ideal FCT of `bytes` from `src` to `dst` (see `FlowResult::ideal`
    /// and `FlowResult::ideal_exact`): HPCC ns-3's, and what a write takes
    /// alone on the idle path: its first packet (payload and headers)
    /// stored and forwarded at every hop, the rest of its wire bytes at the
    /// bottleneck behind it, and the ACK's way back.
    pub fn ideal_fct(&self, src: u32, dst: u32, bytes: u64) -> (Time, Time) {
        let from = self.core.host_port[src as usize];
        let (links, roles, routes) = (&self.links, &self.core.roles, &self.sw.routes);
        let headers = self.cfg.ideal_headers();
        paths::ideal_fct(
            links,
            roles,
            routes,
            &self.cfg.nic,
            headers,
            from,
            dst,
            bytes,
        )
    }

    /// Routes every flow over one of the k shortest paths between its
    /// ToRs (FKSP; see `topo/fksp.rs`).
    pub fn route_by_ksp(&mut self, k: u32, choice: PathChoice) -> Result<(), KspError> {
        let b = Built {
            links: &self.links,
            core: &self.core,
            topo: &self.topo,
        };
        self.sw.route_by_ksp(&b, self.cfg.seed, k, choice)
    }

    /// Under FKSP, the egress ports of the path flow `flow` to host `dst`
    /// takes.
    pub fn pinned_route(&self, flow: u32, dst: u32) -> Option<Vec<u32>> {
        self.sw.pinned_route(flow, dst)
    }

    /// Under FKSP, the k paths (egress ports) between the ToRs of two
    /// hosts.
    pub fn ksp_paths(&self, src: u32, dst: u32) -> Vec<Vec<u32>> {
        self.sw.ksp_paths(src, dst)
    }

    fn books(&self) -> Books<'_> {
        Books {
            core: &self.core,
            links: &self.links,
            sw: &self.sw,
            topo: &self.topo,
        }
    }

    /// Packets held in queues, on wires (delayed ones too) and by the load
    /// balancer (for conservation checks).
    pub fn in_flight(&self) -> (u64, u64) {
        self.books().in_flight()
    }

    /// Checks that no switch port sits idle with something it may send: a
    /// port whose frame ended before the latest event handled has started
    /// its next one if it had one (between calls of `run_until`, every
    /// event before that instant has run).
    pub fn check_work_conserving(&self) -> Result<(), String> {
        self.books().check_work_conserving()
    }

    /// Checks that every packet injected was delivered, dropped with a
    /// counted reason, or is still in the network.
    pub fn check_conservation(&self) -> Result<(), String> {
        self.books().check_conservation()
    }

    /// What the simulator holds per packet in flight and per flow.
    pub fn footprint(&self) -> Footprint {
        footprint::footprint(&self.core, &self.hosts)
    }

    /// What RCM did (None when off).
    pub fn rcm_stats(&self) -> Option<&RcmStats> {
        self.sw.rcm_stats()
    }

    /// Flow IDs (`flow << 32 | dst`) that were ever harmful somewhere, that
    /// RCC held back, and that SAR detoured (for tests; empty when off).
    pub fn rcm_audit(&self) -> [&BTreeSet<u64>; 3] {
        self.sw.rcm_audit()
    }

    /// Packets RCC held that were not harmful at their port then, and
    /// flows SAR moved that were harmful at their port (both 0 unless
    /// RCC or SAR is broken).
    pub fn rcm_violations(&self) -> (u64, u64) {
        self.sw.rcm_violations()
    }

    /// Packets deflected so far, if deflection is on.
    pub fn deflected(&self) -> Option<u64> {
        self.sw.deflected(&self.core.counters)
    }

    /// Packets trimmed so far, if switches trim.
    pub fn trimmed(&self) -> Option<u64> {
        self.sw.trimmer.on.then(|| self.sw.trimmer.trimmed())
    }

    /// Packets trimmed so far by egress port id (empty if switches do
    /// not trim).
    pub fn trimmed_by_port(&self) -> &[u64] {
        &self.sw.trimmer.per_port
    }

    /// The most times one packet was deflected (0 without deflection).
    pub fn most_deflections(&self) -> u8 {
        self.sw.most_deflections()
    }

    /// What ConWeave did, when it runs.
    pub fn conweave_stats(&self) -> Option<ConweaveStats> {
        self.sw.conweave_stats()
    }

    /// Captures `spec`'s packets from now on (call after the flows are
    /// added). Fails with the field at fault (`flows`, `max_packets`)
    /// and why: an unknown flow id, no flow, a count out of range.
    pub fn set_pcap(&mut self, spec: PcapSpec) -> Result<(), (&'static str, String)> {
        self.observe.set_pcap(spec, &self.hosts)?;
        self.hosts.host_hooks = true;
        Ok(())
    }

    /// Records every PFC frame a port receives from now on
    /// ([`Network::pfc_events`]).
    pub fn set_pfc_log(&mut self) {
        self.observe.pfc_log.get_or_insert_with(Vec::new);
    }

    /// The PFC frames ports received, in time order, when asked for
    /// ([`Network::set_pfc_log`]).
    pub fn pfc_events(&self) -> Option<&[PfcEvent]> {
        self.observe.pfc_log.as_deref()
    }

    /// The trace as pcap bytes, when asked for ([`Network::set_pcap`]),
    /// with the number of packets that could not be encoded.
    pub fn pcap(&self) -> Option<(Vec<u8>, u64)> {
        self.observe.pcap()
    }

    /// Records time series from now on (see [`SampleSpec`]); series names
    /// are `queue_bytes:<port>`, `util:<port>`, `throughput_gbps:flow<i>`,
    /// `rate_gbps:flow<i>`, `ecn_mark_ratio:<port>`, `ORDERING_SERIES`
    /// and `RCM_SERIES` (`rcm_fb:<port>`, ...), ports named `<node>-><peer>`.
    /// Later kinds come after earlier ones, so a spec without them records
    /// exactly what it did before they existed.
    pub fn set_sampling(&mut self, spec: SampleSpec) -> Result<(), String> {
        let read = (&self.topo, &self.links, &self.sw);
        self.observe
            .set_sampling(spec, read, &mut self.hosts, &mut self.core)
    }

    /// A sample is due (a global event).
    pub(crate) fn sample(&mut self, now: Time) {
        let read = (&self.links, &self.sw, &self.hosts);
        self.observe.sample(now, read, &mut self.core);
    }

    /// `<node>-><peer>` for a port.
    pub fn port_name(&self, p: u32) -> String {
        self.links.port_name(&self.topo, p)
    }

    /// The ports whose ECN marking is sampled (see [`SampleSpec::ecn_ports`]).
    pub fn sampled_ecn_ports(&self) -> &[u32] {
        self.observe.sampled_ecn_ports()
    }

    /// The recorded time series.
    pub fn series(&self) -> &[TimeSeries] {
        self.observe.series()
    }

    /// When the series stopped at their most (`MAX_SAMPLED_VALUES`), in a
    /// run whose sampled window had no known end; None if they did not.
    pub fn sampling_stopped(&self) -> Option<Time> {
        self.observe.sampling_stopped()
    }
}
