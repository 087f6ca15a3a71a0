"""cpu mode's two engines side by side with perf at the same rate: achieved rate at 1 ms and
100 us, attribution at 1 kHz, slowdown at 1 kHz, and page faults counted as events."""
import os
import re
import statistics
import subprocess

from bench_common import GPERF_LIB, SPLIT_FUNCTIONS, load, log, run_timed, save
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


def cmd_engines(args):
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)
    split = os.path.join(args.bins, "bench_split")
    sizes = load(args.work, "sizes.json")["split"]
    out, err = os.path.join(tmp, "engines.out"), os.path.join(tmp, "engines.err")
    result = {"rates": {}, "attribution": {}, "slowdown": {}, "page_faults": {}}

    # Achieved rate: samples per CPU-second of the single-threaded split workload.
    for period, freq in (("1ms", 1000), ("100us", 10000)):
        row = {}
        for engine in ("perf", "timer"):
            target = os.path.join(tmp, f"rate-{engine}-{period}.folded")
            run_timed([split, str(sizes["work"])], _ss_env(args.lib, target, period, engine), out, err)
            row[f"StackSampler {engine} engine"] = _summary_rate(target + ".summary")
        data = os.path.join(tmp, f"rate-perf-{period}.data")
        _, cpu = run_timed(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", str(freq), "-g", "-o", data, "--",
                            split, str(sizes["work"])], {}, out, err)
        row["perf record"] = _perf_samples(data) / cpu if cpu > 0 else None
        result["rates"][period] = row
        log(f"engines: rates at {period}: {row}")

    # Attribution at 1 kHz: sample counts pooled over 3 runs against the workload's own measurement.
    pooled = {"StackSampler perf engine 1 kHz": [], "perf record -F 1000": []}
    truth = []
    for run in range(3):
        target = os.path.join(tmp, f"attr-ss-{run}.folded")
        run_timed([split, str(sizes["attribution_work"])], _ss_env(args.lib, target, "1ms", "perf"), out, err)
        with open(target) as f:
            pooled["StackSampler perf engine 1 kHz"].append(shares_from_folded_lines(f, SPLIT_FUNCTIONS)[0])
        truth.append(measured_shares(out))
        data = os.path.join(tmp, f"attr-perf-{run}.data")
        run_timed(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", "1000", "-g", "-o", data, "--",
                   split, str(sizes["attribution_work"])], {}, out, err)
        pooled["perf record -F 1000"].append(shares_from_folded_lines(stacks_from_perf(data), SPLIT_FUNCTIONS)[0])
        truth.append(measured_shares(out))
    measured = {f: statistics.mean(t[f] for t in truth) for f in SPLIT_FUNCTIONS}
    for name, runs in pooled.items():
        inside = sum(sum(r.values()) for r in runs)
        shares = {f: sum(r[f] for r in runs) / inside for f in SPLIT_FUNCTIONS}
        result["attribution"][name] = max(abs(shares[f] - measured[f]) * 100 for f in SPLIT_FUNCTIONS)
    log(f"engines: attribution {result['attribution']}")

    # Slowdown at 1 kHz, interleaved rounds, median of time ratios to the unprofiled run.
    variants = {
        "StackSampler perf engine 1 kHz": lambda tag: ([split, str(sizes["work"])],
                                                       _ss_env(args.lib, os.path.join(tmp, f"sl-{tag}.folded"), "1ms", "perf")),
        "StackSampler timer engine 1 kHz": lambda tag: ([split, str(sizes["work"])],
                                                        _ss_env(args.lib, os.path.join(tmp, f"sl-{tag}.folded"), "1ms", "timer")),
        "gperftools 1 kHz": lambda tag: ([split, str(sizes["work"])],
                                         {"LD_PRELOAD": GPERF_LIB, "CPUPROFILE": os.path.join(tmp, f"sl-{tag}.prof"),
                                          "CPUPROFILE_FREQUENCY": "1000"}),
        "perf record -F 1000 -g": lambda tag: (["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", "1000", "-g",
                                                "-o", os.path.join(tmp, f"sl-{tag}.data"), "--", split, str(sizes["work"])], {}),
    }
    ratios = {name: [] for name in variants}
    for round_number in range(args.rounds):
        base, _ = run_timed([split, str(sizes["work"])], {}, out, err)
        for name, make in variants.items():
            argv, env = make(f"{round_number}")
            wall, _ = run_timed(argv, env, out, err)
            ratios[name].append(wall / base)
    result["slowdown"] = {name: (statistics.median(r) - 1) * 100 for name, r in ratios.items()}
    log(f"engines: slowdown {result['slowdown']}")

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
