//! Renderings of a [`crate::decide::Decision`]. Each sink has its own module and its own escaping.

pub mod json_v1;
pub mod text;
