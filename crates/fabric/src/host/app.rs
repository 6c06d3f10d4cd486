//! The host application of the simulator: flows. Adding them (checked),
//! the engines they may choose, starting one (a QP at each end, or the
//! pair its two hosts share under `QpSharing::PerPeer`; its work requests
//! posted) and its completion. Touches the flow records and the NICs'
//! verbs API.

use crate::config::QpSharing;
use crate::host::flows::{Flow, FlowResult};
use crate::net::event::Global;
use crate::net::Network;
use engine::rng::stream_seed;
use engine::{StreamKind, Time};
use transport::{Completion, CompletionSide, Engine, QpConfig, QpError, SendOptions, WorkRequest};

impl Network {
    /// The engines flows chose instead of their NICs' own.
    pub fn flow_engines(&self) -> &[Engine] {
        &self.engines
    }

    /// Registers a engine flows can choose instead of their
    /// NICs' own; returns the value for `Flow::engine`.
    pub fn add_engine(&mut self, r: Engine) -> Result<u8, String> {
        r.validate()?;
        if let Some(i) = self.engines.iter().position(|x| *x == r) {
            return Ok(i as u8 + 1);
        }
        if self.engines.len() >= u8::MAX as usize {
            return Err("too many engines".into());
        }
        self.engines.push(r);
        Ok(self.engines.len() as u8)
    }

    /// The destination port of the flows under the ns-3 ECMP hash
    /// (`ecmp_hash = "ns3"`: the flow file's; 100 unless set); an error
    /// under any other hash.
    pub fn set_ns3_dport(&mut self, dport: u16) -> Result<(), String> {
        match self.lb.ns3() {
            Some(e) => {
                e.set_dport(dport);
                Ok(())
            }
            None => Err("the destination port is hashed only by the ns-3 ECMP hash".into()),
        }
    }

    /// Adds a flow; it starts at `flow.start`. Returns its id.
    pub fn add_flow(&mut self, flow: Flow) -> Result<u32, String> {
        let h = self.hosts.len() as u32;
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
            0 => self.cfg.nic.engine,
            i => match self.engines.get(i as usize - 1) {
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
        let mtu = self.hosts[flow.src as usize].nic.config().mtu;
        if let Err(e) = transport::check_work_request(&engine, &wr, mtu) {
            return Err(format!(
                "flow from host {} to host {} ({}): {e}",
                flow.src,
                flow.dst,
                engine.name()
            ));
        }
        let id = self.flows.len() as u32;
        if !self.flow_rx_bytes.is_empty() {
            self.flow_rx_bytes.push(0);
        }
        if let Some(e) = self.lb.ns3() {
            e.add_flow(flow.src, flow.dst);
        }
        let (ideal, ideal_exact) = self.ideal_fct(flow.src, flow.dst, flow.bytes);
        self.flows.push(FlowResult {
            flow,
            finish: None,
            ideal,
            ideal_exact,
            requester_qp: u32::MAX,
            responder_qp: u32::MAX,
        });
        self.globals
            .push(flow.start.max(self.now), Global::FlowStart(id));
        Ok(id)
    }

    /// Starts flow `id`: its QP at each end, its work requests posted.
    pub(crate) fn start_flow(&mut self, now: Time, id: u32) {
        // `add_flow` checked what the NICs could refuse: a flow refused
        // anyway would not start, and the run would end without finishing
        // it rather than panic.
        if self.open_flow(now, id).is_ok() {
            let req = self.flows[id as usize].requester();
            self.after_nic_input(now, req);
        }
    }

    fn open_flow(&mut self, now: Time, id: u32) -> Result<(), QpError> {
        let r = self.flows[id as usize];
        let (req, resp) = (r.requester(), r.responder());
        let sport = match self.lb.is_ns3() {
            true => self.lb.ns3_sport(id).unwrap_or(0),
            false => {
                49152 + (stream_seed(self.cfg.seed, StreamKind::Host, id as u64) % 16384) as u16
            }
        };
        let rel = match r.flow.engine {
            0 => None,
            i => Some(self.engines[i as usize - 1]),
        };
        let shared = self.cfg.qp_sharing == QpSharing::PerPeer;
        let key = (resp, r.flow.engine);
        let reuse = match shared {
            true => self.hosts[req as usize].shared.get(&key).copied(),
            false => None,
        };
        let resp_qp = self.hosts[resp as usize].qp_flow.len() as u32;
        // A QP on `host` toward `peer_qp` at `peer`, for this flow.
        let mut create = |host: u32, peer: u32, peer_qp: u32| {
            let h = &mut self.hosts[host as usize];
            let cfg = QpConfig {
                peer_host: peer,
                peer_qp,
                sport,
            };
            let qp = match rel {
                None => h.nic.create_qp(cfg),
                Some(rel) => {
                    let cc = h.nic.config().cc;
                    h.nic.create_qp_with(cfg, cc, rel)
                }
            }?;
            h.qp_flow.push(id);
            Ok::<_, QpError>(qp)
        };
        let (req_qp, resp_qp) = match reuse {
            Some(pair) => pair,
            None => {
                let req_qp = create(req, resp, resp_qp)?;
                let got = create(resp, req, req_qp)?;
                debug_assert_eq!(got, resp_qp);
                if shared {
                    self.hosts[req as usize]
                        .shared
                        .insert(key, (req_qp, resp_qp));
                }
                (req_qp, resp_qp)
            }
        };
        self.flows[id as usize].requester_qp = req_qp;
        self.flows[id as usize].responder_qp = resp_qp;
        // Message i's work request is `id | i << 32`: completions name the
        // flow and tell the last message apart.
        for i in 0..r.flow.messages {
            let len = r.flow.message_len(i);
            if r.flow.verb == transport::Verb::Send {
                self.hosts[resp as usize]
                    .nic
                    .post_recv(resp_qp, id as u64, len)?;
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
            self.hosts[req as usize]
                .nic
                .post_send_with(now, req_qp, wr, opts)?;
        }
        Ok(())
    }

    /// A work request completed at a host: the requester's completion of
    /// a flow's last message finishes the flow.
    #[inline(always)]
    pub(crate) fn complete(&mut self, now: Time, c: Completion) {
        if c.side == CompletionSide::Requester {
            let f = &mut self.flows[c.wr_id as u32 as usize];
            let last = (c.wr_id >> 32) as u16 + 1 == f.flow.messages;
            if last && f.finish.is_none() {
                f.finish = Some(now);
                self.flows_done += 1;
                self.last_finish = self.last_finish.max(now);
            }
        }
    }
}
