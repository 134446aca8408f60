//! Text a person reads: how names and messages are made safe for a terminal (`shown`) and how
//! numbers are written (`numbers`). The lowest room: every other one may use it.

pub mod numbers;
pub mod shown;
