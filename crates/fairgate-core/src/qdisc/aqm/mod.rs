pub mod step_mark;
