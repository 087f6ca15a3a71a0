import Foundation
import Testing

extension EndToEnd {
    /// Sampling never deadlocks on the loader's lock: dlopen/dlclose, C++ exceptions and
    /// dl_iterate_phdr run on three threads while every thread is sampled at 1 kHz.
    @Suite struct LoaderLock {
        @Test("dlopen, exceptions and dl_iterate_phdr under 1 kHz sampling finish", arguments: ["cpu", "wall"])
        func loaderChurnFinishes(mode: String) throws {
            let directory = try ScratchDirectory.make("loader-\(mode)")
            let plugin = try TestProgram.plugin.executable()
            let run = try ProfiledRun.preload(
                .loaderChurn, ["1500", plugin],
                settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("dlopen", in: run.process.stdout) == 1500)
            #expect(ProgramOutput.integer("exceptions", in: run.process.stdout) == 15000)
            #expect(ProgramOutput.integer("iterations", in: run.process.stdout) == 15000)
            let profile = try run.profile()
            #expect(profile.totalSamples > 0, "\(run.process)")
        }

        @Test("dlclose refreshes the module list the handler is served, without waiting for the sampler thread")
        func dlcloseRefreshesModuleCopy() throws {
            let directory = try ScratchDirectory.make("loader-refresh")
            let plugin = try TestProgram.plugin.executable()
            // A 1 s period: the cpu-mode sampler thread then wakes only every 100 ms.
            let run = try ProfiledRun.preload(.loaderChurn, ["1", plugin], settings: ["STACKSAMPLER_PERIOD": "1s"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let refreshes = try #require(ProgramOutput.integer("dlclose_refreshes", in: run.process.stdout), "\(run.process)")
            #expect(refreshes >= 1)
        }
    }
}
