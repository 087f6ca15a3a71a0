import Glibc

/// Sleeps until CLOCK_MONOTONIC reads `deadline` (ns), whatever signals arrive meanwhile.
package func sleepUntil(monotonicNanoseconds deadline: UInt64) {
    var wake = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
}
