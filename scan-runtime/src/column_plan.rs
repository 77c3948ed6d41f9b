//! The launch shape of a column scan (`Segments::Columns`, scan-codegen/templates/columns.cu.tera):
//! how many adjacent columns a tile takes, and so how many rows, strips and chunks there are.
//! Chosen per call from the matrix's shape; the tile itself (threads x items) is the policy's.

use crate::error::ScanError;
use crate::launch_plan::{Buffer, Kernel, Launch, LaunchPlan, MAX_GRID_BLOCKS};

/// Tiles of one column scan: `tile_cols` (a power of two) adjacent columns of `tile_rows` rows;
/// `strips` tiles across the matrix, `chunks` down it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnShape {
    pub tile_cols_log2: u32,
    pub tile_rows: u64,
    pub strips: u64,
    pub chunks: u64,
}

/// Rows of a tile `2^w` columns wide: the block's threads split into groups per column when the
/// tile is narrower than the block, each thread's items into columns when it is wider.
fn tile_rows(w: u32, block_threads: u32, items: u32) -> u64 {
    let (threads, items) = (u64::from(block_threads), u64::from(items));
    let width = 1u64 << w;
    if width <= threads {
        threads / width * items
    } else {
        items / (width / threads)
    }
}

impl ColumnShape {
    /// The shape for `rows x cols` (both > 0). Tall matrices take the narrowest power of two
    /// that covers the columns, at most a warp (one look-back lane per column), so each column
    /// chain has as few links as possible; a matrix whose rows fit one tile needs no chain, and
    /// its tiles widen (up to a row per item) while the rows still fit, so a thread still moves
    /// all its items when there are few rows.
    pub fn new(rows: u64, cols: u64, block_threads: u32, items: u32) -> ColumnShape {
        let max_w = (block_threads * items).ilog2();
        let mut w = cols.clamp(1, 32).next_power_of_two().ilog2();
        if rows <= tile_rows(w, block_threads, items) {
            while w < max_w && (1u64 << w) < cols && rows <= tile_rows(w + 1, block_threads, items)
            {
                w += 1;
            }
        }
        let tile_rows = tile_rows(w, block_threads, items);
        ColumnShape {
            tile_cols_log2: w,
            tile_rows,
            strips: cols.div_ceil(1 << w),
            chunks: rows.div_ceil(tile_rows),
        }
    }

    pub fn tiles(&self) -> u64 {
        self.strips * self.chunks
    }

    /// Tile-state slots the launch uses: one per column of every tile when tiles chain down the
    /// rows; one chunk publishes nothing (the state still needs a slot for its sweep).
    pub fn slots(&self) -> u64 {
        if self.chunks > 1 {
            self.tiles() << self.tile_cols_log2
        } else {
            1
        }
    }

    /// At least the slots of any column scan of at most `n` elements (what `prepare(n)`
    /// reserves so a captured scan of any shape never allocates). A chained shape has tiles at
    /// most 32 columns wide and more rows than one tile: its strips cover fewer than twice the
    /// columns, its chunks fewer than twice the rows over a tile's, so it has fewer than
    /// 4 n / tile_rows(32) = 128 n / tile slots.
    pub fn slot_bound(n: u64, block_threads: u32, items: u32) -> u64 {
        let tile = u64::from(block_threads) * u64::from(items);
        128 * n.div_ceil(tile) + 32
    }

    /// The single launch of this shape over `rows x cols` elements.
    pub fn plan(&self, rows: u64, cols: u64) -> Result<LaunchPlan, ScanError> {
        let tiles = self.tiles();
        let n = rows * cols;
        if tiles > MAX_GRID_BLOCKS || self.slots() > u64::from(u32::MAX) {
            return Err(ScanError::TooLarge {
                n,
                blocks: tiles,
                max_blocks: MAX_GRID_BLOCKS.min(u64::from(u32::MAX) >> self.tile_cols_log2),
            });
        }
        Ok(LaunchPlan {
            launches: vec![Launch {
                kernel: Kernel::SinglePass,
                input: Buffer::Input,
                output: Buffer::Output,
                n,
                prefixes: None,
                grid: tiles as u32,
            }],
            level_lens: Vec::new(),
            single_pass_tiles: self.slots(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_matrix() {
        // i32 on sm_90: 256 threads x 32 items.
        let s = ColumnShape::new(1 << 24, 16, 256, 32);
        assert_eq!((s.tile_cols_log2, s.tile_rows, s.strips), (4, 512, 1));
        assert_eq!(s.chunks, (1 << 24) / 512);
        let s = ColumnShape::new(1 << 14, 1 << 14, 256, 32);
        assert_eq!(
            (s.tile_cols_log2, s.tile_rows, s.strips, s.chunks),
            (5, 256, 512, 64)
        );
        // Rows that fit one tile: wider tiles, no chain.
        let s = ColumnShape::new(16, 1 << 24, 256, 32);
        assert_eq!((s.tile_cols_log2, s.tile_rows, s.chunks), (9, 16, 1));
        assert_eq!(s.slots(), 1);
        let s = ColumnShape::new(1, 1 << 28, 256, 32);
        assert_eq!((s.tile_cols_log2, s.tile_rows, s.chunks), (13, 1, 1));
        let s = ColumnShape::new(256, 1 << 20, 256, 32);
        assert_eq!((s.tile_cols_log2, s.chunks), (5, 1));
        // One column.
        let s = ColumnShape::new(1000, 1, 256, 32);
        assert_eq!((s.tile_cols_log2, s.tile_rows, s.chunks), (0, 8192, 1));
        // A few columns and rows.
        let s = ColumnShape::new(3, 5, 256, 32);
        assert_eq!((s.tile_cols_log2, s.chunks), (3, 1));
    }

    #[test]
    fn the_bound_covers_every_chained_shape() {
        for (block, items) in [(256u32, 32u32), (256, 8), (256, 1), (128, 4)] {
            for rows in [2u64, 3, 31, 33, 100, 257, 1000, 4097, 70_000] {
                for cols in [1u64, 2, 3, 17, 31, 32, 33, 63, 65, 100, 1000] {
                    let s = ColumnShape::new(rows, cols, block, items);
                    let n = rows * cols;
                    assert!(
                        s.slots() <= ColumnShape::slot_bound(n, block, items),
                        "{rows} x {cols} ({block} x {items}): {s:?}"
                    );
                    // Every element is in exactly one tile.
                    assert!(s.strips << s.tile_cols_log2 >= cols);
                    assert!(s.chunks * s.tile_rows >= rows);
                    assert!(s.chunks == 1 || s.tile_cols_log2 <= 5);
                }
            }
        }
    }
}
