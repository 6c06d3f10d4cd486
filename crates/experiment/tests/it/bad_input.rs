//! Bad scenario input, tried as a new user would: every case is a scenario
//! text that must be refused by `Scenario::parse` or `experiment::build`
//! with an error naming the key (and, where the key is in the text, its
//! line), never a panic, an abort on memory or a hang. One case per class
//! of mistake; the last test runs a scenario that can make no progress.

use experiment::{build, Scenario};
use std::path::{Path, PathBuf};

const BASE: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2

[[flows]]
src = 0
dst = 3
bytes = 1000
"#;

/// BASE with `old` replaced by `new` (which must be there).
fn edit(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old:?} is not in BASE");
    BASE.replacen(old, new, 1)
}

/// BASE with a section added before the flows.
fn with(section: &str) -> String {
    edit("[[flows]]", &format!("{section}\n[[flows]]"))
}

/// BASE with its flow's keys edited.
fn flow(extra: &str) -> String {
    format!("{BASE}{extra}\n")
}

/// BASE plus a `[[traffic]]` entry.
fn traffic(body: &str) -> String {
    with(&format!("[[traffic]]\n{body}"))
}

/// BASE plus an all-reduce `[[jobs]]` entry with `keys`.
fn job(keys: &str) -> String {
    format!("{BASE}\n[[jobs]]\ncollective = \"all_reduce\"\nbytes = 1000000\n{keys}\n")
}

/// A file in a scratch folder of this test run.
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdmalab-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Parses and builds `text`; the error, or None if both succeeded.
fn error_of(text: &str) -> Option<experiment::ScenarioError> {
    let path = Path::new("bad.toml");
    match Scenario::parse(text, "bad.toml") {
        Err(e) => Some(e),
        Ok(sc) => build(&sc, path, None).err(),
    }
}

struct Case {
    name: &'static str,
    text: String,
    /// The key the error must name (a prefix of its key path).
    key: &'static str,
    /// A piece of the message.
    says: &'static str,
}

fn case(name: &'static str, text: String, key: &'static str, says: &'static str) -> Case {
    Case {
        name,
        text,
        key,
        says,
    }
}

fn cases() -> Vec<Case> {
    let ns3_topo_huge = scratch("huge-topo.txt", "4000000000 0 0\n");
    let ns3_topo_large = scratch("large-topo.txt", "100000 0 0\n");
    let ns3_topo_ok = scratch(
        "topo.txt",
        "3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n",
    );
    let ns3_flows_huge = scratch("huge-flows.txt", "4000000000\n0 1 3 100 1000 0.0\n");
    let ns3_flows_two_ports = scratch(
        "two-ports.txt",
        "2\n0 1 3 100 1000 0.0\n1 0 3 101 1000 0.0\n",
    );
    let tiny_cdf = scratch("tiny.cdf", "0 0\n0.5 1\n");
    let trace = |name: &str, text: &str, keys: &str| {
        let p = scratch(name, text).display().to_string();
        format!("{BASE}\n[[jobs]]\ntrace = {p:?}\nranks = \"0..3\"\n{keys}\n")
    };
    let dp_layer = "a -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 64 1";
    let dcqcn = |kv: &str| {
        with(&format!(
            "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\n{kv}"
        ))
    };
    let ns3_topology = |f: &Path| {
        format!(
            "[topology]\nkind = \"ns3\"\nfile = {:?}\n[[flows]]\nsrc = 0\ndst = 1\nbytes = 1000\n",
            f.display().to_string()
        )
    };
    vec![
        // The whole file.
        case("stop NaN", format!("stop_ms = nan\n{BASE}"), "stop_ms", "finite"),
        case("stop negative", format!("stop_ms = -1.0\n{BASE}"), "stop_ms", "> 0"),
        case("stop infinite", format!("stop_ms = inf\n{BASE}"), "stop_ms", "finite"),
        case("stop overflows ps", format!("stop_ms = 1e300\n{BASE}"), "stop_ms", "too long"),
        // Transport.
        case("unknown ordering", with("[transport]\nordering = \"hd\""), "transport.ordering", "accepted: none, ideal, eunomia, static_bitmap"),
        case("eunomia cap below a block", with("[transport]\nordering = \"eunomia\"\n[transport.eunomia]\nblock_bits = 32\ncap_bits = 16"), "transport.eunomia.cap_bits", "smaller than one block"),
        case("eunomia block not whole bytes", with("[transport]\nordering = \"eunomia\"\n[transport.eunomia]\nblock_bits = 12"), "transport.eunomia.block_bits", "multiple of 8"),
        case("eunomia controller too small", with("[transport]\nordering = \"eunomia\"\n[transport.eunomia]\nmemory_bytes = 10"), "transport.eunomia.memory_bytes", "one connection"),
        case("static bitmap of 0 bits", with("[transport]\nordering = \"static_bitmap\"\n[transport.static_bitmap]\nbits = 0"), "transport.static_bitmap.bits", "1..="),
        case("eunomia under mprdma", with("[transport]\nkind = \"mprdma\"\nordering = \"eunomia\""), "transport.ordering", "mprdma"),
        case("unknown eunomia key", with("[transport]\nordering = \"eunomia\"\n[transport.eunomia]\ncap = 8"), "transport.eunomia", "unknown field"),
        case("unknown last-packet hold", with("[transport]\nordering = \"eunomia\"\n[transport.eunomia]\nlast_packet = \"hold\""), "transport.eunomia.last_packet", "accepted: sender_hold, receiver_hold"),
        case("unknown static last-packet hold", with("[transport]\nordering = \"static_bitmap\"\n[transport.static_bitmap]\nlast_packet = \"sender\""), "transport.static_bitmap.last_packet", "accepted: sender_hold, receiver_hold"),
        case("ideal under mprdma", with("[transport]\nkind = \"mprdma\"\nordering = \"ideal\""), "transport.ordering", "mprdma"),
        case("ideal under a per-flow mprdma", flow("transport = \"mprdma\"\n[transport]\nordering = \"ideal\""), "transport.ordering", "mprdma"),
        // Topology.
        case("zero leaves", edit("leaves = 2", "leaves = 0"), "topology.leaves", "at least 1"),
        case("huge fat tree", edit("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2", "kind = \"fat_tree\"\nk = 1000"), "topology.k", "at most 65536 nodes"),
        case("4e9 leaves", edit("leaves = 2", "leaves = 4000000000"), "topology", "at most 65536 nodes"),
        case("odd k", edit("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2", "kind = \"fat_tree\"\nk = 5"), "topology.k", "even"),
        case("rate NaN", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\nhost_gbps = nan"), "topology.host_gbps", "finite"),
        case("rate negative", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\nfabric_gbps = -100"), "topology.fabric_gbps", "> 0"),
        case("rate infinite", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\nhost_gbps = inf"), "topology.host_gbps", "finite"),
        case("rate rounds to zero", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\nhost_gbps = 1e-15"), "topology.host_gbps", "rounds to"),
        case("delay negative", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\ndelay_ns = -5"), "topology.delay_ns", ">= 0"),
        case("delay overflows ps", edit("hosts_per_leaf = 2", "hosts_per_leaf = 2\ndelay_ns = 1e30"), "topology.delay_ns", "too long"),
        case("edge link rate 0", "[topology]\nkind = \"edges\"\nnodes = [{name = \"a\", kind = \"host\"}, {name = \"s\", kind = \"switch\"}]\nlinks = [{a = \"a\", b = \"s\", gbps = 0}]\n".into(), "topology.links[0].gbps", "> 0"),
        case("testbed no paths", edit("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2", "kind = \"testbed\"\npaths = 0\nhosts_per_tor = 2"), "topology.paths", "at least 1"),
        case("ns3 header 4e9 nodes", ns3_topology(&ns3_topo_huge), "topology.file", "4000000000 nodes: at most"),
        case("ns3 header 1e5 nodes", ns3_topology(&ns3_topo_large), "topology.file", "at most 65536 nodes"),
        // Switch.
        case("buffer NaN", with("[switch]\nbuffer_mb = nan"), "switch.buffer_mb", "finite"),
        case("buffer zero", with("[switch]\nbuffer_mb = 0"), "switch.buffer_mb", "> 0"),
        case("buffer huge", with("[switch]\nbuffer_mb = 1e300"), "switch.buffer_mb", "limit"),
        case("failure sets every picosecond", with("[[faults]]\naction = \"random_failures\"\nfraction = 0.5\ninterval_us = 0.000001\nat_us = 0\nstop_us = 220"), "faults[0].interval_us", "at most 1000000"),
        case("failure sets for 46 days", with("[[faults]]\naction = \"random_failures\"\nfraction = 0.5\ninterval_us = 100\nat_us = 0\nstop_us = 4e12"), "faults[0].interval_us", "at most 1000000"),
        case("sampling every 10 ns for 1 s", format!("stop_ms = 1000\n{}", with("[output]\nsample_us = 0.01\nports = [[\"leaf0\", \"spine0\"]]")), "output.sample_us", "at most 20000000"),
        case("QP cache miss of 3 hours", with("[nic]\nqp_cache_entries = 4\nqp_cache_miss_ns = 1e13"), "nic.qp_cache_miss_ns", "at most one hour"),
        case("reserve above the buffer", with("[switch]\nbuffer_mb = 1\nreserve_bytes = 2000000"), "switch.reserve_bytes", "above the buffer"),
        case("headroom of 2^63-1", with("[switch]\nheadroom_bytes = 9223372036854775807"), "switch.headroom_bytes", "above the buffer"),
        case("pfc alpha negative", with("[switch]\npfc_alpha = -1"), "switch.pfc_alpha", "> 0"),
        case("egress alpha infinite", with("[switch]\negress_alpha = inf"), "switch.egress_alpha", "finite"),
        case("ecn kmin > kmax", with("[switch]\necn_table = [{ gbps = 0, kmin_kb = 500, kmax_kb = 100, pmax = 0.2 }]"), "switch.ecn_table[0]", "kmin_kb <= kmax_kb"),
        case("ecn pmax NaN", with("[switch]\necn_table = [{ gbps = 0, kmin_kb = 5, kmax_kb = 10, pmax = nan }]"), "switch.ecn_table[0]", "pmax"),
        case("unknown load balancer", with("[switch]\nload_balancer = \"hula\""), "switch.load_balancer", "accepted values are \"ecmp\", \"spray\", \"drill\""),
        case("drill d zero", with("[switch]\nload_balancer = \"drill\"\n[switch.drill]\nd = 0"), "switch.drill.d", "1..=16"),
        case("drill m huge", with("[switch]\nload_balancer = \"drill\"\n[switch.drill]\nm = 99"), "switch.drill.m", "0..=8"),
        case("drill unknown key", with("[switch]\nload_balancer = \"drill\"\n[switch.drill]\nsamples = 2"), "switch.drill", "unknown field"),
        case("letflow gap NaN", with("[switch]\nload_balancer = \"letflow\"\n[switch.letflow]\ngap_us = nan"), "switch.letflow.gap_us", "finite"),
        case("letflow gap zero", with("[switch]\nload_balancer = \"letflow\"\n[switch.letflow]\ngap_us = 0"), "switch.letflow.gap_us", "> 0"),
        case("letflow gap inf", with("[switch]\nload_balancer = \"letflow\"\n[switch.letflow]\ngap_us = inf"), "switch.letflow.gap_us", "finite"),
        case("letflow table tiny", with("[switch]\nload_balancer = \"letflow\"\n[switch.letflow]\ntable_entries = 1"), "switch.letflow.table_entries", "4..=65536"),
        case("unknown scheduling", with("[switch]\nscheduling = \"lifo\""), "switch.scheduling", "accepted values are \"fifo\", \"srpt\""),
        case("scheduling not a name", with("[switch]\nscheduling = 3"), "switch.scheduling", "string"),
        case("unknown srpt dequeue", with("[switch]\nscheduling = \"srpt\"\n[switch.srpt]\ndequeue = \"latest\""), "switch.srpt.dequeue", "accepted values are \"flow_earliest\", \"packet\""),
        case("srpt unknown key", with("[switch]\nscheduling = \"srpt\"\n[switch.srpt]\norder = \"packet\""), "switch.srpt", "unknown field"),
        case("unknown deflection", with("[switch]\ndeflection = \"sideways\""), "switch.deflection", "accepted values are \"none\", \"dibs\""),
        case("dibs zero deflections", with("[switch]\ndeflection = \"dibs\"\n[switch.dibs]\nmax_deflections = 0"), "switch.dibs.max_deflections", "1..=255"),
        case("dibs too many deflections", with("[switch]\ndeflection = \"dibs\"\n[switch.dibs]\nmax_deflections = 256"), "switch.dibs.max_deflections", "1..=255"),
        case("dibs unknown key", with("[switch]\ndeflection = \"dibs\"\n[switch.dibs]\nttl = 3"), "switch.dibs", "unknown field"),
        case("conweave on linked ToRs", "[topology]\nkind = \"edges\"\nnodes = [{name = \"a\", kind = \"host\"}, {name = \"s\", kind = \"switch\"}, {name = \"b\", kind = \"host\"}, {name = \"t\", kind = \"switch\"}]\nlinks = [{a = \"a\", b = \"s\"}, {a = \"b\", b = \"t\"}, {a = \"s\", b = \"t\"}]\n[switch]\nload_balancer = \"conweave\"\n[[flows]]\nsrc = 0\ndst = 1\nbytes = 1000\n".into(), "switch.load_balancer", "switches s and t both have hosts"),
        case("conweave on a jellyfish", "[topology]\nkind = \"jellyfish\"\nswitches = 8\ndegree = 3\nhosts = 8\n[switch]\nload_balancer = \"conweave\"\n".into(), "switch.load_balancer", "needs a ToR layer"),
        case("conweave expiry zero", with("[switch]\nload_balancer = \"conweave\"\n[switch.conweave]\ntx_expiry_us = 0"), "switch.conweave.tx_expiry_us", "> 0"),
        case("conweave wait NaN", with("[switch]\nload_balancer = \"conweave\"\n[switch.conweave]\ndefault_voq_wait_us = nan"), "switch.conweave.default_voq_wait_us", "finite"),
        case("conweave negative pause", with("[switch]\nload_balancer = \"conweave\"\n[switch.conweave]\npath_pause_us = -1"), "switch.conweave.path_pause_us", ">= 0"),
        case("conweave extra inf", with("[switch]\nload_balancer = \"conweave\"\n[switch.conweave]\nextra_voq_flush_us = inf"), "switch.conweave.extra_voq_flush_us", "finite"),
        case("conweave unknown key", with("[switch]\nload_balancer = \"conweave\"\n[switch.conweave]\nreply_timer_us = 4"), "switch.conweave", "unknown field"),
        case("conga on a fat tree", edit("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2", "kind = \"fat_tree\"\nk = 4\n[switch]\nload_balancer = \"conga\""), "switch.load_balancer", "CONGA needs a two-tier leaf-spine"),
        case("conga on a jellyfish", edit("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2", "kind = \"jellyfish\"\nswitches = 8\ndegree = 3\nhosts = 8\n[switch]\nload_balancer = \"conga\""), "switch.load_balancer", "are joined but both leaves"),
        case("conga period zero", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\ndre_period_us = 0"), "switch.conga.dre_period_us", "> 0"),
        case("unknown switch model", with("[switch]\nmodel = \"crossbar\""), "switch.model", "accepted values are \"shared_buffer\", \"voq\""),
        case("voq queue rounding to 0 bytes", with("[switch]\nmodel = \"voq\"\n[switch.voq]\nqueue_kb = 0.0001"), "switch.voq.queue_kb", "less than two frames"),
        case("voq queue zero", with("[switch]\nmodel = \"voq\"\n[switch.voq]\nqueue_kb = 0"), "switch.voq.queue_kb", "> 0"),
        case("voq with srpt", with("[switch]\nmodel = \"voq\"\nscheduling = \"srpt\""), "switch.scheduling", "cannot run with switch.model = \"voq\""),
        case("voq with dibs", with("[switch]\nmodel = \"voq\"\npfc = false\ndeflection = \"dibs\""), "switch.deflection", "cannot run with switch.model = \"voq\""),
        case("qp cache miss without a cache", with("[nic]\nqp_cache_miss_ns = 500"), "nic.qp_cache_miss_ns", "needs nic.qp_cache_entries"),
        case("qp cache miss negative", with("[nic]\nqp_cache_entries = 4\nqp_cache_miss_ns = -1"), "nic.qp_cache_miss_ns", ""),
        case("qp cache entries negative", with("[nic]\nqp_cache_entries = -4"), "nic.qp_cache_entries", ""),
        case("qp sharing unknown", with("[host]\nqp_sharing = \"per_app\""), "host.qp_sharing", "per_flow"),
        case("nic key unknown", with("[nic]\nqp_cache = 4"), "nic.qp_cache", "unknown field"),
        case("rcm on the shared buffer", with("[switch.rcm]\nenabled = true"), "switch.rcm.enabled", "needs switch.model = \"voq\""),
        case("rcm weight above 1", with("[switch]\nmodel = \"voq\"\n[switch.rcm]\nenabled = true\nw = 1.5"), "switch.rcm.w", "[0, 1]"),
        case("rcm weight negative", with("[switch]\nmodel = \"voq\"\n[switch.rcm]\nenabled = true\nw = -0.1"), "switch.rcm.w", "[0, 1]"),
        case("rcm Gd x Fbmax above 1", with("[switch]\nmodel = \"voq\"\n[switch.rcm]\nenabled = true\ngd = 0.02"), "switch.rcm.gd", "Gd x Fbmax must be at most 1"),
        case("rcm CAM of depth 0", with("[switch]\nmodel = \"voq\"\n[switch.rcm]\nenabled = true\ncam_depth = 0"), "switch.rcm.cam_depth", "1..=1024"),
        case("rcm unknown key", with("[switch]\nmodel = \"voq\"\n[switch.rcm]\nenabled = true\nfbmax = 3"), "switch.rcm", "unknown field"),
        case("rcm series without rcm", with("[output]\nsample_us = 10\nrcm_ports = [[\"leaf0\", \"spine0\"]]"), "output.rcm_ports", "needs RCM"),
        case("conga alpha zero", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nalpha = 0"), "switch.conga.alpha", "[1e-6, 1]"),
        case("conga alpha above 1", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nalpha = 1.5"), "switch.conga.alpha", "[1e-6, 1]"),
        case("conga alpha NaN", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nalpha = nan"), "switch.conga.alpha", "[1e-6, 1]"),
        case("conga no bits", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nquantization_bits = 0"), "switch.conga.quantization_bits", "1..=8"),
        case("conga too many bits", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nquantization_bits = 9"), "switch.conga.quantization_bits", "1..=8"),
        case("conga gap inf", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\ngap_us = inf"), "switch.conga.gap_us", "finite"),
        case("conga aging negative", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\naging_us = -1"), "switch.conga.aging_us", "> 0"),
        case("conga table tiny", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\ntable_entries = 2"), "switch.conga.table_entries", "4..=65536"),
        case("conga unknown key", with("[switch]\nload_balancer = \"conga\"\n[switch.conga]\nprobes = 2"), "switch.conga", "unknown field"),
        case("spray has no table", with("[switch]\nload_balancer = \"spray\"\n[switch.spray]\nx = 1"), "switch", "unknown field"),
        // Transport.
        case("mtu zero", with("[transport]\nmtu = 0"), "transport.mtu", "at least 1"),
        case("ack of 0 bytes", with("[transport]\nack_bytes = 0"), "transport.ack_bytes", "at least 1"),
        case("ack every 0", with("[transport]\nack_every = 0"), "transport.ack_every", "at least 1"),
        case("ack interval negative", with("[transport]\nack_interval_us = -1"), "transport.ack_interval_us", ">= 0"),
        case("ack interval NaN", with("[transport]\nack_interval_us = nan"), "transport.ack_interval_us", "finite"),
        case("ack interval above an hour", with("[transport]\nack_interval_us = 1e12"), "transport.ack_interval_us", "at most one hour"),
        case("ack interval under mprdma", with("[transport]\nkind = \"mprdma\"\nack_interval_us = 2"), "transport.ack_interval_us", "mprdma acknowledges by its own rule"),
        case("cnp delay negative", with("[transport]\ncnp_delay_us = -0.5"), "transport.cnp_delay_us", ">= 0"),
        case("cnp delay infinite", with("[transport]\ncnp_delay_us = inf"), "transport.cnp_delay_us", "finite"),
        case("cnp delay without CNPs", with("[transport]\ncc = \"dcqcn\"\ncnp_delay_us = 1"), "transport.cnp_delay_us", "sends none"),
        case("rto zero", with("[transport]\nrto_us = 0"), "transport.rto_us", "> 0"),
        case("rto NaN", with("[transport]\nrto_us = nan"), "transport.rto_us", "finite"),
        case("rto overflows ps", with("[transport]\nrto_us = 1e20"), "transport.rto_us", "too long"),
        case("rto above an hour", with("[transport]\nrto_us = 1e12"), "transport.rto_us", "at most one hour"),
        case("priority 9", with("[transport]\ndata_priority = 9"), "transport.data_priority", "0..=7"),
        case("dcqcn rate NaN", dcqcn("rai_mbps = nan"), "transport.dcqcn.rai_mbps", "finite"),
        case("dcqcn timer negative", dcqcn("rp_timer_us = -1"), "transport.dcqcn.rp_timer_us", ">= 0"),
        case("dcqcn g above 1", dcqcn("g = 2.0"), "transport.dcqcn.g", "between 0 and 1"),
        case("dcqcn unknown key", dcqcn("rp_timer = 3"), "transport.dcqcn", "rp_timer_us"),
        case("dcqcn wrong type", dcqcn("fast_recovery_times = \"x\""), "transport.dcqcn.fast_recovery_times", "integer"),
        case("irn rto zero", with("[transport]\nkind = \"irn\"\n[transport.irn]\nrto_low_us = 0"), "transport.irn.rto_low_us", "> 0"),
        case("mprdma alpha NaN", with("[transport]\nkind = \"mprdma\"\n[transport.mprdma]\nalpha = nan"), "transport.mprdma.alpha", "finite"),
        case("mprdma window that never ends", with("[transport]\nkind = \"mprdma\"\n[transport.mprdma]\ninitial_window = 4000000000"), "transport.mprdma.initial_window", "at most"),
        case("uet ack_every zero", with("[transport]\nkind = \"uet\"\n[transport.uet]\nack_every = 0"), "transport.uet.ack_every", "1..=max_in_flight"),
        case("uet ack_every above the window", with("[transport]\nkind = \"uet\"\n[transport.uet]\nack_every = 20\nbdp_bytes = 10000"), "transport.uet.ack_every", "1..=max_in_flight (10)"),
        case("uet mode unknown", with("[transport]\nkind = \"uet\"\n[transport.uet]\nmode = \"rdd\""), "transport.uet.mode", "unknown variant"),
        case("uet no entropy values", with("[transport]\nkind = \"uet\"\n[transport.uet]\nevs = 0"), "transport.uet.evs", "1..=4096"),
        case("uet ROD sprayed", with("[transport]\nkind = \"uet\"\n[transport.uet]\nmode = \"rod\"\nev_policy = \"reps\""), "transport.uet.evs", "must be 1 with mode = \"rod\""),
        case("uet policy unknown", with("[transport]\nkind = \"uet\"\n[transport.uet]\nev_policy = \"random\""), "transport.uet.ev_policy", "unknown variant"),
        case("uet cc unknown", with("[transport]\nkind = \"uet\"\n[transport.uet]\ncc = \"dcqcn\""), "transport.uet.cc", "unknown variant"),
        case("nscc base RTT of an hour", with("[transport]\nkind = \"uet\"\n[transport.uet.nscc]\nbase_rtt_us = 3.6e9"), "transport.uet.nscc.base_rtt_us", "(0, 1e6]"),
        case("nscc qa_gate too large", with("[transport]\nkind = \"uet\"\n[transport.uet.nscc]\nqa_gate = 40"), "transport.uet.nscc.qa_gate", "0..=16"),
        case("nscc target zero", with("[transport]\nkind = \"uet\"\n[transport.uet.nscc]\ntarget_qdelay_us = 0"), "transport.uet.nscc.target_qdelay_us", "> 0"),
        case("nscc unknown key", with("[transport]\nkind = \"uet\"\n[transport.uet.nscc]\nbeta = 1"), "transport.uet.nscc", "unknown field"),
        case("nscc beside dcqcn", with("[transport]\nkind = \"uet\"\ncc = \"dcqcn\""), "transport.uet.cc", "set transport.uet.cc = \"none\""),
        case("trimming with PFC", with("[switch]\ntrimming = true\n[transport]\nkind = \"uet\""), "switch.trimming", "with pfc = true nothing is dropped"),
        case("trimming under IRN", with("[switch]\npfc = false\ntrimming = true\n[transport]\nkind = \"irn\""), "switch.trimming", "only UET connections"),
        case("trim threshold zero", with("[switch]\ntrim_threshold_bytes = 0"), "switch.trim_threshold_bytes", "at least 1"),
        case("message longer than the transport counts", edit("bytes = 1000", "bytes = 1_000_000_000_000_000").replace("[[flows]]", "[transport]\nmtu = 1\n[[flows]]"), "flows.bytes", "the most a QP may have in use"),
        // Flows.
        case("flow of 0 bytes", edit("bytes = 1000", "bytes = 0"), "flows[0].bytes", "at least 1"),
        case("flow start negative", flow("start_us = -1"), "flows[0].start_us", ">= 0"),
        case("flow start NaN", flow("start_us = nan"), "flows[0].start_us", "finite"),
        case("flow start overflows ps", flow("start_us = 1e300"), "flows[0].start_us", "too long"),
        case("zero messages", flow("messages = 0"), "flows[0].messages", "between 1 and 65535"),
        case("sync ratio NaN", flow("sync_ratio = nan"), "flows[0].sync_ratio", "between 0 and 1"),
        case("flow to a host that does not exist", edit("dst = 3", "dst = 99"), "flows", "only 4 hosts"),
        case("flow between hosts with no path", "[topology]\nkind = \"edges\"\nnodes = [{name = \"a\", kind = \"host\"}, {name = \"s\", kind = \"switch\"}, {name = \"b\", kind = \"host\"}, {name = \"t\", kind = \"switch\"}]\nlinks = [{a = \"a\", b = \"s\"}, {a = \"b\", b = \"t\"}]\n[[flows]]\nsrc = 0\ndst = 1\nbytes = 1000\n".into(), "flows", "host 0 (a) to host 1 (b): no path"),
        // Traffic.
        case("poisson load NaN", traffic("pattern = \"poisson\"\ncdf = \"websearch\"\nload = nan\nflow_count = 5"), "traffic[0].load", "(0, 1]"),
        case("poisson load zero", traffic("pattern = \"poisson\"\ncdf = \"websearch\"\nload = 0.0\nflow_count = 5"), "traffic[0].load", "(0, 1]"),
        case("poisson billions of flows", traffic("pattern = \"poisson\"\ncdf = \"websearch\"\nload = 1.0\nduration_us = 1e12"), "traffic[0].duration_us", "would generate"),
        case("poisson flow count too large", traffic("pattern = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflow_count = 10_000_000_000"), "traffic[0].flow_count", "between 1 and"),
        case("cdf of byte fractions", traffic(&format!("pattern = \"poisson\"\ncdf = {:?}\nload = 0.5\nflow_count = 5", tiny_cdf.display().to_string())), "traffic[0].cdf", "fractions of a byte"),
        case("all-to-all too many flows", edit("leaves = 2\nspines = 2\nhosts_per_leaf = 2", "leaves = 40\nspines = 1\nhosts_per_leaf = 100").replace("[[flows]]", "[[traffic]]\npattern = \"all_to_all\"\nbytes = 1000\n[[flows]]"), "traffic[0]", "would generate"),
        case("incast fan_in 0", traffic("pattern = \"incast\"\nreceiver = 0\nfan_in = 0\nbytes = 100"), "traffic[0].fan_in", "between 1"),
        case("ns3 flow header 4e9 flows", format!("{}[[traffic]]\npattern = \"ns3\"\nfile = {:?}\n", ns3_topology(&ns3_topo_ok), ns3_flows_huge.display().to_string()), "traffic[0].file", "4000000000 flows"),
        // ECMP's hash.
        case("ecmp_hash ns3 on a built topology", with("[switch]\necmp_hash = \"ns3\""), "switch.ecmp_hash", "topology.kind = \"ns3\""),
        case("ecmp_hash ns3 with drill", with("[switch]\nload_balancer = \"drill\"\necmp_hash = \"ns3\""), "switch.ecmp_hash", "load_balancer = \"ecmp\""),
        case("ecmp_hash unknown", with("[switch]\necmp_hash = \"crc\""), "switch.ecmp_hash", "unknown ECMP hash"),
        case("ecmp_hash ns3 with two dports", format!("[switch]\necmp_hash = \"ns3\"\n{}[[traffic]]\npattern = \"ns3\"\nfile = {:?}\n", ns3_topology(&ns3_topo_ok), ns3_flows_two_ports.display().to_string()), "switch.ecmp_hash", "one destination port"),
        // Faults.
        case("fault rate rounds to zero", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"rate\"\ngbps = 1e-12"), "faults[0].gbps", "rounds to"),
        case("fault loss NaN", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"loss\"\nloss = nan"), "faults[0].loss", "0..1"),
        case("fault reorder fraction above 1", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"reorder\"\nfraction = 1.5\ndelay_us = 2"), "faults[0].fraction", "0..1"),
        case("fault reorder without fraction", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"reorder\"\ndelay_us = 2"), "faults[0].fraction", "got nothing"),
        case("fault reorder delay zero", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"reorder\"\nfraction = 0.5\ndelay_us = 0"), "faults[0].delay_us", "> 0"),
        case("fault reorder without delay", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"reorder\"\nfraction = 0.5"), "faults[0].delay_us", "needs delay_us > 0"),
        case("fault time negative", with("[[faults]]\nlink = [\"leaf0\", \"spine0\"]\naction = \"down\"\nat_us = -3"), "faults[0].at_us", ">= 0"),
        // Collective jobs (BASE has 4 hosts).
        case("job rank outside the topology", job("ranks = [0, 9]"), "jobs[0].ranks", "host 9 does not exist"),
        case("job rank listed twice", job("ranks = [0, 1, 1]"), "jobs[0].ranks", "host 1 is listed twice"),
        case("job range malformed", job("ranks = \"0-3\""), "jobs[0].ranks", "expected a range"),
        case("job of one rank", job("ranks = [2]"), "jobs[0].ranks", "at least 2"),
        case("job ranks and placement", job("ranks = [0, 1]\nplacement = \"packed\"\nsize = 2"), "jobs[0].ranks", "not both"),
        case("job placement without size", job("placement = \"spread\""), "jobs[0].size", "needs size"),
        case("job placement beyond the free hosts", job("placement = \"random\"\nsize = 5"), "jobs[0].size", "only 4 of the 4 hosts are free"),
        case("job with 0 channels", job("ranks = \"0..3\"\nchannels = 0"), "jobs[0].channels", "at least 1"),
        case("job collective unknown", job("ranks = \"0..3\"").replace("all_reduce", "allreduce"), "jobs[0].collective", "unknown collective \"allreduce\""),
        case("job algorithm unknown", job("ranks = \"0..3\"\nalgorithm = \"rings\""), "jobs[0].algorithm", "unknown algorithm"),
        case("job algorithm not for the collective", job("ranks = \"0..3\"\nalgorithm = \"pairwise\""), "jobs[0].algorithm", "does not run all_reduce"),
        case("job bytes the ranks cannot split", job("ranks = \"0..3\"").replace("bytes = 1000000", "bytes = 3"), "jobs[0].bytes", "give at least 4"),
        case("job chunks below a byte", job("ranks = \"0..3\"\nchunk_bytes = 1").replace("bytes = 1000000", "bytes = 10"), "jobs[0].chunk_bytes", "smallest piece"),
        case("job iterations zero", job("ranks = \"0..3\"\niterations = 0"), "jobs[0].iterations", "at least 1"),
        case("job without collective or trace", job("ranks = \"0..3\"").replace("collective = \"all_reduce\"\n", ""), "jobs[0].collective", "missing: a job needs collective and bytes, or a trace"),
        case("trace job with bytes", trace("t-ok.txt", &format!("DATA\n1\n{dp_layer}\n"), "bytes = 5"), "jobs[0].bytes", "a trace job takes its collectives"),
        case("trace missing", format!("{BASE}\n[[jobs]]\ntrace = \"/nonexistent/t.txt\"\nranks = \"0..3\"\n"), "jobs[0].trace", "cannot read /nonexistent/t.txt"),
        case("trace unknown operator", trace("t-op.txt", "DATA\n1\na -1 1 NONE 0 1 NONE 0 1 ALLREDUCEALLTOALL 64 1\n", ""), "jobs[0].trace", "t-op.txt:3: unknown operator \"ALLREDUCEALLTOALL\" in the weight gradient"),
        case("trace for other GPUs", trace("t-gpus.txt", &format!("DATA all_gpus: 8\n1\n{dp_layer}\n"), ""), "jobs[0].trace", "t-gpus.txt:1: all_gpus: 8 GPUs, but the job has 4 ranks"),
        case("trace layer short", trace("t-short.txt", "DATA\n1\na -1 1 ALLREDUCE\n", ""), "jobs[0].trace", "t-short.txt:3: 4 fields"),
        case("job under MP-RDMA", format!("{}[transport]\nkind = \"mprdma\"\n", job("ranks = \"0..3\"")), "jobs", "MP-RDMA"),
        // Output.
        case("ordering memory without a bitmap layer", with("[output]\nsample_us = 1\nordering_memory = true"), "output.ordering_memory", "bitmap ordering layer"),
        case("ordering memory without an interval", with("[output]\nordering_memory = true"), "output.sample_us", "ordering memory"),
        case("sample interval zero", with("[output]\nsample_us = 0"), "output.sample_us", "> 0"),
        case("sample interval too short", with("[output]\nsample_us = 0.001"), "output.sample_us", "at least"),
        case("pcap of an unknown flow", with("[output]\npcap = { flows = [0, 7] }"), "output.pcap.flows", "flow 7 does not exist"),
        case("pcap of no flow", with("[output]\npcap = { flows = [] }"), "output.pcap.flows", "is empty"),
        case("pcap flows not a list", with("[output]\npcap = { flows = \"all\" }"), "output.pcap.flows", "invalid type"),
        case("pcap max_packets zero", with("[output]\npcap = { max_packets = 0 }"), "output.pcap.max_packets", "1..=1000000"),
        case("pcap max_packets too many", with("[output]\npcap = { max_packets = 2_000_000 }"), "output.pcap.max_packets", "got 2000000"),
        // The tables of controls, engines and layers that are off are
        // checked too (a sweep may turn them on).
        case("hpcc table under dcqcn", with("[transport]\ncc = \"dcqcn\"\n[transport.hpcc]\neta = -1"), "transport.hpcc.eta", "between 0 and 1"),
        case("eunomia table with no ordering layer", with("[transport.eunomia]\ncap_bits = 0"), "transport.eunomia.cap_bits", "smaller than one block"),
        case("irn table under go-back-N", with("[transport.irn]\nrto_low_us = -5"), "transport.irn.rto_low_us", "finite number > 0"),
        case("timely table with no control", with("[transport.timely]\nbeta = -1"), "transport.timely.beta", "between 0 and 1"),
        case("VOQ queue under a given PFC headroom", with("[switch]\nmodel = \"voq\"\npfc = true\nheadroom_bytes = 8000000"), "switch.headroom_bytes", "leaves no room for two frames below the PFC headroom of 8000000 bytes"),
        case("pcap frames over the memory bound", with("[transport]\nmtu = 4096\n[output]\npcap = { max_packets = 1_000_000 }"), "output.pcap.max_packets", "at most 508400 records at this MTU"),
        case("pcap max_packets negative", with("[output]\npcap = { max_packets = -1 }"), "output.pcap.max_packets", "invalid value"),
        case("pcap unknown key", with("[output]\npcap = { flow = [0] }"), "output.pcap", "unknown field"),
    ]
}

#[test]
fn every_bad_input_is_a_named_error_with_its_line() {
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let got = std::panic::catch_unwind(|| error_of(&c.text));
        let problem = match got {
            Err(_) => Some("panicked".to_string()),
            Ok(None) => Some("was accepted".to_string()),
            Ok(Some(e)) => {
                let shown = e.to_string();
                if !e.key.starts_with(c.key) {
                    Some(format!("names key {:?}, not {:?}: {shown}", e.key, c.key))
                } else if !shown.contains(c.says) {
                    Some(format!("does not say {:?}: {shown}", c.says))
                } else if !shown.starts_with("bad.toml: ") {
                    Some(format!("does not name the file: {shown}"))
                } else if !shown.contains("line ") {
                    Some(format!("has no line: {shown}"))
                } else {
                    None
                }
            }
        };
        if let Some(p) = problem {
            failures.push(format!("{}: {p}", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A flow behind a link that went down, with no other path and no stop
/// time, ends the run with an error naming the stuck flow instead of
/// retransmitting forever.
#[test]
fn a_run_without_progress_ends_naming_the_stuck_flows() {
    let text = r#"
[topology]
kind = "testbed"
paths = 1
hosts_per_tor = 1
[transport]
rto_us = 100
[[flows]]
src = 0
dst = 1
bytes = 100000
[[faults]]
link = ["tor0", "spine0"]
action = "down"
at_us = 1
"#;
    let sc = Scenario::parse(text, "stuck.toml").unwrap();
    let built = build(&sc, Path::new("stuck.toml"), None).unwrap();
    let o = experiment::run(built, |_| {});
    let m = o.stalled.expect("the run is reported stalled");
    assert!(m.contains("flow 0 (host 0 -> host 1)"), "{m}");
    assert!(m.contains("no progress"), "{m}");
    assert!(o.end_time < 10 * engine::time::SEC, "{}", o.end_time);
    // A run that does finish is not reported.
    let ok = text.replace("action = \"down\"", "action = \"loss\"\nloss = 0.0");
    let sc = Scenario::parse(&ok, "ok.toml").unwrap();
    let o = experiment::run(build(&sc, Path::new("ok.toml"), None).unwrap(), |_| {});
    assert!(o.stalled.is_none());
    assert_eq!(o.net.flows_done(), 1);
}
