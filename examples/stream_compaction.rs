//! Stream compaction: keep the elements that pass a predicate, in order. An exclusive sum of the
//! 0/1 "keep" flags gives each kept element its output position.
//!
//! `cargo run --example stream_compaction`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::builtin::Add;
use scangen::runtime::{auto, ScanOptions};

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_000_033;
    let mut rng = StdRng::seed_from_u64(6);
    let data: Vec<i32> = (0..n).map(|_| rng.gen_range(-1000..1000)).collect();
    let keep = |x: i32| x % 7 == 0 || x > 900;

    let flags: Vec<u32> = data.iter().map(|&x| u32::from(keep(x))).collect();
    let mut scanner = auto::<Add<u32>>(ScanOptions::default().exclusive())?;
    println!("backend: {}", scanner.backend_name());
    let positions = scanner.scan(&flags)?;

    let kept = (positions[n - 1] + flags[n - 1]) as usize;
    let mut out = vec![0i32; kept];
    for i in 0..n {
        if flags[i] == 1 {
            out[positions[i] as usize] = data[i];
        }
    }
    let expected: Vec<i32> = data.iter().copied().filter(|&x| keep(x)).collect();
    assert_eq!(
        out, expected,
        "compacted stream differs from the sequential filter"
    );
    println!("kept {kept} of {n} elements, in order, verified");
    Ok(())
}
