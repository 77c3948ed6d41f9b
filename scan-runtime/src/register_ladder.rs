//! Climbing the register ladder (`TuningPolicy::register_ladder`) with the later rungs compiled
//! side by side.
//!
//! A policy's register cap is a request: where ptxas has to spill to meet it, the runtime builds
//! the next rung, and takes the first that keeps no local memory (or the last rung). Compiled one
//! after another, a ladder costs one NVRTC compile per rung on an empty cache: 1-byte max and
//! products take 3 rungs at the default shape and 6 at the mid-size one, each a compile of 1 to
//! 2.6 s on an H200 host's core (BENCHMARKS.md, session 43). Only loading a module says whether a
//! rung spilled (NVRTC's log does not reliably carry ptxas's report), so the first rung is built
//! and loaded alone: most kernels fit it, and nothing is compiled for nothing. Once it has
//! spilled, the next rungs are compiled at once, `width` at a time (the caller passes
//! `compile::compile_threads`, `SCANGEN_COMPILE_THREADS`), and loaded in order: a byte max
//! scan's mid-size ladder took about three compiles of wall time rather than six. The policy
//! names the rung to try after each (`TuningPolicy::next_rung_to_try`): past a large spill it
//! passes over the rungs that only give up unaligned buffers' paths, which would spill too, so
//! the rung that fits is in the first batch.
//!
//! Building is the caller's (`build`: generate and compile, thread-safe); loading too (`load`:
//! module load on the calling thread, which holds the CUDA context, and the rung's local memory).
//! A rung's build error is returned only if the climb reaches that rung, as when rungs were built
//! one at a time.

use crate::error::ScanError;

/// A loaded rung and the local memory (bytes per thread) its kernels keep.
pub(crate) struct Loaded<L> {
    pub loaded: L,
    pub local_bytes: u32,
}

/// Climbs `rungs` (at least one): builds and loads the first; while the rung loaded keeps local
/// memory, `next` (given its index and local bytes) names a later rung to try, or none.
/// Where that rung is not built yet, it is built side by side with the rungs after it not built
/// yet, `width` in all, and the rungs are loaded in the order `next` names them. Returns the
/// last rung loaded (the first without local memory, unless `next` ran out), with its index.
pub(crate) fn climb<R, B, L>(
    rungs: &[R],
    width: usize,
    next: impl Fn(usize, u32) -> Option<usize>,
    build: impl Fn(&R) -> Result<B, ScanError> + Sync,
    mut load: impl FnMut(B) -> Result<Loaded<L>, ScanError>,
) -> Result<(usize, Loaded<L>), ScanError>
where
    R: Sync,
    B: Send,
{
    assert!(!rungs.is_empty(), "a register ladder has its first rung");
    let mut built: Vec<Option<Result<B, ScanError>>> = rungs.iter().map(|_| None).collect();
    let mut index = 0;
    let mut current = load(build(&rungs[0])?)?;
    while let Some(rung) = next(index, current.local_bytes).filter(|&rung| rung < rungs.len()) {
        debug_assert!(rung > index, "a ladder is climbed upwards");
        if built[rung].is_none() {
            let batch: Vec<usize> = (rung..rungs.len())
                .filter(|&later| built[later].is_none())
                .take(width.max(1))
                .collect();
            tracing::debug!(after = index, local_bytes = current.local_bytes, rungs = ?batch, "building rungs side by side");
            let results = build_all(
                &batch.iter().map(|&i| &rungs[i]).collect::<Vec<_>>(),
                &build,
            );
            for (i, result) in batch.into_iter().zip(results) {
                built[i] = Some(result);
            }
        }
        index = rung;
        current = load(built[rung].take().expect("built above")?)?;
    }
    Ok((index, current))
}

/// `build` of every rung, each on its own thread (the first on this one), in rung order.
fn build_all<R, B>(
    rungs: &[&R],
    build: &(impl Fn(&R) -> Result<B, ScanError> + Sync),
) -> Vec<Result<B, ScanError>>
where
    R: Sync,
    B: Send,
{
    let Some((&first, rest)) = rungs.split_first() else {
        return Vec::new();
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = rest
            .iter()
            .map(|&rung| scope.spawn(move || build(rung)))
            .collect();
        let mut built = vec![build(first)];
        built.extend(others.into_iter().map(|handle| match handle.join() {
            Ok(result) => result,
            // A panic in a build is a bug; carry it to the caller's thread as it would have
            // been raised there.
            Err(panic) => std::panic::resume_unwind(panic),
        }));
        built
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_codegen::CodegenError;
    use std::sync::Mutex;

    type Climbed = (Result<usize, String>, Vec<usize>, Vec<usize>);

    /// A ladder whose rung `i` keeps `spills[i]` local bytes, each rung followed by the next;
    /// records what was built and loaded.
    fn run(spills: &[u32], width: usize, broken: Option<usize>) -> Climbed {
        run_with(spills, width, broken, |rung, local| {
            (local > 0).then_some(rung + 1)
        })
    }

    /// `run`, with `next` naming the rung after each.
    fn run_with(
        spills: &[u32],
        width: usize,
        broken: Option<usize>,
        next: impl Fn(usize, u32) -> Option<usize>,
    ) -> Climbed {
        let rungs: Vec<usize> = (0..spills.len()).collect();
        let built = Mutex::new(Vec::new());
        let mut loaded = Vec::new();
        let result = climb(
            &rungs,
            width,
            next,
            |&rung| {
                built.lock().unwrap().push(rung);
                if Some(rung) == broken {
                    Err(ScanError::Codegen(CodegenError::InvalidPolicy(format!(
                        "rung {rung} does not build"
                    ))))
                } else {
                    Ok(rung)
                }
            },
            |rung| {
                loaded.push(rung);
                Ok(Loaded {
                    loaded: rung,
                    local_bytes: spills[rung],
                })
            },
        );
        let mut built = built.into_inner().unwrap();
        built.sort_unstable();
        let result = result
            .map(|(index, rung)| {
                assert_eq!(index, rung.loaded);
                index
            })
            .map_err(|e| e.to_string());
        (result, built, loaded)
    }

    #[test]
    fn a_first_rung_that_fits_is_the_only_one_built() {
        assert_eq!(run(&[0, 0, 0], 8, None), (Ok(0), vec![0], vec![0]));
        assert_eq!(run(&[0], 8, None), (Ok(0), vec![0], vec![0]));
    }

    #[test]
    fn after_a_spill_the_next_rungs_build_together_and_the_first_fit_wins() {
        // Rungs 1-3 built together; 2 fits, so 3 is built but never loaded, and 4 not built.
        assert_eq!(
            run(&[8, 4, 0, 0, 0], 3, None),
            (Ok(2), vec![0, 1, 2, 3], vec![0, 1, 2])
        );
        // One at a time, as before.
        assert_eq!(
            run(&[8, 4, 0, 0], 1, None),
            (Ok(2), vec![0, 1, 2], vec![0, 1, 2])
        );
    }

    #[test]
    fn a_ladder_that_spills_throughout_ends_on_its_last_rung() {
        assert_eq!(
            run(&[8, 8, 8, 8, 8], 2, None),
            (Ok(4), vec![0, 1, 2, 3, 4], vec![0, 1, 2, 3, 4])
        );
    }

    #[test]
    fn a_build_error_counts_only_where_the_climb_reaches_it() {
        // Rung 3 does not build, but rung 2 fits first.
        assert_eq!(
            run(&[8, 8, 0, 0], 8, Some(3)),
            (Ok(2), vec![0, 1, 2, 3], vec![0, 1, 2])
        );
        // Reached: its error is the climb's.
        let (result, _, loaded) = run(&[8, 8, 0], 8, Some(1));
        assert!(result.unwrap_err().contains("rung 1 does not build"));
        assert_eq!(loaded, vec![0]);
        // The first rung's error comes before anything else is built.
        assert_eq!(
            run(&[0, 0], 8, Some(0)).1,
            vec![0],
            "nothing past a first rung that fails"
        );
    }

    #[test]
    fn rungs_passed_over_are_neither_built_nor_loaded() {
        // Past a spill over 64 bytes, the rungs up to the next multiple of 4 are passed over (as
        // TuningPolicy::next_rung_to_try passes over rungs that only give up paths).
        let past_large = |rung: usize, local: u32| {
            (local > 0).then_some(if local > 64 {
                (rung / 4 + 1) * 4
            } else {
                rung + 1
            })
        };
        let spills = [124, 124, 144, 144, 8, 8, 8, 8, 8, 0, 0];
        assert_eq!(
            run_with(&spills, 8, None, past_large),
            (
                Ok(9),
                vec![0, 4, 5, 6, 7, 8, 9, 10],
                vec![0, 4, 5, 6, 7, 8, 9]
            )
        );
        // Two at a time: each batch starts at the rung named next.
        assert_eq!(
            run_with(&spills, 2, None, past_large),
            (Ok(9), vec![0, 4, 5, 6, 7, 8, 9], vec![0, 4, 5, 6, 7, 8, 9])
        );
        // A batch skips what it passes over; a jump inside a batch loads what was built.
        let spills = [8, 100, 8, 8, 0];
        assert_eq!(
            run_with(&spills, 8, None, past_large),
            (Ok(4), vec![0, 1, 2, 3, 4], vec![0, 1, 4])
        );
        // Nothing named past the last rung: the climb ends on the last one loaded.
        assert_eq!(
            run_with(&[100, 100, 100], 8, None, past_large),
            (Ok(0), vec![0], vec![0])
        );
    }
}
