//! What the runtime needs to know about a [`GeneratedScan`] to launch it (ARCHITECTURE.md,
//! "Kernel ABI"): one place, so the scanner never spells kernel names or layouts itself.

use scan_codegen::GeneratedScan;

pub const SINGLE_PASS_KERNEL: &str = GeneratedScan::SINGLE_PASS_KERNEL;
pub const REDUCE_TILES_KERNEL: &str = GeneratedScan::REDUCE_TILES_KERNEL;
pub const REDUCE_SPINE_KERNEL: &str = GeneratedScan::REDUCE_SPINE_KERNEL;
pub const SCAN_TILES_KERNEL: &str = GeneratedScan::SCAN_TILES_KERNEL;
pub const SCAN_SPINE_KERNEL: &str = GeneratedScan::SCAN_SPINE_KERNEL;

/// Elements per tile (one block's share).
pub fn tile_items(scan: &GeneratedScan) -> u64 {
    scan.tile_items()
}

/// Bytes of single-pass tile state for `num_tiles` tiles.
pub fn tile_state_bytes(scan: &GeneratedScan, num_tiles: u64) -> u64 {
    scan.tile_state_bytes(num_tiles)
}
