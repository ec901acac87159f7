#!/usr/bin/env python3
"""bench/gpu-survey.sh's summary of OUT/s1..sN: per GPU the mean and CV of
its °C/W (core, memory) and τ over the clean surveys, the coupling matrix
(mean and spread over them), per survey its verdict and wall time, the idle
each GPU returned to after its load; appends the trial ledger
(OUT/trials.tsv) and the clean fingerprints (OUT/fingerprints.tsv).

Usage: gpu-survey-summary.py OUT N MACHINE"""
import datetime, gzip, json, os, re, statistics, sys

LEDGER_HEAD = "# date_utc\trun_id\tmachine\tuuids\tcontext\tkind\tplanted_gpu\thandicap_gpu\texit\twall_s\tflags\tverdict\tnote\n"
FP_HEAD = "# survey_run_id\thost\tindex\tuuid\tmodel\tcomponent\tc_per_w\tlo_c_per_w\thi_c_per_w\tfrom\ttau_s\tpower_w\tidle_power_w\n"


def load(out, n):
    surveys = []
    for i in range(1, n + 1):
        p = os.path.join(out, f"s{i}", "survey.json")
        st, tr = os.path.join(out, f"s{i}.status"), os.path.join(out, f"s{i}.trial")
        if not (os.path.exists(st) and os.path.exists(tr)):
            continue
        rc, wall = open(st).read().split()
        kind, planted, hgpu, ctx = open(tr).read().split()
        s = json.load(open(p)) if os.path.exists(p) else None
        surveys.append(dict(i=i, s=s, rc=int(rc), wall=float(wall), kind=kind, planted=planted, hgpu=hgpu, ctx=ctx))
    return surveys


def verdict(v):
    """right or wrong, by the rule of gpu-survey.sh's header."""
    s = v["s"]
    if s is None:
        return "failed", "no survey.json: see its log; not counted"
    flags = s.get("flags") or []
    if v["kind"] == "clean":
        return ("right", "") if not flags else ("wrong", "false flag")
    ok = {v["planted"], v["hgpu"]}
    right = any(f["kind"] == "foreign_load" and f["gpu"] == v["hgpu"] for f in flags)
    stray = [f for f in flags if f["gpu"] not in ok]
    if right and not stray:
        return "right", ""
    return "wrong", ("not flagged as foreign_load on GPU " + v["hgpu"]) if not right else "false flag on another GPU"


def flagtext(s):
    if s is None:
        return "-"
    return "; ".join(f"{f['gpu']}:{f['kind']}:{f.get('component', '')}" for f in s.get("flags") or []) or "none"


def cv(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return "-"
    return f"{100 * statistics.stdev(xs) / statistics.mean(xs):.1f}%"


def mean(xs, p):
    xs = [x for x in xs if x is not None]
    return f"{statistics.mean(xs):.{p}f}" if xs else "-"


def fp(g, comp, key):
    f = g.get(comp)
    return None if f is None else f.get(key)


def idle_levels(run_dir):
    """Per GPU: median power, SM clock and memory in use over the baseline
    and over the last 10 s of the survey (its final return)."""
    meta = json.load(open(os.path.join(run_dir, "run.json")))
    ts = lambda x: datetime.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
    ph = {p["name"]: (ts(p["start"]), ts(p["end"])) for p in meta.get("phases", []) if p.get("end")}
    if "survey_baseline" not in ph or not ph:
        return {}
    end = max(b for a, b in ph.values())
    spans = {"baseline": ph["survey_baseline"], "end": (end - 10, end)}
    path = os.path.join(run_dir, "points.lp")
    op = open
    if not os.path.exists(path):
        path, op = path + ".gz", gzip.open
    got = {}
    with op(path, "rt") as f:
        for line in f:
            if not line.startswith("gpu,"):
                continue
            m = re.search(r"[,]gpu=(\d+)", line)
            t = int(line.rsplit(" ", 1)[1]) / 1e9
            fields = dict(re.findall(r"(\w+)=([-\d.e]+)i?(?=[ ,])", line.split(" ", 1)[1] + " "))
            for name, (a, b) in spans.items():
                if m and a <= t < b:
                    got.setdefault((m.group(1), name), []).append(fields)
    med = lambda fs, k: statistics.median(float(x[k]) for x in fs if k in x) if any(k in x for x in fs) else float("nan")
    return {k: (med(fs, "power_w"), med(fs, "sm_clock_mhz"), med(fs, "mem_used_bytes") / 1e6) for k, fs in got.items()}


def survey_start(run_dir):
    """The survey's start (run.json's first phase), UTC."""
    try:
        ph = json.load(open(os.path.join(run_dir, "run.json"))).get("phases") or []
        return ph[0]["start"][:19] + "Z"
    except (OSError, ValueError, IndexError, KeyError):
        return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    out, n, machine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    surveys = load(out, n)
    if not surveys:
        sys.exit("no survey ran: see the sN.log files")
    clean = [v for v in surveys if v["kind"] == "clean" and v["ctx"] == "release" and v["s"] is not None]
    ctx = "context released"
    if not clean:  # CONTEXT=keep: its own surveys are all there is
        clean, ctx = [v for v in surveys if v["kind"] == "clean" and v["s"] is not None], "context kept"

    rows = {}
    for v in clean:
        for g in v["s"]["gpus"]:
            rows.setdefault((g["host"], int(g["index"]), g["uuid"]), []).append(g)
    print(f"\nper GPU over {len(clean)} clean surveys ({ctx}): mean and CV")
    print(f"{'gpu':>3} {'uuid':<40} {'core °C/W':>9} {'CV':>6} {'mem °C/W':>9} {'CV':>6} {'core τ s':>8} {'CV':>6} {'mem τ s':>7} {'CV':>6}  core from")
    for (host, idx, uuid), gs in sorted(rows.items()):
        c = [fp(g, "alone_core", "thermal_resistance_c_per_w") for g in gs]
        m = [fp(g, "alone_mem", "thermal_resistance_c_per_w") for g in gs]
        tc = [fp(g, "alone_core", "tau_s") for g in gs]
        tm = [fp(g, "alone_mem", "tau_s") for g in gs]
        src = sorted({(fp(g, "alone_core", "thermal_resistance_from") or "-").split(" (")[0] for g in gs})
        print(f"{idx:>3} {uuid:<40} {mean(c, 4):>9} {cv(c):>6} {mean(m, 4):>9} {cv(m):>6} {mean(tc, 1):>8} {cv(tc):>6} {mean(tm, 1):>7} {cv(tm):>6}  {', '.join(src)}")

    pairs = {}
    for v in clean:
        for c in v["s"].get("coupling") or []:
            pairs.setdefault((c["kind"], c["source"], c["neighbour"]), []).append(c.get("c_per_w"))
    print(f"\ncoupling over {len(clean)} clean surveys ({ctx}): row heats column, °C/W mean [min, max] (n measured)")
    for (kind, src, nb), xs in sorted(pairs.items()):
        ys = [x for x in xs if x is not None]
        r = f"{statistics.mean(ys):.4f} [{min(ys):.4f}, {max(ys):.4f}] ({len(ys)})" if ys else "not measured"
        print(f"  {kind:<4} {src} -> {nb}: {r}")

    print("\nsurvey  kind       context  planted  exit  wall_s  verdict  flags (gpu:kind:component)")
    for v in surveys:
        v["verdict"], why = verdict(v)
        print(f"{v['i']:>6}  {v['kind']:<9}  {v['ctx']:<7}  {v['planted']:>7}  {v['rc']:>4}  {v['wall']:>6.0f}  {v['verdict']:<7}  {flagtext(v['s'])}" + (f"  ({why})" if why else ""))
    walls = [v["wall"] for v in surveys]
    print(f"wall time per survey: mean {statistics.mean(walls):.0f} s, {min(walls):.0f}-{max(walls):.0f} s")
    trials = [v for v in surveys if v["kind"] != "clean" and v["verdict"] != "failed"]
    cl = [v for v in surveys if v["kind"] == "clean" and v["verdict"] != "failed"]
    print(f"handicap: {sum(v['verdict'] == 'right' for v in trials)} of {len(trials)} flagged right; clean: {sum(v['verdict'] == 'right' for v in cl)} of {len(cl)} without a false flag")

    print("\nidle before the first load -> in the survey's last 10 s (power W, SM clock MHz, memory in use MB):")
    for v in surveys:
        try:
            lv = idle_levels(os.path.join(out, f"s{v['i']}"))
        except (OSError, ValueError) as e:
            print(f"  survey {v['i']}: {e}")
            continue
        for g in sorted({k[0] for k in lv}, key=int):
            b, e = lv.get((g, "baseline")), lv.get((g, "end"))
            if b and e:
                print(f"  survey {v['i']} ({v['ctx']}) GPU {g}: {b[0]:.0f} W {b[1]:.0f} MHz {b[2]:.0f} MB -> {e[0]:.0f} W {e[1]:.0f} MHz {e[2]:.0f} MB")

    led = os.path.join(out, "trials.tsv")
    new = not os.path.exists(led)
    with open(led, "a") as f:
        if new:
            f.write(LEDGER_HEAD)
        for v in surveys:
            s = v["s"] or {}
            uu = ",".join(f"{g['index']}={g['uuid']}" for g in s.get("gpus") or [])
            date = survey_start(os.path.join(out, f"s{v['i']}"))
            f.write("\t".join([date, s.get("run_id", "-"), machine, uu or "-", v["ctx"], v["kind"], v["planted"], v["hgpu"],
                               str(v["rc"]), f"{v['wall']:.0f}", flagtext(v["s"]), v["verdict"], "judged live by the survey"]) + "\n")
    print(f"\nappended {len(surveys)} lines to {led}")

    fpp = os.path.join(out, "fingerprints.tsv")
    new = not os.path.exists(fpp)
    with open(fpp, "a") as f:
        if new:
            f.write(FP_HEAD)
        for v in clean:
            if v["ctx"] != "release":  # a kept context's idle is not the card's
                continue
            s = v["s"]
            for g in s["gpus"]:
                for comp in ("alone_core", "alone_mem"):
                    x = g.get(comp)
                    if x is None:
                        continue
                    cols = [s["run_id"], g["host"], g["index"], g["uuid"], g["model"], comp.split("_")[1]]
                    cols += [x.get(k) for k in ("thermal_resistance_c_per_w", "thermal_resistance_lo_c_per_w", "thermal_resistance_hi_c_per_w",
                                                "thermal_resistance_from", "tau_s", "power_w", "idle_power_w")]
                    f.write("\t".join("" if c is None else (f"{c:.5g}" if isinstance(c, float) else str(c)) for c in cols) + "\n")
    print(f"appended the clean surveys' fingerprints to {fpp}")


main()
