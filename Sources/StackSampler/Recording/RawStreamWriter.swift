import CEngineHeader
import Glibc

/// Streams a session into a raw recording (see `RawFormat`) while it runs, from
/// the sampler thread: stacks once each, then samples as (stack id, time), thread
/// names and figures, losses, and the module map with build ids. Flushed at
/// least every 250 ms, so a process killed at any moment leaves all but its
/// last quarter second behind. A stream whose descriptor the program closed (or reused for a
/// file of its own) is lost: nothing more is written to it, and standard error says so, at
/// once and with the bytes not written when the session ends.
final class RawStreamWriter: SampleConsumer, @unchecked Sendable {
    private static let flushIntervalNanoseconds: UInt64 = 250_000_000
    private static let moduleIntervalNanoseconds: UInt64 = 1_000_000_000
    private static let bufferLimit = 256 << 10

    private let path: String
    private let file: OwnedDescriptor
    private var encoder = RawEncoder()
    private var stackIDs: [StackAggregator.StackKey: UInt32] = [:]
    private var samples = RawEncoder()
    private var sampleCount: UInt32 = 0
    private var streamedThreads: [Int: ThreadRecord] = [:]
    private var lastFlush: UInt64 = 0
    private var lastModules: UInt64 = 0
    private var moduleGeneration: UInt64 = 0
    private var writeError: String?
    private var bytesNotWritten = 0

    /// Creates `path` afresh (see `FileIO.createFresh`: a symlink there is replaced, never
    /// followed); not inherited across exec.
    init(path: String) throws(ProfilerError) {
        self.path = path
        file = OwnedDescriptor(try FileIO.createFresh(path))
    }

    /// Writes the magic, the header and the module map.
    func begin(configuration: ProfilerConfiguration, startNanoseconds: UInt64) {
        encoder.bytes += RawFormat.magic
        let name = FileIO.readText("/proc/self/comm", limit: 64).map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 } ?? ""
        encoder.record(.header) {
            $0.u16(RawFormat.version)
            $0.u8(configuration.mode == .cpu ? 0 : 1)
            $0.u64(configuration.periodNanoseconds)
            $0.u32(UInt32(configuration.maxDepth))
            $0.i32(getpid())
            $0.u64(startNanoseconds)
            $0.string(name)
            $0.u16(UInt16(clamping: ss_engine_signal()))
            $0.u8(ss_engine_signal_substituted() != 0 ? 1 : 0)
        }
        streamModules(now: startNanoseconds)
        flush(now: startNanoseconds)
    }

    /// Adds the sample, once per period it stands for.
    func take(_ sample: Sample, as stack: StackAggregator.StackKey, threads: [ThreadRecord]) {
        for _ in 0..<sample.periods { add(stack, at: sample.timeNanoseconds, threads: threads) }
    }

    /// Adds the stack once per tick, each at its own time.
    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, times: Int, spacing: UInt64, threads: [ThreadRecord]) {
        for before in (0..<times).reversed() { add(stack, at: time &- UInt64(before) &* spacing, threads: threads) }
    }

    /// A thread's record stays in the stream; nothing to do.
    func threadEnded(_ thread: Int) {}

    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        flushIfDue(now: now, threads: threads, losses: losses)
    }

    func finish(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        end(durationNanoseconds: durationNanoseconds, threads: threads, losses: losses)
    }

    /// Adds one sample of `stack` taken at `time`.
    private func add(_ stack: StackAggregator.StackKey, at time: UInt64, threads: [ThreadRecord]) {
        if streamedThreads[stack.thread] == nil { streamThread(stack.thread, threads[stack.thread]) }
        let id: UInt32
        if let known = stackIDs[stack] {
            id = known
        } else {
            id = UInt32(stackIDs.count)
            stackIDs[stack] = id
            encoder.record(.stack) {
                $0.u32(id)
                $0.u32(UInt32(stack.thread))
                $0.u8(stack.cut?.rawValue ?? 0)
                $0.u16(UInt16(stack.frames.count))
                for address in stack.frames { $0.u64(UInt64(address)) }
            }
        }
        samples.u32(id)
        samples.u64(time)
        sampleCount += 1
    }

    /// Flushes when the interval has passed or the buffer is large; `threads` and `losses` are streamed with it.
    private func flushIfDue(now: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        guard now &- lastFlush >= Self.flushIntervalNanoseconds || encoder.bytes.count + samples.bytes.count >= Self.bufferLimit else { return }
        finishBatch(threads: threads, losses: losses, now: now)
        if ss_module_cache_generation() != moduleGeneration, now &- lastModules >= Self.moduleIntervalNanoseconds { streamModules(now: now) }
        flush(now: now)
    }

    /// Writes everything left and the end record.
    private func end(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        let now = ss_now_ns()
        finishBatch(threads: threads, losses: losses, now: now)
        streamModules(now: now)
        encoder.record(.end) { $0.u64(durationNanoseconds) }
        flush(now: now)
        if writeError != nil { StandardError.report("raw stream \(path): \(bytesNotWritten) bytes not written since it was lost; it ends there") }
    }

    private func finishBatch(threads: [ThreadRecord], losses: Profile.Losses, now: UInt64) {
        for (index, thread) in threads.enumerated() where streamedThreads[index] != thread { streamThread(index, thread) }
        if sampleCount > 0 {
            let batch = samples.bytes
            let count = sampleCount
            encoder.record(.samples) {
                $0.u32(count)
                $0.bytes += batch
            }
            samples = RawEncoder()
            sampleCount = 0
        }
        encoder.record(.counters) {
            for value in [losses.droppedSamples, losses.truncatedSamples, losses.leafOnlySamples, losses.unwindFailures,
                          losses.unwindFaults, losses.missedTicks, losses.foreignSignals, losses.overrunPeriods, losses.skippedTicks] {
                $0.u64(UInt64(max(0, value)))
            }
        }
    }

    private func streamThread(_ index: Int, _ thread: ThreadRecord) {
        streamedThreads[index] = thread
        encoder.record(.thread) {
            $0.u32(UInt32(index))
            $0.i32(thread.tid)
            $0.string(thread.name)
            $0.u64(thread.cpuNanoseconds)
            $0.u64(thread.firstSeen)
            $0.u64(thread.lastSeen)
        }
    }

    private func streamModules(now: UInt64) {
        moduleGeneration = ss_module_cache_generation()
        lastModules = now
        let maps = FileIO.readText("/proc/thread-self/maps") ?? "" // the main thread's is empty once it has ended
        let modules = ModuleMap(mapsText: maps).modulesWithBuildIDs()
        var seen = Set<String>()
        let unique = modules.filter { seen.insert($0.path).inserted }
        encoder.record(.modules) {
            $0.string(maps)
            $0.u32(UInt32(unique.count))
            for module in unique {
                $0.string(module.path)
                $0.string(module.buildID ?? "")
            }
        }
    }

    /// Writes what is encoded; once a write fails (or the file is lost), nothing more is written.
    private func flush(now: UInt64) {
        lastFlush = now
        if writeError == nil, let failure = file.write(encoder.bytes) {
            writeError = failure
            StandardError.report("raw stream \(path) lost: \(failure); nothing more is written to it")
        }
        if writeError != nil { bytesNotWritten += encoder.bytes.count }
        encoder.bytes.removeAll(keepingCapacity: true)
    }
}
