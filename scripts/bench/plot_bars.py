#!/usr/bin/env python3
"""A horizontal bar chart (PNG) of measured figures, for docs/performance.md.

usage: plot_bars.py OUT.png "TITLE" "X LABEL" "LABEL=VALUE" ... [--group "TITLE"]

Each LABEL=VALUE is one bar; --group "TITLE" starts a new panel (the figures
of one device call), so that only bars of one call sit side by side."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    out, title, xlabel = argv[1], argv[2], argv[3]
    panels, current = [], None
    args = argv[4:]
    i = 0
    while i < len(args):
        if args[i] == "--group":
            current = (args[i + 1], [])
            panels.append(current)
            i += 2
            continue
        if current is None:
            current = ("", [])
            panels.append(current)
        label, value = args[i].rsplit("=", 1)
        current[1].append((label, float(value)))
        i += 1
    height = sum(len(bars) for _, bars in panels) * 0.45 + 1.2 * len(panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, height), squeeze=False)
    top = max(v for _, bars in panels for _, v in bars)
    for axis, (name, bars) in zip(axes[:, 0], panels):
        labels = [label for label, _ in bars][::-1]
        values = [value for _, value in bars][::-1]
        axis.barh(labels, values, color="#4c72b0")
        for y, value in enumerate(values):
            axis.text(value, y, f" {value:,.1f}", va="center", fontsize=8)
        axis.set_xlim(0, top * 1.15)
        axis.set_title(name, fontsize=9)
        axis.tick_params(axis="y", labelsize=8)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
