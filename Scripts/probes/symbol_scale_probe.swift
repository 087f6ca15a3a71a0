// The symbolizer's cost on one binary: the first lookup, which loads the module's symbol and
// function tables, then many lookups of pseudo-random addresses in its executable segment
// (the scale of Tests/StackSamplerTests/SymbolScaleTests.swift, timed here rather than there).
// Built with the StackSampler module's own sources by Scripts/probes/symbol-scale.sh, which
// gives it the symbolizer's internal types; run that, not this file.
//
//   symbol_scale_probe LOOKUPS ROUNDS BINARY...
//
// Each binary ROUNDS times, each time with a new symbolizer; each time prints `BINARY: first
// lookup X ms (Y ms CPU), Z MB of tables; N lookups X s (Y s CPU), R resolved`.
import Glibc

@main
enum SymbolScaleProbe {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let lookups = Int(arguments[1]), lookups > 0, let rounds = Int(arguments[2]), rounds > 0 else {
            StandardError.write("usage: symbol_scale_probe LOOKUPS ROUNDS BINARY... (LOOKUPS and ROUNDS positive counts)\n")
            exit(2)
        }
        for binary in arguments[3...] {
            for _ in 0..<rounds {
                guard let line = measure(binary, lookups: lookups) else {
                    StandardError.write("symbol_scale_probe: \(binary) is not a readable ELF file with an executable segment\n")
                    exit(1)
                }
                print(line)
            }
        }
    }

    /// Maps `binary`'s executable segment as the loader would, at a made-up base, and times
    /// the first lookup and then `lookups` more at addresses spread over the segment.
    static func measure(_ binary: String, lookups: Int) -> String? {
        guard let file = ElfFile(path: binary),
              let segment = file.programHeaders.first(where: { $0.p_type == UInt32(PT_LOAD) && $0.p_flags & UInt32(PF_X) != 0 })
        else { return nil }
        let base: UInt = 0x5500_0000_0000
        let pageMask = ~UInt(0xfff)
        let start = (base + UInt(segment.p_vaddr)) & pageMask
        let end = (base + UInt(segment.p_vaddr + segment.p_memsz) + 0xfff) & pageMask
        let maps = "\(String(start, radix: 16))-\(String(end, radix: 16)) r-xp \(String(UInt(segment.p_offset) & pageMask, radix: 16)) 08:01 1 \(binary)\n"
        let symbolizer = Symbolizer(modules: ModuleMap(mapsText: maps))

        let firstStart = ProbeClock.now()
        _ = symbolizer.symbolize(start + 0x1000)
        let first = ProbeClock.now().since(firstStart)
        let tableBytes = symbolizer.tableBytes

        // The same addresses on every run: a fixed-seed xorshift over the file's part of the segment.
        let low = base + UInt(segment.p_vaddr)
        let span = UInt64(segment.p_filesz)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let addresses = (0..<lookups).map { _ -> UInt in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return low + UInt(state % span)
        }
        var resolved = 0
        let lookupStart = ProbeClock.now()
        for address in addresses where symbolizer.symbolize(address).isResolved { resolved += 1 }
        let lookup = ProbeClock.now().since(lookupStart)
        return "\(binary): first lookup \(fixed(first.wall * 1e3)) ms (\(fixed(first.cpu * 1e3)) ms CPU), "
            + "\(fixed(Double(tableBytes) / 1e6)) MB of tables; \(lookups) lookups \(fixed(lookup.wall)) s "
            + "(\(fixed(lookup.cpu)) s CPU), \(resolved) resolved"
    }

    /// `value` with two decimals.
    static func fixed(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// A reading of the monotonic clock and of this thread's CPU clock.
struct ProbeClock {
    let wall: Double
    let cpu: Double

    static func now() -> ProbeClock {
        ProbeClock(wall: seconds(CLOCK_MONOTONIC), cpu: seconds(CLOCK_THREAD_CPUTIME_ID))
    }

    /// The wall and CPU seconds from `earlier` to this reading.
    func since(_ earlier: ProbeClock) -> ProbeClock {
        ProbeClock(wall: wall - earlier.wall, cpu: cpu - earlier.cpu)
    }

    private static func seconds(_ clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
