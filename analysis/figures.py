"""The report's figures (matplotlib, Agg backend), each saved as PNG and PDF.

Each ``fig_*`` function takes the frames and an output folder and returns the stem of the file it
wrote, or raises :class:`Unavailable` with the reason (no POIROT trials, no quartiles, no votes),
which the report prints instead of the figure.

- ``accuracy_by_model``: per benchmark, accuracy on its outcome (``analysis.outcomes``) of every
  protocol per configuration (model and config hash), treatment and baseline first, as the mean
  of case means; error bars: the 95% seeded case-bootstrap interval of that mean (cases, not
  trials, are the unit).
- ``gain_by_quartile``: per benchmark, the gain P - B in points per complexity quartile, one line
  per model (and protocol pair).
- ``accuracy_quartile_agents``: per benchmark and protocol, accuracy in each (number of agents,
  quartile) cell, with the trial count in the cell.
- ``vote_accuracy``: per benchmark, model and voting protocol, each persona's vote accuracy before
  aggregation beside the aggregate's accuracy on the same trials, both on the benchmark's outcome
  (``analysis.outcomes.align_votes``); at most the :data:`MAX_VOTERS` most frequent voters per
  benchmark.
- ``step_tolerance``: RAFFLES' curve, Who&When step accuracy within k steps, one line per protocol
  and configuration (``analysis.views.step_tolerance``).
- ``far_vs_step_acc``: AgentForesight's trade-off, FAR against Step-Acc per protocol and
  configuration with 95% case-bootstrap CIs (``analysis.views.auditing_table``).
- ``radial_<benchmark>``: the radial embedding (``analysis.radial``) of ground truths, consensus
  predictions (one marker per protocol) and individual votes, one panel per model, for each
  benchmark whose cases share one component order. Identical points are drawn once, with area
  growing as the square root of their count; all-zero vectors (the centre by definition) are hollow squares.
  Invalid predictions and invalid votes are not drawn (they are no vector).

PDFs are written without a creation date, so the same frames give the same files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.radial import RADIUS, dimension_position, radial_position

__all__ = [
    "FIGURES",
    "Unavailable",
    "fig_accuracy_by_model",
    "fig_accuracy_quartile_agents",
    "fig_gain_by_quartile",
    "fig_radial",
    "fig_vote_accuracy",
    "save",
]


class Unavailable(Exception):
    """A figure cannot be drawn from these logs; the message says why."""


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "font.size": 9, "svg.hashsalt": "blame"})
    return plt


def palette(n: int) -> list:
    """``n`` colours, all distinct up to 20 (matplotlib's tab10, or tab20 beyond ten)."""
    plt = _pyplot()
    return [plt.get_cmap("tab10" if n <= 10 else "tab20")(i % 20) for i in range(n)]


def save(fig, folder: Path, stem: str) -> str:
    """Write ``<stem>.png`` and ``<stem>.pdf`` (no timestamps) and close the figure."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / f"{stem}.png", metadata={"Software": None})
    fig.savefig(folder / f"{stem}.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None})
    plt.close(fig)
    return stem


def _scored(samples: pd.DataFrame) -> pd.DataFrame:
    return samples[samples["correct"].notna()]


def _protocol_order(frame: pd.DataFrame, treatments: Sequence[str], baseline: str) -> list[str]:
    """The baseline's protocols first, then the treatments' in the order named, then the others."""
    pairs = frame[["protocol", "method"]].drop_duplicates()
    rank = {baseline: 0, **{t: i + 1 for i, t in enumerate(treatments)}}
    return [p for _, p in sorted((rank.get(m, len(rank) + 1), p) for p, m in zip(pairs["protocol"], pairs["method"]))]


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    cols = min(n, max_cols)
    return math.ceil(n / cols), cols


MAX_VOTERS = 12


def _configuration(frame: pd.DataFrame) -> pd.Series:
    return frame["model"].astype(str) + " " + frame["config"].astype(str)


def fig_accuracy_by_model(samples: pd.DataFrame, folder: Path, treatments: Sequence[str], baseline: str) -> str:
    from analysis.significance import bootstrap_ci

    plt = _pyplot()
    scored = _scored(samples)
    if scored.empty:
        raise Unavailable("no scored trials")
    scored = scored.assign(model=_configuration(scored))
    benchmarks = sorted(scored["benchmark"].unique())
    rows, cols = _grid(len(benchmarks))
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 3.8 * rows), squeeze=False, layout="constrained")
    for ax, benchmark in zip(axes.flat, benchmarks):
        frame = scored[scored["benchmark"] == benchmark]
        models = sorted(frame["model"].unique())
        protocols = _protocol_order(frame, treatments, baseline)
        width = 0.8 / len(protocols)
        colors = palette(len(protocols))
        for i, protocol in enumerate(protocols):
            acc, low, high = [], [], []
            for model in models:
                part = frame[(frame["model"] == model) & (frame["protocol"] == protocol)]
                means = part.groupby("case")["correct"].mean().to_numpy()
                p = float(means.mean()) if len(means) else np.nan
                lo, hi = bootstrap_ci((means,), np.mean) if len(means) else (np.nan, np.nan)
                acc.append(100 * p)
                low.append(100 * (p - lo))
                high.append(100 * (hi - p))
            x = np.arange(len(models)) + (i - (len(protocols) - 1) / 2) * width
            ax.bar(x, acc, width, yerr=[low, high], capsize=2, label=protocol, color=colors[i])
        ax.set_xticks(np.arange(len(models)), models, rotation=15, ha="right", fontsize=7)
        ax.set_ylim(0, 100)
        ax.set_xlabel("configuration (model, settings hash)")
        ax.set_ylabel("accuracy (%, mean of case means)")
        ax.set_title(f"{benchmark}: {_outcome(frame)}\nn = {frame['case'].nunique()} cases", fontsize=8)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, never over them
    for ax in list(axes.flat)[len(benchmarks):]:
        ax.axis("off")
    fig.suptitle(f"Accuracy of every method (baseline {baseline})\nbars: 95% case-bootstrap CI", fontsize=9)
    return save(fig, folder, "accuracy_by_model")


def _outcome(frame: pd.DataFrame) -> str:
    return ", ".join(sorted(set(frame["outcome"].dropna().astype(str)))) if "outcome" in frame else ""


def fig_gain_by_quartile(gains: pd.DataFrame, folder: Path, outcomes: dict[str, str] | None = None) -> str:
    plt = _pyplot()
    if gains.empty:
        raise Unavailable("no treatment/baseline pair with complexity quartiles")
    benchmarks = sorted(gains["benchmark"].unique())
    rows, cols = _grid(len(benchmarks))
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False, layout="constrained")
    several = gains[["treatment", "baseline"]].drop_duplicates().shape[0] > 1
    for ax, benchmark in zip(axes.flat, benchmarks):
        frame = gains[gains["benchmark"] == benchmark]
        for (model, config, t, b), g in frame.groupby(["model", "config", "treatment", "baseline"], sort=True):
            g = g.sort_values("quartile")
            label = f"{model} {config} ({t} vs {b})" if several else f"{model} {config}"
            line = ax.plot(g["quartile"], g["gain_points"], marker="o", label=label)[0]
            for q, y, n in zip(g["quartile"], g["gain_points"], g["cases"]):
                ax.annotate(f"n={n}", (q, y), textcoords="offset points", xytext=(0, 4), ha="center",
                            fontsize=6, color=line.get_color())
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks([1, 2, 3, 4], ["Q1", "Q2", "Q3", "Q4"])
        ax.set_xlabel("complexity quartile (n = cases)")
        ax.set_ylabel("gain P - B (points)")
        ax.set_title(f"{benchmark}: {(outcomes or {}).get(benchmark, '')}", fontsize=8)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(benchmarks):]:
        ax.axis("off")
    fig.suptitle("Gain per complexity quartile\ndescriptive, no interval (few cases per quartile)", fontsize=9)
    return save(fig, folder, "gain_by_quartile")


def fig_accuracy_quartile_agents(samples: pd.DataFrame, folder: Path, treatments: Sequence[str], baseline: str) -> str:
    plt = _pyplot()
    scored = _scored(samples).dropna(subset=["quartile", "n_agents"])
    if scored.empty:
        raise Unavailable("no trials with a complexity quartile")
    scored = scored.assign(configuration=_configuration(scored))
    panels = [(b, c, p) for b in sorted(scored["benchmark"].unique())
              for c in sorted(scored.loc[scored["benchmark"] == b, "configuration"].unique())
              for p in _protocol_order(scored[scored["benchmark"] == b], treatments, baseline)]
    agents = sorted(int(a) for a in scored["n_agents"].unique())
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols + 1, (0.5 * len(agents) + 2.2) * rows),
                             squeeze=False, layout="constrained")
    image = None
    for ax, (benchmark, configuration, protocol) in zip(axes.flat, panels):
        frame = scored[(scored["benchmark"] == benchmark) & (scored["configuration"] == configuration)
                       & (scored["protocol"] == protocol)]
        grid = np.full((len(agents), 4), np.nan)
        for (a, q), g in frame.groupby([frame["n_agents"].astype(int), frame["quartile"].astype(int)]):
            value = grid[agents.index(a), q - 1] = 100 * g["correct"].mean()
            ax.text(q - 1, agents.index(a), f"{value:.0f}\n(n={len(g)})", ha="center", va="center",
                    fontsize=7, color="white" if value < 50 else "black")
        image = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        ax.set_xticks(range(4), ["Q1", "Q2", "Q3", "Q4"])
        ax.set_yticks(range(len(agents)), [str(a) for a in agents])
        ax.set_xlabel("complexity quartile")
        ax.set_ylabel("agents")
        ax.set_title(f"{benchmark}: {_outcome(frame)}\n{configuration} · {protocol}", fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if image is not None:
        fig.colorbar(image, ax=list(axes.flat), label="accuracy (%)", shrink=0.8)
    fig.suptitle("Accuracy per (agents, quartile) cell, n = trials\ndescriptive, no interval", fontsize=9)
    return save(fig, folder, "accuracy_quartile_agents")


def fig_vote_accuracy(votes: pd.DataFrame, folder: Path, outcomes: dict[str, str] | None = None) -> str:
    plt = _pyplot()
    known = votes.dropna(subset=["correct"]) if not votes.empty else votes
    if known.empty:
        raise Unavailable("no persona votes with a vote-level value of the outcome in these logs (POIROT records votes)")
    top = {b: set(g["voter"].value_counts().sort_index().sort_values(ascending=False, kind="mergesort").index[:MAX_VOTERS])
           for b, g in known.groupby("benchmark")}
    known = known[[v in top[b] for b, v in zip(known["benchmark"], known["voter"])]]
    known = known.assign(configuration=_configuration(known))
    panels = sorted(known.groupby(["benchmark", "configuration", "protocol"]).groups)
    rows, cols = _grid(len(panels))
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False, layout="constrained")
    for ax, (benchmark, model, protocol) in zip(axes.flat, panels):
        frame = known[(known["benchmark"] == benchmark) & (known["configuration"] == model)
                      & (known["protocol"] == protocol)]
        by_voter = frame.groupby("voter", sort=True)["correct"].mean()
        trials = frame.drop_duplicates(["case", "epoch"])
        aggregate = trials["aggregate_correct"].mean()
        labels = list(by_voter.index) + ["aggregate"]
        values = list(100 * by_voter.to_numpy()) + [100 * aggregate]
        colors = ["tab:blue"] * len(by_voter) + ["tab:red"]
        ax.bar(range(len(labels)), values, color=colors)
        ax.set_xticks(range(len(labels)), labels, rotation=35, ha="right", fontsize=7)
        ax.set_ylim(0, 100)
        ax.set_ylabel("accuracy (%)")
        ax.set_xlabel("persona (blue) and aggregate (red)")
        outcome = (outcomes or {}).get(benchmark, "")
        ax.set_title(f"{benchmark}: {outcome}\n{model} · {protocol}; n = {len(trials)} trials, "
                     f"{trials['case'].nunique()} cases", fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle("Persona votes before aggregation vs the aggregate\ndescriptive, no interval", fontsize=9)
    return save(fig, folder, "vote_accuracy")


def _vector(ids: Sequence[str], components: Sequence[str]) -> list[int]:
    chosen = set(ids)
    return [1 if c in chosen else 0 for c in components]


_MARKERS = ["o", "D", "^", "v", "P", "X", "h"]


def _scatter(ax, points: list[tuple[float, float, bool]], scale: float, marker: str, color: str,
             label: str, alpha: float = 0.7) -> None:
    """Draw identical points once, area ``scale * sqrt(count)``; all-zero vectors as hollow squares."""
    counts: dict[tuple[float, float, bool], int] = {}
    for x, y, empty in points:
        key = (round(x, 9), round(y, 9), empty)
        counts[key] = counts.get(key, 0) + 1
    filled = sorted(k for k in counts if not k[2])
    hollow = sorted(k for k in counts if k[2])
    if filled:
        ax.scatter([k[0] for k in filled], [k[1] for k in filled], s=[scale * math.sqrt(counts[k]) for k in filled],
                   marker=marker, color=color, alpha=alpha, label=label)
    if hollow:
        ax.scatter([k[0] for k in hollow], [k[1] for k in hollow], s=[scale * math.sqrt(counts[k]) for k in hollow],
                   marker="s", facecolors="none", edgecolors=color, alpha=alpha, label=f"{label}: no fault")


def fig_radial(samples: pd.DataFrame, votes: pd.DataFrame, folder: Path, treatments: Sequence[str], baseline: str) -> list[str]:
    plt = _pyplot()
    written: list[str] = []
    frame = samples[samples["components"].notna() & samples["gold_faulty"].notna()]
    if frame.empty:
        raise Unavailable("no samples with a component order and a gold vector")
    for benchmark, by_benchmark in frame.groupby("benchmark", sort=True):
        orders = by_benchmark["components"].unique()
        if len(orders) != 1:
            continue  # cases of different systems (Who&When): no common circle
        components = json.loads(orders[0])
        n = len(components)
        by_benchmark = by_benchmark.assign(configuration=_configuration(by_benchmark))
        models = sorted(by_benchmark["configuration"].unique())
        rows, cols = _grid(len(models))
        fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols, 6.0 * rows), squeeze=False, layout="constrained")
        for ax, model in zip(axes.flat, models):
            part = by_benchmark[by_benchmark["configuration"] == model]
            ax.add_patch(plt.Circle((0, 0), RADIUS, fill=False, color="lightgrey"))
            for d, name in enumerate(components):
                x, y = dimension_position(d, n)
                ax.plot([0, x], [0, y], color="whitesmoke", linewidth=0.8, zorder=0)
                ax.annotate(name, (x * 1.12, y * 1.12), ha="center", va="center", fontsize=6)
            mv = votes[(votes["benchmark"] == benchmark) & (_configuration(votes) == model)] if not votes.empty else votes
            mv = mv[mv["valid"].astype(bool)] if len(mv) else mv
            if len(mv):
                pts = [(*radial_position(_vector(json.loads(f), components)), f == "[]") for f in mv["faulty"]]
                _scatter(ax, pts, 14, "x", "grey", "votes", alpha=0.6)
            for i, protocol in enumerate(_protocol_order(part, treatments, baseline)):
                pred = part.loc[(part["protocol"] == protocol) & ~part["invalid"].astype(bool), "pred_faulty"].dropna()
                pts = [(*radial_position(_vector(json.loads(f), components)), f == "[]") for f in pred]
                _scatter(ax, pts, 30, _MARKERS[i % len(_MARKERS)], f"C{i}", f"{protocol} consensus", alpha=0.55)
            gold = part.drop_duplicates("case")["gold_faulty"]
            pts = [(*radial_position(_vector(json.loads(f), components)), f == "[]") for f in gold]
            _scatter(ax, pts, 45, "*", "black", "ground truth", alpha=0.9)
            ax.set_xlim(-0.75, 0.75)
            ax.set_ylim(-0.75, 0.75)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{model}; n = {part['case'].nunique()} cases", fontsize=8)
        for ax in list(axes.flat)[len(models):]:
            ax.axis("off")
        handles: dict[str, object] = {}
        for ax in axes.flat:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, handle)
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(cols, len(handles)),
                   fontsize=7, markerscale=0.6)
        fig.suptitle(f"{benchmark}: radial embedding of attribution vectors\n(counts, no interval)", fontsize=9)
        written.append(save(fig, folder, "radial_" + str(benchmark).replace("/", "_")))
    if not written:
        raise Unavailable("no benchmark whose cases share one component order")
    return written


def fig_step_tolerance(tolerance: pd.DataFrame, folder: Path) -> str:
    plt = _pyplot()
    if tolerance.empty:
        raise Unavailable("no Who&When trials scored by the attribution scorer")
    benchmarks = sorted(tolerance["benchmark"].unique())
    rows, cols = _grid(len(benchmarks))
    series = tolerance.groupby(["benchmark", "model", "config", "protocol"]).ngroups
    height = max(3.8, 1.4 + 0.13 * series / len(benchmarks))  # tall enough for the legend beside the plot
    fig, axes = plt.subplots(rows, cols, figsize=(7.8 * cols, height * rows), squeeze=False, layout="constrained")
    for ax, benchmark in zip(axes.flat, benchmarks):
        frame = tolerance[tolerance["benchmark"] == benchmark]
        groups = frame.groupby(["model", "config", "protocol"], sort=True)
        for i, ((model, config, protocol), g) in enumerate(groups):  # colour x line style: 40 distinct series
            ax.plot(g["k"], 100 * g["accuracy"], marker=_MARKERS[i % len(_MARKERS)], ls=("-", "--", ":", "-.")[i // 10 % 4],
                    label=f"{protocol} ({model} {config}; n = {int(g['cases'].iloc[0])} cases)")
        ax.set_xlabel("tolerance k (steps)")
        ax.set_ylabel("step accuracy within k (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{benchmark}: attribution.step within k", fontsize=8)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the curves, never over them
    for ax in list(axes.flat)[len(benchmarks):]:
        ax.axis("off")
    fig.suptitle("Step tolerance (RAFFLES), mean of case means\ndescriptive, no interval", fontsize=9)
    return save(fig, folder, "step_tolerance")


def fig_far_vs_step_acc(auditing: pd.DataFrame, folder: Path) -> str:
    plt = _pyplot()
    usable = auditing.dropna(subset=["far", "step_acc"]) if not auditing.empty else auditing
    if usable.empty:
        raise Unavailable("no auditing logs with both safe and unsafe trajectories")
    height = max(4.6, 1.4 + 0.13 * len(usable))  # tall enough for the legend beside the plot
    fig, ax = plt.subplots(figsize=(10.5, height), layout="constrained")
    for i, (_, r) in enumerate(usable.iterrows()):
        x, y = 100 * r["step_acc"], 100 * r["far"]
        ax.errorbar([x], [y], xerr=[[x - 100 * r["step_acc_low"]], [100 * r["step_acc_high"] - x]],
                    yerr=[[y - 100 * r["far_low"]], [100 * r["far_high"] - y]], fmt=_MARKERS[i % len(_MARKERS)],
                    capsize=2, label=f"{r['protocol']} ({r['model']} {r['config']}, {r['benchmark']}; n = {r['pairs']} pairs)")
    ax.set_xlabel("Step-Acc (%)")
    ax.set_ylabel("FAR (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the points, never over them
    ax.set_title("Online auditing: auditing FAR vs Step-Acc\n95% pair-bootstrap CIs (a safe control with its log)", fontsize=8)
    return save(fig, folder, "far_vs_step_acc")


FIGURES: tuple[str, ...] = (
    "accuracy_by_model", "gain_by_quartile", "accuracy_quartile_agents", "vote_accuracy", "radial",
    "step_tolerance", "far_vs_step_acc",
)
