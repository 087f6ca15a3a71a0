import Foundation

/// Where a profiled program runs, as users run it: as root (this machine's tests run as root,
/// with CAP_PERFMON and CAP_IPC_LOCK), as an ordinary user (uid 65534: perf_event_open allowed
/// on the process's own threads at `perf_event_paranoid` 2, no kernel samples, no copies of
/// preempted stacks), or as an ordinary user behind a seccomp filter that refuses
/// perf_event_open with EACCES (Debian's and Ubuntu's paranoid 3 and 4, a container's profile).
/// The same tests run in each, with the same bands; a test names its settings as arguments.
enum RunSetting: String, CaseIterable, CustomStringConvertible, Sendable {
    case root
    case unprivileged = "unprivileged user"
    case perfRefused = "unprivileged user, perf_event_open refused"

    var description: String { rawValue }

    /// The ordinary user the unprivileged settings run as (nobody).
    static let user = "65534"

    /// The command that runs `command` with `environment` in this setting: as it is for root;
    /// behind `setpriv` (and the seccomp launcher) otherwise, with the environment handed to
    /// the program alone by `env`, so that neither launcher is profiled.
    func command(_ command: [String], environment: [String: String]) throws -> (command: [String], environment: [String: String]) {
        guard self != .root else { return (command, environment) }
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return (try launcher() + ["/usr/bin/env"] + assignments + command, [:])
    }

    /// The commands a program runs behind in this setting, each exec'ing the next (the same
    /// pid): none for root; `setpriv` to the ordinary user, and the seccomp launcher.
    func launcher() throws -> [String] {
        guard self != .root else { return [] }
        let user = ["/usr/bin/setpriv", "--reuid=\(Self.user)", "--regid=\(Self.user)", "--clear-groups", "--"]
        return self == .perfRefused ? user + [try TestProgram.denyPerfEvents.executable()] : user
    }

    /// The preload library, where this setting's user can read it.
    func preloadLibrary() throws -> String {
        self == .root ? try BuildProducts.preloadLibrary() : try BuildProducts.readableByAll() + "/libStackSamplerPreload.so"
    }

    /// Makes `directory` (a test's own) one the ordinary user can write its outputs into.
    func prepare(_ directory: String) {
        guard self != .root else { return }
        chmod(directory, 0o777)
    }

    /// How finely wall mode places the boundary between two stretches of running code, in ms:
    /// where its counters sample a running thread every millisecond of CPU or more often, the
    /// period bounds it; with perf_event_open refused, the timers' samples come only at the
    /// scheduler ticks that find the thread running, so a boundary is known to within a tick of
    /// its CPU time (`CLOCK_MONOTONIC_COARSE`'s resolution: 4 ms at HZ=250) and a call's length
    /// to within one.
    var runningCodeResolutionMilliseconds: Double {
        guard self == .perfRefused else { return 0 }
        var tick = timespec()
        guard clock_getres(CLOCK_MONOTONIC_COARSE, &tick) == 0 else { return 0 }
        return Double(tick.tv_sec) * 1000 + Double(tick.tv_nsec) / 1e6
    }
}
