import Foundation
import Testing

extension EndToEnd {
    /// Sampling never deadlocks on the loader's lock: dlclose inside a dl_iterate_phdr callback,
    /// then dlopen/dlclose, C++ exceptions and dl_iterate_phdr on three threads, while every
    /// thread is sampled at 1 kHz.
    @Suite struct LoaderLock {
        @Test("dlopen, exceptions and dl_iterate_phdr under 1 kHz sampling finish", arguments: ["cpu", "wall"])
        func loaderChurnFinishes(mode: String) throws {
            let directory = try ScratchDirectory.make("loader-\(mode)")
            let plugin = try TestProgram.plugin.executable()
            let run = try ProfiledRun.preload(
                .loaderChurn, ["1500", plugin],
                settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("closes_in_callback", in: run.process.stdout) == 1500)
            #expect(ProgramOutput.integer("dlopen", in: run.process.stdout) == 1500)
            #expect(ProgramOutput.integer("exceptions", in: run.process.stdout) == 15000)
            #expect(ProgramOutput.integer("iterations", in: run.process.stdout) == 15000)
            let profile = try run.profile()
            #expect(profile.totalSamples > 0, "\(run.process)")
        }

        @Test("dlclose refreshes the module list the handler is served, without waiting for the next tick")
        func dlcloseRefreshesModuleCopy() throws {
            let directory = try ScratchDirectory.make("loader-refresh")
            let plugin = try TestProgram.plugin.executable()
            // Wall mode at 1 s: the sampler thread's own ticks are a second apart, so three
            // refreshes within 200 ms each come from dlclose waking it (by chance: 1 in 125).
            let run = try ProfiledRun.preload(.loaderChurn, ["1", plugin],
                                              settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1s"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let latency = try #require(ProgramOutput.integer("dlclose_refresh_us", in: run.process.stdout), "\(run.process)")
            #expect(latency < 200_000, "slowest refresh after dlclose: \(latency) us")
        }
    }
}
