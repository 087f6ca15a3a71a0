// Swift concurrency: each round's task group runs outerRequest (under withTaskCancellationHandler,
// as a server handles each connection: the runtime's resume function for it has no unwind rows,
// so an async chain through it is only found if any code address is taken as code), which awaits
// middleStage (three leafWork calls, each after a Task.yield, then an actor hop), then
// otherStage (after a Task.sleep), then loopStage (300,000 awaits of step in a loop), then a
// @MainActor function. Most CPU is spent in burn, called by leafWork and otherStage only. The
// tails of leafWork and otherStage differ, so the compiler cannot merge their partial
// functions into one body.
// Arguments: ROUNDS. Built with -D SELF_PROFILING (and the C API, which runs Profiler.start):
// ROUNDS MODE(cpu|wall) PROFILE, sampling itself at 1 ms around the rounds.
// Build: swiftc -O -g -parse-as-library.
import Dispatch

@inline(never)
func burn(_ n: Int) -> Int {
    var x = n
    for i in 0..<4_000_000 { x = (x &* 6364136223846793005 &+ i) ^ (x &>> 29) }
    return x
}

actor Counter {
    var total = 0
    func add(_ value: Int) { total &+= value }
}

@MainActor
func noteOnMain(_ value: Int) -> Int { value & 1 }

@inline(never)
func leafWork(_ n: Int) async -> Int {
    await Task.yield()
    return burn(n) &+ 1
}

@inline(never)
func middleStage(_ n: Int, _ counter: Counter) async -> Int {
    // Three awaits of leafWork, each with its own resume partial function.
    var sum = await leafWork(n)
    sum &+= await leafWork(n &+ 1)
    sum &+= await leafWork(n &+ 2)
    await counter.add(sum)
    return sum
}

@inline(never)
func otherStage(_ n: Int) async -> Int {
    try? await Task.sleep(nanoseconds: 1_000_000)
    return burn(n) &* 3
}

@inline(never)
func step(_ i: Int) async -> Int { i &* 3 &+ 1 }

/// Awaits in a tight loop: the context register changes hands at every await.
@inline(never)
func loopStage(_ n: Int) async -> Int {
    var sum = n
    for i in 0..<300_000 { sum &+= await step(i) }
    return sum
}

@inline(never)
func outerRequest(_ n: Int, _ counter: Counter) async -> Int {
    let a = await middleStage(n, counter)
    let b = await otherStage(n)
    let c = await loopStage(n)
    return a &+ b &+ c &+ (await noteOnMain(n))
}

func runRounds(_ rounds: Int) async -> Int {
    let counter = Counter()
    var result = 0
    for round in 0..<rounds {
        result &+= await withTaskGroup(of: Int.self) { group in
            for i in 0..<4 {
                group.addTask { await withTaskCancellationHandler { await outerRequest(round &* 4 &+ i, counter) } onCancel: {} }
            }
            var sum = 0
            for await value in group { sum &+= value }
            return sum
        }
    }
    return result
}

@main
struct AsyncStages {
    static func main() async {
        let arguments = CommandLine.arguments
        let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 10 : 10
        #if SELF_PROFILING
        let mode = arguments[2] == "wall" ? STACKSAMPLER_MODE_WALL : STACKSAMPLER_MODE_CPU
        print("start \(stacksampler_start(1_000_000, mode))")
        #endif
        let result = await runRounds(rounds)
        #if SELF_PROFILING
        print("stop \(stacksampler_stop())")
        print("write \(stacksampler_write(arguments[3], nil))")
        #endif
        print("result \(result & 0xff)")
    }
}
