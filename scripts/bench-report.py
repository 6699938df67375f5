#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tables, goals and plot of a scripts/bench run.

Input (--runs): one line per run, as tests/vm/bench.sh prints them with the
guest's series in front:
  SERIES WL CFG RATE REP ELAPSED_NS BYTES SAMPLES RECORDS LOST_SAMPLES LOST_RECORDS UNWINDS
Every ratio is taken between runs of the same guest, repetition, rate and
workload (side by side in one run), then summarised as median [min-max].
"""
import argparse
import collections
import datetime
import os
import statistics
import subprocess
import sys

WLS = ["recurse", "syscall", "fault", "threads"]
WL_NAME = {"recurse": "(a) recurse", "syscall": "(b) syscall",
           "fault": "(c) fault", "threads": "(d) threads"}
# (series, cfg) columns, and what each is called in the tables
COLS = [("6.12", "fp"), ("6.12", "dwarf"), ("6.12", "module"),
        ("6.12", "module-keep"), ("6.12", "module-dwarf"), ("6.12", "module-dwarf-keep"),
        ("7.2", "fp"), ("7.2", "native")]
MODULE_CFGS = ("module", "module-keep", "module-dwarf", "module-dwarf-keep")
COL_NAME = {("6.12", "fp"): "fp", ("6.12", "dwarf"): "dwarf",
            ("6.12", "module"): "module (stitched)",
            ("6.12", "module-keep"): "module (deferred form)",
            ("6.12", "module-dwarf"): "module dwarf,defer (stitched)",
            ("6.12", "module-dwarf-keep"): "module dwarf,defer (deferred form)",
            ("7.2", "fp"): "fp on 7.2", ("7.2", "native"): "native 7.2"}


def num(x):
    return None if x == "-" else float(x)


def load(path):
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) != 12:
            continue
        s, wl, cfg, rate, rep = f[:5]
        runs[(s, wl, cfg, int(rate), int(rep))] = dict(
            el=float(f[5]), bytes=num(f[6]), samples=num(f[7]), recs=num(f[8]),
            lost=num(f[9]), lrec=num(f[10]), unw=num(f[11]))
    return runs


def summary(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def fmt(sm, digits=2, unit=""):
    if sm is None:
        return "–"
    med, lo, hi = sm
    return f"{med:.{digits}f}{unit} [{lo:.{digits}f}–{hi:.{digits}f}]"


class Bench:
    def __init__(self, runs, reps):
        self.runs, self.reps = runs, reps
        self.rates = sorted({k[3] for k in runs})

    def per_rep(self, s, wl, cfg, rate, fn):
        out = []
        for rep in range(1, self.reps + 1):
            r = self.runs.get((s, wl, cfg, rate, rep))
            if r is None:
                continue
            v = fn(r, rep)
            if v is not None:
                out.append(v)
        return out

    def ratio(self, s, wl, cfg, rate, base):
        def fn(r, rep):
            b = self.runs.get((s, wl, base, rate, rep))
            return r["el"] / b["el"] if b and b["el"] else None
        return summary(self.per_rep(s, wl, cfg, rate, fn))

    def per_sample(self, s, wl, cfg, rate, field):
        def fn(r, rep):
            if r[field] is None or not r["samples"]:
                return None
            return r[field] / r["samples"]
        return summary(self.per_rep(s, wl, cfg, rate, fn))

    def total(self, s, wl, cfg, rate, field):
        vals = self.per_rep(s, wl, cfg, rate, lambda r, rep: r[field])
        return int(sum(vals)) if vals else None


def tables(b):
    out = []
    for wl in WLS:
        if not any(k[1] == wl for k in b.runs):
            continue
        out.append(f"### {WL_NAME[wl]}\n")
        out.append("| rate | configuration | slowdown vs none | vs fp | bytes/sample"
                   " | unwinds/sample | records/sample | lost samples | lost records |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for rate in b.rates:
            for s, cfg in COLS:
                if not any(k[:4] == (s, wl, cfg, rate) for k in b.runs):
                    continue
                out.append("| {} Hz | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                    rate, COL_NAME[(s, cfg)],
                    fmt(b.ratio(s, wl, cfg, rate, "none")),
                    "–" if cfg == "fp" else fmt(b.ratio(s, wl, cfg, rate, "fp")),
                    fmt(b.per_sample(s, wl, cfg, rate, "bytes"), 0),
                    fmt(b.per_sample(s, wl, cfg, rate, "unw"), 3),
                    fmt(b.per_sample(s, wl, cfg, rate, "recs"), 3),
                    b.total(s, wl, cfg, rate, "lost") if cfg != "none" else "–",
                    "–" if b.total(s, wl, cfg, rate, "lrec") is None
                    else b.total(s, wl, cfg, rate, "lrec")))
        out.append("")
    return out


def med(sm):
    return None if sm is None else sm[0]


def goals(b):
    """Each goal of issue 6: (text, met or not, the figures)."""
    res = []

    def add(text, ok, fig):
        res.append((text, ok, fig))

    for rate in b.rates:
        m = med(b.per_sample("6.12", "syscall", "module-keep", rate, "bytes"))
        fp = med(b.per_sample("6.12", "syscall", "fp", rate, "bytes"))
        dw = med(b.per_sample("6.12", "syscall", "dwarf", rate, "bytes"))
        if m and fp and dw:
            add(f"(b) at {rate} Hz: deferred-form bytes/sample ≤ 0.5 × fp and ≤ 0.05 × dwarf",
                m <= 0.5 * fp and m <= 0.05 * dw,
                f"{m:.0f} B vs fp {fp:.0f} B ({m / fp:.2f}×), dwarf {dw:.0f} B ({m / dw:.3f}×)")
    for rate in b.rates:
        k = med(b.per_sample("6.12", "syscall", "module-dwarf-keep", rate, "bytes"))
        st = med(b.per_sample("6.12", "syscall", "module-dwarf", rate, "bytes"))
        dw = med(b.per_sample("6.12", "syscall", "dwarf", rate, "bytes"))
        if k and st and dw:
            add(f"(b) at {rate} Hz: dwarf,defer deferred-form bytes/sample ≤ ⅓ × dwarf"
                " (issue 8: one dump per kernel entry)", 3 * k <= dw,
                f"{k:.0f} B vs dwarf {dw:.0f} B ({k / dw:.3f}×); stitched {st:.0f} B"
                f" ({st / dw:.3f}×)")
    for rate in b.rates:
        worst = None
        for wl in WLS:
            for cfg in MODULE_CFGS:
                u = med(b.per_sample("6.12", wl, cfg, rate, "unw"))
                r = med(b.per_sample("6.12", wl, cfg, rate, "recs"))
                if u is None or r is None or not r:
                    continue
                d = abs(u - r) / r
                if worst is None or d > worst[0]:
                    worst = (d, wl, cfg, u, r)
        if worst:
            d, wl, cfg, u, r = worst
            add(f"at {rate} Hz: user unwinds per sample = kernel entries (records) per sample",
                d <= 0.01, f"largest difference {100 * d:.2f}% ({wl}, {cfg}: {u:.4f} vs {r:.4f})")
    for rate in b.rates:
        r = med(b.ratio("6.12", "recurse", "module", rate, "fp"))
        if r:
            add(f"(a) at {rate} Hz: slowdown within 1.1× of fp", r <= 1.1, f"{r:.3f}× fp")
    if 10000 in b.rates:
        lost = sum(b.total("6.12", wl, cfg, 10000, "lrec") or 0
                   for wl in WLS for cfg in MODULE_CFGS)
        add("no lost records at 10 kHz on 2 vCPUs", lost == 0, f"{lost} lost")
    worst = None
    for wl in WLS:
        for rate in b.rates:
            figs = [
                ("slowdown", med(b.ratio("6.12", wl, "module-keep", rate, "none")),
                 med(b.ratio("7.2", wl, "native", rate, "none"))),
                ("bytes/sample", med(b.per_sample("6.12", wl, "module-keep", rate, "bytes")),
                 med(b.per_sample("7.2", wl, "native", rate, "bytes"))),
                ("unwinds/sample", med(b.per_sample("6.12", wl, "module-keep", rate, "unw")),
                 med(b.per_sample("7.2", wl, "native", rate, "unw"))),
            ]
            for name, m, n in figs:
                if m is None or not n:
                    continue
                q = m / n
                if worst is None or q > worst[0]:
                    worst = (q, wl, rate, name, m, n)
    if worst:
        q, wl, rate, name, m, n = worst
        add("on every shared figure, module ≤ native 7.2 × 1.2", q <= 1.2,
            f"worst: {name} of {wl} at {rate} Hz, {m:.4g} vs {n:.4g} ({q:.2f}×)")
    return res


def plot(b, png, workdir):
    data = os.path.join(workdir, "plot.dat")
    wls = [wl for wl in WLS if any(k[1] == wl for k in b.runs)]
    blocks = {}		# (wl, col index, what) -> gnuplot index
    n = 0
    with open(data, "w") as f:
        for wl in wls:
            for ci, (s, cfg) in enumerate(COLS):
                pts = []
                for rate in b.rates:
                    sd = med(b.ratio(s, wl, cfg, rate, "none"))
                    bs = med(b.per_sample(s, wl, cfg, rate, "bytes"))
                    pts.append((rate / 1000, sd, bs))
                for what, j in (("slowdown", 1), ("bytes", 2)):
                    if not any(p[j] for p in pts):
                        continue
                    f.write(f'"{COL_NAME[(s, cfg)]}"\n')
                    for p in pts:
                        f.write(f"{p[0]:g} {p[j] if p[j] else 'NaN'}\n")
                    f.write("\n\n")
                    blocks[(wl, ci, what)] = n
                    n += 1
    term = ('set terminal pngcairo size 1400,{} font ",10"' if has_cairo()
            else "set terminal png size 1400,{}").format(450 * len(wls))
    script = [
        term, f'set output "{png}"',
        f'set multiplot layout {len(wls)},2 title "perf-defer benchmarks (QEMU TCG, 2 vCPUs):'
        ' median over the repetitions"',
        'set key outside right top font ",8"', "set grid", 'set xlabel "sampling rate (kHz)"',
        "set logscale x 2",
    ]
    for wl in wls:
        for what, ylab, log in (("slowdown", "slowdown vs no profiler", False),
                                ("bytes", "bytes per sample", True)):
            idx = [(ci, blocks[(wl, ci, what)]) for ci in range(len(COLS))
                   if (wl, ci, what) in blocks]
            script.append(f'set ylabel "{ylab}"')
            script.append("set logscale y" if log else "unset logscale y")
            script.append(f'set title "{WL_NAME[wl]}: {what}"')
            if not idx:
                script.append("plot NaN notitle")
                continue
            script.append("plot " + ", ".join(
                f'"{data}" index {i} using 1:2 with linespoints title columnheader(1)'
                for _, i in idx))
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


def has_cairo():
    r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--recorder")
    ap.add_argument("--doc")
    ap.add_argument("--png")
    ap.add_argument("--command", default="`make bench`",
                    help="what made the runs, as the page should say it (markdown)")
    a = ap.parse_args()

    b = Bench(load(a.runs), a.reps)
    if not b.runs:
        sys.exit("bench-report: no runs in " + a.runs)
    g = goals(b)
    lines = [
        "<!-- SPDX-License-Identifier: GPL-2.0-only -->",
        "# Benchmarks", "",
        f"Written on {datetime.date.today().isoformat()} by {a.command}; do not edit.", "",
        "Debian 6.12 with the module and sid's 7.2 (native deferral) in QEMU under",
        "TCG with 2 vCPUs, perf 7.3 in both; `cpu-clock` sampling. Emulated",
        "time is noisy: each ratio is taken between runs of one guest, same",
        "repetition, rate and workload, configurations alternating; shown as",
        f"median [min–max] over {a.reps} repetition(s). *module (stitched)* is",
        "`perf-defer record`'s default output (full user chains in every",
        "sample, for any perf); *module (deferred form)* is `--keep-deferred`,",
        "what native 6.19+ writes. *module dwarf,defer* is `--call-graph",
        "dwarf,defer` (a register and 8 KiB stack dump per kernel entry, run",
        "on (b) only), stitched or deferred. Unwinds are the module's counter",
        "(walks or dumps); natively one per deferred record. The workloads are",
        "`tests/vm/wl_bench.c`.", "",
        "## Goals", "",
        "| goal | met | figures |", "|---|---|---|",
    ]
    for text, ok, fig in g:
        lines.append(f"| {text} | {'yes' if ok else '**no**'} | {fig} |")
    lines += ["", "## Per workload", ""]
    lines += tables(b)
    if a.recorder and os.path.exists(a.recorder):
        lines += ["## The recorder, on the host", "", open(a.recorder).read().strip(), ""]
    if a.png:
        lines += ["## Plot", "", f"![slowdown and bytes per sample]({os.path.basename(a.png)})", ""]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "bench.md"), "w") as f:
        f.write(text)
    if a.doc:
        with open(a.doc, "w") as f:
            f.write(text)
    if a.png:
        plot(b, a.png, a.out)
    print(text)


if __name__ == "__main__":
    main()
