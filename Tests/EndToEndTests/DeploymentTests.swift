import Foundation
import Testing

extension EndToEnd {
    /// Deployment as users do it: `Scripts/install.sh` at a prefix, the profiler used from there,
    /// and the systemd drop-in it installs, checked by systemd itself beside a hardened unit.
    @Suite struct Deployment {
        /// Installs into a fresh prefix under `directory`: the prefix.
        static func install(in directory: String) throws -> String {
            let prefix = directory + "/prefix"
            let installed = try ChildProcess.run(PackagePaths.root + "/Scripts/install.sh", [prefix], in: directory)
            guard installed.termination == .exited(0) else { throw HarnessError("install.sh failed: \(installed)") }
            return prefix
        }

        @Test("install.sh puts the library, its Swift part and the CLI at the prefix, and both profile from there")
        func installedProducts() throws {
            let directory = try ScratchDirectory.make("install")
            let prefix = try Self.install(in: directory)
            let output = directory + "/preloaded.folded"
            let preloaded = try ChildProcess.run(try TestProgram.split.executable(), ["0.3"],
                                                 environment: ["LD_PRELOAD": prefix + "/lib/stacksampler/libStackSamplerPreload.so",
                                                               "STACKSAMPLER_OUTPUT": output], in: directory)
            #expect(preloaded.termination == .exited(0), "\(preloaded)")
            #expect(try FoldedProfile(contentsOf: output).inclusiveCount { $0 == "work_fifty" } > 5, "\(preloaded)")
            let recorded = directory + "/recorded.folded"
            let record = try ChildProcess.run(prefix + "/bin/stacksampler", ["record", "-o", recorded, "--", try TestProgram.split.executable(), "0.3"],
                                              in: directory)
            #expect(record.termination == .exited(0), "\(record)")
            #expect(try FoldedProfile(contentsOf: recorded).inclusiveCount { $0 == "work_fifty" } > 5, "\(record)")
            let relative = try ChildProcess.run(PackagePaths.root + "/Scripts/install.sh", ["relative/prefix"], in: directory)
            #expect(relative.termination == .exited(2) && relative.stderr.contains("absolute path"), "\(relative)")
        }

        @Test("the installed drop-in, beside a hardened unit, passes systemd-analyze verify without a warning of its own")
        func systemdDropIn() throws {
            let directory = try ScratchDirectory.make("drop-in")
            let prefix = try Self.install(in: directory)
            let units = directory + "/units"
            try FileManager.default.createDirectory(atPath: units + "/app.service.d", withIntermediateDirectories: true)
            let unit = """
                [Unit]
                Description=A hardened service, profiled

                [Service]
                ExecStart=/bin/sleep 1000
                DynamicUser=yes
                SystemCallFilter=@system-service
                SystemCallArchitectures=native
                CapabilityBoundingSet=
                NoNewPrivileges=yes
                PrivateTmp=yes
                ProtectSystem=strict
                ProtectHome=yes
                MemoryDenyWriteExecute=yes
                RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6

                [Install]
                WantedBy=multi-user.target

                """
            try unit.write(toFile: units + "/app.service", atomically: true, encoding: .utf8)
            let dropIn = try String(contentsOfFile: prefix + "/share/stacksampler/stacksampler.conf", encoding: .utf8)
            #expect(dropIn.contains("Environment=LD_PRELOAD=\(prefix)/lib/stacksampler/libStackSamplerPreload.so"), "\(dropIn)")
            try dropIn.write(toFile: units + "/app.service.d/stacksampler.conf", atomically: true, encoding: .utf8)
            let verified = try ChildProcess.run("systemd-analyze", ["verify", units + "/app.service"],
                                                environment: ["SYSTEMD_UNIT_PATH": units + ":"], in: directory, timeout: .seconds(60))
            #expect(verified.termination == .exited(0), "\(verified)")
            #expect(!(verified.stdout + verified.stderr).contains("stacksampler.conf"), "\(verified)")
            // The check is real: a key systemd does not know is named.
            try (dropIn + "NoSuchKey=1\n").write(toFile: units + "/app.service.d/stacksampler.conf", atomically: true, encoding: .utf8)
            let broken = try ChildProcess.run("systemd-analyze", ["verify", units + "/app.service"],
                                              environment: ["SYSTEMD_UNIT_PATH": units + ":"], in: directory, timeout: .seconds(60))
            #expect((broken.stdout + broken.stderr).contains("stacksampler.conf"), "\(broken)")
        }
    }
}
