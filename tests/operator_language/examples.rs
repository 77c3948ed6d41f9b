//! Every example program, as a module: the operator-language tests run each example's
//! operators (the GPU test also their `main`s).

#![allow(dead_code)]

#[path = "../../examples/argmax.rs"]
pub mod argmax;
#[path = "../../examples/classify_runs.rs"]
pub mod classify_runs;
#[path = "../../examples/forward_fill.rs"]
pub mod forward_fill;
#[path = "../../examples/linear_recurrence.rs"]
pub mod linear_recurrence;
#[path = "../../examples/polynomial.rs"]
pub mod polynomial;
#[path = "../../examples/running_max.rs"]
pub mod running_max;
#[path = "../../examples/segmented_sum.rs"]
pub mod segmented_sum;
#[path = "../../examples/sum.rs"]
pub mod sum;
#[path = "../../examples/vector_ops.rs"]
pub mod vector_ops;
