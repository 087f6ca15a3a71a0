"""The `stripped-names` subcommand: names of stripped code against perf. Debian's `xz -9 -T1` (its
liblzma stripped: no symbol but the exported ones) compresses --megabytes of generated input
(default 30) once under StackSampler (cpu mode, 1 ms, its own choice of engine; leaf frames
named liblzma.so.5.4.1+0xSTART by the function ranges of the unwind data) and once under
`perf record -e cpu-clock -F 1000` (no names: one row per address), whose rows are summed here
by the same function ranges, read from liblzma's .eh_frame (readelf). Prints a Markdown table of the functions with the most samples
either way, each one's share of all samples under each profiler.

    python3 Scripts/bench/bench.py stripped-names [--megabytes 30]
"""
import bisect
import os
import random
import re
import subprocess

from bench_common import BenchError, LoadMeter, log, run_timed

LIBLZMA = "/usr/lib/x86_64-linux-gnu/liblzma.so.5"
XZ = "/usr/bin/xz"
ROWS = 5


def write_input(path, megabytes):
    """A third pseudo-random bytes, the rest words from a small vocabulary (fixed seed)."""
    generator = random.Random(27)
    size = megabytes * 1_000_000
    words = [b"alpha ", b"beta ", b"gamma ", b"delta ", b"epsilon\n", b"x "]
    text = bytearray(generator.randbytes(size // 3))
    while len(text) < size:
        text += b"".join(generator.choices(words, k=100_000))
    with open(path, "wb") as f:
        f.write(text[:size])


def function_ranges(library):
    """Sorted (start, end) of every FDE of `library`'s .eh_frame, file-relative."""
    dump = subprocess.run(["readelf", "--debug-dump=frames", library], check=True, capture_output=True, text=True).stdout
    ranges = sorted({(int(a, 16), int(b, 16)) for a, b in re.findall(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", dump)})
    if not ranges:
        raise BenchError(f"no FDE in the unwind data of {library} (readelf --debug-dump=frames)")
    return ranges


def stacksampler_leaves(folded, module):
    """(samples per function start in `module`, all samples) from the leaf frames of a folded profile."""
    counts, total = {}, 0
    pattern = re.compile(rf"^{re.escape(module)}\+0x([0-9a-f]+)$")
    with open(folded) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            total += int(count)
            leaf = pattern.match(stack.rsplit(";", 1)[-1])
            if leaf:
                start = int(leaf[1], 16)
                counts[start] = counts.get(start, 0) + int(count)
    return counts, total


def perf_by_range(data, dso, ranges):
    """(samples per function start of `ranges` in `dso`, all samples) from perf's per-address rows."""
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "-q", "--sort", "dso,sym", "-F", "sample,dso,sym"],
                            check=True, capture_output=True, text=True).stdout
    starts = [start for start, _ in ranges]
    counts, total, outside = {}, 0, 0
    for line in report.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].isdigit():
            continue
        samples = int(fields[0])
        total += samples
        if fields[1] != dso or not fields[3].startswith("0x"):
            continue
        address = int(fields[3], 16)
        index = bisect.bisect_right(starts, address) - 1
        if index < 0 or address >= ranges[index][1]:
            outside += samples
            continue
        counts[starts[index]] = counts.get(starts[index], 0) + samples
    if outside:
        log(f"stripped-names: {outside} perf samples in {dso} outside every function range")
    return counts, total


def cmd_stripped_names(args):
    work = os.path.join(args.work, "stripped")
    os.makedirs(work, exist_ok=True)
    library = os.path.realpath(LIBLZMA)
    ranges = function_ranges(library)
    data = os.path.join(work, "input.bin")
    write_input(data, args.megabytes)
    argv = [XZ, "-9", "-T1", "-c", data]
    folded, summary, perf_data = (os.path.join(work, name) for name in ("xz.folded", "xz.summary", "xz.perf"))
    with LoadMeter() as meter:
        wall, cpu = run_timed(argv, {"LD_PRELOAD": args.lib, "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms",
                                   "STACKSAMPLER_OUTPUT": folded, "STACKSAMPLER_SUMMARY": summary},
                            os.devnull, os.path.join(work, "xz-ss.err"))
        log(f"stripped-names: StackSampler run {wall:.1f} s, xz's CPU {cpu:.1f} s")
        wall, _ = run_timed(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-o", perf_data, "--"] + argv, {},
                            os.devnull, os.path.join(work, "xz-perf.err"))
        log(f"stripped-names: perf run {wall:.1f} s")
    module = os.path.basename(library)
    ours, ours_total = stacksampler_leaves(folded, module)
    if not ours:
        raise BenchError(f"no leaf frame named {module}+0x… in {folded}")
    theirs, theirs_total = perf_by_range(perf_data, module, ranges)
    top = sorted(set(sorted(ours, key=ours.get)[-ROWS:]) | set(sorted(theirs, key=theirs.get)[-ROWS:]),
                 key=lambda start: -ours.get(start, 0))
    with open(summary) as f:
        engine = next((line.split("engine: ", 1)[1].split(":")[0].strip() for line in f if "engine: " in line), "not in the summary")
    print(f"xz -9 -T1, {args.megabytes} MB ({module}, {len(ranges)} function ranges); "
          f"StackSampler {ours_total} samples (xz's CPU {cpu:.1f} s), perf {theirs_total}; other processes kept {meter.result['other_cores']} "
          f"cores busy; StackSampler's engine: {engine}")
    print()
    print(f"| `xz -9 -T1`, {args.megabytes} MB ({module}, stripped) | StackSampler | perf, summed by function range |")
    print("|---|---|---|")
    for start in top:
        print(f"| `{module}+0x{start:x}` | {100 * ours.get(start, 0) / ours_total:.1f} % | "
              f"{100 * theirs.get(start, 0) / theirs_total:.1f} % |")
