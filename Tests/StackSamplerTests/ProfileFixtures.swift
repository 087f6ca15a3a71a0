@testable import StackSampler

/// A profile built by hand: two threads, three stacks, names chosen to test escaping.
func handMadeProfile() -> Profile {
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
        Profile.Stack(thread: 0, addresses: [0x10, 0x20], count: 5, isTruncated: false),
        Profile.Stack(thread: 0, addresses: [0x10, 0x30], count: 2, isTruncated: false),
        Profile.Stack(thread: 1, addresses: [0x10, 0x20], count: 3, isTruncated: false),
        Profile.Stack(thread: 1, addresses: [0x40], count: 1, isTruncated: true),
    ]
    return Profile(configuration: ProfilerConfiguration(), startNanoseconds: 0, durationNanoseconds: 100_000_000,
                   signal: "SIGPROF", signalSubstituted: false, stacks: stacks, threads: threads, frames: frames,
                   modules: [], losses: Profile.Losses())
}
