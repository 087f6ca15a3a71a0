"""The engine's stack walk against libunwind's, frame by frame, on real programs (the larger set
of the suite's UnwindAgreement test): each program runs --repeats times under
Tests/Programs/unwind_diff.c, and the steps compared and agreeing are summed per module.

  unwind-agreement  runs the programs, writes unwind_agreement.json
  report-unwind     writes (or replaces) the report's section on it from that file
"""
import datetime
import os
import subprocess

from bench_common import clean_env, load, log, save

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROGRAMS = os.path.join(ROOT, "Tests", "Programs")
SECTION = "## Unwinding: the engine's walk against libunwind's, frame by frame"

# Name, build command (None: a system program or one built above), command line ({bin} the directory of builds,
# {input} a data file), extra environment.
WORKLOADS = [
    ("C++: exceptions, own signal handler, PLT, vDSO, qsort", ["g++", "-O2", "-o", "{bin}/unwind_code", "unwind_code.cpp"],
     ["{bin}/unwind_code", "0.5"], {}),
    ("the same with LD_BIND_NOT=1 (every PLT call through the loader's lazy-binding resolver)", None,
     ["{bin}/unwind_code", "0.5"], {"LD_BIND_NOT": "1"}),
    ("python3: libpython, liblzma, zlib, libsqlite3", None, ["/usr/bin/python3", f"{PROGRAMS}/unwind_python.py", "3"], {}),
    ("xz -9 -T1", None, ["/usr/bin/xz", "-9", "-T1", "-c", "{input}"], {}),
    ("gzip -9", None, ["/bin/gzip", "-9", "-c", "{input}"], {}),
    ("Swift async (-O -g)", ["swiftc", "-O", "-g", "-parse-as-library", "-o", "{bin}/async_stages", "async_stages.swift"],
     ["{bin}/async_stages", "40"], {}),
    ("Swift without -g", ["swiftc", "-O", "-o", "{bin}/matrix", "matrix.swift"], ["{bin}/matrix", "4"], {}),
    ("Rust threads", ["rustc", "-O", "-o", "{bin}/rust_threads", "rust_threads.rs"], ["{bin}/rust_threads", "2"], {}),
]


def write_input(path):
    """6 MB: a third pseudo-random bytes, the rest repetitive words (the test's input, three times larger)."""
    state, out, words = 0x9E3779B97F4A7C15, bytearray(), [b"alpha ", b"beta ", b"gamma ", b"delta ", b"x "]
    size = 6_000_000
    while len(out) < size:
        state = (state * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        out += bytes([(state >> 33) & 0xFF]) if len(out) < size // 3 else words[(state >> 33) % len(words)]
    with open(path, "wb") as f:
        f.write(out[:size])


def parse(path):
    report = {"modules": {}, "disagreements": []}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            if fields[0] == "module":
                report["modules"][fields[1]] = (int(fields[3]), int(fields[5]))
            elif fields[0] == "disagreement":
                report["disagreements"].append(line.strip())
            elif fields[0] == "ended":
                report.setdefault("no_unwind_info_frames", []).append(line.strip())
            elif len(fields) == 2:
                report[fields[0]] = int(fields[1])
    return report


def cmd_unwind_agreement(args):
    bins = os.path.join(args.work, "unwind-bin")
    os.makedirs(bins, exist_ok=True)
    lib_dir = os.path.dirname(args.lib)
    diff = os.path.join(bins, "unwind_diff.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-I", os.path.join(ROOT, "Sources", "CEngine", "include"), "-o", diff, "unwind_diff.c", "-L", lib_dir, "-lStackSamplerPreload",
                    f"-Wl,-rpath,{lib_dir}", "-ldl", "-lpthread"], cwd=PROGRAMS, check=True, capture_output=True, text=True)
    data = os.path.join(args.work, "unwind-input.bin")
    write_input(data)
    results = []
    for name, build, command, extra_env in WORKLOADS:
        if build:
            subprocess.run([part.format(bin=bins) for part in build], cwd=PROGRAMS, check=True, capture_output=True, text=True)
        for repeat in range(args.repeats):
            output = os.path.join(args.work, f"unwind-{len(results)}-{repeat}.txt")
            env = clean_env()
            env.update({"LD_PRELOAD": f"{args.lib} {diff}", "UNWIND_DIFF_OUTPUT": output, "UNWIND_DIFF_CONTEXTS": "20000"})
            env.update(extra_env)
            argv = [part.format(bin=bins, input=data) for part in command]
            subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            report = parse(output)
            report["workload"] = name
            results.append(report)
            log(f"unwind-agreement: {name}: {report['agreeing']} of {report['steps']} steps agree, "
                f"{len(report['disagreements'])} disagreement(s)")
    libunwind = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libunwind8"], capture_output=True, text=True).stdout
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    save(args.work, "unwind_agreement.json",
         {"repeats": args.repeats, "libunwind": libunwind or "?", "commit": commit or "?", "runs": results})


def section(data):
    runs = data["runs"]
    lines = [SECTION, ""]
    total = {key: sum(run.get(key, 0) for run in runs)
             for key in ("contexts", "steps", "agreeing", "whole", "late_tables", "no_unwind_info", "signal_frames")}
    lines.append(f"Tests/Programs/unwind_diff.c walks each sampled context (ITIMER_PROF at 1 ms) with the engine's tables and "
                 f"with libunwind {data.get('libunwind', '?')} ({data['repeats']} runs of each program; `python3 "
                 f"Scripts/bench/bench.py unwind-agreement --work out/bench --lib .build/release/libStackSamplerPreload.so "
                 f"--repeats {data['repeats']}` then `report-unwind --work out/bench`, about 5 minutes a repeat on the 2-core "
                 f"machine). A step is one frame to its caller; after the first difference the rest of the pair is not compared.")
    lines.append("")
    share = total["agreeing"] / max(total["steps"], 1) * 100
    lines.append(f"In all: {total['contexts']:,} contexts, {total['agreeing']:,} of {total['steps']:,} steps agree ({share:.3f} %), "
                 f"{total['whole']:,} contexts whole and alike on both sides, {total['signal_frames']:,} agreeing steps through "
                 f"the signal frame of a handler of the program's own; not compared: {total['late_tables']} that met a module "
                 f"loaded since the last refresh of the tables, {total['no_unwind_info']} where the engine stopped by design at a "
                 f"frame without unwind info (listed below). docs/design.md (Agreement with libunwind) says what each disagreement was.")
    lines.append("")
    lines += ["| program | contexts | steps | agreeing | disagreeing |", "|---|---:|---:|---:|---:|"]
    for name in dict.fromkeys(run["workload"] for run in runs):
        mine = [run for run in runs if run["workload"] == name]
        steps, agreeing = sum(r["steps"] for r in mine), sum(r["agreeing"] for r in mine)
        lines.append(f"| {name} | {sum(r['contexts'] for r in mine):,} | {steps:,} | {agreeing / max(steps, 1) * 100:.2f} % "
                     f"| {steps - agreeing} |")
    lines.append("")
    modules = {}
    for run in runs:
        for module, (steps, agreeing) in run["modules"].items():
            tally = modules.setdefault(module, [0, 0])
            tally[0] += steps
            tally[1] += agreeing
    lines += ["| module (of the frame unwound) | steps | agreeing | disagreeing |", "|---|---:|---:|---:|"]
    for module, (steps, agreeing) in sorted(modules.items(), key=lambda item: -item[1][0]):
        lines.append(f"| {module} | {steps:,} | {agreeing / max(steps, 1) * 100:.2f} % | {steps - agreeing} |")
    unattributed = total["steps"] - total["agreeing"] - sum(steps - agreeing for steps, agreeing in modules.values())
    if unattributed:
        lines.append(f"| (a frame in no module) | | | {unattributed} |")
    lines.append("")
    disagreements = [line for run in runs for line in run["disagreements"]]
    if disagreements:
        lines.append("Disagreements (kind, frame, function, count, then both walks):")
        lines.append("")
        lines += [f"- `{line[:400]}`" for line in disagreements]
    else:
        lines.append("No disagreement.")
    lines.append("")
    ended = [line for run in runs for line in run.get("no_unwind_info_frames", [])]
    if ended:
        lines += ["Frames without unwind info where the engine stopped (not compared):", ""]
        lines += [f"- `{line[:400]}`" for line in ended]
        lines.append("")
    return lines


def cmd_report_unwind(args):
    """Writes the section into --output, replacing an earlier one, or appending it."""
    data = load(args.work, "unwind_agreement.json")
    text = open(args.output).read() if os.path.exists(args.output) else ""
    when = datetime.datetime.fromtimestamp(os.path.getmtime(os.path.join(args.work, "unwind_agreement.json")),
                                           datetime.timezone.utc)
    lines = section(data)
    lines[1:1] = ["", f"Measured on {when:%Y-%m-%d %H:%M} UTC at commit {data.get('commit', '?')}."]
    new = "\n".join(lines) + "\n"
    start = text.find(SECTION)
    if start < 0:
        at = text.find("## Commands")  # before the commands and observations that close the file
        at = len(text) if at < 0 else at
        text = text[:at] + new + text[at:]
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + new + (text[end + 1:] if end >= 0 else "")
    with open(args.output + ".tmp", "w") as f:
        f.write(text)
    os.replace(args.output + ".tmp", args.output)
    log(f"report-unwind: {args.output} (unwinding section)")
