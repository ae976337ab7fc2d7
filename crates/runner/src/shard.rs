//! Shards: a deterministic slice of a run's cases, so N machines (or CI jobs) share one
//! certification and their reports merge back into the report of the whole run.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (1-based, `K/N` on the command line): it runs the named case at
/// position `i` when `i mod N == K-1`, and generated case `k` when `k mod N == K-1`. Every
/// shard still draws every generated case, so case `k` is the same value in every shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl Default for Shard {
    /// The whole run.
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl Shard {
    /// Whether the case at `position` (of the named cases, or `k` of the generated ones)
    /// belongs to this shard.
    pub fn takes(self, position: usize) -> bool {
        self.count <= 1 || position % self.count == self.index - 1
    }

    /// The whole run (`1/1`).
    pub fn is_whole(self) -> bool {
        self.count <= 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("bad shard {s:?}: expected K/N with 1 <= K <= N (e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_positions() {
        let shards: Vec<Shard> = (1..=3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for position in 0..100 {
            assert_eq!(shards.iter().filter(|s| s.takes(position)).count(), 1, "{position}");
        }
        assert!(Shard::default().takes(7));
        assert_eq!(shards[1].to_string(), "2/3");
    }

    #[test]
    fn bad_shards_are_refused() {
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/-2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
