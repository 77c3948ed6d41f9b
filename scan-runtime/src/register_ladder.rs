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
//! scan's mid-size ladder took about three compiles of wall time rather than six.
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
/// memory and rungs remain, builds the next `width` side by side and loads them in order. Returns
/// the first rung loaded without local memory, else the last one, with its index.
pub(crate) fn climb<R, B, L>(
    rungs: &[R],
    width: usize,
    build: impl Fn(&R) -> Result<B, ScanError> + Sync,
    mut load: impl FnMut(B) -> Result<Loaded<L>, ScanError>,
) -> Result<(usize, Loaded<L>), ScanError>
where
    R: Sync,
    B: Send,
{
    assert!(!rungs.is_empty(), "a register ladder has its first rung");
    let mut current = load(build(&rungs[0])?)?;
    let mut index = 0;
    while current.local_bytes > 0 && index + 1 < rungs.len() {
        let next = &rungs[index + 1..rungs.len().min(index + 1 + width.max(1))];
        let built = build_all(next, &build);
        for result in built {
            index += 1;
            current = load(result?)?;
            if current.local_bytes == 0 {
                break;
            }
        }
    }
    Ok((index, current))
}

/// `build` of every rung, each on its own thread (the first on this one), in rung order.
fn build_all<R, B>(
    rungs: &[R],
    build: &(impl Fn(&R) -> Result<B, ScanError> + Sync),
) -> Vec<Result<B, ScanError>>
where
    R: Sync,
    B: Send,
{
    let Some((first, rest)) = rungs.split_first() else {
        return Vec::new();
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = rest
            .iter()
            .map(|rung| scope.spawn(move || build(rung)))
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

    /// A ladder whose rung `i` keeps `spills[i]` local bytes; records what was built and loaded.
    fn run(
        spills: &[u32],
        width: usize,
        broken: Option<usize>,
    ) -> (Result<usize, String>, Vec<usize>, Vec<usize>) {
        let rungs: Vec<usize> = (0..spills.len()).collect();
        let built = Mutex::new(Vec::new());
        let mut loaded = Vec::new();
        let result = climb(
            &rungs,
            width,
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
}
