// A real Rust CPU loop: Rust's standard library gives every thread, the main
// thread included, an alternate signal stack of max(SIGSTKSZ, AT_MINSIGSTKSZ) bytes (8 KiB
// here) for its stack-overflow handler. Three threads spin in `middle` -> `leaf` for about
// argv[1] seconds of CPU each (default 1); prints `done`.
use std::thread;
use std::time::{Duration, Instant};

#[inline(never)]
fn leaf(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..200_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    }
    x
}

#[inline(never)]
fn middle(seed: u64, seconds: f64) -> u64 {
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut total = 0;
    while Instant::now() < end {
        total ^= leaf(seed ^ total);
    }
    total
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let workers: Vec<_> = (0..3u64).map(|i| thread::spawn(move || middle(i, seconds))).collect();
    let mut total = 0;
    for worker in workers {
        total ^= worker.join().unwrap();
    }
    println!("done {}", total & 1);
}
