"""What is measured: the workloads, and the profilers and their settings (StackSampler, gperftools, perf)."""
import os

from bench_common import GPERF_LIB


def split_argv(bins, blocks):
    """The split workload (Tests/Programs/split.c) doing a fixed amount of work: `blocks` blocks."""
    return [os.path.join(bins, "split"), "--blocks", str(blocks)]


def workloads(bins, scale=None):
    """name -> (description, argv builder taking the work count). split, threads and matrix are
    the test programs of Tests/Programs, told to do a fixed amount of work instead of running for
    a fixed time; the matrices are 128 x 128 (the tests' are 200 x 200)."""
    def split(n): return split_argv(bins, n)
    def threads(n): return [os.path.join(bins, "threads"), "--blocks", str(n)]
    def swift(n): return [os.path.join(bins, "matrix"), "--rounds", str(n), "--size", "128"]
    def deep(n): return [os.path.join(bins, "bench_deep"), str(n)]
    return {
        "split": ("C, 1 thread, CPU split 50/30/20 (Tests/Programs/split.c)", split, 20000),
        "threads8": ("C, 8 busy threads on 2 cores (Tests/Programs/threads.c)", threads, 4000),
        "swift": ("Swift matrix multiply, swiftc -O (Tests/Programs/matrix.swift)", swift, 100),
        "deep": ("C, work at the leaves of 100-200-frame recursion (bench_deep.c)", deep, 20000),
    }


def configurations(lib, tmp):
    """name -> (label, function(argv, run_tag) -> (argv, extra env, output file to check))."""
    def base(argv, tag):
        return argv, {}, None

    def stacksampler(mode, period):
        def make(argv, tag):
            out = os.path.join(tmp, f"ss-{tag}.folded")
            env = {"LD_PRELOAD": lib, "STACKSAMPLER_OUTPUT": out, "STACKSAMPLER_MODE": mode,
                   "STACKSAMPLER_PERIOD": period, "STACKSAMPLER_SUMMARY": os.path.join(tmp, f"ss-{tag}.summary")}
            return argv, env, out
        return make

    def gperftools(freq):
        def make(argv, tag):
            out = os.path.join(tmp, f"gp-{tag}.prof")
            return argv, {"LD_PRELOAD": GPERF_LIB, "CPUPROFILE": out, "CPUPROFILE_FREQUENCY": str(freq)}, out
        return make

    def perf(freq):
        def make(argv, tag):
            out = os.path.join(tmp, f"perf-{tag}.data")
            return ["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", str(freq), "-g", "-o", out, "--"] + argv, {}, out
        return make

    return {
        "none": ("no profiler", base),
        "none-again": ("no profiler (A/A control)", base),
        "ss-cpu-100": ("StackSampler cpu 100 Hz", stacksampler("cpu", "10ms")),
        "ss-wall-100": ("StackSampler wall 100 Hz", stacksampler("wall", "10ms")),
        "ss-wall-1k": ("StackSampler wall 1 kHz", stacksampler("wall", "1ms")),
        "gp-100": ("gperftools 100 Hz", gperftools(100)),
        "gp-1k": ("gperftools 1 kHz", gperftools(1000)),
        "perf-100": ("perf record -F 100 -g", perf(100)),
        "perf-1k": ("perf record -F 1000 -g", perf(1000)),
    }
