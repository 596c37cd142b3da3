//! Bytes the TCP options add to a segment: the timestamps option (RFC 7323 §3, 10 bytes) and
//! the SACK option (RFC 2018 §3, 2 + 8 bytes per block), the total padded to a multiple of 4
//! as the header's data offset counts 32-bit words (RFC 9293 §3.1). ns-3's `TcpHeader` pads
//! the same way; Linux pads each option with NOPs, which gives the same totals (12, 12 + 8n).
//!
//! The option space is 40 bytes, so with timestamps at most 3 SACK blocks fit (RFC 2018 §3).

/// Length of the timestamps option.
const TIMESTAMPS: u32 = 10;
/// Kind and length bytes of the SACK option, and each block.
const SACK_BASE: u32 = 2;
const SACK_BLOCK: u32 = 8;
/// Maximum option space in a TCP header.
const OPTION_SPACE: u32 = 40;

/// Option bytes of a segment with the timestamps option (or not) and `sack_blocks` blocks.
pub fn option_bytes(timestamps: bool, sack_blocks: usize) -> u32 {
    let ts = if timestamps { TIMESTAMPS } else { 0 };
    let sack = match sack_blocks as u32 {
        0 => 0,
        n => SACK_BASE + SACK_BLOCK * n,
    };
    (ts + sack).div_ceil(4) * 4
}

/// The most SACK blocks that fit beside the timestamps option (or not), at most `configured`.
pub fn sack_block_limit(timestamps: bool, configured: usize) -> usize {
    let ts = if timestamps { TIMESTAMPS } else { 0 };
    let fit = ((OPTION_SPACE - ts - SACK_BASE) / SACK_BLOCK) as usize;
    configured.min(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_padded_to_words_and_fit_the_option_space() {
        assert_eq!(option_bytes(false, 0), 0);
        assert_eq!(option_bytes(true, 0), 12);
        assert_eq!(option_bytes(false, 1), 12);
        assert_eq!(option_bytes(false, 4), 36);
        assert_eq!(option_bytes(true, 1), 20);
        assert_eq!(option_bytes(true, 3), 36);
        assert_eq!(sack_block_limit(false, 4), 4);
        assert_eq!(sack_block_limit(true, 4), 3);
        assert_eq!(sack_block_limit(true, 2), 2);
    }
}
