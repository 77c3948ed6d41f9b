//! `lift` and `project` run by the evaluator, and the transform-scan built on them: what
//! `scangen scan --file` runs for an operator that declares either, on any machine, and a
//! reference for the GPU's fused kernels that reads the same Rust the lowering read.

use super::bytes;
use super::error::{self, EvalError};
use super::interp::Flow;
use super::value::{Target, Value};
use super::{EvalOp, Runner};
use scan_core::PrimType;

/// The layout of one value the evaluator reads or writes (an input array's value, an output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueLayout {
    /// Bytes per value (`repr(C)`).
    pub size: usize,
    /// The primitive, when the value is one (`None` for structs, arrays and `bool`).
    pub prim: Option<PrimType>,
}

impl ValueLayout {
    fn of(t: &Target) -> ValueLayout {
        ValueLayout {
            size: t.size(),
            prim: match t {
                Target::Prim(p) => Some(*p),
                _ => None,
            },
        }
    }
}

impl EvalOp {
    /// Whether the operator declares `lift` or `project` (else it scans its elements as
    /// stored).
    pub fn has_transform(&self) -> bool {
        self.prog.lift.is_some() || self.prog.project.is_some()
    }

    /// Whether the operator declares `lift` (its inputs are then not its elements).
    pub fn has_lift(&self) -> bool {
        self.prog.lift.is_some()
    }

    /// The target of each input array's values: `lift`'s inputs, or the element.
    fn input_targets(&self) -> Result<Vec<Target>, EvalError> {
        match &self.prog.lift {
            None => Ok(vec![self.prog.elem.clone()]),
            Some(lift) => {
                let Runner { interp, frame } = &mut self.runner();
                lift.inputs
                    .iter()
                    .map(|(_, ty)| interp.target(frame, ty, lift.body.span))
                    .collect::<Result<_, Flow>>()
                    .map_err(flow_error)
            }
        }
    }

    /// The output's target: what `project` returns, or the element.
    fn output_target(&self) -> Result<Target, EvalError> {
        match &self.prog.project {
            None => Ok(self.prog.elem.clone()),
            Some(project) => {
                let Runner { interp, frame } = &mut self.runner();
                interp
                    .target(frame, &project.output, project.body.span)
                    .map_err(flow_error)
            }
        }
    }

    /// The layout of each input array's values (one array of elements without `lift`).
    pub fn input_layouts(&self) -> Result<Vec<ValueLayout>, EvalError> {
        Ok(self.input_targets()?.iter().map(ValueLayout::of).collect())
    }

    /// The layout of an output value (the element without `project`).
    pub fn output_layout(&self) -> Result<ValueLayout, EvalError> {
        Ok(ValueLayout::of(&self.output_target()?))
    }

    /// `lift(values…, index)` into `out` (an element): one value's bytes per input array.
    pub fn lift_into(&self, values: &[&[u8]], index: u64, out: &mut [u8]) -> Result<(), EvalError> {
        let targets = self.input_targets()?;
        self.lift_with(&mut self.runner(), &targets, values, index, out)
    }

    /// [`EvalOp::lift_into`] in `runner` (a scan reuses one for every element), with `lift`'s
    /// input targets.
    fn lift_with<'a>(
        &'a self,
        runner: &mut Runner<'a>,
        targets: &[Target],
        values: &[&[u8]],
        index: u64,
        out: &mut [u8],
    ) -> Result<(), EvalError> {
        check_sizes(targets, values)?;
        let Some(lift) = &self.prog.lift else {
            // No lift: the one input array holds elements.
            out.copy_from_slice(values[0]);
            return Ok(());
        };
        let frame = runner.start();
        // `targets` and `values` are one per input (`check_sizes`).
        for (k, (name, _)) in lift.inputs.iter().enumerate() {
            if let Some(name) = name {
                frame.bind(name, bytes::decode(&targets[k], values[k], 0));
            }
        }
        if let Some(name) = &lift.index {
            frame.bind(name, Value::Int(PrimType::U64, i128::from(index)));
        }
        let v = self.run(runner, &lift.body)?;
        self.store(v, out)
    }

    /// `project(element)` into `out` (an output value).
    pub fn project_into(&self, element: &[u8], out: &mut [u8]) -> Result<(), EvalError> {
        let target = self.output_target()?;
        self.project_with(&mut self.runner(), &target, element, out)
    }

    /// [`EvalOp::project_into`] in `runner` (a scan reuses one for every element), with
    /// `project`'s output target.
    fn project_with<'a>(
        &'a self,
        runner: &mut Runner<'a>,
        target: &Target,
        element: &[u8],
        out: &mut [u8],
    ) -> Result<(), EvalError> {
        let Some(project) = &self.prog.project else {
            out.copy_from_slice(element);
            return Ok(());
        };
        if out.len() != target.size() {
            return Err(EvalError::WrongSize {
                expected: target.size(),
                got: out.len(),
            });
        }
        let frame = runner.start();
        if let Some(name) = &project.param {
            frame.bind(name, bytes::decode(&self.prog.elem, element, 0));
        }
        let v = self.run(runner, &project.body)?.coerce(target);
        out.fill(0);
        if bytes::encode(target, &v, out, 0) {
            Ok(())
        } else {
            Err(error::unsupported(
                project.body.span,
                format!(
                    "`project` returned {} where its output type is declared",
                    v.kind()
                ),
            ))
        }
    }

    /// The scan of `lift` over the input arrays (one slice of whole values per array, all of
    /// one length), projected: output `i` is `project(lift(0) ⊕ … ⊕ lift(i))` (inclusive) or
    /// `project(e ⊕ lift(0) ⊕ … ⊕ lift(i-1))` (exclusive), as the GPU's fused kernels and the
    /// macro's `Transform` compute it. Returns the outputs, back to back.
    pub fn transform_scan(&self, arrays: &[&[u8]], exclusive: bool) -> Result<Vec<u8>, EvalError> {
        let inputs = self.input_targets()?;
        let output = self.output_target()?;
        if arrays.len() != inputs.len() {
            return Err(EvalError::InputArrays {
                expected: inputs.len(),
                got: arrays.len(),
            });
        }
        let mut n = None;
        for (array, target) in arrays.iter().zip(&inputs) {
            let size = target.size().max(1);
            let len = array.len() / size;
            if array.len() % size != 0 || n.is_some_and(|m| m != len) {
                return Err(EvalError::WrongSize {
                    expected: n.unwrap_or(len) * size,
                    got: array.len(),
                });
            }
            n = Some(len);
        }
        let n = n.unwrap_or(0);
        let (elem_size, out_size) = (self.element.size(), output.size());
        let mut out = vec![0u8; n * out_size];
        let mut acc = self.identity()?;
        let mut lifted = vec![0u8; elem_size];
        let mut next = vec![0u8; elem_size];
        let mut values: Vec<&[u8]> = Vec::with_capacity(arrays.len());
        let mut runner = self.runner();
        for i in 0..n {
            values.clear();
            for (array, target) in arrays.iter().zip(&inputs) {
                let size = target.size();
                values.push(&array[i * size..(i + 1) * size]);
            }
            self.lift_with(&mut runner, &inputs, &values, i as u64, &mut lifted)?;
            let slot = &mut out[i * out_size..(i + 1) * out_size];
            if exclusive {
                self.project_with(&mut runner, &output, &acc, slot)?;
            }
            // As `EvalOp::scan`: an inclusive scan's first output is the first element itself.
            if i == 0 && !exclusive {
                next.copy_from_slice(&lifted);
            } else {
                self.combine_in(&mut runner, &acc, &lifted, &mut next)?;
            }
            std::mem::swap(&mut acc, &mut next);
            if !exclusive {
                self.project_with(&mut runner, &output, &acc, slot)?;
            }
        }
        Ok(out)
    }
}

fn check_sizes(targets: &[Target], values: &[&[u8]]) -> Result<(), EvalError> {
    if targets.len() != values.len() {
        return Err(EvalError::InputArrays {
            expected: targets.len(),
            got: values.len(),
        });
    }
    for (t, v) in targets.iter().zip(values) {
        if t.size() != v.len() {
            return Err(EvalError::WrongSize {
                expected: t.size(),
                got: v.len(),
            });
        }
    }
    Ok(())
}

fn flow_error(flow: Flow) -> EvalError {
    match flow {
        Flow::Error(e) => *e,
        _ => error::unsupported(proc_macro2::Span::call_site(), "control flow in a type"),
    }
}
