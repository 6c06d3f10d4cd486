//! Applications that react: a closed loop of request/response rounds
//! (host A WRITEs a request to B; B's completion of it WRITEs the answer
//! back; A's completion of the answer starts the next round), timed on an
//! idle fabric against what its links allow, with a compute gap armed as
//! a host timer, beside flows, and two loops beside each other; QPs the
//! flows share still complete; the results do not depend on the window
//! loop's grouping; an application that acts outside its scope is
//! stopped.

use super::{App, AppId, HostCtx, QpSpec, Scope};
use crate::config::QpSharing;
use crate::host::flows::Flow;
use crate::net::{Network, RunState};
use crate::topo::topology::{NodeKind, Topology};
use crate::FabricConfig;
use engine::time::US;
use engine::Time;
use transport::{Completion, CompletionSide, SendOptions, Verb, WorkRequest};

const RATE: u64 = 100_000_000_000;
const DELAY: Time = US;

/// `hosts` hosts on one switch, each by a link of `RATE` and `DELAY`.
fn star(hosts: u32) -> Topology {
    let mut topo = Topology::default();
    let s = topo.add_node("s0".into(), NodeKind::Switch);
    for h in 0..hosts {
        let n = topo.add_node(format!("h{h}"), NodeKind::Host);
        topo.add_link(n, s, RATE, DELAY);
    }
    topo
}

/// Serialising `bytes` at `RATE`, in picoseconds.
fn ser(bytes: u64) -> Time {
    bytes * 8 * 1_000_000_000_000 / RATE
}

/// Request/response rounds between hosts `a` and `b` on a QP pair of
/// their own: `rounds` of them, each started `gap` after the last answer
/// (a host timer; at once if 0).
struct PingPong {
    a: u32,
    b: u32,
    rounds: usize,
    request: u64,
    answer: u64,
    gap: Time,
    qps: (u32, u32),
    /// When each round started and ended (A posted the request; A's
    /// completion of the answer).
    starts: Vec<Time>,
    ends: Vec<Time>,
    /// Completions seen: requester's at A, at B; responder's at A, at B.
    seen: [usize; 4],
}

impl PingPong {
    fn new(a: u32, b: u32, rounds: usize, gap: Time) -> PingPong {
        PingPong {
            a,
            b,
            rounds,
            request: 64,
            answer: 512,
            gap,
            qps: (u32::MAX, u32::MAX),
            starts: Vec::new(),
            ends: Vec::new(),
            seen: [0; 4],
        }
    }

    fn write(h: u32, qp: u32, len: u64, ctx: &mut HostCtx) {
        let wr = WorkRequest {
            wr_id: len,
            verb: Verb::Write,
            len,
            ..WorkRequest::default()
        };
        ctx.post_send(h, qp, wr, SendOptions::default()).unwrap();
    }

    fn ask(&mut self, now: Time, ctx: &mut HostCtx) {
        self.starts.push(now);
        PingPong::write(self.a, self.qps.0, self.request, ctx);
    }
}

impl App for PingPong {
    fn on_start(&mut self, now: Time, ctx: &mut HostCtx) {
        assert_eq!(ctx.scope(), Scope::Fabric);
        let spec = QpSpec {
            engine: None,
            sport: ctx.sport(1 << 40 | self.a as u64),
            tag: 7,
        };
        self.qps = ctx.connect(self.a, self.b, spec).unwrap();
        assert_eq!(ctx.tag(self.b, self.qps.1), Some(7));
        self.ask(now, ctx);
    }

    fn on_completion(&mut self, now: Time, host: u32, c: Completion, ctx: &mut HostCtx) {
        assert_eq!(ctx.scope(), Scope::Host(host));
        let at_a = host == self.a;
        assert!(at_a || host == self.b, "only its hosts");
        assert_eq!(c.qp, if at_a { self.qps.0 } else { self.qps.1 });
        let requester = c.side == CompletionSide::Requester;
        self.seen[usize::from(!requester) * 2 + usize::from(!at_a)] += 1;
        match (requester, at_a) {
            (true, _) => {}
            // B got the request: the answer goes back.
            (false, false) => {
                assert_eq!(c.len, self.request);
                PingPong::write(self.b, self.qps.1, self.answer, ctx)
            }
            // A got the answer: the round is over.
            (false, true) => {
                assert_eq!(c.len, self.answer);
                self.ends.push(now);
                if self.ends.len() == self.rounds {
                    ctx.finish();
                } else if self.gap > 0 {
                    ctx.arm(self.a, now + self.gap, self.ends.len() as u64);
                } else {
                    self.ask(now, ctx);
                }
            }
        }
    }

    fn on_timer(&mut self, now: Time, scope: Scope, token: u64, ctx: &mut HostCtx) {
        assert_eq!(scope, Scope::Host(self.a));
        assert_eq!(token, self.ends.len() as u64);
        assert_eq!(now, self.ends.last().unwrap() + self.gap);
        self.ask(now, ctx);
    }
}

fn flow(src: u32, dst: u32, bytes: u64, start: Time) -> Flow {
    Flow {
        src,
        dst,
        bytes,
        start,
        verb: Verb::Write,
        class: 0,
        engine: 0,
        messages: 1,
        sync_per_10k: 0,
    }
}

/// Runs to the end (which must be `Done`).
fn run(net: &mut Network) {
    assert_eq!(net.run_until(Time::MAX, u64::MAX), RunState::Done);
    net.check_conservation().unwrap();
}

/// What a round takes at least on the idle star: each message
/// serialised at the sender and at the switch, and two link delays; and
/// what the acknowledgements may add: each host may send the ACK of the
/// message it just received before its own (60 bytes each).
fn round_trip(p: &PingPong) -> (Time, Time) {
    let header = 48;
    let one_way = |len: u64| 2 * (ser(len + header) + DELAY);
    (one_way(p.request) + one_way(p.answer), 2 * ser(60))
}

#[test]
fn closed_loop_rounds_take_their_round_trips() {
    let mut net = Network::new(star(2), FabricConfig::default()).unwrap();
    let rounds = 50;
    let id = net
        .add_app(Box::new(PingPong::new(0, 1, rounds, 0)), 0)
        .unwrap();
    assert_eq!(id, AppId(1));
    run(&mut net);
    let p = net.app::<PingPong>(id).unwrap();
    assert_eq!(p.ends.len(), rounds);
    // Every completion, to this app; the run ends with the last round,
    // before the ACK of the last answer reaches B.
    assert_eq!(p.seen, [rounds, rounds - 1, rounds, rounds]);
    let (min, slack) = round_trip(p);
    for (i, (s, e)) in p.starts.iter().zip(&p.ends).enumerate() {
        let took = e - s;
        assert!(
            took >= min && took <= min + slack,
            "round {i}: {took} ps, {min} at least"
        );
    }
    // Each round starts when the one before ends: the loop is closed.
    assert_eq!(p.starts[1..], p.ends[..rounds - 1]);
    let total = *p.ends.last().unwrap();
    assert!(total >= rounds as Time * min && total <= rounds as Time * (min + slack));
    assert_eq!(net.now(), total, "the run ends with the last round");
    // Planned open-loop, the same requests all go at once: the rounds'
    // total is far from that (one round and the requests' serialisation).
    let mut open = Network::new(star(2), FabricConfig::default()).unwrap();
    for _ in 0..rounds {
        open.add_flow(flow(0, 1, p.request, 0)).unwrap();
    }
    run(&mut open);
    assert!(open.now() < min + rounds as Time * ser(p.request + 48 + 60));
    assert!(total > 20 * open.now());
}

#[test]
fn a_host_timer_spaces_the_rounds() {
    let mut net = Network::new(star(2), FabricConfig::default()).unwrap();
    let (rounds, gap) = (20, 5 * US);
    let id = net
        .add_app(Box::new(PingPong::new(0, 1, rounds, gap)), 3 * US)
        .unwrap();
    run(&mut net);
    let p = net.app::<PingPong>(id).unwrap();
    assert_eq!(p.ends.len(), rounds);
    assert_eq!(p.starts[0], 3 * US, "the app starts when asked");
    let (min, slack) = round_trip(p);
    for i in 1..rounds {
        assert_eq!(p.starts[i], p.ends[i - 1] + gap, "round {i} after the gap");
    }
    for (s, e) in p.starts.iter().zip(&p.ends) {
        // The answer's ACK left A during the gap.
        assert!(e - s >= min && e - s <= min + slack / 2, "{}", e - s);
    }
    let total = p.ends[rounds - 1] - p.starts[0];
    let r = rounds as Time;
    assert!(total >= r * min + (r - 1) * gap && total <= r * (min + slack) + (r - 1) * gap);
}

/// Two loops and flows on one fabric, the flows sharing QPs per peer
/// (one of them with a loop's hosts): every completion reaches its own
/// application, the flows finish, and the run ends when all are done.
#[test]
fn loops_and_flows_share_a_fabric() {
    let cfg = FabricConfig {
        qp_sharing: QpSharing::PerPeer,
        ..FabricConfig::default()
    };
    let mut net = Network::new(star(6), cfg).unwrap();
    let rounds = 30;
    let one = net
        .add_app(Box::new(PingPong::new(0, 1, rounds, 0)), 0)
        .unwrap();
    let ids: Vec<u32> = [(2, 3), (2, 3), (4, 5), (2, 3), (0, 1), (4, 1)]
        .iter()
        .enumerate()
        .map(|(i, &(s, d))| net.add_flow(flow(s, d, 200_000, i as Time * US)).unwrap())
        .collect();
    let two = net
        .add_app(Box::new(PingPong::new(5, 4, rounds, US)), 2 * US)
        .unwrap();
    run(&mut net);
    assert_eq!(net.flows_done(), ids.len());
    assert!(net.flows().iter().all(|f| f.finish.is_some()));
    // The three flows from 2 to 3 share one QP pair.
    let qps: Vec<_> = [0, 1, 3].map(|i| net.flows()[i].requester_qp).to_vec();
    assert_eq!(qps, [qps[0]; 3]);
    assert_eq!(net.nic(2).num_qps(), 1);
    // Host 0: the loop's QP and the flow's.
    assert_eq!(net.nic(0).num_qps(), 2);
    let last = net.flows().iter().filter_map(|f| f.finish).max().unwrap();
    for id in [one, two] {
        let p = net.app::<PingPong>(id).unwrap();
        assert_eq!(p.ends.len(), rounds);
        assert!(p.seen[1] >= rounds - 1);
        assert_eq!([p.seen[0], p.seen[2], p.seen[3]], [rounds; 3]);
        let (min, _) = round_trip(p);
        for (s, e) in p.starts.iter().zip(&p.ends) {
            assert!(e - s >= min);
        }
        assert!(net.now() >= *p.ends.last().unwrap());
    }
    assert!(net.now() >= last);
    assert_eq!(
        net.now(),
        last.max(net.app::<PingPong>(one).unwrap().ends[rounds - 1])
            .max(net.app::<PingPong>(two).unwrap().ends[rounds - 1])
    );
}

/// A loop's host that also has a flow's QP: the loop's QP is numbered
/// after it, and each completion still reaches its owner.
#[test]
fn completions_go_by_qp_owner_not_work_request_id() {
    let mut net = Network::new(star(2), FabricConfig::default()).unwrap();
    // The flow's id (0) and message index make its wr_id 0; the loop's
    // requests have wr_id 64 and answers 512, and a received WRITE
    // completes with wr_id 0 at the responder.
    net.add_flow(flow(0, 1, 64, 0)).unwrap();
    let id = net.add_app(Box::new(PingPong::new(0, 1, 5, 0)), 0).unwrap();
    run(&mut net);
    assert_eq!(net.flows_done(), 1);
    let p = net.app::<PingPong>(id).unwrap();
    assert_eq!(p.qps, (1, 1));
    assert_eq!(p.seen, [5, 4, 5, 5]);
}

/// An application that posts at a host other than the one whose
/// completion it handles breaks the node locality the window loop relies
/// on: it is stopped.
#[test]
#[should_panic(expected = "post_send at host 0 from a call at host 1")]
fn posting_outside_the_scope_panics() {
    struct Stray(u32);
    impl App for Stray {
        fn on_start(&mut self, _now: Time, ctx: &mut HostCtx) {
            let spec = QpSpec {
                engine: None,
                sport: 1,
                tag: 0,
            };
            self.0 = ctx.connect(0, 1, spec).unwrap().0;
            PingPong::write(0, self.0, 100, ctx);
        }
        fn on_completion(&mut self, _now: Time, _host: u32, _c: Completion, ctx: &mut HostCtx) {
            PingPong::write(0, self.0, 100, ctx);
        }
        fn on_timer(&mut self, _now: Time, _scope: Scope, _token: u64, _ctx: &mut HostCtx) {}
    }
    let mut net = Network::new(star(2), FabricConfig::default()).unwrap();
    net.add_app(Box::new(Stray(0)), 0).unwrap();
    net.run_until(Time::MAX, u64::MAX);
}

/// A QP pair needs two hosts: an application that connects a host to
/// itself is stopped, not given two QPs that name the wrong peers.
#[test]
#[should_panic(expected = "connect from host 1 to host 1: two distinct hosts below 2")]
fn connecting_a_host_to_itself_panics() {
    struct Loopback;
    impl App for Loopback {
        fn on_start(&mut self, _now: Time, ctx: &mut HostCtx) {
            let spec = QpSpec {
                engine: None,
                sport: 1,
                tag: 0,
            };
            let _ = ctx.connect(1, 1, spec);
        }
        fn on_completion(&mut self, _now: Time, _host: u32, _c: Completion, _ctx: &mut HostCtx) {}
        fn on_timer(&mut self, _now: Time, _scope: Scope, _token: u64, _ctx: &mut HostCtx) {}
    }
    let mut net = Network::new(star(2), FabricConfig::default()).unwrap();
    net.add_app(Box::new(Loopback), 0).unwrap();
    net.run_until(Time::MAX, u64::MAX);
}

/// Loops, a compute gap and flows give the same run whatever the window
/// loop's grouping: windows of one picosecond (the global time order)
/// see the same rounds and finishes as the default's.
#[test]
fn applications_do_not_depend_on_windows() {
    let run_with = |window: Option<Time>| {
        let mut net = Network::new(star(4), FabricConfig::default()).unwrap();
        if let Some(ps) = window {
            net.set_window(ps);
        }
        let one = net
            .add_app(Box::new(PingPong::new(0, 1, 10, 0)), 0)
            .unwrap();
        let two = net
            .add_app(Box::new(PingPong::new(2, 1, 10, 2 * US)), US)
            .unwrap();
        for i in 0..4 {
            net.add_flow(flow(3, 1, 100_000, i * US)).unwrap();
        }
        run(&mut net);
        let finishes: Vec<_> = net.flows().iter().map(|f| f.finish).collect();
        let rounds = |id| {
            let p = net.app::<PingPong>(id).unwrap();
            (p.starts.clone(), p.ends.clone())
        };
        (finishes, rounds(one), rounds(two), net.now())
    };
    assert_eq!(run_with(None), run_with(Some(1)));
}
