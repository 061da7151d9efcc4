// inl_rs.rs - a Rust workload whose hot code is inlined (#[inline(always)]
// helpers in a loop), for tests/inline.bats (rustc -C opt-level=2 -g).
use std::hint::black_box;

#[inline(always)]
fn mix(x: u64) -> u64 {
    let y = x ^ (x >> 13);
    y.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (y >> 29)
}

#[inline(always)]
fn step(x: u64, i: u64) -> u64 {
    let y = mix(x.wrapping_add(i));
    y.wrapping_add(mix(y ^ i))
}

#[inline(never)]
fn work(seed: u64, n: u64) -> u64 {
    let mut x = seed;
    for i in 0..n {
        x = step(x, i);
    }
    x
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(30_000_000);
    let mut s = 0u64;
    for r in 0..4 {
        s = s.wrapping_add(work(black_box(r + s), n / 4));
    }
    black_box(s);
}
