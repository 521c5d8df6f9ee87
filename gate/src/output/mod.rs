//! Renderings of a [`crate::decide::Decision`], and the versioned publication plan. Each sink has
//! its own module and its own escaping.

pub mod dispatch_result_v2;
pub mod doctor_v1;
pub mod json_v1;
pub mod publish_plan_v2;
pub mod publish_result_v1;
pub mod text;
