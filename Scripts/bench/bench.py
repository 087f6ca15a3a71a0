#!/usr/bin/env python3
"""Measurement helpers for Scripts/bench.sh: interleaved timed runs, profile parsing, report.

Subcommands (each reads/writes JSON in the work directory given with --work):
  machine      facts about the machine (nproc, CPU, kernel, HZ estimate, tool versions)
  calibrate    sizes each workload so one unprofiled run takes about --seconds
  slowdown     interleaved runs of every configuration of every workload (A B C … per round)
  attribution  5-second runs of the split workload under each profiler, shares vs ground truth
  handler      one run at a 30-frame stack depth for the handler-time budget; a bare libunwind walk for reference
  startup      /bin/true with and without the preload library (hyperfine, else own loop)
  report       writes BENCHMARKS.md from the JSON files

Everything prints progress to stderr and exits non-zero with a message on the first failure.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

GPERF_LIB = "/usr/lib/x86_64-linux-gnu/libprofiler.so"
SPLIT_FUNCTIONS = ["work_fifty", "work_thirty", "work_twenty"]
# Variables of ours or of the tools that must not leak from the caller's environment.
STRIPPED_ENV_PREFIXES = ("STACKSAMPLER_", "CPUPROFILE", "LD_PRELOAD", "PERF_")


class BenchError(Exception):
    pass


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def load(work, name):
    with open(os.path.join(work, name)) as f:
        return json.load(f)


def save(work, name, data):
    path = os.path.join(work, name)
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_ENV_PREFIXES)}
    return env


# ---------------------------------------------------------------------------------------------
# Workloads and profiler configurations


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


# ---------------------------------------------------------------------------------------------
# Running one command


def run_timed(argv, extra_env, stdout_path, stderr_path):
    """Runs argv; returns (wall seconds, child CPU seconds). Raises on a non-zero exit."""
    path = shutil.which(argv[0]) if os.sep not in argv[0] else argv[0]
    if path is None:
        raise BenchError(f"{argv[0]} not found")
    env = clean_env()
    env.update(extra_env)
    actions = [
        (os.POSIX_SPAWN_OPEN, 1, stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    start = time.perf_counter()
    pid = os.posix_spawn(path, argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(stderr_path, errors="replace") as f:
            tail = f.read()[-2000:]
        raise BenchError(f"exit status {code} from {' '.join(argv)} (env {extra_env}):\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime


def checksum_of(stdout_path):
    with open(stdout_path) as f:
        for line in f:
            if line.startswith("checksum"):
                return line.split()[1]
    raise BenchError(f"no checksum line in {stdout_path}")


def cpu_busy_seconds():
    """Busy CPU seconds of the whole machine so far (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / ticks


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + mine.ru_utime + mine.ru_stime


def meter_round_load(start):
    """Cores kept busy by other processes since `start` (from cpu_busy_seconds,
    children_cpu_seconds, time.monotonic)."""
    busy, ours, wall = start
    other = (cpu_busy_seconds() - busy) - (children_cpu_seconds() - ours)
    return round(max(0.0, other) / max(time.monotonic() - wall, 1e-9), 2)


class LoadMeter:
    """Average number of cores kept busy by processes other than ours during a phase."""

    def __enter__(self):
        self.busy, self.ours, self.wall = cpu_busy_seconds(), children_cpu_seconds(), time.monotonic()
        self.load_start = os.getloadavg()[0]
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.wall
        other = (cpu_busy_seconds() - self.busy) - (children_cpu_seconds() - self.ours)
        self.result = {"seconds": round(wall, 1), "other_cores": round(max(0.0, other) / max(wall, 1e-9), 2),
                       "loadavg_start": self.load_start, "loadavg_end": os.getloadavg()[0]}
        return False


class QuietGate:
    """Waits, before a round, until other processes leave the cores alone (they share this
    machine: builds, tests), within a total budget of waiting for the phase. Rounds run all
    the same when the budget is spent; their load is recorded and reported."""

    def __init__(self, max_wait, threshold=0.25):
        self.left, self.threshold, self.waited = max_wait, threshold, 0.0

    @staticmethod
    def other_load(seconds=0.5):
        busy = cpu_busy_seconds()
        time.sleep(seconds)
        return (cpu_busy_seconds() - busy) / seconds  # we are idle meanwhile: all of it is others'

    def wait(self):
        load = self.other_load()
        announced = False
        while load > self.threshold and self.left > 0:
            if not announced:
                log(f"waiting for other processes to quieten ({load:.2f} cores busy; {self.left:.0f} s of waiting left)")
                announced = True
            time.sleep(2)
            self.left -= 2.5
            self.waited += 2.5
            load = self.other_load()
        return load


# ---------------------------------------------------------------------------------------------
# Parsing profiles


def parse_summary(path):
    with open(path) as f:
        text = f.read()
    out = {}
    m = re.search(r"profiler cost: handler ([\d.]+) us median, ([\d.]+) us p99 per sample; sampler thread ([\d.]+) ms CPU; symbolization ([\d.]+) ms", text)
    if not m:
        raise BenchError(f"no 'profiler cost' line in {path}:\n{text}")
    out.update(handler_median_us=float(m[1]), handler_p99_us=float(m[2]), sampler_cpu_ms=float(m[3]), symbolization_ms=float(m[4]))
    m = re.search(r"effective rate ([\d.]+) samples per (CPU-second|second) per thread \(median of (\d+) threads; asked ([\d.]+)\)", text)
    if m:
        out.update(rate=float(m[1]), rate_basis=m[2], rate_threads=int(m[3]), asked=float(m[4]))
    m = re.search(r"(\d+) samples from (\d+) of (\d+) threads in ([\d.]+) s", text)
    if m:
        out.update(samples=int(m[1]), threads=int(m[3]), seconds=float(m[4]))
    m = re.search(r"lost: (\d+) dropped .*?, (\d+) truncated .*?, (\d+) leaf-only .*?, (\d+) unwind failures, (\d+) missed ticks", text)
    if m:
        out.update(dropped=int(m[1]), truncated=int(m[2]), leaf_only=int(m[3]), unwind_failures=int(m[4]), missed_ticks=int(m[5]))
    return out


def normalize_frame(frame):
    frame = re.sub(r"<[0-9a-fA-F]+>$", "", frame.strip())  # google-pprof --collapsed: name<address>
    return re.sub(r"\+0x[0-9a-fA-F]+$", "", frame)


def shares_from_folded_lines(lines, functions):
    counts = dict.fromkeys(functions, 0)
    total = 0
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        try:
            n = int(count)
        except ValueError:
            continue
        total += n
        frames = {normalize_frame(f) for f in stack.split(";")}
        for fn in functions:
            if fn in frames:
                counts[fn] += n
    return counts, total


def stacks_from_perf(perf_data):
    """perf script output collapsed to folded lines (root first), one per sample."""
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "comm,tid,ip,sym"],
                          check=True, capture_output=True, text=True).stdout
    lines, frames = [], []
    for line in text.splitlines() + [""]:
        if line.startswith((" ", "\t")) and line.strip():
            parts = line.split(None, 1)
            frames.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
        elif frames or not line.strip():
            if frames:
                lines.append(";".join(reversed(frames)) + " 1")
            frames = []
    return lines


def profile_shares(kind, path, binary):
    if kind == "ss":
        with open(path) as f:
            return shares_from_folded_lines(f, SPLIT_FUNCTIONS)
    if kind == "gp":
        text = subprocess.run(["google-pprof", "--collapsed", binary, path], check=True,
                              capture_output=True, text=True).stdout
        return shares_from_folded_lines(text.splitlines(), SPLIT_FUNCTIONS)
    if kind == "perf":
        return shares_from_folded_lines(stacks_from_perf(path), SPLIT_FUNCTIONS)
    raise ValueError(kind)


def measured_shares(stdout_path):
    shares = {}
    with open(stdout_path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "measured":
                shares[parts[1]] = float(parts[2])
    if set(shares) != set(SPLIT_FUNCTIONS):
        raise BenchError(f"bench_split printed no ground truth in {stdout_path}")
    return shares


# ---------------------------------------------------------------------------------------------
# Phases


def cmd_machine(args):
    info = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "nproc": os.cpu_count(), "kernel": os.uname().release}
    with open("/proc/cpuinfo") as f:
        models = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
    info["cpu"] = models[0] if models else "unknown"
    with open("/proc/meminfo") as f:
        info["memory_gb"] = round(int(f.readline().split()[1]) / 1048576, 1)
    probe = subprocess.run([os.path.join(args.bins, "hz_probe"), "0.4"], check=True, capture_output=True, text=True).stdout
    measured = float(re.search(r"hz (\d+)", probe)[1])
    info["hz_measured"] = measured
    info["hz_estimate"] = min((100, 250, 300, 1000), key=lambda hz: abs(hz - measured))

    def version(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return "not found"
    info["tools"] = {
        "swift": version(["swift", "--version"]),
        "gcc": version(["gcc", "--version"]),
        "perf": version(["perf", "--version"]),
        "gperftools": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libgoogle-perftools4"],
                                     capture_output=True, text=True).stdout.strip() or "unknown",
        "hyperfine": version(["hyperfine", "--version"]) if shutil.which("hyperfine") else "not installed",
    }
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "Sources", "CSupport"], capture_output=True, text=True).stdout.strip()
        info["engine_dirty"] = bool(dirty)
    except (OSError, subprocess.CalledProcessError):
        info["commit"] = "unknown"
    save(args.work, "machine.json", info)
    log(f"machine: {info['nproc']} cores, {info['cpu']}, kernel {info['kernel']}, HZ about {info['hz_estimate']} ({measured:.0f} measured)")


def cmd_calibrate(args):
    """Sizes the work from CPU time, not wall time, so that a busy machine does not shrink it:
    a single-threaded workload's run time is its CPU time; eight threads on N cores take
    CPU time / min(8, N)."""
    sizes = {}
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    for name, (_, build, probe) in workloads(args.bins).items():
        parallel = min(8, os.cpu_count() or 1) if name == "threads8" else 1
        out, err = os.path.join(tmp, "cal.out"), os.path.join(tmp, "cal.err")
        run_timed(build(probe), {}, out, err)  # warm-up (page cache, CPU frequency)
        cpu = min(run_timed(build(probe), {}, out, err)[1] for _ in range(2))
        per_unit = cpu / parallel / probe
        sizes[name] = {"work": max(1, round(args.seconds / per_unit)), "target_seconds": args.seconds}
        if name == "split":
            sizes[name]["attribution_work"] = max(1, round(args.attribution_seconds / per_unit))
        log(f"calibrate: {name}: {sizes[name]['work']} units for about {args.seconds} s")
    save(args.work, "sizes.json", sizes)


def cmd_slowdown(args):
    sizes = load(args.work, "sizes.json")
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    configs = configurations(args.lib, tmp)
    names = list(configs)
    results = {}
    gate = QuietGate(args.max_wait)
    selected = args.workloads.split(",") if args.workloads else list(workloads(args.bins))
    for wname in selected:
        desc, build, _ = workloads(args.bins)[wname]
        argv = build(sizes[wname]["work"])
        runs = {c: [] for c in names}
        summaries = {c: [] for c in names if c.startswith("ss-")}
        reference = None
        round_loads = []
        with LoadMeter() as meter:
            for r in range(args.rounds):
                gate.wait()
                # Rotate the order each round, so that no configuration always follows another.
                order = names[r % len(names):] + names[:r % len(names)]
                round_start = (cpu_busy_seconds(), children_cpu_seconds(), time.monotonic())
                for c in order:
                    tag = f"{wname}-{c}-{r}"
                    cargv, env, produced = configs[c][1](argv, tag)
                    out, err = os.path.join(tmp, f"{tag}.out"), os.path.join(tmp, f"{tag}.err")
                    wall, cpu = run_timed(cargv, env, out, err)
                    sum_ = checksum_of(out)
                    if reference is None:
                        reference = sum_
                    elif sum_ != reference:
                        raise BenchError(f"{tag}: checksum {sum_} differs from {reference}: the work is not fixed")
                    if produced and not (os.path.exists(produced) and os.path.getsize(produced) > 0):
                        raise BenchError(f"{tag}: the profiler wrote no output to {produced}")
                    runs[c].append({"wall": wall, "cpu": cpu})
                    if c in summaries:
                        summaries[c].append(parse_summary(env["STACKSAMPLER_SUMMARY"]))
                    for leftover in (produced, out, err):
                        if leftover and os.path.exists(leftover) and not leftover.endswith(".summary"):
                            os.remove(leftover)
                round_loads.append(meter_round_load(round_start))
                base = runs["none"][-1]["wall"]
                log(f"slowdown: {wname} round {r + 1}/{args.rounds}: " + ", ".join(
                    f"{c} {runs[c][-1]['wall'] / base:.3f}" for c in names if c != "none"))
        results[wname] = {"description": desc, "argv": argv, "runs": runs, "summaries": summaries, "load": meter.result,
                          "round_loads": round_loads, "waited_seconds": gate.waited}
        log(f"slowdown: {wname}: other processes kept {meter.result['other_cores']} cores busy on average")
        save(args.work, "slowdown.json", results)  # after each workload, so a late failure keeps the rest
    save(args.work, "slowdown.json", results)


def cmd_attribution(args):
    sizes = load(args.work, "sizes.json")
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    configs = configurations(args.lib, tmp)
    binary = os.path.join(args.bins, "bench_split")
    argv = [binary, str(sizes["split"]["attribution_work"])]
    chosen = [("ss-cpu-100", "ss"), ("ss-wall-100", "ss"), ("gp-100", "gp"), ("perf-100", "perf")]
    results = {c: [] for c, _ in chosen}
    gate = QuietGate(args.max_wait)
    with LoadMeter() as meter:
        for r in range(args.repeats):
            gate.wait()
            for c, kind in chosen:
                tag = f"attr-{c}-{r}"
                cargv, env, produced = configs[c][1](argv, tag)
                out, err = os.path.join(tmp, f"{tag}.out"), os.path.join(tmp, f"{tag}.err")
                wall, _ = run_timed(cargv, env, out, err)
                truth = measured_shares(out)
                counts, total = profile_shares(kind, produced, binary)
                inside = sum(counts.values())
                if inside == 0:
                    raise BenchError(f"{tag}: no samples in the three functions ({total} samples in all)")
                shares = {fn: counts[fn] / inside for fn in SPLIT_FUNCTIONS}
                errors = {fn: 100 * (shares[fn] - truth[fn]) for fn in SPLIT_FUNCTIONS}
                results[c].append({"truth": truth, "shares": shares, "errors_pp": errors, "samples_in_three": inside,
                                   "samples": total, "wall": wall})
                log(f"attribution: {c} run {r + 1}/{args.repeats}: {inside} samples; error " +
                    " ".join(f"{fn} {errors[fn]:+.1f}" for fn in SPLIT_FUNCTIONS) + " pp")
                os.remove(produced)
    save(args.work, "attribution.json", {"argv": argv, "results": results, "load": meter.result})


def cmd_handler(args):
    """Handler time at the budget's 30-frame stack: bench_deep at depth 25-27 (+ 3-4 frames)."""
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    sizes = load(args.work, "sizes.json")
    configs = configurations(args.lib, tmp)
    argv = [os.path.join(args.bins, "bench_deep"), str(sizes["deep"]["work"] * 2), "25", "27"]
    results = []
    for mode in ("ss-cpu-100", "ss-wall-1k"):
        cargv, env, produced = configs[mode][1](argv, f"handler30-{mode}")
        out, err = os.path.join(tmp, "handler.out"), os.path.join(tmp, "handler.err")
        run_timed(cargv, env, out, err)
        summary = parse_summary(env["STACKSAMPLER_SUMMARY"])
        with open(produced) as f:
            depths = sorted(len(l.rpartition(" ")[0].split(";")) for l in f if l.strip())
        summary["depth_range"] = [depths[0], depths[-1]] if depths else None
        summary["config"] = mode
        results.append(summary)
        log(f"handler: 30-frame stacks, {mode}: {summary['handler_median_us']} us median, {summary['handler_p99_us']} us p99 over {summary.get('samples')} samples")
    # The floor on this machine: libunwind alone in a SIGPROF handler, no profiler around it.
    probe = []
    for period_us in (10000, 1000):
        probe_argv = [os.path.join(args.bins, "unwind_probe"), "2", str(period_us)]
        text = subprocess.run(probe_argv, capture_output=True, text=True, check=True).stdout
        values = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        probe.append({"period_us": period_us, "first_us": float(values["first_us"]), "second_us": float(values["second_us"]),
                      "samples": int(values["samples"]), "command": " ".join(probe_argv)})
        log(f"handler: bare unw_backtrace in a handler every {period_us} us of CPU: first walk {values['first_us']} us, "
            f"again at once {values['second_us']} us")
    save(args.work, "handler.json", {"argv": argv, "results": results, "unwind_probe": probe})


def cmd_startup(args):
    """Fixed cost per process: /bin/true without a profiler, with the preload library idle and
    active, with gperftools active, and under perf record (fewer runs: it takes ~0.2 s)."""
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    true = "/bin/true" if os.path.exists("/bin/true") else shutil.which("true")
    unset = ["env", "-u", "LD_PRELOAD"]
    variants = {
        "none": unset + [true],
        "idle": unset + [f"LD_PRELOAD={args.lib}", true],
        "active": unset + [f"LD_PRELOAD={args.lib}", f"STACKSAMPLER_OUTPUT={tmp}/true-%p.folded", true],
        "gperftools": unset + [f"LD_PRELOAD={GPERF_LIB}", f"CPUPROFILE={tmp}/true.prof", true],
    }
    slow_variants = {
        "perf": unset + ["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", "100", "-g",
                         "-o", f"{tmp}/true.data", "--", true],
    }
    times = {k: [] for k in list(variants) + list(slow_variants)}
    with LoadMeter() as meter:
        if shutil.which("hyperfine"):
            method = (f"hyperfine -N --warmup 10, {args.runs} runs per command in {args.chunks} alternating batches "
                      f"(perf record: {args.slow_runs} runs)")

            def hyperfine(commands, runs):
                export = os.path.join(tmp, "hyperfine.json")
                subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", "10" if runs > 20 else "2",
                                "--runs", str(runs), "--export-json", export] + [" ".join(c) for c in commands],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env())
                with open(export) as f:
                    return [r["times"] for r in json.load(f)["results"]]

            names = list(variants)
            for chunk in range(args.chunks):
                order = names[chunk % len(names):] + names[:chunk % len(names)]
                for k, ts in zip(order, hyperfine([variants[k] for k in order], max(1, args.runs // args.chunks))):
                    times[k].extend(ts)
                log(f"startup: batch {chunk + 1}/{args.chunks} done")
            for k, command in slow_variants.items():
                times[k].extend(hyperfine([command], args.slow_runs)[0])
        else:
            method = f"own interleaved loop (hyperfine not installed), {args.runs} runs per command (perf record: {args.slow_runs})"
            every = {**variants, **slow_variants}
            for i in range(args.runs + 10):
                for k, command in every.items():
                    if k in slow_variants and not 10 <= i < 10 + args.slow_runs:
                        continue
                    t, _ = run_timed(command, {}, os.devnull, os.path.join(tmp, "true.err"))
                    if i >= 10:
                        times[k].append(t)
        log("startup: done")
    for name in os.listdir(tmp):
        if name.startswith("true"):
            os.remove(os.path.join(tmp, name))
    commands = {k: " ".join(c) for k, c in {**variants, **slow_variants}.items()}
    save(args.work, "startup.json", {"method": method, "times": times, "commands": commands, "load": meter.result})


# ---------------------------------------------------------------------------------------------
# Report


def median(values):
    return statistics.median(values) if values else float("nan")


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def ratio_stats(runs, config, key="wall"):
    base = [r[key] for r in runs["none"]]
    ratios = [r[key] / b for r, b in zip(runs[config], base)]
    lo, hi = quartiles(ratios)
    return median(ratios), lo, hi


def fastest_ratio(runs, config, key="wall"):
    return min(r[key] for r in runs[config]) / min(r[key] for r in runs["none"])


def fmt_pct(ratio):
    return f"{(ratio - 1) * 100:+.1f} %"


def verdict(ok):
    return "within" if ok else "**over**"


def cmd_report(args):
    m = load(args.work, "machine.json")
    slow = load(args.work, "slowdown.json")
    attr = load(args.work, "attribution.json")
    handler = load(args.work, "handler.json")
    start = load(args.work, "startup.json")
    sizes = load(args.work, "sizes.json")
    labels = {k: v[0] for k, v in configurations("LIB", "TMP").items()}
    wnames = list(slow)
    rounds = len(slow[wnames[0]]["runs"]["none"])
    L = []
    w = L.append
    w("# StackSampler benchmarks")
    w("")
    w("Generated by `Scripts/bench.sh` (do not edit the tables by hand; the section after the "
      "`observations` marker at the end is kept when the script rewrites this file).")
    w("")
    w(f"- **Date:** {m['date']}; tree at commit `{m.get('commit')}`" + (" (engine sources modified)" if m.get("engine_dirty") else ""))
    w(f"- **Machine:** {m['nproc']} cores, {m['cpu']}, {m['memory_gb']} GB, kernel {m['kernel']}, "
      f"scheduler tick HZ ≈ {m['hz_estimate']} (a CPU-clock timer at 50 µs fired {m['hz_measured']:.0f} times per CPU-second)")
    t = m["tools"]
    w(f"- **Tools:** {t['swift']}; {t['gcc']}; {t['perf']}; gperftools {t['gperftools']}; {t['hyperfine']}")
    loads = [f"{k} {v['load']['other_cores']} (per round {min(v.get('round_loads') or [0])}–{max(v.get('round_loads') or [0])})"
             for k, v in slow.items()]
    waited = max([v.get("waited_seconds", 0) for v in slow.values()] or [0])  # cumulative over the phase
    w(f"- **Concurrent load** (cores kept busy by other processes, averaged over each phase, from /proc/stat "
      f"minus this benchmark's own CPU): slowdown runs: {', '.join(loads)}; attribution {attr['load']['other_cores']}; "
      f"start-up {start['load']['other_cores']}. On 2 cores anything above ~0.1 makes the absolute times noisy; "
      "the ratios come from interleaved runs, and the A/A row shows the noise floor. "
      f"Before each round the script waited for the other processes to leave the cores (at most a set budget): "
      f"{waited:.0f} s of waiting in the slowdown phase (the budget, `--max-wait`, was spent when it equals it).")
    w("")

    w("## Slowdown (wall time with the profiler ÷ without, fixed work)")
    w("")
    w(f"Each workload does a fixed amount of work sized to about {sizes['split']['target_seconds']} s unprofiled. "
      f"All {len(labels)} configurations of a workload run interleaved, one of each per round in rotating order, "
      f"{rounds} rounds; each cell is the median over rounds of (time ÷ time of the unprofiled run of the same round), "
      "as a percentage, with the interquartile range of those ratios in brackets. Budgets from DESIGN.md: "
      "≤ 1 % at 100 Hz, ≤ 3 % at 1 kHz (wall); gperftools and perf have no budget (reference).")
    w("")
    head = "| configuration | " + " | ".join(wnames) + " | budget |"
    w(head)
    w("|" + "---|" * (len(wnames) + 2))
    budgets = {"ss-cpu-100": 1.01, "ss-wall-100": 1.01, "ss-wall-1k": 1.03}
    for c, label in labels.items():
        if c == "none":
            continue
        cells = []
        for wn in wnames:
            med, lo, hi = ratio_stats(slow[wn]["runs"], c)
            cell = f"{fmt_pct(med)} [{(lo - 1) * 100:+.1f}, {(hi - 1) * 100:+.1f}]"
            if c in budgets and med > budgets[c]:
                cell = f"**{cell}**"
            cells.append(cell)
        b = f"≤ {round((budgets[c] - 1) * 100)} %" if c in budgets else ("noise floor" if c == "none-again" else "—")
        w(f"| {label} | " + " | ".join(cells) + f" | {b} |")
    w("")
    w("Ratio of the fastest runs (shortest time over the rounds ÷ shortest unprofiled time): other processes can only "
      "add time to a run, so on a shared machine this is the estimate least disturbed by them:")
    w("")
    w(head)
    w("|" + "---|" * (len(wnames) + 2))
    for c, label in labels.items():
        if c == "none":
            continue
        cells = []
        for wn in wnames:
            ratio = fastest_ratio(slow[wn]["runs"], c)
            cell = fmt_pct(ratio)
            cells.append(f"**{cell}**" if c in budgets and ratio > budgets[c] else cell)
        b = f"≤ {round((budgets[c] - 1) * 100)} %" if c in budgets else ("noise floor" if c == "none-again" else "—")
        w(f"| {label} | " + " | ".join(cells) + f" | {b} |")
    w("")
    w("CPU time (user + system of the whole process tree, from `wait4`; for perf this includes perf itself) "
      "with the profiler ÷ without, median over the same rounds:")
    w("")
    w(head.replace(" budget |", ""))
    w("|" + "---|" * (len(wnames) + 1))
    for c, label in labels.items():
        if c == "none":
            continue
        w(f"| {label} | " + " | ".join(fmt_pct(ratio_stats(slow[wn]['runs'], c, 'cpu')[0]) for wn in wnames) + " |")
    w("")
    w("Workloads:")
    w("")
    for wn in wnames:
        w(f"- **{wn}**: {slow[wn]['description']}: `{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(slow[wn]['argv']))}`")
    w("")

    w("## StackSampler's own figures (from its summary, median over the slowdown runs)")
    w("")
    w("| workload | mode | samples | handler median | handler p99 | sampler thread CPU | symbolization | effective rate (asked) |")
    w("|---|---|---|---|---|---|---|---|")
    for wn in wnames:
        for c, sums in slow[wn]["summaries"].items():
            if not sums:
                continue
            g = lambda k: median([s[k] for s in sums if k in s])
            wall_s = median([r["wall"] for r in slow[wn]["runs"][c]])
            rate = f"{g('rate'):.1f} / {sums[0]['rate_basis']} ({sums[0]['asked']:.0f})" if "rate" in sums[0] else "—"
            w(f"| {wn} | {labels[c].replace('StackSampler ', '')} | {g('samples'):.0f} | {g('handler_median_us'):.1f} µs | "
              f"{g('handler_p99_us'):.1f} µs | {g('sampler_cpu_ms'):.1f} ms ({100 * g('sampler_cpu_ms') / 1000 / wall_s:.2f} % of a core) | "
              f"{g('symbolization_ms'):.1f} ms | {rate} |")
    w("")
    w("Budgets:")
    w("")
    w("| figure | measured | budget | verdict |")
    w("|---|---|---|---|")
    for h in handler["results"]:
        ok = h["handler_median_us"] <= 2.0
        w(f"| handler time per sample, {h['depth_range'][0]}–{h['depth_range'][1]}-frame stacks, median ({labels[h['config']]}, {h.get('samples')} samples) "
          f"| {h['handler_median_us']:.1f} µs (p99 {h['handler_p99_us']:.1f} µs) | ≤ 2 µs | {verdict(ok)} |")
    for p in handler.get("unwind_probe", []):
        w(f"| reference: libunwind's `unw_backtrace` alone in a SIGPROF handler, 30 frames, every {p['period_us'] // 1000} ms of CPU "
          f"(Scripts/bench/unwind_probe.c, {p['samples']} samples) | {p['first_us']:.1f} µs median; the same walk again at once: "
          f"{p['second_us']:.1f} µs | — | floor on this machine |")
    deep_sums = slow.get("deep", {}).get("summaries", {}).get("ss-cpu-100", [])
    if deep_sums:
        hm = median([s["handler_median_us"] for s in deep_sums])
        w(f"| handler time per sample, 100–200-frame stacks, median (deep, cpu 100 Hz) | {hm:.1f} µs | (≤ 2 µs at 30 frames) | {verdict(hm <= 2.0)} |")
    for wn in wnames:
        sums = slow[wn]["summaries"].get("ss-wall-1k", [])
        if sums and "rate" in sums[0]:
            rate = median([s["rate"] for s in sums])
            dev = 100 * (rate / sums[0]["asked"] - 1)
            w(f"| achieved rate, wall 1 kHz, {wn} (median of threads) | {rate:.1f} /s ({dev:+.1f} %) | within 2 % | {verdict(abs(dev) <= 2)} |")
    tn = start["times"]
    base_med = median(tn["none"])
    # Idle: the C library alone. Profiling: its Swift part loaded, sampling started, the profile written.
    for k, budget in (("idle", 0.5), ("active", 3.0)):
        added = (median(tn[k]) - base_med) * 1000
        mean_added = (statistics.fmean(tn[k]) - statistics.fmean(tn["none"])) * 1000
        what = "STACKSAMPLER_OUTPUT unset (idle)" if k == "idle" else "STACKSAMPLER_OUTPUT set (profiling, profile written at exit)"
        w(f"| start-up time added, `/bin/true`, {what} | {added:.2f} ms median ({mean_added:.2f} ms mean) | ≤ {budget:g} ms "
          f"| {verdict(added <= budget)} |")
    for c in ("ss-cpu-100", "ss-wall-100", "ss-wall-1k"):
        worst = max(ratio_stats(slow[wn]["runs"], c)[0] for wn in wnames)
        worst_fast = max(fastest_ratio(slow[wn]["runs"], c) for wn in wnames)
        lim = budgets[c]
        w(f"| slowdown, {labels[c]}, worst workload | {fmt_pct(worst)} median of ratios; {fmt_pct(worst_fast)} fastest runs "
          f"| ≤ {round((lim - 1) * 100)} % | {verdict(worst <= lim)} (median) / {verdict(worst_fast <= lim)} (fastest) |")
    worst_attr = max(abs(e) for runs in (attr["results"]["ss-cpu-100"],) for r in runs for e in r["errors_pp"].values())
    w(f"| attribution error, cpu 100 Hz, 5 s, worst function of worst run | {worst_attr:.1f} pp | ≤ 3 pp | {verdict(worst_attr <= 3)} |")
    w("")
    w("Fixed cost per process (time added to `/bin/true`, median; the same cost is part of every slowdown run above, "
      f"where it weighs ~1/{sizes['split']['target_seconds']:g} s):")
    w("")
    w("| variant | added to /bin/true | command |")
    w("|---|---|---|")
    names = {"idle": "StackSampler preloaded, idle", "active": "StackSampler preloaded, profiling (cpu 100 Hz)",
             "gperftools": "gperftools preloaded, profiling", "perf": "perf record -F 100 -g"}
    for k, label in names.items():
        if tn.get(k):
            w(f"| {label} | {(median(tn[k]) - base_med) * 1000:.2f} ms | `{start['commands'][k]}` |")
    w(f"| (no profiler: {base_med * 1000:.2f} ms) | | `{start['commands']['none']}` |")
    w("")
    w(f"Method: {start['method']}.")
    w("")

    w("## Attribution error (5 s at 100 Hz, bench_split, shares of the three functions, inclusive)")
    w("")
    runs_n = len(next(iter(attr["results"].values())))
    w(f"Ground truth is the thread CPU time the program measured inside each function in the same run. "
      f"Error = profiler's share − measured share, in percentage points; {runs_n} interleaved runs per profiler, "
      "cells give the mean error and, in brackets, the largest absolute error over the runs. Budget ≤ 3 pp per function.")
    n_expected = median([r["samples_in_three"] for r in attr["results"]["ss-cpu-100"]])
    w(f"For scale: with ~{n_expected:.0f} samples, independent random sampling would give a standard error of "
      f"{100 * (0.25 / n_expected) ** 0.5:.1f} pp on the 50 % function (timer sampling is more regular than that).")
    w("")
    w("| profiler | samples in the three | " + " | ".join(SPLIT_FUNCTIONS) + " | worst | budget |")
    w("|---|---|" + "---|" * len(SPLIT_FUNCTIONS) + "---|---|")
    attr_labels = {"ss-cpu-100": "StackSampler cpu 100 Hz", "ss-wall-100": "StackSampler wall 100 Hz",
                   "gp-100": "gperftools 100 Hz (`google-pprof --collapsed`)", "perf-100": "perf record -F 100 -g (`perf script`, own collapse)"}
    for c, runs in attr["results"].items():
        cells = []
        worst = 0.0
        for fn in SPLIT_FUNCTIONS:
            errs = [r["errors_pp"][fn] for r in runs]
            big = max(abs(e) for e in errs)
            worst = max(worst, big)
            truth = statistics.fmean(r["truth"][fn] for r in runs)
            cells.append(f"{statistics.fmean(errs):+.1f} ({big:.1f}) of {100 * truth:.1f} %")
        samples = median([r["samples_in_three"] for r in runs])
        w(f"| {attr_labels[c]} | {samples:.0f} | " + " | ".join(cells) + f" | {worst:.1f} pp | ≤ 3 pp |")
    w("")

    deadlock = os.path.join(args.work, "deadlock.txt")
    if os.path.exists(deadlock):
        w("## Loader lock: dlopen, exceptions and dl_iterate_phdr under 1 kHz sampling")
        w("")
        w("`Scripts/check-deadlock.sh` runs Tests/Programs/loader_churn.cpp (three threads: dlopen/dlclose of a "
          "library, C++ throw/catch, dl_iterate_phdr, 1500 rounds) under StackSampler at 1 ms, each run killed "
          "if it has not finished after 60 s:")
        w("")
        with open(deadlock) as f:
            for line in f.read().splitlines():
                w(f"- {line}")
        w("")
    w("## Commands")
    w("")
    w("```")
    w("Scripts/bench.sh                       # the whole benchmark; writes BENCHMARKS.md")
    w("swift build -c release --scratch-path .build-bench")
    w("gcc -O2 -pthread -o BIN Scripts/bench/bench_{split,threads,deep}.c; swiftc -O -o bench_matrix Scripts/bench/bench_matrix.swift")
    w("")
    w("# per run (WORKLOAD = one of the workload command lines above):")
    w("WORKLOAD                                                        # no profiler")
    w("LD_PRELOAD=.build-bench/release/libStackSamplerPreload.so STACKSAMPLER_OUTPUT=F STACKSAMPLER_SUMMARY=S \\")
    w("    STACKSAMPLER_MODE=cpu|wall STACKSAMPLER_PERIOD=10ms|1ms WORKLOAD")
    w(f"LD_PRELOAD={GPERF_LIB} CPUPROFILE=F CPUPROFILE_FREQUENCY=100|1000 WORKLOAD")
    w("perf record -q --no-bpf-event -e cpu-clock -F 100|1000 -g -o F -- WORKLOAD   # wall time of the whole command")
    w("")
    w("# attribution")
    w("google-pprof --collapsed bench_split F.prof")
    w("perf script -i F.data -F comm,tid,ip,sym                       # collapsed by Scripts/bench/bench.py")
    w("")
    w("# start-up")
    w("hyperfine -N --warmup 10 --runs N COMMAND...                   # the commands in the fixed-cost table")
    w("```")
    w("")
    w("Notes on the comparison:")
    w("")
    w("- gperftools' profiler (as preloaded, without `CPUPROFILE_PER_THREAD_TIMERS`) samples with "
      "`setitimer(ITIMER_PROF)`: one process-wide timer on the process's CPU time, whose signal goes to "
      "whichever thread is running. At 100 Hz the whole process gets ~100 samples per CPU-second, shared by "
      "all threads (StackSampler's cpu mode gives each thread its own timer: ~100 per thread-CPU-second), "
      f"and both are capped by the tick rate (HZ ≈ {m['hz_estimate']}), so \"1 kHz\" gives at most ~{m['hz_estimate']} per CPU-second.")
    w("- perf samples in the kernel and writes to a ring buffer read by the separate `perf` process; its cost is "
      "mostly outside the target, so the wall time of the whole `perf record` command (including start-up and "
      "writing perf.data) is what is compared. `--no-bpf-event` is added: without it perf 6.1's side-band thread "
      "waits out a 1-second poll timeout after the workload exits (measured: `perf record … -- true` takes 1.13 s "
      "instead of 0.2 s), an artefact that has nothing to do with sampling. `-g` walks frame pointers; the C workloads are built without them "
      "(like most of Debian), so perf's call chains above the leaf are unreliable; the split workload's functions "
      "are leaves, so its attribution is unaffected.")
    w("- StackSampler and gperftools run their exit-time work (symbolization, writing the profile) inside the "
      "measured process; it is included in their times.")
    w("")

    marker = "<!-- observations: hand-written; kept when Scripts/bench.sh rewrites this file -->"
    kept = ""
    if os.path.exists(args.output):
        with open(args.output) as f:
            old = f.read()
        if marker in old:
            kept = old.split(marker, 1)[1]
    w(marker)
    text = "\n".join(L) + (kept if kept else "\n")
    with open(args.output, "w") as f:
        f.write(text)
    log(f"report: wrote {args.output}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["machine", "calibrate", "slowdown", "attribution", "handler", "startup", "report"])
    p.add_argument("--work", required=True, help="directory for JSON results and scratch files")
    p.add_argument("--bins", help="directory with the compiled workloads")
    p.add_argument("--lib", help="libStackSamplerPreload.so")
    p.add_argument("--seconds", type=float, default=1.2, help="unprofiled run length for slowdown runs")
    p.add_argument("--attribution-seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds per workload (slowdown)")
    p.add_argument("--repeats", type=int, default=3, help="runs per profiler (attribution)")
    p.add_argument("--runs", type=int, default=300, help="runs per variant (start-up)")
    p.add_argument("--chunks", type=int, default=3, help="alternating hyperfine batches (start-up)")
    p.add_argument("--slow-runs", type=int, default=15, help="runs of perf record /bin/true (start-up)")
    p.add_argument("--workloads", help="comma-separated subset (slowdown)")
    p.add_argument("--max-wait", type=float, default=0, help="seconds this phase may wait in all for a quiet machine")
    p.add_argument("--output", default="BENCHMARKS.md")
    args = p.parse_args()
    if args.lib:
        args.lib = os.path.abspath(args.lib)
    if args.bins:
        args.bins = os.path.abspath(args.bins)
    os.makedirs(args.work, exist_ok=True)
    try:
        globals()["cmd_" + args.command](args)
    except (BenchError, subprocess.CalledProcessError, OSError) as e:
        detail = ""
        if isinstance(e, subprocess.CalledProcessError) and e.stderr:
            detail = "\n" + (e.stderr if isinstance(e.stderr, str) else e.stderr.decode(errors="replace"))[-2000:]
        log(f"{args.command} failed: {e}{detail}")
        sys.exit(1)


if __name__ == "__main__":
    main()
