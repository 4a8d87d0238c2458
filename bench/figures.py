"""The benchmark's figures (``results/bench_*.png``) from its measurements."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from bench.configs import CONFIGS, RATIO_TARGET, REUSE_TARGET_SHARE
from bench.report import share


def figures(
    rows: list[dict[str, Any]],
    tput: list[dict[str, Any]],
    tasks: list[str],
    out_dir: Path,
    latency: float,
) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    configs = list(CONFIGS)
    colors = dict(zip(tasks, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))

    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(tasks)
    for j, task in enumerate(tasks):
        for i, config in enumerate(configs):
            ratios = [
                r["ratio"] for r in rows if r["config"] == config and r["task"] == task and r["ratio"] is not None
            ]
            if ratios:
                ax.scatter([i + (j - (len(tasks) - 1) / 2) * width] * len(ratios), ratios, color=colors[task], s=14,
                           label=task if i == 0 else None)  # fmt: skip
    ax.axhline(RATIO_TARGET, color="k", ls="--", lw=1, label=f"target {RATIO_TARGET}")
    ax.axhline(1.0, color="grey", lw=0.5)
    ax.set_xticks(range(len(configs)), configs, rotation=20)
    ax.set_ylabel("wall time / (R x latency)")
    ax.set_title(f"Critical-path ratio per sample (latency {latency} s, one sample at a time)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(out_dir / "bench_critical_path.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    markers = dict(zip(configs, itertools.cycle("os^vD<>pxh*P+Xd")))  # any number of configs
    for config in configs:
        rs = [r for r in rows if r["config"] == config]
        for ax, key in zip(axes, ("calls", "input_tokens")):
            ax.scatter([r["n"] for r in rs], [r[key] for r in rs], marker=markers[config], s=18, label=config)
    for ax, what in zip(axes, ["model calls per sample", "input tokens per sample"]):
        ax.set_xlabel("log length n (steps)")
        ax.set_ylabel(what)
        ax.set_xscale("log")
        ax.set_yscale("log")
    axes[0].legend(fontsize=7)
    fig.suptitle("Calls and tokens per sample against log length (offline model)")
    fig.tight_layout()
    written.append(out_dir / "bench_calls_tokens.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    for j, task in enumerate(tasks):
        shares, bounds = [], []
        for config in configs:
            rs = [r for r in rows if r["config"] == config and r["task"] == task]
            several = any(r["events"] > 1 for r in rs)
            shares.append(100 * share(rs, "reuse") if several else 0)
            bounds.append(100 * share(rs, "reuse_bound") if several else math.nan)
        xs = [i + (j - (len(tasks) - 1) / 2) * width for i in range(len(configs))]
        ax.bar(xs, shares, width, color=colors[task], label=task)
        ax.scatter(xs, bounds, marker="_", s=90, color="k", zorder=3, label="bound (any layout)" if j == 0 else None)
    ax.axhline(
        100 * REUSE_TARGET_SHARE,
        color="k",
        ls="--",
        lw=1,
        label="target (POIROT, auditor)",
    )
    ax.set_xticks(range(len(configs)), configs, rotation=20)
    ax.set_ylabel("prompt characters reusable (%)")
    ax.set_ylim(0, 120)
    ax.set_title("Prefix reuse within a sample (sent-before; black mark: the bound; no bar: one call per sample)")
    ax.legend(fontsize=8, ncol=5, loc="upper center")
    fig.tight_layout()
    written.append(out_dir / "bench_prefix_reuse.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    labels = [f"{r['config']}\n{r['task']}" for r in tput]
    ax.bar(
        [i - 0.27 for i in range(len(tput))],
        [60 * r["samples"] / r["span"] for r in tput],
        0.27,
        label="measured",
    )
    ax.bar([i for i in range(len(tput))], [60 * r["samples"] / r["bound"] for r in tput], 0.27,
           label="bound: max(ideal, slowest sample's R x latency)")  # fmt: skip
    ax.bar(
        [i + 0.27 for i in range(len(tput))],
        [60 * r["samples"] / r["ideal"] for r in tput],
        0.27,
        label="ideal: calls x latency / C",
    )
    ax.set_xticks(range(len(tput)), labels, rotation=90, fontsize=7)
    ax.set_ylabel("samples per minute")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("Throughput at a fixed connection limit")
    fig.tight_layout()
    written.append(out_dir / "bench_throughput.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)
    return written
