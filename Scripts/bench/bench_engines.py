"""cpu mode's two engines side by side with perf at the same rate: achieved rate at 1 ms and
100 us, attribution at 1 kHz, slowdown at 1 kHz and at equal delivered rates with the cost per
delivered sample, and page faults counted as events."""
import os
import re
import statistics
import struct
import subprocess
import time

from bench_common import (GPERF_LIB, SPLIT_FUNCTIONS, LoadMeter, QuietGate, children_cpu_seconds, cpu_busy_seconds, load, log,
                          meter_round_load, run_timed, save)
from bench_setup import split_argv
from bench_shares import measured_shares, shares_from_folded_lines, stacks_from_perf


def _ss_env(lib, out, period, engine, extra=None):
    env = {"LD_PRELOAD": lib, "STACKSAMPLER_OUTPUT": out, "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": period,
           "STACKSAMPLER_ENGINE": engine, "STACKSAMPLER_SUMMARY": out + ".summary"}
    env.update(extra or {})
    return env


def _summary_rate(path):
    with open(path) as f:
        m = re.search(r"effective rate ([\d.]+) samples per CPU-second", f.read())
    return float(m.group(1)) if m else None


def _perf_samples(data):
    return len(stacks_from_perf(data))


def _ss_signals(summary):
    """Samples the engine delivered (signals handled): the summary's samples less the periods
    that timers merged into them (si_overrun), which count in the profile but cost nothing."""
    with open(summary) as f:
        text = f.read()
    samples = int(re.search(r"(\d+) samples from", text).group(1))
    merged = re.search(r"timer overruns: (\d+)", text)
    return samples - (int(merged.group(1)) if merged else 0)


def _gperf_samples(path):
    """Samples in a gperftools CPU profile (binary: header, then count, depth, PCs per record)."""
    with open(path, "rb") as f:
        data = f.read()
    words = struct.unpack(f"<{len(data) // 8}Q", data[: len(data) // 8 * 8])
    i, total = 2 + words[1], 0
    while i + 2 <= len(words):
        count, depth = words[i], words[i + 1]
        if count == 0 and depth == 1:  # trailer
            break
        total += count
        i += 2 + depth
    return total


def cmd_engines(args):
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    sizes = load(args.work, "sizes.json")["split"]
    out, err = os.path.join(tmp, "engines.out"), os.path.join(tmp, "engines.err")
    result = {"rates": {}, "attribution": {}, "slowdown": {}, "page_faults": {}}

    # Achieved rate: samples per CPU-second of the single-threaded split workload.
    for period, freq in (("1ms", 1000), ("100us", 10000)):
        row = {}
        for engine in ("perf", "timer"):
            target = os.path.join(tmp, f"rate-{engine}-{period}.folded")
            run_timed(split_argv(args.bins, sizes["work"]), _ss_env(args.lib, target, period, engine), out, err)
            row[f"StackSampler {engine} engine"] = _summary_rate(target + ".summary")
        data = os.path.join(tmp, f"rate-perf-{period}.data")
        _, cpu = run_timed(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", str(freq), "-g", "-o", data, "--"]
                           + split_argv(args.bins, sizes["work"]), {}, out, err)
        row["perf record"] = _perf_samples(data) / cpu if cpu > 0 else None
        result["rates"][period] = row
        log(f"engines: rates at {period}: {row}")

    # Attribution at 1 kHz: sample counts pooled over 3 runs against the workload's own measurement.
    pooled = {"StackSampler perf engine 1 kHz": [], "perf record -F 1000": []}
    truth = []
    for run in range(3):
        target = os.path.join(tmp, f"attr-ss-{run}.folded")
        run_timed(split_argv(args.bins, sizes["attribution_work"]), _ss_env(args.lib, target, "1ms", "perf"), out, err)
        with open(target) as f:
            pooled["StackSampler perf engine 1 kHz"].append(shares_from_folded_lines(f, SPLIT_FUNCTIONS)[0])
        truth.append(measured_shares(out))
        data = os.path.join(tmp, f"attr-perf-{run}.data")
        run_timed(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", "1000", "-g", "-o", data, "--"]
                  + split_argv(args.bins, sizes["attribution_work"]), {}, out, err)
        pooled["perf record -F 1000"].append(shares_from_folded_lines(stacks_from_perf(data), SPLIT_FUNCTIONS)[0])
        truth.append(measured_shares(out))
    measured = {f: statistics.mean(t[f] for t in truth) for f in SPLIT_FUNCTIONS}
    for name, runs in pooled.items():
        inside = sum(sum(r.values()) for r in runs)
        shares = {f: sum(r[f] for r in runs) / inside for f in SPLIT_FUNCTIONS}
        result["attribution"][name] = max(abs(shares[f] - measured[f]) * 100 for f in SPLIT_FUNCTIONS)
    log(f"engines: attribution {result['attribution']}")

    result["slowdown"], result["delivered"] = _slowdown(args, split_argv(args.bins, sizes["work"]), tmp, out, err)
    log(f"engines: slowdown {result['slowdown']}")
    result["thread_losses"] = _thread_losses(args, tmp, out, err)
    log(f"engines: time taken from the sampled thread per sample {result['thread_losses']['rows']}")

    # Page faults as events: 100,000 fresh pages touched in one function, a sample per fault.
    program = os.path.join(tmp, "page_faults")
    subprocess.run(["gcc", "-O2", "-I", "Tests/Programs", "-o", program, "Tests/Programs/page_faults.c"], check=True)
    target = os.path.join(tmp, "faults.folded")
    run_timed([program], _ss_env(args.lib, target, "10ms", "perf", {"STACKSAMPLER_EVENT": "page-faults", "STACKSAMPLER_EVENT_PERIOD": "1",
                                                                     "STACKSAMPLER_BUFFER_SIZE": "16384", "STACKSAMPLER_MAX_DEPTH": "32"}),
              out, err)
    with open(target) as f:
        touched = sum(int(line.rsplit(" ", 1)[1]) for line in f if "touch_pages" in line)
    result["page_faults"] = {"pages": 100000, "samples in touch_pages": touched}
    log(f"engines: page faults {result['page_faults']}")
    save(args.work, "engines.json", result)


# Slowdown configurations: (profiler, asked rate, StackSampler engine or profiler argument, period).
# gperftools' "1 kHz" (setitimer ITIMER_PROF) and the timer engine fire only at scheduler ticks, about
# 250 samples per CPU-second at HZ=250, where the perf engine at 1 ms delivers 1000: the rows at 4 ms
# and 250 Hz compare them at equal delivered rates. The 1 s / 1 Hz rows deliver about one sample: what
# each profiler costs a process whatever it samples (start-up, sampler thread, writing the profile).
SLOWDOWN_ROWS = [
    # name, kind, argument, fixed-cost row it is compared against
    ("StackSampler perf engine 1 kHz (auto)", "ss", ("1ms", "auto"), "StackSampler timer engine 1 s (fixed cost)"),
    ("StackSampler perf engine 4 ms (--engine perf)", "ss", ("4ms", "perf"), "StackSampler perf engine 1 s (--engine perf, fixed cost)"),
    ("StackSampler timer engine 1 kHz", "ss", ("1ms", "timer"), "StackSampler timer engine 1 s (fixed cost)"),
    ("gperftools 1 kHz", "gperf", "1000", "gperftools 1 Hz (fixed cost)"),
    ("perf record -F 1000 -g", "perf", "1000", "perf record -F 1 -g (fixed cost)"),
    ("perf record -F 250 -g", "perf", "250", "perf record -F 1 -g (fixed cost)"),
    ("StackSampler timer engine 1 s (fixed cost)", "ss", ("1s", "timer"), None),
    ("StackSampler perf engine 1 s (--engine perf, fixed cost)", "ss", ("1s", "perf"), None),
    ("gperftools 1 Hz (fixed cost)", "gperf", "1", None),
    ("perf record -F 1 -g (fixed cost)", "perf", "1", None),
]


def _slowdown(args, argv, tmp, out, err):
    """Interleaved rounds of every row of SLOWDOWN_ROWS against the unprofiled run: the median
    of the wall-time ratios, the median added wall time, the samples each delivered, and the
    added wall time per delivered sample beyond the profiler's fixed cost (its 1 s / 1 Hz row).
    `argv`: the split workload's command line."""

    def run(name, kind, argument, tag):
        if kind == "ss":
            period, engine = argument
            target = os.path.join(tmp, f"sl-{tag}.folded")
            wall, cpu = run_timed(argv, _ss_env(args.lib, target, period, engine), out, err)
            return wall, cpu, _ss_signals(target + ".summary")
        if kind == "gperf":
            target = os.path.join(tmp, f"sl-{tag}.prof")
            wall, cpu = run_timed(argv, {"LD_PRELOAD": GPERF_LIB, "CPUPROFILE": target, "CPUPROFILE_FREQUENCY": argument}, out, err)
            return wall, cpu, _gperf_samples(target)
        data = os.path.join(tmp, f"sl-{tag}.data")
        wall, cpu = run_timed(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", argument, "-g", "-o", data,
                               "--"] + argv, {}, out, err)
        return wall, cpu, _perf_samples(data)

    runs = {name: [] for name, *_ in SLOWDOWN_ROWS}
    bases, loads = [], []
    gate = QuietGate(args.max_wait)
    with LoadMeter() as meter:
        for round_number in range(args.rounds):
            gate.wait()
            start = (cpu_busy_seconds(), children_cpu_seconds(), time.monotonic())
            base, base_cpu = run_timed(argv, {}, out, err)
            bases.append((base, base_cpu))
            for index, (name, kind, argument, _) in enumerate(SLOWDOWN_ROWS):
                wall, cpu, samples = run(name, kind, argument, f"{round_number}-{index}")
                runs[name].append({"wall": wall, "cpu": cpu, "samples": samples, "base": base, "base_cpu": base_cpu})
            loads.append(meter_round_load(start))
    slowdown = {name: (statistics.median(r["wall"] / r["base"] for r in rs) - 1) * 100 for name, rs in runs.items()}
    delivered = {"load": {"other_cores_per_round": loads, "phase": meter.result, "waited_s": gate.waited},
                 "unprofiled_s": statistics.median(b for b, _ in bases), "rows": {}}
    added = {name: statistics.median(r["wall"] - r["base"] for r in rs) for name, rs in runs.items()}
    added_cpu = {name: statistics.median(r["cpu"] - r["base_cpu"] for r in rs) for name, rs in runs.items()}
    for name, kind, argument, fixed in SLOWDOWN_ROWS:
        rs = runs[name]
        samples = statistics.median(r["samples"] for r in rs)
        cpu_seconds = statistics.median(r["base_cpu"] for r in rs)
        row = {"slowdown_pct": slowdown[name], "added_ms": added[name] * 1000, "added_cpu_ms": added_cpu[name] * 1000,
               "samples": samples, "per_cpu_second": samples / cpu_seconds if cpu_seconds > 0 else None,
               "us_per_sample_gross": added[name] / samples * 1e6 if samples else None, "fixed_row": fixed}
        if fixed and samples:
            row["us_per_sample"] = (added[name] - added[fixed]) / samples * 1e6
            row["cpu_us_per_sample"] = (added_cpu[name] - added_cpu[fixed]) / samples * 1e6
        delivered["rows"][name] = row
    return slowdown, delivered


# The sampled thread's own losses, per delivered sample (gap_probe): unlike wall time, barely
# moved by other processes on the machine.
LOSS_ROWS = [
    ("StackSampler perf engine 1 kHz (auto)", "ss", ("1ms", "auto")),
    ("StackSampler perf engine 4 ms (--engine perf)", "ss", ("4ms", "perf")),
    ("StackSampler timer engine 1 kHz", "ss", ("1ms", "timer")),
    ("gperftools 1 kHz", "gperf", "1000"),
    ("perf record -F 1000 -g", "perf", "1000"),
    ("perf record -F 250 -g", "perf", "250"),
]


def _gap_run(argv, env, out, err):
    run_timed(argv, env, out, err)
    with open(out) as f:
        m = re.search(r"gaps (\d+) lost_ms ([\d.]+)", f.read())
    return int(m.group(1)), float(m.group(2))


def _thread_losses(args, tmp, out, err, seconds="1"):
    """gap_probe (1 s of CPU) unprofiled and under each row of LOSS_ROWS, interleaved: the time
    taken from the thread in gaps under 200 us, less the unprofiled run's, per delivered sample."""
    probe = [os.path.join(args.bins, "gap_probe"), seconds]
    base, rows = [], {name: [] for name, *_ in LOSS_ROWS}
    for round_number in range(args.rounds):
        base.append(_gap_run(probe, {}, out, err))
        for index, (name, kind, argument) in enumerate(LOSS_ROWS):
            tag = f"gap-{round_number}-{index}"
            if kind == "ss":
                target = os.path.join(tmp, tag + ".folded")
                gaps, lost = _gap_run(probe, _ss_env(args.lib, target, *argument), out, err)
                samples = _ss_signals(target + ".summary")
            elif kind == "gperf":
                target = os.path.join(tmp, tag + ".prof")
                gaps, lost = _gap_run(probe, {"LD_PRELOAD": GPERF_LIB, "CPUPROFILE": target, "CPUPROFILE_FREQUENCY": argument}, out, err)
                samples = _gperf_samples(target)
            else:
                data = os.path.join(tmp, tag + ".data")
                gaps, lost = _gap_run(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", argument, "-g", "-o", data,
                                       "--"] + probe, {}, out, err)
                samples = _perf_samples(data)
            rows[name].append({"gaps": gaps, "lost_ms": lost, "samples": samples, "base_gaps": base[-1][0], "base_lost_ms": base[-1][1]})
    result = {"unprofiled": {"gaps": statistics.median(g for g, _ in base), "lost_ms": statistics.median(l for _, l in base)},
              "rows": {}}
    for name, runs in rows.items():
        samples = statistics.median(r["samples"] for r in runs)
        result["rows"][name] = {
            "samples": samples,
            "extra_gaps": statistics.median(r["gaps"] - r["base_gaps"] for r in runs),
            "extra_lost_ms": statistics.median(r["lost_ms"] - r["base_lost_ms"] for r in runs),
            "us_per_sample": statistics.median((r["lost_ms"] - r["base_lost_ms"]) * 1000 / r["samples"] for r in runs if r["samples"]),
        }
    return result
