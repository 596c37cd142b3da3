//! AAL5 segmentation and reassembly at the edge switches of a GFR network [Goyal98, §4].
//!
//! A frame is the IP packet plus the 8-byte AAL5 trailer (and, optionally, an 8-byte LLC/SNAP
//! header), padded to whole 48-byte payloads and sent as 53-byte cells; the last cell carries
//! end-of-message (EOM). Decisions (docs/models/aal5.md):
//! - The reassembler of a VC holds the frames segmented onto it in order; a cell of a later
//!   frame proves every earlier frame still pending lost (cells of one VC never overtake one
//!   another), so a frame with no surviving cell is discarded when the next one shows up.
//! - A frame is delivered when its EOM cell arrives and every one of its cells did; otherwise
//!   (a cell missing, the EOM lost) the whole packet is discarded: a lost packet to TCP.

use crate::net::packet::PacketId;
use std::collections::VecDeque;

/// Payload bytes of a cell.
pub const CELL_PAYLOAD: u32 = 48;
/// Bytes of a cell on the wire (5-byte header + 48-byte payload).
pub const CELL_BYTES: u32 = 53;
/// The AAL5 CPCS trailer.
pub const TRAILER: u32 = 8;
/// The LLC/SNAP encapsulation header of RFC 2684.
pub const LLC_SNAP: u32 = 8;

/// Cells needed to carry an IP packet of `ip_bytes`.
pub fn cells_for(ip_bytes: u32, llc_snap: bool) -> u32 {
    let pdu = ip_bytes + TRAILER + if llc_snap { LLC_SNAP } else { 0 };
    pdu.div_ceil(CELL_PAYLOAD)
}

/// A frame on its way through the cell network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    frame: u64,
    packet: PacketId,
    cells: u32,
    received: u32,
}

/// What a cell arrival did at the reassembler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reassembled {
    /// The packet whose frame this cell completed.
    pub delivered: Option<PacketId>,
    /// Packets whose frames are now known to be incomplete.
    pub lost: Vec<PacketId>,
}

/// The frames of one VC in one direction, oldest first.
#[derive(Default)]
pub struct Reassembler {
    pending: VecDeque<Pending>,
}

impl Reassembler {
    /// Records a frame just segmented onto the VC (frame numbers increase).
    pub fn segmented(&mut self, frame: u64, packet: PacketId, cells: u32) {
        self.pending.push_back(Pending {
            frame,
            packet,
            cells,
            received: 0,
        });
    }

    /// A cell of `frame` arrived at the egress edge.
    pub fn cell(&mut self, frame: u64, eom: bool) -> Reassembled {
        let mut out = Reassembled::default();
        while let Some(front) = self.pending.front() {
            if front.frame >= frame {
                break;
            }
            out.lost.push(front.packet);
            self.pending.pop_front();
        }
        let Some(front) = self.pending.front_mut() else {
            return out;
        };
        if front.frame != frame {
            return out;
        }
        front.received += 1;
        if eom {
            let done = self.pending.pop_front().expect("front exists");
            if done.received == done.cells {
                out.delivered = Some(done.packet);
            } else {
                out.lost.push(done.packet);
            }
        }
        out
    }

    /// Packets whose frames are still in the network.
    pub fn in_network(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_counts_include_trailer_padding_and_llc() {
        // 1500-byte IP packet: 1508 bytes -> 32 cells (1536 payload bytes), 1516 with LLC too.
        assert_eq!(cells_for(1500, false), 32);
        assert_eq!(cells_for(1500, true), 32);
        // 40-byte ACK: 48 bytes fit one cell exactly; LLC/SNAP pushes it to two.
        assert_eq!(cells_for(40, false), 1);
        assert_eq!(cells_for(40, true), 2);
        assert_eq!(cells_for(41, false), 2);
        // A 9180-byte MTU (RFC 2225): 9188 -> 192 cells.
        assert_eq!(cells_for(9180, false), 192);
    }

    #[test]
    fn a_whole_frame_is_delivered_at_its_eom() {
        let mut r = Reassembler::default();
        r.segmented(7, 70, 3);
        assert_eq!(r.cell(7, false), Reassembled::default());
        assert_eq!(r.cell(7, false), Reassembled::default());
        assert_eq!(r.cell(7, true).delivered, Some(70));
        assert_eq!(r.in_network(), 0);
    }

    #[test]
    fn a_missing_cell_or_a_lost_eom_loses_the_packet() {
        let mut r = Reassembler::default();
        r.segmented(1, 10, 3);
        r.segmented(2, 20, 2);
        r.segmented(3, 30, 1);
        r.segmented(4, 40, 2);
        // Frame 1 lost its middle cell.
        r.cell(1, false);
        let out = r.cell(1, true);
        assert_eq!((out.delivered, out.lost), (None, vec![10]));
        // Frame 2 lost its EOM; frame 3 lost every cell; a cell of frame 4 shows both.
        r.cell(2, false);
        let out = r.cell(4, false);
        assert_eq!((out.delivered, out.lost), (None, vec![20, 30]));
        assert_eq!(r.cell(4, true).delivered, Some(40));
    }
}
