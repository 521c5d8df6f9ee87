#![forbid(unsafe_code)]

pub mod pr_body;
