//! Running a built scenario to its end, with a progress callback, and
//! collecting the results every output is made from.

use crate::build::Built;
use engine::time::SEC;
use engine::Time;
use fabric::{Counters, FlowResult, Network, RunState};
use std::time::Instant;

/// Progress seen by the callback every few hundred thousand events.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time: Time,
    pub events: u64,
    pub flows_done: usize,
    pub flows: usize,
}

/// What a finished run left behind.
pub struct Outcome {
    pub net: Network,
    pub classes: Vec<String>,
    pub state: RunState,
    pub end_time: Time,
    /// Wall-clock seconds of the event loop (not written to files: outputs
    /// must be identical run to run).
    pub loop_wall_s: f64,
}

const CHUNK: u64 = 200_000;

pub fn run(built: Built, mut progress: impl FnMut(Progress)) -> Outcome {
    let Built {
        mut net,
        classes,
        stop,
    } = built;
    let until = stop.unwrap_or(Time::MAX);
    let t0 = Instant::now();
    let state = loop {
        let s = net.run_until(until, CHUNK);
        progress(Progress {
            sim_time: net.now(),
            events: net.counters.events,
            flows_done: net.flows_done(),
            flows: net.flows().len(),
        });
        if s != RunState::Budget {
            break s;
        }
    };
    let loop_wall_s = t0.elapsed().as_secs_f64();
    let end_time = match state {
        RunState::TimeLimit => until,
        _ => net.now(),
    };
    Outcome {
        net,
        classes,
        state,
        end_time,
        loop_wall_s,
    }
}

impl Outcome {
    pub fn counters(&self) -> &Counters {
        &self.net.counters
    }

    pub fn flows(&self) -> &[FlowResult] {
        self.net.flows()
    }

    /// Goodput of a finished flow in bits per second (payload over FCT).
    pub fn goodput_bps(f: &FlowResult) -> Option<f64> {
        f.fct()
            .map(|t| f.flow.bytes as f64 * 8.0 * SEC as f64 / t.max(1) as f64)
    }
}
