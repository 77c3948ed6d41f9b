//! Every function against a plain loop on candle's CPU device (feature `candle`):
//! `cargo test -p scangen-candle --features candle`.
#![cfg(feature = "candle")]

mod common;

use candle_core::{DType, Device, Tensor};
use common::{check_all, Func};
use scangen_candle::ScanOpts;

#[test]
fn every_function_shape_layout_mode_and_dtype_matches_a_plain_loop() -> candle_core::Result<()> {
    let count = check_all(&Device::Cpu)?;
    assert!(count > 1000, "only {count} comparisons ran");
    Ok(())
}

#[test]
fn a_dtype_the_operator_does_not_scan_is_an_error_naming_both() {
    let t = Tensor::new(&[1f32, 2.0], &Device::Cpu).unwrap();
    let err = scangen_candle::scan::<common::LastNonZero, _>(&t, 0, ScanOpts::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("U32") && err.contains("F32"), "{err}");
}

#[test]
fn unsupported_dtypes_and_dims_are_errors() {
    let t = Tensor::new(&[1u8, 2], &Device::Cpu).unwrap();
    let err = scangen_candle::cumsum(&t, 0).unwrap_err().to_string();
    assert!(err.contains("cumsum") && err.contains("U8"), "{err}");
    let t = Tensor::new(&[1u32, 2], &Device::Cpu).unwrap();
    let err = scangen_candle::logcumsumexp(&t, 0).unwrap_err().to_string();
    assert!(err.contains("float"), "{err}");
    assert!(scangen_candle::cumsum(&t, 1).is_err());
}

#[test]
fn agrees_with_candles_own_cumsum() -> candle_core::Result<()> {
    let t = Tensor::arange(0f32, 24., &Device::Cpu)?.reshape((2, 3, 4))?;
    for dim in 0..3 {
        let ours = scangen_candle::cumsum(&t, dim)?;
        let theirs = t.cumsum(dim)?;
        assert_eq!(
            ours.flatten_all()?.to_vec1::<f32>()?,
            theirs.flatten_all()?.to_vec1::<f32>()?
        );
    }
    Ok(())
}

#[test]
fn logcumsumexp_does_not_overflow() -> candle_core::Result<()> {
    let t = Tensor::new(&[1000f64, 1000., -1000., 1000.], &Device::Cpu)?;
    let l = scangen_candle::logcumsumexp(&t, 0)?.to_vec1::<f64>()?;
    let ln3 = 3f64.ln();
    for (got, want) in l
        .iter()
        .zip([1000., 1000. + 2f64.ln(), 1000. + 2f64.ln(), 1000. + ln3])
    {
        assert!((got - want).abs() < 1e-9, "{l:?}");
    }
    // An exclusive scan starts from log 0.
    let e = scangen_candle::logcumsumexp_with(&t.to_dtype(DType::F32)?, 0, ScanOpts::exclusive())?;
    assert_eq!(e.to_vec1::<f32>()?[0], f32::NEG_INFINITY);
    Ok(())
}

#[test]
fn last_non_zero_is_order_sensitive() -> candle_core::Result<()> {
    let t = Tensor::new(&[0u32, 3, 0, 0, 5, 0], &Device::Cpu)?;
    let f = Func::LastNonZero;
    assert_eq!(
        f.run(&t, 0, ScanOpts::default())?.to_vec1::<u32>()?,
        [0, 3, 3, 3, 5, 5]
    );
    assert_eq!(
        f.run(&t, 0, ScanOpts::default().reverse())?
            .to_vec1::<u32>()?,
        [3, 3, 5, 5, 5, 0]
    );
    Ok(())
}
