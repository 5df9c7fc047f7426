#!/usr/bin/env python3
"""Draws a shardlab-schedule report (--report FILE) as an SVG Gantt chart.

One row for the compute stream and one per collective stream; each op is a
bar from start_us to end_us. On the compute row, every stretch where the
compute stream is idle, waiting for a collective's done, is drawn in red:
that is the communication the schedule could not hide (it adds up to the
report's exposed_comm_us). A
time axis, the totals and a legend are drawn above and below.

    python3 scripts/schedule_svg.py REPORT.json -o OUT.svg [--title TEXT]
        [--width PX]

Standard library only; the output is deterministic for a given report.
"""
import argparse
import json
import os
import sys
from xml.sax.saxutils import escape

COLORS = {
    "compute": "#4e79a7",
    "all-gather": "#59a14f",
    "all-reduce": "#f28e2b",
    "reduce-scatter": "#b07aa1",
    "all-to-all": "#76b7b2",
    "collective-permute": "#edc948",
}
EXPOSED = "#e15759"
ROW_H, BAR_H, LEFT, TOP = 34, 22, 130, 56


def short_name(name):
    """'stablehlo.dot_general@12' -> 'dot_general'."""
    base = name.split("@")[0]
    return base.split(".")[-1]


def nice_step(span):
    """A round tick spacing giving 5-10 ticks over `span`."""
    step = 10 ** max(0, len(str(int(span))) - 1)
    while span / step > 10:
        step *= 2
    while span / step < 5 and step > 1:
        step /= 2
    return step


def rows_of(ops):
    """Row names: compute first, then the collective streams in order."""
    streams = sorted({op["stream"] for op in ops if op["stream"] != "compute"})
    return ["compute"] + streams


def bar(x, y, w, color, title, label=None):
    out = ['<g><title>%s</title>' % escape(title),
           '<rect x="%.2f" y="%.2f" width="%.2f" height="%d" fill="%s" '
           'stroke="white" stroke-width="0.5"/>' % (x, y, max(w, 0.5), BAR_H,
                                                    color)]
    if label and w > 7 * len(label):
        out.append('<text x="%.2f" y="%.2f" font-size="11" fill="white">%s'
                   '</text>' % (x + 3, y + BAR_H - 7, escape(label)))
    out.append("</g>")
    return "".join(out)


def op_bars(report, rows, scale):
    """Compute bars on the first row, each collective's transfer on its
    stream's row."""
    out = []
    for op in report["ops"]:
        start, end = op["start_us"], op["end_us"]
        if end <= start:
            continue
        y = TOP + rows.index(op["stream"]) * ROW_H + (ROW_H - BAR_H) / 2
        kind = op.get("collective", "compute")
        title = "%s: %.1f-%.1f us" % (op["name"], start, end)
        out.append(bar(LEFT + start * scale, y, (end - start) * scale,
                       COLORS.get(kind, "#999"), title,
                       short_name(op["name"])))
    return out


def exposed_bars(report, scale):
    """Red where the compute stream is idle: every gap between compute ops
    (and before the first, after the last) is time spent waiting for a
    collective's done, i.e. exposed communication."""
    ops = report["ops"]
    busy = sorted((op["start_us"], op["end_us"]) for op in ops
                  if op["kind"] == "compute" and op["end_us"] > op["start_us"])
    dones = [(op.get("done_us", op["end_us"]), op["name"]) for op in ops
             if op["kind"] == "collective"]
    out, now, eps = [], 0.0, 1e-6 * (1 + report["step_time_us"])
    for start, end in busy + [(report["step_time_us"],) * 2]:
        if start > now + eps:
            waits = [n for d, n in dones if now - eps <= d <= start + eps]
            title = "compute waits %.1f us for %s" % (
                start - now, ", ".join(waits) or "a collective")
            out.append(bar(LEFT + now * scale, TOP + (ROW_H - BAR_H) / 2,
                           (start - now) * scale, EXPOSED, title))
        now = max(now, end)
    return out


def axis(step_time, scale, height):
    out = []
    tick = nice_step(step_time)
    t = 0.0
    while t <= step_time + 1e-9:
        x = LEFT + t * scale
        out.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#ddd"/>'
                   % (x, TOP - 4, x, height))
        out.append('<text x="%.2f" y="%d" font-size="10" fill="#555" '
                   'text-anchor="middle">%g</text>' % (x, TOP - 8, t))
        t += tick
    return out


def legend(report, y):
    kinds = sorted({op.get("collective") for op in report["ops"]} - {None})
    items = [("compute", COLORS["compute"])] + [(k, COLORS.get(k, "#999"))
                                                for k in kinds]
    items.append(("exposed communication (compute stream waits)", EXPOSED))
    out, x = [], LEFT
    for label, color in items:
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                   % (x, y, color))
        out.append('<text x="%d" y="%d" font-size="11">%s</text>'
                   % (x + 16, y + 10, escape(label)))
        x += 24 + 7 * len(label)
    return out


def render(report, title, width):
    ops = report["ops"]
    rows = rows_of(ops)
    step = max(report["step_time_us"], 1e-9)
    scale = (width - LEFT - 20) / step
    height = TOP + ROW_H * len(rows)
    total_h = height + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (width, total_h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>'
           % (LEFT, escape(title)),
           '<text x="%d" y="%d" font-size="10" fill="#555">us</text>'
           % (LEFT - 24, TOP - 8)]
    out += axis(step, scale, height)
    for i, row in enumerate(rows):
        out.append('<text x="%d" y="%.1f" font-size="12" text-anchor="end">'
                   '%s</text>' % (LEFT - 8, TOP + i * ROW_H + ROW_H / 2 + 4,
                                  escape(row)))
    out += op_bars(report, rows, scale)
    out += exposed_bars(report, scale)
    totals = ("step %.0f us | compute %.0f us | communication %.0f us, "
              "exposed %.0f us | serial %.0f us | lower bound %.0f us"
              % (report["step_time_us"], report["compute_us"],
                 report.get("comm_us", 0), report["exposed_comm_us"],
                 report["serial_us"], report["lower_bound_us"]))
    out.append('<text x="%d" y="38" font-size="11" fill="#333">%s</text>'
               % (LEFT, escape(totals)))
    out += legend(report, height + 18)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="JSON report of shardlab-schedule")
    parser.add_argument("-o", "--output", required=True, help="SVG to write")
    parser.add_argument("--title", default=None)
    parser.add_argument("--width", type=int, default=1100)
    args = parser.parse_args(argv)
    with open(args.report) as f:
        report = json.load(f)
    title = args.title or os.path.basename(args.report)
    svg = render(report, title, args.width)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(svg)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
