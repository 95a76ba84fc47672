#!/usr/bin/env python3
"""Draws formdata-bench results as a PNG bar chart: one panel per workload, a horizontal bar per
tool (median MB/s), FormDataKit's bars in a darker colour, each peer labelled with FormDataKit's
ratio to it.

    python3 Benchmarks/chart.py RESULTS.json OUT.png

RESULTS.json is what `formdata-bench --chart OUT.png` writes for it: a list of
{"workload", "tool", "mbps", "rss_mib"}. Exits 3 when matplotlib is not installed
(`pip install matplotlib`)."""
import json
import math
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)


def main(results_path, out_path):
    with open(results_path) as f:
        rows = [r for r in json.load(f) if r["mbps"] > 0]
    workloads = []
    for row in rows:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
    columns = 2 if len(workloads) > 1 else 1
    lines = math.ceil(len(workloads) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(7 * columns, 0.5 + 1.9 * lines), squeeze=False)
    for axis in axes.flat[len(workloads):]:
        axis.set_visible(False)
    for axis, workload in zip(axes.flat, workloads):
        tools = [r for r in rows if r["workload"] == workload]
        ours = next((r for r in tools if r["tool"].startswith("FormDataKit")), None)
        names = [r["tool"] for r in tools][::-1]
        speeds = [r["mbps"] for r in tools][::-1]
        colours = ["#1f5fa8" if n.startswith("FormDataKit") else "#9bb7d4" for n in names]
        axis.barh(range(len(names)), speeds, color=colours)
        axis.set_yticks(range(len(names)))
        axis.set_yticklabels(names, fontsize=7)
        axis.set_title(workload, fontsize=9)
        axis.tick_params(axis="x", labelsize=7)
        axis.set_xlabel("MB/s (median)", fontsize=7)
        for index, (name, speed) in enumerate(zip(names, speeds)):
            label = f"{speed:.0f}"
            if ours and not name.startswith("FormDataKit"):
                label += f"  (FDK {ours['mbps'] / speed:.2f}×)"
            axis.text(speed, index, " " + label, va="center", fontsize=6)
        axis.set_xlim(0, max(speeds) * 1.45)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
