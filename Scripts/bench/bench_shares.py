"""How a profile is read: the summary line, folded stacks and perf output turned into function shares, and the workload's own measurement."""
import re
import subprocess

from bench_common import BenchError, SPLIT_FUNCTIONS, median


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
        raise BenchError(f"the split workload printed no ground truth in {stdout_path}")
    return shares
