import Glibc

/// Burns CPU in a frame of its own until the thread has used `seconds` of CPU time. Tests that
/// profile the test process find its samples by this name.
@inline(never)
package func burnInProfilerAPITest(seconds: Double) -> UInt64 {
    var spent = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent)
    let end = Double(spent.tv_sec) + Double(spent.tv_nsec) / 1e9 + seconds
    var value: UInt64 = 1
    repeat {
        for _ in 0..<50_000 { value = value &* 6364136223846793005 &+ 1442695040888963407 }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent)
    } while Double(spent.tv_sec) + Double(spent.tv_nsec) / 1e9 < end
    return value
}
