//! The suite's version: a semver that changes when the rules of interpretation change (as
//! test262's does), and a content digest of what the run draws its cases from (the named
//! cases and the generator configuration), so two reports are comparable only when both
//! agree.

use serde::{Deserialize, Serialize};

/// The suite's semantic version. The major part changes when the rules of interpretation
/// change (what an invariant requires, how a case is judged); the minor part when cases or
/// invariants are added.
pub const SUITE_VERSION: &str = "0.1.0";

/// Which suite a report was judged by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suite {
    /// [`SUITE_VERSION`] of the toolcert that ran.
    pub version: String,
    /// `sha256:` and the hex SHA-256 of the named cases and the generator configuration,
    /// serialised as JSON.
    pub digest: String,
}

impl Suite {
    /// The suite of a run whose generator configuration serialises as `gen_config`.
    pub fn of(gen_config: &serde_json::Value) -> Suite {
        let named: Vec<serde_json::Value> = toolcert_gen::named::all()
            .iter()
            .map(|n| serde_json::json!({"id": n.id, "needs_schema": n.needs_schema, "case": n.case}))
            .collect();
        let content = serde_json::json!({"named": named, "generator": gen_config});
        let bytes = serde_json::to_vec(&content).expect("the suite serialises");
        Suite { version: SUITE_VERSION.into(), digest: format!("sha256:{}", hex(&sha256(&bytes))) }
    }

    /// The major part of the version: reports of different majors were judged by different
    /// rules.
    pub fn major(&self) -> &str {
        self.version.split('.').next().unwrap_or("")
    }

    /// The digest shortened for people (`sha256:1a2b3c4d5e6f`).
    pub fn short_digest(&self) -> &str {
        let end = self.digest.char_indices().nth(19).map_or(self.digest.len(), |(i, _)| i);
        &self.digest[..end]
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 (FIPS 180-4), enough for a content digest without another dependency.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ];
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (i, word) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_fips_test_vectors() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(&sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn the_digest_depends_on_the_generator_configuration() {
        let a = Suite::of(&serde_json::json!({"schema": true}));
        let b = Suite::of(&serde_json::json!({"schema": false}));
        assert_ne!(a.digest, b.digest);
        assert_eq!(a, Suite::of(&serde_json::json!({"schema": true})));
        assert_eq!(a.major(), "0");
        assert!(a.short_digest().starts_with("sha256:") && a.short_digest().len() == 19);
    }
}
