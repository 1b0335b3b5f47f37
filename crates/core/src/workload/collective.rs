//! Ring collectives (model.md section 2): bytes each rank sends to its ring
//! neighbour and the number of latency steps.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
/// The collective operations the workloads issue.
pub enum Collective {
    /// Every rank ends with the sum of all ranks' buffers.
    AllReduce,
    /// Every rank ends with its slice of the sum.
    ReduceScatter,
    /// Every rank ends with every rank's slice.
    AllGather,
    /// One rank sends its buffer to one other rank.
    SendRecv,
}

impl Collective {
    /// Bytes each of `ranks` ranks sends to its neighbour when each holds `size_bytes`.
    pub fn bytes_per_rank(self, ranks: u32, size_bytes: f64) -> f64 {
        let n = f64::from(ranks.max(1));
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n * size_bytes,
            Collective::ReduceScatter | Collective::AllGather => (n - 1.0) / n * size_bytes,
            Collective::SendRecv => size_bytes,
        }
    }

    /// Ring steps, each paying one link latency.
    pub fn steps(self, ranks: u32) -> u32 {
        let n = ranks.max(1);
        match self {
            Collective::AllReduce => 2 * (n - 1),
            Collective::ReduceScatter | Collective::AllGather => n - 1,
            Collective::SendRecv => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_bytes_follow_the_bus_factors() {
        assert_eq!(Collective::AllReduce.bytes_per_rank(8, 800.0), 1400.0);
        assert_eq!(Collective::ReduceScatter.bytes_per_rank(8, 800.0), 700.0);
        assert_eq!(Collective::AllGather.bytes_per_rank(4, 400.0), 300.0);
        assert_eq!(Collective::SendRecv.bytes_per_rank(2, 5.0), 5.0);
        assert_eq!(Collective::AllReduce.bytes_per_rank(1, 5.0), 0.0);
        assert_eq!(Collective::AllReduce.steps(16), 30);
        assert_eq!(Collective::AllGather.steps(16), 15);
    }
}
