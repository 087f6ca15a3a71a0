// Threads that exist before sampling starts, in a Swift program: two Dispatch
// workers and a pthread spin from before the start; then the program profiles itself
// through the C API (which runs Profiler.start) for about 1.5 s of its own CPU, stops, and
// writes the folded profile to CommandLine.arguments[1].
// Build: swiftc -O -import-objc-header stacksampler.h -L DIR -lStackSamplerPreload.
import Dispatch
import Glibc

nonisolated(unsafe) var stopping = false
nonisolated(unsafe) var sink: UInt64 = 0

@inline(never) func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

@inline(never) func burn(_ seconds: Double, _ salt: UInt64) -> UInt64 {
    let end = cpuSeconds() + seconds
    var x = salt
    repeat {
        for _ in 0..<16384 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
    } while cpuSeconds() < end
    return x
}

@inline(never) func dispatchSpin(_ salt: UInt64) {
    while !stopping { sink &+= burn(0.01, salt) }
}

@inline(never) func threadSpin() {
    while !stopping { sink &+= burn(0.01, 9) }
}

@inline(never) func mainSpin() { sink &+= burn(0.5, 7) }

guard CommandLine.arguments.count > 1 else { fatalError("usage: threads_before_start_swift PROFILE") }
let group = DispatchGroup()
for salt in 1...2 as ClosedRange<UInt64> {
    DispatchQueue.global().async(group: group) { dispatchSpin(salt) }
}
var thread = pthread_t()
pthread_create(&thread, nil, { _ in threadSpin(); return nil }, nil)
usleep(100_000)
print("start \(stacksampler_start(10_000_000, STACKSAMPLER_MODE_CPU))")
mainSpin()
print("stop \(stacksampler_stop())")
stopping = true
group.wait()
pthread_join(thread, nil)
print("write \(stacksampler_write(CommandLine.arguments[1], nil))")
