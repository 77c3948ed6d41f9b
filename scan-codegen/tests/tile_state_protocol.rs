//! The single-pass kernel's device-side launch state (ARCHITECTURE.md, "Launch rules"), modelled
//! on the CPU: claim + reset, and the stale-status sweep that makes the epoch wrap safe with no
//! host involvement. The model follows `ScanTileState::claim` / `sweep_stale` in
//! scan-codegen/templates/look_back.cu.tera step for step; the GPU tests (scan-runtime/tests/graphs.rs) run
//! the real kernels across the wrap.

/// The tile state as the protocol sees it: the launch word, the sweep cursor and each slot's
/// status epoch (0 = cleared or never written).
struct TileState {
    launch_word: u64,
    sweep_cursor: u64,
    slot_epoch: Vec<u32>,
}

impl TileState {
    fn new(slots: usize) -> TileState {
        TileState {
            launch_word: 0,
            sweep_cursor: 0,
            slot_epoch: vec![0; slots],
        }
    }

    /// One launch of `num_tiles` tiles; returns the slots (below `num_tiles`) that held this
    /// launch's epoch before it wrote them: statuses a look-back would take as current.
    fn launch(&mut self, num_tiles: u64, max_epoch: u32, sweep: bool) -> Vec<u64> {
        let slots = self.slot_epoch.len() as u64;
        assert!(num_tiles >= 1 && num_tiles <= slots);
        // claim(): every block's atomicAdd, in order; the last one resets.
        let mut epoch = 0;
        for expected_tile in 0..num_tiles {
            let word = self.launch_word;
            self.launch_word += 1;
            let tile = word as u32 as u64;
            assert_eq!(tile, expected_tile, "tile ids are 0, 1, ... in claim order");
            let previous = (word >> 32) as u32;
            epoch = if previous >= max_epoch {
                1
            } else {
                previous + 1
            };
            if tile + 1 == num_tiles {
                self.launch_word = u64::from(epoch) << 32;
            }
        }
        let stale: Vec<u64> = (0..num_tiles)
            .filter(|&s| self.slot_epoch[s as usize] == epoch)
            .collect();
        // Every tile publishes this epoch.
        for s in 0..num_tiles {
            self.slot_epoch[s as usize] = epoch;
        }
        if sweep {
            // sweep_stale(), run by tile 0's warp.
            let per_launch = (slots + u64::from(max_epoch) - 2) / (u64::from(max_epoch) - 1);
            let cursor = self.sweep_cursor % slots;
            for j in 0..per_launch {
                let mut slot = cursor + j;
                if slot >= slots {
                    slot -= slots;
                }
                if slot >= num_tiles {
                    self.slot_epoch[slot as usize] = 0;
                }
            }
            let next = cursor + per_launch;
            self.sweep_cursor = if next >= slots { next - slots } else { next };
        }
        stale
    }
}

/// A deterministic generator of launch sizes: mostly small grids, now and then the whole state.
struct Sizes(u64);

impl Sizes {
    fn next(&mut self, slots: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = self.0 >> 33;
        if r.is_multiple_of(5) {
            slots - r % 2
        } else {
            1 + r % 3.min(slots)
        }
        .max(1)
    }
}

fn run(slots: usize, max_epoch: u32, launches: usize, sweep: bool, seed: u64) -> Vec<String> {
    let mut state = TileState::new(slots);
    let mut sizes = Sizes(seed);
    let mut problems = Vec::new();
    for l in 0..launches {
        let n = sizes.next(slots as u64);
        let stale = state.launch(n, max_epoch, sweep);
        if !stale.is_empty() {
            problems.push(format!(
                "launch {l} ({n} tiles): slots {stale:?} held its epoch"
            ));
        }
    }
    problems
}

#[test]
fn no_status_from_an_earlier_launch_ever_reads_as_current() {
    for slots in [1usize, 2, 3, 7, 64, 257] {
        for max_epoch in [2u32, 3, 4, 5, 8, 31] {
            for seed in 0..4 {
                let problems = run(slots, max_epoch, 4000, true, seed);
                assert!(
                    problems.is_empty(),
                    "slots={slots} max_epoch={max_epoch} seed={seed}: {}",
                    problems[0]
                );
            }
        }
    }
}

#[test]
fn without_the_sweep_stale_statuses_do_read_as_current() {
    // The model (and the sizes it draws) can show the failure the sweep prevents: a large launch
    // writes slots that small launches never reach, and the epoch comes round again.
    let problems = run(64, 4, 4000, false, 1);
    assert!(!problems.is_empty());
}

#[test]
fn claims_reset_for_the_next_launch_and_epochs_cycle() {
    let mut state = TileState::new(16);
    let mut epochs = Vec::new();
    for n in [16, 1, 5, 16, 2, 3, 9] {
        state.launch(n, 3, true);
        assert_eq!(state.launch_word as u32, 0, "the claim count is reset");
        epochs.push((state.launch_word >> 32) as u32);
    }
    assert_eq!(epochs, [1, 2, 3, 1, 2, 3, 1], "1..=max_epoch, never 0");
}

#[test]
fn the_default_epoch_period_sweeps_a_few_slots_per_launch() {
    // With 30 bits of epoch, even a state for 2^31 tiles is swept with 3 slots per launch.
    let max = u64::from(scan_codegen::TuningPolicy::MAX_EPOCH);
    let per_launch = |slots: u64| (slots + max - 2) / (max - 1);
    assert_eq!(per_launch(1), 1);
    assert_eq!(per_launch(1 << 20), 1);
    assert_eq!(per_launch((1 << 31) - 1), 3);
}
