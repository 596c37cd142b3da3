//! Pre-queue filters: disciplines that decide on an arrival before handing it to the
//! discipline behind them (`inner`), which does the queueing. SFG (\[Chung06]) is the first.

pub mod sfg;
