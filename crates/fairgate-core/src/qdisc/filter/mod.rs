//! Pre-queue filters: disciplines that decide on an arrival before handing it to the
//! discipline behind them (`inner`), which does the queueing. SFG (seed 003) is the first.

pub mod sfg;
