import StackSampler

/// A profile built by hand: two threads, three stacks, names chosen to test escaping.
package func handMadeProfile() -> Profile {
    let frames: [UInt: SymbolizedFrame] = [
        0x10: SymbolizedFrame(name: "main", modulePath: "/bin/app", moduleOffset: 0x10, kind: .native, isResolved: true),
        0x20: SymbolizedFrame(name: "parse", modulePath: "/bin/app", moduleOffset: 0x20, kind: .native, isResolved: true),
        0x30: SymbolizedFrame(name: "std::map<int:int>::find", modulePath: "/bin/app", moduleOffset: 0x30, kind: .cpp, isResolved: true),
        0x40: SymbolizedFrame(name: "libz.so.1+0x40", modulePath: "/lib/libz.so.1", moduleOffset: 0x40, kind: .unknown, isResolved: false),
    ]
    let threads = [
        Profile.Thread(id: 100, name: "main", samples: 7, cpuNanoseconds: 70_000_000, observedNanoseconds: 70_000_000),
        Profile.Thread(id: 101, name: "worker;1", samples: 4, cpuNanoseconds: 40_000_000, observedNanoseconds: 40_000_000),
    ]
    let stacks = [
        Profile.Stack(thread: 0, addresses: [0x10, 0x20], count: 5),
        Profile.Stack(thread: 0, addresses: [0x10, 0x30], count: 2),
        Profile.Stack(thread: 1, addresses: [0x10, 0x20], count: 3),
        Profile.Stack(thread: 1, addresses: [0x40], count: 1, cut: .depth),
    ]
    return Profile(configuration: ProfilerConfiguration(), startNanoseconds: 0, durationNanoseconds: 100_000_000,
                   signal: "SIGPROF", signalSubstituted: false, stacks: stacks, threads: threads, frames: frames, modules: [])
}

/// `handMadeProfile` with calls: on thread 0 `main` (1) → `parse` (2) → `find` (3), then a
/// second root `main` (4) on thread 1; times on a monotonic clock that starts at 1 s.
package func profileWithCalls() -> Profile {
    var profile = handMadeProfile()
    profile.startNanoseconds = 1_000_000_000
    profile.realtimeStartNanoseconds = 1_750_000_000_000_000_000
    func call(_ id: UInt64, parent: UInt64?, trace: UInt64, thread: Int, name: String, depth: Int, start: UInt64,
              duration: UInt64) -> Profile.Invocation {
        Profile.Invocation(id: id, parentID: parent, traceID: trace, thread: thread, name: name, depth: depth,
                           startNanoseconds: 1_000_000_000 + start, durationNanoseconds: duration, samples: Int(duration / 10_000_000))
    }
    profile.invocations = [
        call(1, parent: nil, trace: 1, thread: 0, name: "main", depth: 0, start: 5_000_000, duration: 90_000_000),
        call(2, parent: 1, trace: 1, thread: 0, name: "parse", depth: 1, start: 15_000_000, duration: 50_000_000),
        call(3, parent: 2, trace: 1, thread: 0, name: "std::map<int:int>::find", depth: 2, start: 25_000_000, duration: 20_000_000),
        call(4, parent: nil, trace: 4, thread: 1, name: "main", depth: 0, start: 0, duration: 40_000_000),
    ]
    return profile
}
