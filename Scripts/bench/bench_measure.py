"""The measuring steps: machine facts, calibration, slowdown, attribution, handler time, start-up time."""
import json
import os
import re
import shutil
import subprocess
import time

from bench_common import BenchError, GPERF_LIB, LoadMeter, QuietGate, SPLIT_FUNCTIONS, checksum_of, children_cpu_seconds, clean_env, cpu_busy_seconds, load, log, median, meter_round_load, run_timed, save
from bench_setup import configurations, split_argv, workloads
from bench_shares import measured_shares, parse_summary, profile_shares


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
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "Sources"], capture_output=True, text=True).stdout.strip()
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
    argv = split_argv(args.bins, sizes["split"]["attribution_work"])
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
                counts, total = profile_shares(kind, produced, argv[0])
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
