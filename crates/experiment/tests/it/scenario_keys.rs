//! Scenario files parse strictly: defaults, every engine name and alias,
//! the per-engine tables, and errors that name the key, the expectation
//! and the line; values MP-RDMA cannot run are refused when built.

use experiment::build;
use experiment::scenario::{
    BdpBytes, EngineKind, Scenario, SenderCfg, SyncModeCfg, TrafficCfg, VerbCfg,
};
use std::path::Path;
const OK: &str = r#"
seed = 3
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

#[test]
fn parses_with_defaults() {
    let s = Scenario::parse(OK, "ok.toml").unwrap();
    assert_eq!(s.seed, 3);
    assert!(s.switch.pfc);
    assert_eq!(s.transport.mtu, 1000);
    assert_eq!(s.flows[0].verb, VerbCfg::Write);
}

#[test]
fn irn_keys_parse_strictly() {
    let irn = |extra: &str| format!("{OK}[transport]\nkind = \"irn\"\n[transport.irn]\n{extra}\n");
    let s = Scenario::parse(&irn("bdp_bytes = 156000\nrto_low_us = 50"), "i.toml").unwrap();
    assert_eq!(s.transport.kind.name(), "irn");
    assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Bytes(156_000)));
    assert_eq!(s.transport.irn.rto_low_us, Some(50.0));
    let s = Scenario::parse(&irn("bdp_bytes = \"auto\""), "i.toml").unwrap();
    assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Auto));
    for bad in ["bdp_bytes = \"big\"", "bdp_bytes = -3", "bdp_bytes = 0"] {
        let e = Scenario::parse(&irn(bad), "i.toml").unwrap_err();
        assert_eq!(e.key, "transport.irn.bdp_bytes", "{e}");
        assert!(e.message.contains("\"auto\""), "{e}");
    }
    let e = Scenario::parse(&irn("rto_lo_us = 5"), "i.toml").unwrap_err();
    assert!(e.to_string().contains("rto_lo_us"), "{e}");
    let e = Scenario::parse(
        &OK.replace("[[flows]]", "[transport]\nkind = \"tcp\"\n[[flows]]"),
        "i.toml",
    )
    .unwrap_err();
    assert_eq!(e.key, "transport.kind", "{e}");
    assert!(e.message.contains(&EngineKind::list()), "{e}");
}

/// `kind` and a flow's `transport` parse through the transport's table
/// of engine names: aliases too, and an unknown per-flow name is
/// reported at its key with the list.
#[test]
fn engine_names_and_aliases_parse_through_the_table() {
    for k in EngineKind::all() {
        for name in std::iter::once(k.name()).chain(k.aliases().iter().copied()) {
            let text = OK.replace(
                "[[flows]]",
                &format!("[transport]\nkind = \"{name}\"\n[[flows]]"),
            );
            let s = Scenario::parse(&text, "k.toml").unwrap();
            assert_eq!(s.transport.kind, k, "{name}");
            let text = format!("{OK}transport = \"{name}\"\n");
            assert_eq!(
                Scenario::parse(&text, "f.toml").unwrap().flows[0].transport,
                Some(k)
            );
        }
    }
    let e = Scenario::parse(&format!("{OK}transport = \"udp\"\n"), "f.toml").unwrap_err();
    assert_eq!(e.key, "flows[0].transport", "{e}");
    assert!(e.message.contains(&EngineKind::list()), "{e}");
}

#[test]
fn mprdma_keys_parse_strictly() {
    let mp =
        |extra: &str| format!("{OK}[transport]\nkind = \"mprdma\"\n[transport.mprdma]\n{extra}\n");
    let s = Scenario::parse(&mp("delta = 16\nsync_mode = \"stop_and_wait\""), "m.toml").unwrap();
    assert_eq!(s.transport.kind.name(), "mprdma");
    assert_eq!(s.transport.mprdma.delta, Some(16));
    assert_eq!(s.transport.mprdma.sync_mode, Some(SyncModeCfg::StopAndWait));
    let e = Scenario::parse(&mp("deltaa = 16"), "m.toml").unwrap_err();
    assert!(e.to_string().contains("deltaa"), "{e}");
    let e = Scenario::parse(&mp("sync_mode = \"eager\""), "m.toml").unwrap_err();
    assert!(e.to_string().contains("eager"), "{e}");
    let s = Scenario::parse(&mp("sender = \"paper\""), "m.toml").unwrap();
    assert_eq!(s.transport.mprdma.sender, Some(SenderCfg::Paper));
    let e = Scenario::parse(&mp("sender = \"fast\""), "m.toml").unwrap_err();
    assert!(
        e.to_string().contains("fast") && e.to_string().contains("guarded"),
        "{e}"
    );
    let e = Scenario::parse(&mp("l_slots = \"many\""), "m.toml").unwrap_err();
    assert!(e.to_string().contains("l_slots"), "{e}");
}

#[test]
fn unknown_key_is_named() {
    let text = OK.replace("spines = 2", "spines = 2\nspinez = 4");
    let e = Scenario::parse(&text, "bad.toml").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("bad.toml: "), "{msg}");
    assert!(msg.contains("spinez"), "{msg}");
}

#[test]
fn wrong_type_names_key_and_expectation() {
    let text = OK.replace("bytes = 1000", "bytes = \"lots\"");
    let e = Scenario::parse(&text, "bad.toml").unwrap_err();
    assert_eq!(e.key, "flows[0].bytes");
    assert!(
        e.message.contains("u64") || e.message.contains("integer"),
        "{e}"
    );
    assert!(e.message.contains("line 11"), "{e}");
}

#[test]
fn topology_keys_are_checked_per_kind() {
    let extra = OK.replace("spines = 2", "spines = 2\nk = 4");
    let e = Scenario::parse(&extra, "t.toml").unwrap_err();
    assert_eq!(e.key, "topology");
    assert!(
        e.message
            .contains("`k` does not apply to kind = \"leaf_spine\""),
        "{e}"
    );
    let missing = OK.replace("spines = 2\n", "");
    let e = Scenario::parse(&missing, "t.toml").unwrap_err();
    assert!(e.message.contains("needs `spines`"), "{e}");
}

#[test]
fn traffic_keys_are_named_and_checked_per_pattern() {
    let poisson = |body: &str| {
        OK.replace(
            "[[flows]]",
            &format!("[[traffic]]\npattern = \"poisson\"\n{body}\n[[flows]]"),
        )
    };
    let e =
        Scenario::parse(&poisson("cdf = \"websearch\"\nload = \"high\""), "t.toml").unwrap_err();
    assert_eq!(e.key, "traffic[0].load", "{e}");
    assert!(e.message.contains("f64"), "{e}");
    let e = Scenario::parse(
        &poisson("cdf = \"websearch\"\nload = 0.3\npairs = []"),
        "t.toml",
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("`pairs` does not apply to pattern = \"poisson\""),
        "{e}"
    );
    let e = Scenario::parse(&poisson("load = 0.3"), "t.toml").unwrap_err();
    assert!(e.message.contains("needs `cdf`"), "{e}");
    let ok = Scenario::parse(
        &poisson("cdf = \"websearch\"\nload = 0.3\nflow_count = 5"),
        "t.toml",
    )
    .expect("valid poisson traffic");
    assert!(matches!(&ok.traffic[0].pattern, TrafficCfg::Poisson(p) if p.load == 0.3));
    assert_eq!(ok.traffic[0].transport, None);
}

#[test]
fn syntax_error_has_a_line() {
    let e = Scenario::parse("seed = \n[topology", "x.toml").unwrap_err();
    assert!(e.to_string().contains("line"), "{e}");
}

const MP: &str = r#"
[topology]
kind = "testbed"
paths = 2
hosts_per_tor = 1
[transport]
kind = "mprdma"
[[flows]]
src = 0
dst = 1
bytes = 1000
"#;

/// Values the parser accepts but MP-RDMA cannot run are named, not
/// panics: an invalid Delta, and a verb MP-RDMA does not carry.
#[test]
fn mprdma_values_are_checked() {
    let p = Path::new("m.toml");
    let sc = Scenario::parse(MP, "m.toml").unwrap();
    assert!(build(&sc, p, None).is_ok());
    let bad = MP.replace("[[flows]]", "[transport.mprdma]\ndelta = 100\n[[flows]]");
    let e = Scenario::parse(&bad, "m.toml").expect_err("delta > l_slots is rejected");
    assert_eq!(e.key, "transport.mprdma", "{e}");
    assert!(e.message.contains("delta"), "{e}");
    let read = MP.replace("bytes = 1000", "bytes = 1000\nverb = \"read\"");
    let sc = Scenario::parse(&read, "m.toml").unwrap();
    let e = build(&sc, p, None)
        .err()
        .expect("READ over MP-RDMA is rejected");
    assert!(
        e.message
            .contains("\"mprdma\": the engine does not carry Read"),
        "{e}"
    );
}

/// An error's key path is found from where toml places it: the innermost
/// value or key there, through tables, arrays of tables and inline arrays.
#[test]
fn key_at_names_the_innermost_key_or_value() {
    use experiment::scenario::check::key_at;
    let text = "seed = 7\n[switch]\necn = [{ kmin = 1 }, { kmin = 22 }]\n[[flows]]\nsrc = 0\n[[flows]]\nbytes = \"x\"\n";
    let at = |s: &str| text.find(s).unwrap();
    assert_eq!(key_at(text, at("7")), "seed");
    assert_eq!(key_at(text, at("22")), "switch.ecn[1].kmin");
    assert_eq!(key_at(text, at("{ kmin = 22")), "switch.ecn[1]");
    assert_eq!(key_at(text, at("\"x\"")), "flows[1].bytes");
    assert_eq!(key_at(text, at("bytes")), "flows[1].bytes");
    assert_eq!(key_at(text, at("src")), "flows[0].src");
    assert_eq!(key_at(text, text.len()), "");
}

/// `transport.ns3_nic` sets the packet sizes itself: a size set beside it
/// is refused, naming the key.
#[test]
fn ns3_nic_refuses_sizes_of_its_own() {
    for extra in ["header_bytes = 40", "ack_bytes = 64"] {
        let text = OK.replace(
            "[[flows]]",
            &format!("[transport]\nns3_nic = true\n{extra}\n[[flows]]"),
        );
        let err = Scenario::parse(&text, "t.toml")
            .and_then(|sc| build::fabric_config(&sc, "t.toml"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("transport.ns3_nic"), "{err}");
    }
    let text = OK.replace("[[flows]]", "[transport]\nns3_nic = true\n[[flows]]");
    let sc = Scenario::parse(&text, "t.toml").unwrap();
    let cfg = build::fabric_config(&sc, "t.toml").unwrap();
    assert_eq!((cfg.nic.header_bytes, cfg.nic.ctrl_bytes), (36, 48));
}
