#!/usr/bin/env python3
"""bench/kernels-profile.sh's tables, from Nsight Compute's raw CSV pages
(`ncu --import REP --page raw --csv`) or Nsight Systems' kernel trace
(`nsys stats --report cuda_gpu_trace --format csv`).

  kernels-profile-table.py shares TRACE.csv MARK [EXCLUDE]
      Per kernel, its share of the GPU time of the iterations: the launches
      from the first launch of MARK on (an iteration starts with MARK),
      less those whose name matches the regular expression EXCLUDE (e.g.
      the log-likelihood, not part of an iteration). A kernel launched with
      two grid sizes in one iteration (EZLDA's lda_sample_dense: dense and
      medium words) is two rows, "NAME grid=G". Prints the table, then one
      line per row "share KEY SHARE MS_PER_ITER LAUNCHES_PER_ITER".

  kernels-profile-table.py plan TRACE.csv MARK ITER TOP [EXCLUDE]
      For one ncu run over iteration ITER's launches of the TOP kernels
      with the largest shares: prints "REGEX SKIP COUNT" for
      `ncu -k regex:REGEX --launch-skip SKIP --launch-count COUNT` (ncu
      counts only the launches its filter matches).

  kernels-profile-table.py detail DETAIL.csv [SHARES.txt]
      One row per profiled launch: its share (from SHARES.txt, the shares
      step's output), duration, DRAM and L2 throughput and SM throughput
      (% of peak), issue slots busy, achieved/theoretical occupancy,
      registers, and the three largest stall reasons (warp cycles per
      issued instruction).

Metrics missing from a report print as "-", so that a section ncu could
not collect leaves a gap rather than a wrong number."""
import csv, re, sys

# A trace's columns by their names in ncu's raw page and nsys' trace.
NAME = ("Kernel Name", "Name")
GRID = ("Grid Size", "GrdX")
DURATION_NS = ("gpu__time_duration.sum", "Duration (ns)", "Duration")


def read_rows(path):
    """The data rows of a CSV with a header, as dicts; ncu's raw page has a
    units row after its header, which is dropped (and kept as units)."""
    with open(path, newline="") as f:
        lines = [l for l in f if l.strip() and not l.startswith("==")]
    # ncu and nsys print notes before the table: start at the header.
    start = next((i for i, l in enumerate(lines) if re.match(r'^"?(ID|Start|Time)', l)), None)
    if start is None:
        sys.exit(f"{path}: no CSV header (a line starting with ID, Start or Time)")
    rows = list(csv.DictReader(lines[start:]))
    units = {}
    if rows and rows[0].get("ID", "x") == "" and rows[0].get("Kernel Name", "x") == "":
        units = rows.pop(0)
    return rows, units


def col(row, names):
    for n in names:
        if n in row and row[n] not in (None, ""):
            return row[n]
    return None


def number(s):
    try:
        return float(str(s).replace(",", ""))
    except (TypeError, ValueError):
        return None


def duration_ns(row, units):
    for n in DURATION_NS:
        v = number(row.get(n))
        if v is None:
            continue
        u = units.get(n, "ns") if n == "gpu__time_duration.sum" else "ns"
        return v * {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}.get(u, 1)
    return None


def launches(path, mark, exclude):
    """The trace's launches (name, grid, ns) from the first MARK on, less
    EXCLUDE's, each with the index of its iteration (0 for the first)."""
    rows, units = read_rows(path)
    out, it = [], -1
    for r in rows:
        name = col(r, NAME)
        if name is None:
            continue
        name = re.sub(r"\(.*$", "", name.strip())  # demangled arguments, if any
        if name == mark:
            it += 1
        if it < 0 or (exclude and re.search(exclude, name)):
            continue
        grid = (col(r, GRID) or "").replace(" ", "")
        ns = duration_ns(r, units)
        if ns is None:
            sys.exit(f"{path}: launch of {name} has no duration ({'/'.join(DURATION_NS)})")
        out.append((it, name, grid, ns))
    if it < 0:
        sys.exit(f"{path}: no launch of {mark}, the kernel that starts an iteration")
    return out, it + 1


def keyed(ls):
    """Keys: a kernel's name, with its grid where one iteration launches it
    with several."""
    grids = {}
    for it, name, grid, _ in ls:
        grids.setdefault((it, name), set()).add(grid)
    multi = {name for (_, name), g in grids.items() if len(g) > 1}
    return [(it, name if name not in multi else f"{name} grid={grid}", name, ns) for it, name, grid, ns in ls]


def shares(path, mark, exclude):
    ls, iters = launches(path, mark, exclude)
    ks = keyed(ls)
    total = sum(ns for *_, ns in ks)
    by = {}
    for it, key, _, ns in ks:
        t, n = by.get(key, (0.0, 0))
        by[key] = (t + ns, n + 1)
    rank = sorted(by.items(), key=lambda kv: -kv[1][0])
    print(f"{iters} iterations (from the first {mark}), {total / iters / 1e6:.3f} ms of kernel time an iteration")
    print(f"{'kernel':<36} {'share':>7} {'ms/iter':>9} {'launches/iter':>14}")
    for key, (t, n) in rank:
        print(f"{key:<36} {100 * t / total:6.1f}% {t / iters / 1e6:9.3f} {n / iters:14.1f}")
    for key, (t, n) in rank:
        print(f"share {key.replace(' ', '@')} {100 * t / total:.2f} {t / iters / 1e6:.4f} {n / iters:.1f}")
    return rank, ks


def plan(path, mark, target, top, exclude):
    rank, ks = shares_quiet(path, mark, exclude)
    names = []
    for key, _ in rank:
        name = key.split(" grid=")[0]
        if name not in names:
            names.append(name)
        if len(names) == top:
            break
    iters = max(it for it, *_ in ks) + 1
    if not 0 <= target < iters:
        sys.exit(f"plan: iteration {target} is not in the trace's 0..{iters - 1}")
    # ncu counts every launch its filter matches, the iterations' and any
    # before the first mark (an initial rebuild), so count on the whole trace.
    rows, _ = read_rows(path)
    seq, it = [], -1
    for r in rows:
        name = col(r, NAME)
        if name is None:
            continue
        name = re.sub(r"\(.*$", "", name.strip())
        if name == mark:
            it += 1
        if name in names:
            seq.append(it)
    skip = sum(1 for i in seq if i < target)
    count = sum(1 for i in seq if i == target)
    print("^(" + "|".join(re.escape(n) for n in names) + ")$", skip, count)


def shares_quiet(path, mark, exclude):
    ls, _ = launches(path, mark, exclude)
    ks = keyed(ls)
    by = {}
    for _, key, _, ns in ks:
        by[key] = by.get(key, 0.0) + ns
    return sorted(by.items(), key=lambda kv: -kv[1]), ks


# The detail table's metrics: (heading, metric names tried in order).
DETAIL = [
    ("DRAM %", ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")),
    ("L2 %", ("lts__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("L1 %", ("l1tex__throughput.avg.pct_of_peak_sustained_active",)),
    ("SM %", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("issue %", ("smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__inst_issued.avg.pct_of_peak_sustained_active")),
    ("occ %", ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    ("th.occ %", ("sm__maximum_warps_per_active_cycle_pct",)),
    ("regs", ("launch__registers_per_thread",)),
    ("Minst", ("smsp__inst_executed.sum",)),
    ("lanes", ("smsp__thread_inst_executed_per_inst_executed.ratio",)),
]
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$")


def detail(path, shares_path=None):
    rows, units = read_rows(path)
    share = {}
    if shares_path:
        with open(shares_path) as f:
            for l in f:
                p = l.split()
                if len(p) == 5 and p[0] == "share":
                    share.setdefault(p[1].split("@grid=")[0], []).append((p[1].replace("@", " "), p[2]))
    head = f"{'kernel':<24} {'grid':>12} {'share':>7} {'ms':>8} " + " ".join(f"{h:>8}" for h, _ in DETAIL) + "  top stalls (cycles per issued instruction)"
    print(head)
    for r in rows:
        name = re.sub(r"\(.*$", "", (col(r, NAME) or "?").strip())
        grid = (col(r, GRID) or "").replace(" ", "")
        ns = duration_ns(r, units)
        s = "-"
        for key, v in share.get(name, []):
            if key == name or key.endswith("grid=" + grid):
                s = f"{float(v):.1f}%"
        vals = []
        for _, names in DETAIL:
            v = next((number(r[n]) for n in names if number(r.get(n)) is not None), None)
            if v is not None and names[0] == "smsp__inst_executed.sum":
                v /= 1e6
            vals.append("-" if v is None else f"{v:.1f}" if v < 1000 else f"{v:.0f}")
        stalls = sorted(((number(v) or 0.0, STALL.match(k).group(1)) for k, v in r.items() if k and STALL.match(k)), reverse=True)
        top = ", ".join(f"{n} {v:.2f}" for v, n in stalls[:3]) or "-"
        total = number(r.get("smsp__average_warp_latency_per_inst_issued.ratio"))
        if total is not None:
            top += f" (of {total:.2f})"
        ms = "-" if ns is None else f"{ns / 1e6:.3f}"
        print(f"{name:<24} {grid:>12} {s:>7} {ms:>8} " + " ".join(f"{v:>8}" for v in vals) + "  " + top)


def main(argv):
    if len(argv) >= 3 and argv[0] == "shares":
        shares(argv[1], argv[2], argv[3] if len(argv) > 3 else "")
    elif len(argv) >= 5 and argv[0] == "plan":
        plan(argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5] if len(argv) > 5 else "")
    elif len(argv) >= 2 and argv[0] == "detail":
        detail(argv[1], argv[2] if len(argv) > 2 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
