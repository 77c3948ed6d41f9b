//! The engine's kernels by input size: one slot per size class (`InputShapes`) and per class's
//! twin for buffers off a vector boundary (`UnalignedTwins`), each a `SizedVariant` that holds
//! its key until a scan first takes it, then its module.

use crate::abi;
use crate::capture::Capture;
use crate::error::ScanError;
use crate::gpu::{Gpu, LoadedScan, ModuleKey};
use scan_codegen::InputSize;
use std::sync::Arc;

/// One `T` per extra input-size shape of a scan: their keys (`None`: no such shape for this
/// scan), then their variants.
pub(crate) struct InputShapes<T> {
    pub(crate) tiny: T,
    pub(crate) small: T,
    pub(crate) mid: T,
    pub(crate) few_waves: T,
    pub(crate) many_waves: T,
}

impl<T> InputShapes<T> {
    /// Each shape's `f`.
    pub(crate) fn map<U>(self, mut f: impl FnMut(T) -> U) -> InputShapes<U> {
        InputShapes {
            tiny: f(self.tiny),
            small: f(self.small),
            mid: f(self.mid),
            few_waves: f(self.few_waves),
            many_waves: f(self.many_waves),
        }
    }

    pub(crate) fn as_ref(&self) -> InputShapes<&T> {
        InputShapes {
            tiny: &self.tiny,
            small: &self.small,
            mid: &self.mid,
            few_waves: &self.few_waves,
            many_waves: &self.many_waves,
        }
    }

    /// The shape of size class `class` (`None` for large inputs: the default).
    pub(super) fn get(&self, class: InputSize) -> Option<&T> {
        match class {
            InputSize::Tiny => Some(&self.tiny),
            InputSize::Small => Some(&self.small),
            InputSize::Mid => Some(&self.mid),
            InputSize::FewWaves => Some(&self.few_waves),
            InputSize::ManyWaves => Some(&self.many_waves),
            InputSize::Large => None,
        }
    }

    /// [`Self::get`], mutably.
    pub(super) fn get_mut(&mut self, class: InputSize) -> Option<&mut T> {
        match class {
            InputSize::Tiny => Some(&mut self.tiny),
            InputSize::Small => Some(&mut self.small),
            InputSize::Mid => Some(&mut self.mid),
            InputSize::FewWaves => Some(&mut self.few_waves),
            InputSize::ManyWaves => Some(&mut self.many_waves),
            InputSize::Large => None,
        }
    }
}

/// One `T` per shape of a scan, the default's and the extra input-size shapes', for their twins
/// for buffers off a vector boundary (`TuningPolicy::unaligned_twin`).
pub(crate) struct UnalignedTwins<T> {
    pub(crate) default: T,
    pub(crate) sized: InputShapes<T>,
}

impl<T> UnalignedTwins<T> {
    /// The twin of the shape that serves size class `class`.
    pub(super) fn get(&self, class: InputSize) -> &T {
        self.sized.get(class).unwrap_or(&self.default)
    }

    /// [`Self::get`], mutably.
    pub(super) fn get_mut(&mut self, class: InputSize) -> &mut T {
        match self.sized.get_mut(class) {
            Some(twin) => twin,
            None => &mut self.default,
        }
    }
}

pub(super) enum SizedVariant {
    None,
    NotLoaded(Box<ModuleKey>),
    Loaded(Arc<LoadedScan>, u64),
}

impl SizedVariant {
    pub(super) fn new(key: Option<ModuleKey>) -> SizedVariant {
        key.map_or(SizedVariant::None, |k| SizedVariant::NotLoaded(Box::new(k)))
    }

    pub(super) fn exists(&self) -> bool {
        !matches!(self, SizedVariant::None)
    }

    /// Blocks per SM of the variant: its register cap as built, or before it is built the cap
    /// it asks for (`None`: no such variant).
    pub(super) fn blocks_per_sm(&self) -> Option<u32> {
        match self {
            SizedVariant::Loaded(loaded, _) => Some(loaded.generated.policy.min_blocks_per_sm),
            SizedVariant::NotLoaded(key) => Some(key.policy.min_blocks_per_sm),
            SizedVariant::None => None,
        }
    }

    /// The loaded variant and its tile where it can launch the grid of `n` elements
    /// (`holds`); `None` where it is not loaded or cannot.
    pub(super) fn holding(&self, n: u64) -> Option<(Arc<LoadedScan>, u64)> {
        match self {
            SizedVariant::Loaded(loaded, tile) if holds(loaded, *tile, n) => {
                Some((loaded.clone(), *tile))
            }
            _ => None,
        }
    }

    /// Loads the variant if it is not yet (not inside a capture: that is an error naming
    /// `prepare`, for an input of `n` elements).
    pub(super) fn load(&mut self, gpu: &Gpu, n: u64, capture: Capture) -> Result<(), ScanError> {
        if let SizedVariant::NotLoaded(key) = self {
            if capture == Capture::Active {
                return Err(ScanError::NotPreparedForCapture {
                    n,
                    needs: "its kernel loaded (a module load)".into(),
                });
            }
            let loaded = gpu.load((**key).clone())?;
            let tile = abi::tile_items(&loaded.generated);
            *self = SizedVariant::Loaded(loaded, tile);
        }
        Ok(())
    }
}

/// Whether a single-pass launch of `n` elements in tiles of `tile` suits `loaded`: any grid does
/// for claimed tiles, only one the GPU holds at once for resident ones
/// (`TuningPolicy::resident_tiles`).
pub(super) fn holds(loaded: &LoadedScan, tile: u64, n: u64) -> bool {
    !loaded.generated.policy.resident_tiles || n.div_ceil(tile) <= loaded.resident_blocks
}
