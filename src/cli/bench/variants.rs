//! `scangen bench --variants`: batched rows and columns, by-key, by-flags, by-offsets and reverse scans,
//! each timed (CUDA events, median) beside a device copy that moves the same bytes in the same
//! run: every byte the scan reads and writes counts (values in and out, keys, flags, offsets),
//! and the copy moves half of them in and half out.

use super::gpu::{driver, sample_buffer, time};
use super::report::median;
use super::sample::Sample;
use super::BenchArgs;
use crate::cli::typed_ops::AffineCompose;
use scan_core::PrimType;
use scangen::builtin::Add;
use scangen::runtime::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use scangen::runtime::{
    DeviceSegments, Gpu, OffsetWidth, ScanError, ScanExtras, ScanOptions, Scanner, Segments,
};
use scangen::{ScanOp, TuningPolicy};
use std::sync::Arc;

/// One measured case.
pub struct VariantRow {
    pub case: String,
    pub ty: String,
    pub bytes: u64,
    pub scan_ms: f64,
    pub copy_ms: f64,
}

/// The rows x cols shapes of the segmented issue's table (2^28 elements in all at log2n 28).
fn row_shapes(log2n: u32) -> Vec<(u64, u64)> {
    [0u32, 4, 8, 14, 20, 24]
        .iter()
        .filter(|&&r| r <= log2n)
        .map(|&r| (1u64 << r, 1u64 << (log2n - r)))
        .collect()
}

pub fn run(
    args: &BenchArgs,
    log2n: u32,
) -> Result<(String, Vec<VariantRow>), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    // Event tracking would be timed as part of each scan (see gpu.rs).
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let n = 1u64 << log2n;
    let mut rows = Vec::new();
    let shapes = args
        .shapes
        .iter()
        .map(|s| parse_shape(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ctx = Bench {
        cases: args.cases.clone(),
        shapes,
        gpu: &gpu,
        stream: &stream,
        warmup: args.warmup,
        reps: args.reps,
        copy_src: None,
        copy_dst: None,
    };
    ctx.types::<Add<i32>>("i32", n, &mut rows)?;
    ctx.types::<Add<f32>>("f32", n, &mut rows)?;
    ctx.types::<AffineCompose>("affine (8 B)", n, &mut rows)?;
    Ok((gpu.backend_name(), rows))
}

struct Bench<'a> {
    cases: Vec<String>,
    shapes: Vec<Shape>,
    gpu: &'a Gpu,
    stream: &'a Arc<CudaStream>,
    warmup: usize,
    reps: usize,
    copy_src: Option<CudaSlice<u8>>,
    copy_dst: Option<CudaSlice<u8>>,
}

impl Bench<'_> {
    /// Whether --cases asks for this kind of case (every kind when it lists none).
    fn wants(&self, kind: &str) -> bool {
        self.cases.is_empty() || self.cases.iter().any(|c| c == kind)
    }

    /// The scanners to time a `segments` case with: its default launch shape (no label), then
    /// every --shapes one (labelled ` [THREADSxITEMSxBLOCKS]`).
    fn scanners<O: ScanOp>(
        &self,
        segments: Segments,
    ) -> Result<Vec<(String, Scanner<O>)>, ScanError>
    where
        O::Elem: DeviceRepr,
    {
        let options = ScanOptions::default().segmented(segments);
        let mut all = vec![(String::new(), self.gpu.scanner::<O>(options)?)];
        for shape in &self.shapes {
            let default = TuningPolicy::for_variant(
                self.gpu.sm(),
                scangen::Algorithm::SinglePass,
                std::mem::size_of::<O::Elem>(),
                std::mem::align_of::<O::Elem>(),
                scan_codegen::ScanVariant::FLAT.segments(segments),
            );
            let policy = TuningPolicy {
                block_threads: shape.threads,
                items_per_thread: shape.items,
                min_blocks_per_sm: shape.blocks,
                offset_reads: shape.offset_reads.unwrap_or(default.offset_reads),
                l2_prefetch_tiles: shape.l2_prefetch_tiles.unwrap_or(default.l2_prefetch_tiles),
                ..default
            };
            let scanner = self.gpu.scanner::<O>(options.policy(policy))?;
            all.push((format!(" [{}]", shape.label), scanner));
        }
        Ok(all)
    }

    fn types<O: ScanOp>(
        &mut self,
        ty: &str,
        n: u64,
        rows: &mut Vec<VariantRow>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        O::Elem: Sample + DeviceRepr,
    {
        let elem = std::mem::size_of::<O::Elem>() as u64;
        let input: CudaSlice<O::Elem> = sample_buffer(self.stream, n)?;
        let mut output: CudaSlice<O::Elem> = sample_buffer(self.stream, n)?;
        let values = 2 * n * elem;
        let mut push = |case: String, bytes: u64, (scan_ms, copy_ms): (f64, f64)| {
            rows.push(VariantRow {
                case,
                ty: ty.into(),
                bytes,
                scan_ms,
                copy_ms,
            })
        };

        // Flat forward and reverse, for reference.
        for (name, opts) in [
            ("flat", ScanOptions::default()),
            ("reverse", ScanOptions::default().reverse()),
        ] {
            if !self.wants(name) {
                continue;
            }
            let mut s = self.gpu.scanner::<O>(opts)?;
            let t = self.time::<O>(&mut s, &input, &mut output, values, ScanExtras::new)?;
            push(name.into(), values, t);
        }

        // Batched rows (cumsum(dim=-1)) and columns (cumsum(dim=0)) of the same shapes.
        for (kind, segments) in [
            ("rows", Segments::Rows { strided: false }),
            ("columns", Segments::Columns),
        ] {
            if !self.wants(kind) {
                continue;
            }
            for (label, mut scanner) in self.scanners::<O>(segments)? {
                for (r, c) in row_shapes(n.trailing_zeros()) {
                    let t = self.time::<O>(&mut scanner, &input, &mut output, values, || {
                        let shape = match segments {
                            Segments::Columns => DeviceSegments::columns(r, c, c),
                            _ => DeviceSegments::rows(r, c, c),
                        };
                        ScanExtras::new().segments(shape)
                    })?;
                    push(format!("{kind} {r} x {c}{label}"), values, t);
                }
            }
        }
        if !(self.wants("keys") || self.wants("flags") || self.wants("offsets")) {
            return Ok(());
        }

        // By key (i32 keys, runs of random length, mean 64) and by flags at the same heads.
        let heads = random_heads(n, 64);
        let keys: Vec<i32> = {
            let mut k = 0i32;
            heads
                .iter()
                .map(|&h| {
                    k = k.wrapping_add(h as i32);
                    k
                })
                .collect()
        };
        let d_keys = self
            .stream
            .clone_htod(&keys)
            .map_err(|e| driver("keys", e))?;
        let d_flags = self
            .stream
            .clone_htod(&heads)
            .map_err(|e| driver("flags", e))?;
        if self.wants("keys") {
            let bytes = values + 4 * n;
            for (label, mut scanner) in self.scanners::<O>(Segments::Keys(PrimType::I32))? {
                let t = self.time::<O>(&mut scanner, &input, &mut output, bytes, || {
                    ScanExtras::new().segments(DeviceSegments::keys(&d_keys))
                })?;
                push(format!("by key (i32 keys, mean run 64){label}"), bytes, t);
            }
        }
        if self.wants("flags") {
            let bytes = values + n;
            for (label, mut scanner) in self.scanners::<O>(Segments::Flags)? {
                let t = self.time::<O>(&mut scanner, &input, &mut output, bytes, || {
                    ScanExtras::new().segments(DeviceSegments::flags(&d_flags))
                })?;
                push(format!("by flags (u8, mean run 64){label}"), bytes, t);
            }
        }
        drop((d_keys, d_flags));

        // By offsets: 2^10 .. 2^24 segments of random lengths.
        if !self.wants("offsets") {
            return Ok(());
        }
        let mut by_offsets = self.scanners::<O>(Segments::Offsets(OffsetWidth::U64))?;
        for log_m in [10u32, 14, 18, 22, 24] {
            let m = 1u64 << log_m;
            if m >= n {
                continue;
            }
            let offsets = random_offsets(n, m);
            let d_off = self
                .stream
                .clone_htod(&offsets)
                .map_err(|e| driver("offsets", e))?;
            let bytes = values + 8 * offsets.len() as u64;
            for (label, scanner) in &mut by_offsets {
                let t = self.time::<O>(scanner, &input, &mut output, bytes, || {
                    ScanExtras::new().segments(DeviceSegments::offsets(&d_off))
                })?;
                push(format!("offsets, 2^{log_m} segments{label}"), bytes, t);
            }
        }
        Ok(())
    }

    /// Median ms of the scan and of a copy of `bytes / 2` bytes, alternating.
    fn time<'e, O: ScanOp>(
        &mut self,
        scanner: &mut Scanner<O>,
        input: &CudaSlice<O::Elem>,
        output: &mut CudaSlice<O::Elem>,
        bytes: u64,
        extras: impl Fn() -> ScanExtras<'e, O::Elem>,
    ) -> Result<(f64, f64), ScanError>
    where
        O::Elem: DeviceRepr,
    {
        let half = (bytes / 2) as usize;
        let have = self.copy_src.as_ref().map_or(0, |b| b.len());
        if have < half {
            self.copy_src = None;
            self.copy_dst = None;
            self.copy_src = Some(
                self.stream
                    .alloc_zeros(half)
                    .map_err(|e| driver("copy", e))?,
            );
            self.copy_dst = Some(
                self.stream
                    .alloc_zeros(half)
                    .map_err(|e| driver("copy", e))?,
            );
        }
        let stream = self.stream.clone();
        let src = self.copy_src.as_ref().unwrap().slice(0..half);
        let mut dst = self.copy_dst.as_mut().unwrap().slice_mut(0..half);
        for _ in 0..self.warmup {
            scanner.scan_device_with(&stream, input, output, extras())?;
        }
        let (mut scan_ms, mut copy_ms) = (Vec::new(), Vec::new());
        for _ in 0..self.reps.max(1) {
            scan_ms.push(time(&stream, || {
                scanner.scan_device_with(&stream, input, output, extras())
            })?);
            copy_ms.push(time(&stream, || {
                stream
                    .memcpy_dtod(&src, &mut dst)
                    .map_err(|e| driver("device copy", e))
            })?);
        }
        Ok((median(&mut scan_ms), median(&mut copy_ms)))
    }
}

/// A launch shape asked for with --shapes.
struct Shape {
    label: String,
    threads: u32,
    items: u32,
    blocks: u32,
    /// Offsets entries a thread reads per round of marking ([`TuningPolicy::offset_reads`]).
    offset_reads: Option<u32>,
    /// Tiles ahead of its own that a block asks L2 for ([`TuningPolicy::l2_prefetch_tiles`]).
    l2_prefetch_tiles: Option<u32>,
}

/// `THREADSxITEMSxBLOCKS` (e.g. `256x32x2`: blocks per SM the register cap allows), optionally
/// `xREADS` (offsets entries a thread reads per round of marking heads), then optionally `pTILES`
/// (the L2 prefetch distance; `p0` turns it off), as in `128x64x5x6p48`.
fn parse_shape(s: &str) -> Result<Shape, String> {
    let bad = || format!("--shapes: `{s}` is not THREADSxITEMSxBLOCKS[xREADS][pTILES]");
    let (dims, prefetch) = match s.split_once('p') {
        Some((dims, p)) => (dims, Some(p.trim().parse::<u32>().map_err(|_| bad())?)),
        None => (s, None),
    };
    let parts: Vec<u32> = dims
        .split('x')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let (threads, items, blocks, offset_reads) = match parts[..] {
        [t, i, b] => (t, i, b, None),
        [t, i, b, r] => (t, i, b, Some(r)),
        _ => return Err(bad()),
    };
    Ok(Shape {
        label: s.to_string(),
        threads,
        items,
        blocks,
        offset_reads,
        l2_prefetch_tiles: prefetch,
    })
}

/// 1 where a run starts (runs of 1 to 2 * mean - 1 elements), else 0; element 0 starts one.
fn random_heads(n: u64, mean: u64) -> Vec<u8> {
    let mut heads = vec![0u8; n as usize];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut p = 0u64;
    while p < n {
        heads[p as usize] = 1;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        p += 1 + state % (2 * mean - 1);
    }
    heads
}

/// `m` segments of random lengths covering [0, n): m + 1 ascending offsets from 0 to n.
fn random_offsets(n: u64, m: u64) -> Vec<u64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ m;
    let mut cuts: Vec<u64> = (1..m)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % (n + 1)
        })
        .collect();
    cuts.sort_unstable();
    let mut offsets = Vec::with_capacity(m as usize + 1);
    offsets.push(0);
    offsets.extend(cuts);
    offsets.push(n);
    offsets
}

pub fn to_table(rows: &[VariantRow]) -> String {
    let mut out = String::from(
        "| case | type | bytes moved | scan ms | copy ms | fraction of copy |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {:.2} GB | {:.3} | {:.3} | {:.3} |\n",
            r.case,
            r.ty,
            r.bytes as f64 / 1e9,
            r.scan_ms,
            r.copy_ms,
            r.copy_ms / r.scan_ms
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse_shape;

    #[test]
    fn shapes_take_optional_offset_reads_and_prefetch() {
        let plain = parse_shape("128x64x5").unwrap();
        assert_eq!((plain.threads, plain.items, plain.blocks), (128, 64, 5));
        assert_eq!(plain.offset_reads, None);
        let reads = parse_shape("256x32x2x4").unwrap();
        assert_eq!((reads.threads, reads.items, reads.blocks), (256, 32, 2));
        assert_eq!(reads.offset_reads, Some(4));
        assert_eq!(reads.label, "256x32x2x4");
        assert_eq!(reads.l2_prefetch_tiles, None);
        let prefetch = parse_shape("256x64x2p96").unwrap();
        assert_eq!((prefetch.blocks, prefetch.offset_reads), (2, None));
        assert_eq!(prefetch.l2_prefetch_tiles, Some(96));
        let both = parse_shape("128x64x5x6p0").unwrap();
        assert_eq!(
            (both.offset_reads, both.l2_prefetch_tiles),
            (Some(6), Some(0))
        );
        for bad in [
            "128x64",
            "128x64x5x4x1",
            "128xax5",
            "",
            "128x64x5p",
            "128x64x5pq",
            "p48",
        ] {
            assert!(parse_shape(bad).is_err(), "{bad}");
        }
    }
}
