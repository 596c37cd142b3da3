//! What a GFR network run reports [Goyal98, §5]: per-VC goodput over the measurement window,
//! excess over MCR, mean backbone occupancy, drops by CLP and by DFBA region, the occupancy
//! series, and totals for the conservation check and the benchmark.

use super::aal5::CELL_PAYLOAD;
use super::config::AtmConfig;
use super::network::Network;
use crate::engine::to_secs;
use serde::Serialize;

/// One VC's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct VcResult {
    pub name: String,
    pub tcps: u32,
    pub mcr_cells: f64,
    /// MCR in Mb/s of cell payload (MCR × 48 × 8), as the paper's tables state it.
    pub mcr_mbps: f64,
    /// End-to-end TCP goodput of all the VC's connections over the window, Mb/s.
    pub goodput_mbps: f64,
    pub excess_mbps: f64,
    pub excess_over_mcr: f64,
    /// Time-average of X_i at the backbone buffer over the window, cells.
    pub mean_occupancy: f64,
    pub frames: u64,
    pub tagged_frames: u64,
    pub cells_dropped_clp0: u64,
    pub cells_dropped_clp1: u64,
    pub packets_lost: u64,
    pub retransmits: u64,
    pub timeouts: u64,
}

/// Frames the backbone discipline refused, by VC, region (0: no regions; 1-4: DFBA) and CLP.
#[derive(Clone, Debug, Serialize)]
pub struct RefusedFrames {
    pub vc: String,
    pub region: u32,
    pub clp: u32,
    pub frames: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Occupancy {
    pub time: Vec<f64>,
    pub vc: Vec<u32>,
    pub cells: Vec<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AtmResults {
    pub vcs: Vec<VcResult>,
    pub refused: Vec<RefusedFrames>,
    pub occupancy: Occupancy,
    pub window_s: f64,
    pub total_goodput_mbps: f64,
    /// Cells that crossed the backbone link (the benchmark's cell count).
    pub backbone_cells: u64,
    pub cells_created: u64,
    pub events: u64,
}

/// Runs `config` to its end. Errors name a broken conservation law (a bug, not bad input).
pub fn run(config: &AtmConfig) -> Result<AtmResults, String> {
    let mut run = AtmRun::new(config);
    run.net.run();
    run.finish()
}

/// A cell-network run advanced in pieces of wall time ([`AtmRun::run_for`]), so that a caller
/// can look for Ctrl-C between them; [`run`] in one piece.
pub struct AtmRun<'a> {
    config: &'a AtmConfig,
    net: Network,
}

impl<'a> AtmRun<'a> {
    pub fn new(config: &'a AtmConfig) -> Self {
        AtmRun {
            config,
            net: Network::new(config),
        }
    }

    /// See [`Network::run_for`]: true once the run has reached its end.
    pub fn run_for(&mut self, wall: std::time::Duration) -> bool {
        self.net.run_for(wall)
    }

    /// How far the run has come: its clock and its end, in seconds.
    pub fn progress(&self) -> (f64, f64) {
        (to_secs(self.net.now), to_secs(self.net.end))
    }

    /// The results of a run that reached its end; errors name a broken conservation law.
    pub fn finish(self) -> Result<AtmResults, String> {
        check_conservation(&self.net)?;
        Ok(collect(self.config, &self.net))
    }
}

fn check_conservation(net: &Network) -> Result<(), String> {
    let c = net.counters;
    let cells_held = net.cells_in_network();
    if c.cells_created != c.cells_reassembled + c.cells_dropped + cells_held {
        return Err(format!(
            "cells: created {} != reassembled {} + dropped {} + in network {}",
            c.cells_created, c.cells_reassembled, c.cells_dropped, cells_held
        ));
    }
    let frames = net.frames_in_network();
    if c.packets_sent != c.packets_delivered + c.packets_lost + frames {
        return Err(format!(
            "packets: sent {} != delivered {} + lost {} + in network {}",
            c.packets_sent, c.packets_delivered, c.packets_lost, frames
        ));
    }
    for (i, p) in net.ports.iter().enumerate() {
        if p.arrivals != p.departures + p.drops + p.queue.len() as u64 {
            return Err(format!(
                "port {i}: arrivals {} != departures {} + drops {} + queued {}",
                p.arrivals,
                p.departures,
                p.drops,
                p.queue.len()
            ));
        }
    }
    Ok(())
}

fn collect(config: &AtmConfig, net: &Network) -> AtmResults {
    let (start, at_start) = net
        .samples
        .window_start
        .clone()
        .unwrap_or((net.end, vec![0; config.spec.vcs.len()]));
    let window_s = to_secs(net.end.saturating_sub(start));
    let now = net.received_by_vc();
    let occupancy = mean_occupancy(net, to_secs(start), config.spec.vcs.len());
    let vcs: Vec<VcResult> = config
        .spec
        .vcs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let bytes = now[i] - at_start[i];
            let goodput_mbps = if window_s > 0.0 {
                bytes as f64 * 8.0 / window_s / 1e6
            } else {
                0.0
            };
            let mcr_mbps = spec.mcr * CELL_PAYLOAD as f64 * 8.0 / 1e6;
            let counters = net.vc_counters[i];
            let (retransmits, timeouts) = tcp_totals(net, i);
            VcResult {
                name: spec.name.clone(),
                tcps: spec.tcps,
                mcr_cells: spec.mcr,
                mcr_mbps,
                goodput_mbps,
                excess_mbps: goodput_mbps - mcr_mbps,
                excess_over_mcr: (goodput_mbps - mcr_mbps) / mcr_mbps,
                mean_occupancy: occupancy[i],
                frames: counters.frames,
                tagged_frames: counters.tagged_frames,
                cells_dropped_clp0: counters.cells_dropped[0],
                cells_dropped_clp1: counters.cells_dropped[1],
                packets_lost: counters.packets_lost,
                retransmits,
                timeouts,
            }
        })
        .collect();
    AtmResults {
        total_goodput_mbps: vcs.iter().map(|v| v.goodput_mbps).sum(),
        refused: refused(config, net),
        occupancy: Occupancy {
            time: net.samples.time.clone(),
            vc: net.samples.vc.clone(),
            cells: net.samples.cells.clone(),
        },
        vcs,
        window_s,
        backbone_cells: net.counters.backbone_cells,
        cells_created: net.counters.cells_created,
        events: net.events_processed(),
    }
}

fn tcp_totals(net: &Network, vc: usize) -> (u64, u64) {
    net.flows
        .iter()
        .zip(&net.flow_vc)
        .filter(|(_, &v)| v == vc)
        .fold((0, 0), |(r, t), (s, _)| (r + s.retransmits, t + s.timeouts))
}

/// Mean of the samples at or after `start_s`, per VC.
fn mean_occupancy(net: &Network, start_s: f64, vcs: usize) -> Vec<f64> {
    let mut sum = vec![0.0; vcs];
    let mut count = vec![0u64; vcs];
    let s = &net.samples;
    for ((&t, &vc), &cells) in s.time.iter().zip(&s.vc).zip(&s.cells) {
        if t >= start_s {
            sum[vc as usize] += cells as f64;
            count[vc as usize] += 1;
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(&s, &c)| if c > 0 { s / c as f64 } else { 0.0 })
        .collect()
}

fn refused(config: &AtmConfig, net: &Network) -> Vec<RefusedFrames> {
    let mut out = Vec::new();
    for (vc, regions) in net.backbone_queue().refused().iter().enumerate() {
        for (region, by_clp) in regions.iter().enumerate() {
            for (clp, &frames) in by_clp.iter().enumerate() {
                if frames > 0 {
                    out.push(RefusedFrames {
                        vc: config.spec.vcs[vc].name.clone(),
                        region: region as u32,
                        clp: clp as u32,
                        frames,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(buffer: &str, tagging: bool) -> AtmConfig {
        let tagging = if tagging { "tagging = {}" } else { "" };
        let text = format!(
            "[simulation]\nduration = 0.6\nwarmup = 0.2\nseed = 3\nsample_interval = 0.01\n\
             [atm]\nstart_spread = 0.01\nbuffer = {buffer}\n{tagging}\n\
             [[atm.vcs]]\nname = \"low\"\nmcr = 20000\ntcps = 3\n\
             [[atm.vcs]]\nname = \"high\"\nmcr = 100000\ntcps = 3\n"
        );
        let scenario = crate::scenario::parse(&text, &[]).expect("valid");
        crate::scenario::atm::atm_config(&scenario).expect("valid")
    }

    #[test]
    fn a_run_in_pieces_of_wall_time_gives_the_results_of_one_run() {
        let config = small("{ kind = \"dfba\", limit = 3000 }", true);
        let whole = serde_json::to_string(&run(&config).expect("conserves")).unwrap();
        let mut pieces = AtmRun::new(&config);
        let mut calls = 0;
        while !pieces.run_for(std::time::Duration::ZERO) {
            calls += 1;
        }
        assert!(calls > 10, "paused every 4,096 events: {calls}");
        let paused = serde_json::to_string(&pieces.finish().expect("conserves")).unwrap();
        assert_eq!(whole, paused);
    }

    #[test]
    fn a_small_dfba_network_runs_conserves_and_fills_the_link() {
        let r = run(&small("{ kind = \"dfba\", limit = 3000 }", false)).expect("conserves");
        // 2 VCs of 3 SACK TCPs behind a 3000-cell buffer, 0.2 s after their start, use a good
        // part of the 128.9 Mb/s that 1460-byte segments in 32 cells allow, and never more.
        assert!(r.total_goodput_mbps > 40.0, "{}", r.total_goodput_mbps);
        assert!(r.total_goodput_mbps < 128.91, "{}", r.total_goodput_mbps);
        assert!(r.backbone_cells > 100_000);
        assert_eq!(r.vcs[0].name, "low");
        assert!(r.vcs.iter().all(|v| v.tagged_frames == 0));
    }

    #[test]
    fn same_seed_same_results() {
        let c = small("{ kind = \"dfba\", limit = 3000 }", false);
        let a = serde_json::to_string(&run(&c).expect("a")).expect("json");
        let b = serde_json::to_string(&run(&c).expect("b")).expect("json");
        assert_eq!(a, b);
    }

    #[test]
    fn every_discipline_conserves_cells_and_tagging_marks_frames() {
        for buffer in [
            "{ kind = \"fifo\", limit = 2000 }",
            "{ kind = \"epd\", limit = 2000 }",
            "{ kind = \"ppd\", limit = 2000 }",
            "{ kind = \"selective_drop\", limit = 2000 }",
            "{ kind = \"fba\", limit = 2000 }",
        ] {
            let r = run(&small(buffer, true)).expect(buffer);
            assert!(
                r.total_goodput_mbps > 50.0,
                "{buffer}: {}",
                r.total_goodput_mbps
            );
            assert!(r.vcs.iter().any(|v| v.tagged_frames > 0), "{buffer}");
        }
    }
}
