import Foundation
import Testing

extension EndToEnd {
    /// `stacksampler report` and `stacksampler diff` on hand-made collapsed stacks.
    @Suite struct ReportCommand {
        /// 100 samples on two threads, as `record --per-thread` writes them.
        static let input = """
            [main tid=1];main;parse;lex 30
            [main tid=1];main;parse 10
            [main tid=1];main;render;lex 20
            [worker tid=2];run;compress 35
            [worker tid=2];run;poll 5

            """

        /// Runs the CLI with `arguments` in `directory`.
        static func stacksampler(_ arguments: [String], in directory: String) throws -> ProcessResult {
            try ChildProcess.run(try BuildProducts.cli(), arguments, in: directory)
        }

        /// Writes `text` to `name` in `directory` and returns its path.
        static func write(_ text: String, to name: String, in directory: String) throws -> String {
            let path = directory + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        @Test("report: filters and reversal give the exact expected stacks")
        func filtersAndReverse() throws {
            let directory = try ScratchDirectory.make("report-filters")
            let input = try Self.write(Self.input, to: "in.folded", in: directory)
            let output = directory + "/out.folded"
            let result = try Self.stacksampler(["report", input, "--thread", "main", "--exclude", "^render$", "--reverse", "-o", output],
                                               in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let written = try String(contentsOfFile: output, encoding: .utf8)
            #expect(written == "[main tid=1];lex;parse;main 30\n[main tid=1];parse;main 10\n")
        }

        @Test("report --top prints self and total samples per function")
        func top() throws {
            let directory = try ScratchDirectory.make("report-top")
            let input = try Self.write(Self.input, to: "in.folded", in: directory)
            let result = try Self.stacksampler(["report", input, "--include", "lex|compress", "--top", "2"], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(rows == [["self", "self%", "total", "total%", "function"],
                             ["50", "58.82%", "50", "58.82%", "lex"],
                             ["35", "41.18%", "35", "41.18%", "compress"]])
        }

        @Test("report writes every format from collapsed stacks without thread roots")
        func everyFormat() throws {
            let directory = try ScratchDirectory.make("report-formats")
            let perfStyle = "java;start_thread;do_work 7\njava;start_thread;do_work;memcpy_[k] 3\n"
            let input = try Self.write(perfStyle, to: "perf.collapsed", in: directory)
            let outputs = ["r.svg", "r.pb.gz", "r.speedscope.json", "r.folded"].map { directory + "/" + $0 }
            let result = try Self.stacksampler(["report", input] + outputs.flatMap { ["-o", $0] }, in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            try OutputFiles.expectFlameGraph(at: outputs[0], samples: 10)
            try OutputFiles.expectGzip(at: outputs[1])
            #expect(try OutputFiles.speedscopeSamples(at: outputs[2], period: 1) == 10)
            #expect(try String(contentsOfFile: outputs[3], encoding: .utf8) == perfStyle)
        }

        @Test("report --thread on stacks without thread roots says why it cannot")
        func threadNeedsRoots() throws {
            let directory = try ScratchDirectory.make("report-thread")
            let input = try Self.write("a;b 1\n", to: "plain.folded", in: directory)
            let result = try Self.stacksampler(["report", input, "--thread", "main", "-o", directory + "/x.svg"], in: directory)
            #expect(result.termination != .exited(0))
            #expect(result.stderr.contains("per-thread"), "\(result)")
        }

        @Test("diff writes a differential flame graph; a non-SVG output is refused")
        func diff() throws {
            let directory = try ScratchDirectory.make("diff")
            let before = try Self.write(Self.input, to: "before.folded", in: directory)
            let after = try Self.write(Self.input.replacingOccurrences(of: "compress 35", with: "compress 135"), to: "after.folded", in: directory)
            let output = directory + "/diff.svg"
            let result = try Self.stacksampler(["diff", before, after, "-o", output], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let tooltips = try OutputFiles.expectFlameGraph(at: output, samples: 200)
            let compress = try #require(tooltips.first { $0.hasPrefix("compress (") }, "\(tooltips)")
            #expect(compress.contains("135 samples") && compress.contains("before 35 samples") && compress.contains("self +"), "\(compress)")
            let refused = try Self.stacksampler(["diff", before, after, "-o", directory + "/diff.pb.gz"], in: directory)
            #expect(refused.termination != .exited(0) && refused.stderr.contains("SVG"), "\(refused)")
        }
    }
}
