"""Reports: markdown tables, latency plots, JSON."""

import json

from .storms import DISK_BPS


def ratio(a, b):
    """a over b as "1.2x"; "-" when b is 0."""
    return f"{a / b:.1f}x" if b else "-"


def markdown(head, rows):
    rows = [tuple(head)] + [tuple(r) for r in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def table(results, disk_bps_write=DISK_BPS, mode="write"):
    """The probe's latency and the cores, one row per result."""
    head = ("setup", "idle p50", "idle p99", "idle max", "storm p50",
            "storm p99", "storm max", "p99/idle", "max/idle", "cores ok",
            "last core", "vs disk")
    rows = []
    for r in results:
        limit = r.disk_s(disk_bps_write)
        i, s = r.probes[mode]["idle"], r.probes[mode]["storm"]
        rows.append((r.setup, f"{i['p50']:.1f} ms", f"{i['p99']:.1f} ms",
                     f"{i['max']:.1f} ms", f"{s['p50']:.1f} ms",
                     f"{s['p99']:.1f} ms", f"{s['max']:.1f} ms",
                     ratio(s["p99"], i["p99"]), ratio(s["max"], i["max"]),
                     f"{r.kept}/{r.crashes}", f"{r.drain_s:.1f} s",
                     f"{r.drain_s / limit:.2f}x"))
    return markdown(head, rows)


def plot(results, path, title, mode="write"):
    """Probe latency over time, one line per setup, log scale; the storm's
    start (0 s) and each setup's end (every core on disk) marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for r in results:
        samples = r.probes[mode]["samples"]
        xs = [(t - r.start_ms) / 1000.0 for t, _ in samples]
        ys = [lat / 1000.0 for _, lat in samples]
        line, = ax.plot(xs, ys, linewidth=0.8, label=r.setup)
        ax.axvline((r.synced_ms - r.start_ms) / 1000.0, color=line.get_color(),
                   linestyle=":", linewidth=1)
    ax.axvline(0, color="black", linestyle="--", linewidth=1, label="storm starts")
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the first crash (dotted: last core on disk)")
    ax.set_ylabel({"write": "4 KiB write + fdatasync latency (ms)",
                   "read": "4 KiB O_DIRECT read latency (ms)",
                   "stream": "foreground 4 MiB fdatasync latency (ms)"}[mode])
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def to_json(results):
    out = []
    for r in results:
        d = {k: v for k, v in r.__dict__.items() if k != "probes"}
        d["probes"] = {m: {k: v for k, v in p.items() if k != "samples"}
                       for m, p in r.probes.items()}
        out.append(d)
    return json.dumps(out, indent=1)
