//! The CPU tests' comparisons on candle's CUDA device (feature `cuda`, a GPU, its driver and
//! NVRTC): `cargo test -p scangen-candle --features cuda -- --ignored`.
#![cfg(feature = "cuda")]

mod common;

use candle_core::{Device, Tensor};

fn device() -> Device {
    Device::new_cuda(0).expect("a CUDA device for the ignored GPU tests")
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC"]
fn every_function_shape_layout_mode_and_dtype_matches_a_plain_loop_on_cuda(
) -> candle_core::Result<()> {
    let count = common::check_all(&device())?;
    assert!(count > 1000, "only {count} comparisons ran");
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC"]
fn large_scans_on_cuda_match_the_cpu() -> candle_core::Result<()> {
    let dev = device();
    for dims in [
        vec![1usize << 22],
        vec![64, 1 << 16],
        vec![1 << 16, 64],
        vec![8, 4096, 33],
    ] {
        let n: usize = dims.iter().product();
        let cpu = Tensor::from_vec(
            (0..n as u32)
                .map(|i| i.wrapping_mul(2654435761) >> 20)
                .collect(),
            &dims[..],
            &Device::Cpu,
        )?;
        let gpu = cpu.to_device(&dev)?;
        for dim in 0..dims.len() {
            let want = scangen_candle::cumsum(&cpu, dim)?
                .flatten_all()?
                .to_vec1::<u32>()?;
            let got = scangen_candle::cumsum(&gpu, dim)?
                .flatten_all()?
                .to_vec1::<u32>()?;
            assert!(got == want, "{dims:?} along {dim}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC"]
fn the_result_stays_on_candles_device_and_stream() -> candle_core::Result<()> {
    let dev = device();
    let t = Tensor::arange(0f32, 1024., &dev)?.reshape((32, 32))?;
    let s = scangen_candle::cumsum(&t, 1)?;
    assert!(s.device().same_device(&dev));
    // Used by candle's own kernels right after, on its stream.
    let total = (s.narrow(1, 31, 1)?.sum_all()?).to_scalar::<f32>()?;
    assert_eq!(total, (0..1024).map(|i| i as f32).sum::<f32>());
    Ok(())
}
