//! RCM's detection and control in the switch pipelines (see `mod.rs`):
//! CRD samples an output's queue and an input's queue as packets arrive
//! (`rcm_arrival`, from the VOQ model's ingress), sets the local flags,
//! cuts the output's congestion window, and sends notifications upstream
//! (`notify`) as control frames; `rcm_receive` applies one that arrived
//! (the remote flag, Fbr, the harmful flows, a window cut); `rcc_admits`
//! is RCC's gate at an output's crossbar, and `rcm_moved` sees each packet
//! pass into an output queue (CFR's sample, RCC's count). Touches RCM's
//! state, the ports' control-frame queues and the VOQ model's queues
//! (read only).

use crate::link::frame::{Ctrl, CtrlKind};
use crate::link::port::End;
use crate::net::arena::Hdr;
use crate::net::at::AtSwitch;
use crate::switch::queues::Discipline;
use crate::switch::rcm::{flow_id, Note};
use crate::switch::Switches;
use engine::Time;

/// The most harmful flows one notification names: what its count, a
/// byte, allows once the eight PFC classes are set aside (notifications
/// once travelled as PFC frames of class 8 and up; kept, so runs are
/// the same).
const MAX_IDS: usize = u8::MAX as usize - 8;

impl AtSwitch {
    /// A packet of the VOQ class joined the VOQ of input `in_port` (local
    /// `in_local`) toward output `o` at switch `s`: CRD samples the
    /// output's and the input's queues.
    #[inline(never)]
    pub(crate) fn rcm_arrival(
        &mut self,
        now: Time,
        s: u32,
        in_port: u32,
        in_local: usize,
        o: u32,
        hdr: Hdr,
    ) {
        let wire = hdr.wire() as i64;
        // The output's queue: its OQ (not the VOQs toward it, where RCC
        // itself holds the harmful flows).
        let q_out = self.sw().queues.voq().oq_bytes[o as usize];
        let d = &mut self.sw().rcm.ports[o as usize].out;
        d.left -= wire;
        if d.left <= 0 {
            let q_old = d.q_old;
            let fb = self.sw().rcm.degree(q_out, q_old);
            let next = self.sw().rcm.interval(fb);
            let d = &mut self.sw().rcm.ports[o as usize].out;
            d.q_old = q_out;
            d.fb = fb;
            d.congested = fb > 0;
            d.left = next;
            if fb > 0 {
                self.rcc_cut(now, o, fb);
            }
        }
        let q_in = self.sw().queues.voq().in_bytes[in_port as usize];
        let d = &mut self.sw().rcm.ports[in_port as usize].input;
        d.left -= wire;
        if d.left <= 0 {
            let q_old = d.q_old;
            let fb = self.sw().rcm.degree(q_in, q_old);
            let next = self.sw().rcm.interval(fb);
            let d = &mut self.sw().rcm.ports[in_port as usize].input;
            d.q_old = q_in;
            d.fb = fb;
            d.congested = fb > 0;
            d.left = next;
            self.notify(now, s, in_port, in_local);
        }
    }

    /// RCC: a congestion signal of degree `fb` at output `o` cuts its
    /// window, at most once per window span (W at the port's rate).
    fn rcc_cut(&mut self, now: Time, o: u32, fb: u32) {
        let window = self.sw().rcm.p.window as u32;
        let span = self.links().ports[o as usize].tx_time(window);
        let last = &mut self.sw().rcm.ports[o as usize].last_cut;
        if last.is_some_and(|t| now < t + span) {
            return;
        }
        *last = Some(now);
        // The largest data frame is RCC's least window.
        let min = self.cfg().max_frame();
        self.sw().rcm.cut(o, fb, min);
    }

    /// After a sample of input `in_port`'s queue: while it is congested,
    /// a notification upstream (at most one per `cn_interval`) with its
    /// degree (regional, when the outputs its harmful flows head to hold
    /// a downstream degree) and the harmful flows queued at it; once it is
    /// not, one clearing notification. Only toward a switch.
    fn notify(&mut self, now: Time, s: u32, in_port: u32, in_local: usize) {
        let End::Switch(..) = self.links().ports[in_port as usize].peer else {
            return;
        };
        let pc = &self.sw().rcm.ports[in_port as usize];
        let congested = pc.input.congested;
        if !congested && !pc.cn_congested {
            return;
        }
        if congested
            && pc
                .cn_sent_at
                .is_some_and(|t| now < t + self.sw().rcm.p.cn_interval)
        {
            return;
        }
        let mut note = Note::default();
        if congested {
            let w = self.sw().rcm.p.w;
            let (mut fbr, mut remote) = (0u32, false);
            let depth = self.sw().rcm.p.cam_depth as usize;
            let sw = self.sw();
            for &o in &sw.nodes[s as usize].ports {
                let oc = &sw.rcm.ports[o as usize];
                let voq = &sw.queues.voq().voqs[o as usize][in_local];
                if voq.is_empty() || !(oc.out.congested || oc.remote(now)) {
                    continue;
                }
                if oc.remote(now) {
                    remote = true;
                    fbr = fbr.max(oc.fbr);
                }
                for &id in oc.named(now) {
                    if note.ids.len() < depth.min(MAX_IDS)
                        && !note.ids.contains(&id)
                        && voq.iter().any(|h| flow_id(h) == id)
                    {
                        note.ids.push(id);
                    }
                }
            }
            let fb = self.sw().rcm.ports[in_port as usize].input.fb;
            note.fb = if remote {
                ((1.0 - w) * fb as f64 + w * fbr as f64).round() as u32
            } else {
                fb
            }
            .max(1);
        }
        let ctrl = Ctrl::new(CtrlKind::RcmNote {
            flows: note.ids.len() as u8,
        });
        let bytes = ctrl.wire_bytes(self.cfg().pfc_frame_bytes);
        let pc = &mut self.sw().rcm.ports[in_port as usize];
        pc.cn_sent_at = Some(now);
        pc.cn_congested = congested;
        let st = &mut self.sw().rcm.stats;
        st.notifications += 1;
        st.notification_bytes += bytes as u64;
        st.congested_notifications += congested as u64;
        self.sw().rcm.wire_notes[in_port as usize].push_back(note);
        self.links().ports[in_port as usize]
            .ctrl_out
            .push_back(ctrl);
        self.kick(now, in_port);
    }

    /// A notification sent by port `from` (the oldest of its queue)
    /// arrived on port `rx`, from the downstream neighbour: `rx`, as an output, takes the remote flag,
    /// Fbr and the harmful flows (the root's, replacing its CAM's), and
    /// cuts its window by the notified degree; a clearing one lifts the
    /// flag.
    #[cold]
    #[inline(never)]
    pub(crate) fn rcm_receive(&mut self, now: Time, rx: u32, from: u32) {
        let note = self.sw().rcm.wire_notes[from as usize]
            .pop_front()
            .expect("a notification frame has its content");
        if !self.sw().rcm.on || !matches!(self.links().ports[rx as usize].owner, End::Switch(..)) {
            return;
        }
        let timeout = self.sw().rcm.p.remote_timeout;
        let pc = &mut self.sw().rcm.ports[rx as usize];
        if note.fb == 0 {
            pc.remote_until = 0;
            pc.notes = 0;
            pc.fbr = 0;
        } else {
            if !pc.remote(now) {
                pc.notes = 0;
                pc.remote_ids.clear();
            }
            pc.notes += 1;
            pc.fbr = note.fb;
            pc.remote_until = now + timeout;
            // The episode's named flows together: one notification names
            // the flows then above their even share of the root's CAM,
            // and a flow at about its share drops in and out of it.
            for id in note.ids {
                if !pc.remote_ids.contains(&id) {
                    pc.remote_ids.push(id);
                }
            }
            let rcm = &mut self.sw().rcm;
            rcm.ever_harmful
                .extend(rcm.ports[rx as usize].remote_ids.iter().copied());
            self.rcc_cut(now, rx, note.fb);
        }
        // The crossbar may move what the window held.
        if matches!(self.sw().queues.discipline, Discipline::Voq(_)) {
            self.voq_fill(now, rx);
        }
    }

    /// RCC at output `o`'s crossbar: whether the VOQ head `hdr` may move
    /// into the output queue ahead of the others. A harmful flow's packet
    /// waits once the harmful flows have moved Wc in the window; the
    /// crossbar still moves it when no other flow's packet is waiting
    /// (RCC raises the other flows' priority; it never idles the port).
    #[inline]
    pub(crate) fn rcc_admits(&mut self, now: Time, o: u32, hdr: &Hdr) -> bool {
        let pc = &self.sw().rcm.ports[o as usize];
        if !pc.controlling {
            return true;
        }
        pc.win_c_sent + hdr.wire() as u64 <= pc.wc || !pc.is_harmful(now, flow_id(hdr))
    }

    /// RCC held the harmful packet `hdr` at output `o` while another
    /// flow's moved: counted once per packet.
    pub(crate) fn rcc_held(&mut self, now: Time, o: u32, hdr: &Hdr) {
        self.sw().rcm.ports[o as usize].win_held = true;
        let slot = hdr.idx as usize;
        if self.sw().rcm.held.len() <= slot {
            self.sw().rcm.held.resize(slot + 1, false);
        }
        if !self.sw().rcm.held[slot] {
            self.sw().rcm.held[slot] = true;
            let id = flow_id(hdr);
            if !self.sw().rcm.ports[o as usize].is_harmful(now, id) {
                self.sw().rcm.not_harmful_holds += 1;
            }
            self.sw().rcm.throttled.insert(id);
        }
    }

    /// A packet moved into output `o`'s queue: CFR may sample it, RCC
    /// counts it. A window ends once it has moved W bytes; if it passed
    /// no harmful packet over, or the output is congested neither locally
    /// nor remotely, Wc grows back toward W (control ends at W).
    #[inline]
    pub(crate) fn rcm_moved(&mut self, now: Time, o: u32, hdr: &Hdr) {
        let wire = hdr.wire() as u64;
        let frame = self.cfg().max_frame();
        self.sw().rcm.cam_sample(o, flow_id(hdr), wire, frame);
        let slot = hdr.idx as usize;
        if self.sw().rcm.held.get(slot).copied().unwrap_or(false) {
            self.sw().rcm.held[slot] = false;
            self.sw().rcm.stats.throttled_packets += 1;
            self.sw().rcm.stats.throttled_bytes += wire;
        }
        let window = self.sw().rcm.p.window;
        let pc = &mut self.sw().rcm.ports[o as usize];
        let harmful = pc.is_harmful(now, flow_id(hdr));
        pc.moved(wire, harmful, hdr.in_port);
        if pc.win_sent >= window {
            let calm = !pc.win_held || !(pc.out.congested || pc.remote(now));
            let grow = pc.controlling && calm;
            pc.next_window();
            if grow {
                let frame = self.cfg().max_frame();
                self.sw().rcm.grow(o, frame);
            }
        }
    }
}

impl Switches {
    /// What RCM did (None when off).
    pub(crate) fn rcm_stats(&self) -> Option<&crate::switch::rcm::RcmStats> {
        self.rcm.on.then_some(&self.rcm.stats)
    }

    /// Flow IDs (`flow << 32 | dst`) that were ever harmful somewhere, that
    /// RCC held back, and that SAR detoured (for tests; empty when off).
    pub(crate) fn rcm_audit(&self) -> [&std::collections::BTreeSet<u64>; 3] {
        [
            &self.rcm.ever_harmful,
            &self.rcm.throttled,
            &self.rcm.detoured,
        ]
    }

    /// Packets RCC held that were not harmful at their port then, and
    /// flows SAR moved that were harmful at their port (both 0 unless
    /// RCC or SAR is broken).
    pub(crate) fn rcm_violations(&self) -> (u64, u64) {
        (self.rcm.not_harmful_holds, self.rcm.harmful_detours)
    }
}
