"""What is measured: the workloads, and the profilers and their settings (StackSampler, gperftools, perf)."""
import os

from bench_common import GPERF_LIB


def workloads(bins, scale=None):
    """name -> (description, argv builder taking the work count)."""
    def split(n): return [os.path.join(bins, "bench_split"), str(n)]
    def threads(n): return [os.path.join(bins, "bench_threads"), str(n)]
    def swift(n): return [os.path.join(bins, "bench_matrix"), str(n)]
    def deep(n): return [os.path.join(bins, "bench_deep"), str(n)]
    return {
        "split": ("C, 1 thread, CPU split 50/30/20 (bench_split.c)", split, 20000),
        "threads8": ("C, 8 busy threads on 2 cores (bench_threads.c)", threads, 4000),
        "swift": ("Swift matrix multiply, swiftc -O (bench_matrix.swift)", swift, 100),
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
