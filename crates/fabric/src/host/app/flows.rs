//! The flow lists as the application every fabric has
//! ([`AppId::FLOWS`]): adding flows (checked), the engines they may
//! choose, and the application (`Flows`, whose records `host/flows.rs`
//! holds): a flow starts at a fabric timer armed
//! when it is added (a QP at each end, or the pair its two hosts share
//! under `QpSharing::PerPeer`; its work requests posted) and finishes at
//! its last message's completion. Touches the flow records, the hosts'
//! NICs (checks only) and the event queues; starts flows through the
//! application context only.

use crate::config::FabricConfig;
use crate::host::app::{sport_of, App, AppId, HostCtx, QpSpec, Scope};
use crate::host::flows::{Flow, FlowResult, Flows};
use crate::host::Hosts;
use crate::net::event::Global;
use crate::net::window::Globals;
use crate::switch::lb::Balancer;
use engine::Time;
use transport::{Completion, CompletionSide, Engine, QpError, SendOptions, WorkRequest};

impl Flows {
    /// Starts flow `id`: its QP at each end, its work requests posted.
    fn start(&mut self, id: u32, ctx: &mut HostCtx) -> Result<(), QpError> {
        let r = self.records[id as usize];
        let (req, resp) = (r.requester(), r.responder());
        let key = (req, resp, r.flow.engine);
        let reuse = self.shared.as_ref().and_then(|m| m.get(&key).copied());
        let (req_qp, resp_qp) = match reuse {
            Some(pair) => pair,
            None => {
                let spec = QpSpec {
                    engine: match r.flow.engine {
                        0 => None,
                        i => Some(self.engines[i as usize - 1]),
                    },
                    sport: self.sports[id as usize],
                    tag: id,
                };
                let pair = ctx.connect(req, resp, spec)?;
                if let Some(m) = &mut self.shared {
                    m.insert(key, pair);
                }
                pair
            }
        };
        self.records[id as usize].requester_qp = req_qp;
        self.records[id as usize].responder_qp = resp_qp;
        // Message i's work request is `id | i << 32`: completions name the
        // flow and tell the last message apart.
        for i in 0..r.flow.messages {
            let len = r.flow.message_len(i);
            if r.flow.verb == transport::Verb::Send {
                ctx.post_recv(resp, resp_qp, id as u64, len)?;
            }
            let wr = WorkRequest {
                wr_id: id as u64 | (i as u64) << 32,
                verb: r.flow.verb,
                len,
                ..WorkRequest::default()
            };
            let opts = SendOptions {
                sync: r.flow.is_sync(i),
            };
            ctx.post_send(req, req_qp, wr, opts)?;
        }
        Ok(())
    }
}

impl App for Flows {
    /// Each flow's start is a fabric timer armed by `Network::add_flow`.
    fn on_start(&mut self, _now: Time, _ctx: &mut HostCtx) {}

    /// The requester's completion of a flow's last message finishes the
    /// flow.
    #[inline(always)]
    fn on_completion(&mut self, now: Time, _host: u32, c: Completion, _ctx: &mut HostCtx) {
        if c.side == CompletionSide::Requester {
            let f = &mut self.records[c.wr_id as u32 as usize];
            f.delivered += c.len;
            let last = (c.wr_id >> 32) as u16 + 1 == f.flow.messages;
            if last && f.finish.is_none() {
                f.finish = Some(now);
                self.done += 1;
                self.last_finish = self.last_finish.max(now);
            }
        }
    }

    /// Flow `token` starts. `add_flow` checked what the NICs could refuse:
    /// a flow refused anyway would not start, and the run would end
    /// without finishing it rather than panic.
    fn on_timer(&mut self, _now: Time, _scope: Scope, token: u64, ctx: &mut HostCtx) {
        let _ = self.start(token as u32, ctx);
    }
}

impl Hosts {
    /// The engines flows chose instead of their NICs' own.
    pub(crate) fn flow_engines(&self) -> &[Engine] {
        &self.flows.engines
    }

    /// Registers a engine flows can choose instead of their
    /// NICs' own; returns the value for `Flow::engine`.
    pub(crate) fn add_engine(&mut self, r: Engine) -> Result<u8, String> {
        r.validate()?;
        if let Some(i) = self.flows.engines.iter().position(|x| *x == r) {
            return Ok(i as u8 + 1);
        }
        if self.flows.engines.len() >= u8::MAX as usize {
            return Err("too many engines".into());
        }
        self.flows.engines.push(r);
        Ok(self.flows.engines.len() as u8)
    }

    /// Adds a flow; it starts at `flow.start`. Returns its id.
    pub(crate) fn add_flow(
        &mut self,
        flow: Flow,
        cfg: &FabricConfig,
        lb: &mut Balancer,
        (globals, now): (&mut Globals<Global>, Time),
        ideal: impl FnOnce() -> (Time, Time),
    ) -> Result<u32, String> {
        let h = self.nodes.len() as u32;
        if flow.src >= h || flow.dst >= h {
            return Err(format!(
                "flow from host {} to host {}: there are only {h} hosts",
                flow.src, flow.dst
            ));
        }
        if flow.src == flow.dst {
            return Err(format!("flow from host {} to itself", flow.src));
        }
        if flow.messages == 0 || flow.messages as u64 > flow.bytes {
            return Err(format!(
                "flow from host {} to host {}: {} messages for {} bytes (need 1..=bytes)",
                flow.src, flow.dst, flow.messages, flow.bytes
            ));
        }
        let engine = match flow.engine {
            0 => cfg.nic.engine,
            i => match self.flows.engines.get(i as usize - 1) {
                Some(&r) => r,
                None => {
                    return Err(format!(
                        "flow from host {} to host {}: no engine {i}",
                        flow.src, flow.dst
                    ))
                }
            },
        };
        // What the NIC would refuse to post (the first message is the
        // longest).
        let wr = WorkRequest {
            verb: flow.verb,
            len: flow.message_len(0),
            ..WorkRequest::default()
        };
        let mtu = self.nodes[flow.src as usize].nic.config().mtu;
        if let Err(e) = transport::check_work_request(&engine, &wr, mtu) {
            return Err(format!(
                "flow from host {} to host {} ({}): {e}",
                flow.src,
                flow.dst,
                engine.name()
            ));
        }
        let id = self.flows.records.len() as u32;
        if !self.flows.rx_bytes.is_empty() {
            self.flows.rx_bytes.push(0);
        }
        let sport = match lb.ns3() {
            Some(e) => {
                e.add_flow(flow.src, flow.dst);
                lb.ns3_sport(id).unwrap_or(0)
            }
            None => sport_of(cfg.seed, id as u64),
        };
        self.flows.sports.push(sport);
        let (ideal, ideal_exact) = ideal();
        self.flows.records.push(FlowResult {
            flow,
            finish: None,
            ideal,
            ideal_exact,
            requester_qp: u32::MAX,
            responder_qp: u32::MAX,
            delivered: 0,
        });
        globals.push(
            flow.start.max(now),
            Global::AppTimer(AppId::FLOWS, id as u64),
        );
        Ok(id)
    }
}
