"""The critical path of a training step: the step's CUDA graph (train_mlp --step-graph, a DAG of
kernels) weighted by each kernel's time (ncu, launch by launch), and its longest chain.

Used by scripts/check/critical_path.py. Everything here reads files or data; nothing runs.

- read_graph(path): the graph's kernels in creation order (= launch order of the same code run
  launch by launch) and its edges (a, b): kernel b waits for kernel a.
- read_ncu_csv(path): the launches in an `ncu --csv` report (the default "details" page, or
  `--page raw`), each with its kernel name, grid, block and gpu__time_duration in µs.
- step_times(graph, launches): finds the graph's kernel sequence in the launches (by name, and by
  grid and block where both give them), skips the first `warmup` steps and returns each kernel's
  median time over the rest. Any disagreement is an Error naming the kernel and the launch.
- longest_path(graph, times): the critical path, its length, and when each kernel ends.

An Error's message is meant for the user as it stands.
"""

import csv
import json
import re
import statistics

TIME_METRIC = "gpu__time_duration.sum"
# ncu's time units (its base unit is nsecond), in µs.
UNIT_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
           "second": 1e6, "s": 1e6}


class Error(Exception):
    pass


def short_name(name):
    """A demangled kernel name without its return type and parameter list:
    'void ns::k<1, 2>(float const*, int)' -> 'ns::k<1, 2>'."""
    name = name.strip()
    if name.endswith(")"):  # drop the last top-level parenthesised list: the parameters
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    if name.startswith("void "):
        name = name[5:]
    return name.strip()


def _dims(value, what):
    """(x, y, z) from [x, y, z] or ncu's '(x, y, z)'."""
    if isinstance(value, str):
        parts = value.strip().strip("()[]").split(",")
        value = [p.strip() for p in parts if p.strip()]
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise Error(f"{what}: {value!r} is not a list of three whole numbers")
    if len(dims) != 3:
        raise Error(f"{what}: {value!r} is not a list of three whole numbers")
    return dims


def read_graph(path):
    """{'about': {model, batch, variant, ...}, 'kernels': [...], 'edges': [(a, b), ...]}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise Error(f"cannot read the step graph {path}: {e.strerror}")
    except ValueError as e:
        raise Error(f"the step graph {path} is not JSON: {e}")
    if not isinstance(doc, dict) or "kernels" not in doc or "edges" not in doc:
        raise Error(f"{path}: not a step graph (train_mlp --step-graph writes one): it has no "
                    "'kernels' and 'edges'")
    kernels = []
    for i, k in enumerate(doc["kernels"]):
        what = f"{path}: kernel {i}"
        try:
            if k["index"] != i:
                raise Error(f"{what} has index {k['index']}; the kernels must be listed in order")
            name, mangled = str(k["name"]), str(k.get("mangled", k["name"]))
            kernels.append({"index": i, "name": name, "mangled": mangled,
                            "grid": _dims(k["grid"], what + " grid"),
                            "block": _dims(k["block"], what + " block")})
        except (KeyError, TypeError) as e:
            raise Error(f"{what} lacks {e}: each kernel needs index, name, grid and block")
    n = len(kernels)
    if n == 0:
        raise Error(f"{path}: the graph has no kernels")
    edges = []
    for e in doc["edges"]:
        if (not isinstance(e, list) or len(e) != 2 or not all(isinstance(v, int) for v in e)
                or not 0 <= e[0] < e[1] < n):
            raise Error(f"{path}: edge {e!r} is not [a, b] with 0 <= a < b < {n} (an edge goes "
                        "from an earlier kernel to a later one)")
        edges.append((e[0], e[1]))
    about = {k: v for k, v in doc.items() if k not in ("kernels", "edges", "other_nodes")}
    return {"path": path, "about": about, "kernels": kernels, "edges": sorted(set(edges))}


def _number(text, what):
    """A metric value as ncu prints it, thousands separators included ('12,345.6')."""
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        raise Error(f"{what}: '{text}' is not a number")


def _to_us(value, unit, what):
    if unit not in UNIT_US:
        raise Error(f"{what}: unknown time unit '{unit}' (known: {', '.join(UNIT_US)})")
    return value * UNIT_US[unit]


def read_ncu_csv(path):
    """The launches in an ncu --csv report, in launch order: [{id, name, grid, block, us}]."""
    try:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Error(f"cannot read the ncu report {path}: {e.strerror}")
    # ncu's own lines (==PROF==, ==WARNING==) and the program's output may surround the table.
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise Error(f"{path}: no ncu CSV table in it (a header line starting with \"ID\"); "
                    "expected the output of ncu --csv")
    rows = [r for r in csv.reader(lines[start:]) if r]
    header = rows[0]
    width = len(header)
    rows = [r for r in rows[1:] if len(r) == width and r[0] != "ID"]
    col = {name: i for i, name in enumerate(header)}
    for needed in ("ID", "Kernel Name"):
        if needed not in col:
            raise Error(f"{path}: the ncu table has no '{needed}' column")
    launches = {}
    if "Metric Name" in col:  # the details page: a row per metric
        for needed in ("Metric Unit", "Metric Value"):
            if needed not in col:
                raise Error(f"{path}: the ncu table has no '{needed}' column")
        for r in rows:
            if r[col["Metric Name"]] != TIME_METRIC:
                continue
            what = f"{path}: launch ID {r[col['ID']]}"
            us = _to_us(_number(r[col["Metric Value"]], what), r[col["Metric Unit"]].strip(), what)
            launches[r[col["ID"]]] = (r, us)
    elif TIME_METRIC in col:  # the raw page: a column per metric, then a row of units
        unit = rows[0][col[TIME_METRIC]].strip() if rows else ""
        for r in rows[1:]:
            what = f"{path}: launch ID {r[col['ID']]}"
            launches[r[col["ID"]]] = (r, _to_us(_number(r[col[TIME_METRIC]], what), unit, what))
    else:
        raise Error(f"{path}: the ncu table has no {TIME_METRIC}: profile with --metrics "
                    f"{TIME_METRIC}")
    if not launches:
        raise Error(f"{path}: no launch has a {TIME_METRIC} value")
    out = []
    for launch_id, (r, us) in launches.items():
        what = f"{path}: launch ID {launch_id}"
        try:
            number = int(launch_id)
        except ValueError:
            raise Error(f"{what}: the ID is not a whole number")
        out.append({"id": number, "name": r[col["Kernel Name"]].strip(), "us": us,
                    "grid": _dims(r[col["Grid Size"]], what + " Grid Size")
                    if "Grid Size" in col else None,
                    "block": _dims(r[col["Block Size"]], what + " Block Size")
                    if "Block Size" in col else None})
    return sorted(out, key=lambda launch: launch["id"])


def _names(kernel):
    return {kernel["mangled"], kernel["name"], short_name(kernel["name"])}


def _agrees(kernel, launch):
    return (launch["name"] in _names(kernel)
            and launch["grid"] in (None, kernel["grid"])
            and launch["block"] in (None, kernel["block"]))


def _describe_kernel(k):
    return f"{short_name(k['name'])} grid {k['grid']} block {k['block']}"


def _describe_launch(launch):
    shape = "" if launch["grid"] is None else f" grid {launch['grid']} block {launch['block']}"
    return f"{launch['name']}{shape}"


def find_steps(graph, launches):
    """The indices into `launches` where the graph's whole kernel sequence starts, non-overlapping,
    in order. None found: an Error naming the first kernel where the closest launch sequence
    differs from the graph."""
    kernels, n = graph["kernels"], len(graph["kernels"])
    starts, i = [], 0
    while i + n <= len(launches):
        if all(_agrees(kernels[j], launches[i + j]) for j in range(n)):
            starts.append(i)
            i += n
        else:
            i += 1
    if starts:
        return starts
    best, best_len = None, -1
    for i in range(len(launches)):
        if not _agrees(kernels[0], launches[i]):
            continue
        j = 0
        while j < n and i + j < len(launches) and _agrees(kernels[j], launches[i + j]):
            j += 1
        if j > best_len:
            best, best_len = i, j
    if best is None:
        raise Error(f"the graph's first kernel, {_describe_kernel(kernels[0])}, is never launched "
                    "in the ncu report: the launch-by-launch run is not the graph's code")
    if best + best_len >= len(launches):
        raise Error(f"the ncu report ends after kernel {best_len - 1} of the step starting at "
                    f"launch ID {launches[best]['id']}: no whole step of {n} kernels was profiled")
    got = launches[best + best_len]
    raise Error(f"the launch-by-launch step differs from the graph: from launch ID "
                f"{launches[best]['id']} on, kernels 0..{best_len - 1} agree, then graph kernel "
                f"{best_len} is {_describe_kernel(kernels[best_len])} but launch ID {got['id']} "
                f"is {_describe_launch(got)}")


def step_times(graph, launches, warmup=1):
    """({kernel index: median µs}, number of steps used). The first `warmup` steps found are
    skipped (the first launches load the kernels and warm the caches)."""
    starts = find_steps(graph, launches)
    n = len(graph["kernels"])
    if len(starts) <= warmup:
        raise Error(f"the ncu report holds {len(starts)} whole step(s) of the graph's {n} kernels; "
                    f"{warmup} warm-up step(s) are skipped, so at least {warmup + 1} are needed")
    # Steps of one epoch follow one another directly; if no two found steps do, the launch-by-
    # launch step has kernels that the graph lacks (those between two steps).
    if len(starts) > 1 and not any(b - a == n for a, b in zip(starts, starts[1:])):
        between = [launches[k]["name"] for k in range(starts[0] + n, starts[1])]
        raise Error(f"no two of the {len(starts)} steps found follow one another directly: the "
                    f"launch-by-launch step launches kernels that the graph lacks (between the "
                    f"first two: {', '.join(between[:8])})")
    used = starts[warmup:]
    times = {j: statistics.median(launches[s + j]["us"] for s in used) for j in range(n)}
    return times, len(used)


def longest_path(graph, times):
    """{'path': [kernel indices], 'path_us', 'total_us', 'finish_us': {kernel: µs}}: each kernel
    ends at its own time plus the latest end among those it waits for; the critical path ends at
    the latest end (ties go to the lower index)."""
    n = len(graph["kernels"])
    waits_for = {j: [] for j in range(n)}
    for a, b in graph["edges"]:
        waits_for[b].append(a)
    finish, before = {}, {}
    for j in range(n):  # creation order is a topological order (read_graph checks a < b)
        start, prev = 0.0, None
        for a in sorted(waits_for[j]):
            if finish[a] > start:
                start, prev = finish[a], a
        finish[j], before[j] = start + times[j], prev
    end = max(range(n), key=lambda j: (finish[j], -j))
    path = [end]
    while before[path[-1]] is not None:
        path.append(before[path[-1]])
    path.reverse()
    return {"path": path, "path_us": finish[end], "total_us": sum(times.values()),
            "finish_us": finish}


CSV_COLUMNS = ["model", "batch", "variant", "order", "kernel", "grid", "block", "us", "ends_at_us",
               "critical"]


def csv_rows(graph, times, result):
    about, on_path = graph["about"], set(result["path"])
    rows = []
    for k in graph["kernels"]:
        j = k["index"]
        rows.append({"model": about.get("model", ""), "batch": about.get("batch", ""),
                     "variant": about.get("variant", ""), "order": j,
                     "kernel": short_name(k["name"]), "grid": "x".join(map(str, k["grid"])),
                     "block": "x".join(map(str, k["block"])), "us": "%.2f" % times[j],
                     "ends_at_us": "%.2f" % result["finish_us"][j],
                     "critical": "yes" if j in on_path else "no"})
    return rows


def markdown(graph, times, result, steps_used):
    about, kernels = graph["about"], graph["kernels"]
    title = ", ".join(x for x in (about.get("model", ""),
                                  f"batch {about['batch']}" if "batch" in about else "",
                                  about.get("variant", "")) if x)
    lines = [f"### {title or graph['path']}", "",
             f"Critical path: {len(result['path'])} of {len(kernels)} kernels, "
             f"{result['path_us']:.1f} µs; all kernels {result['total_us']:.1f} µs "
             f"(each kernel's median over {steps_used} launch-by-launch steps).", "",
             "| # | kernel | grid | µs | ends at µs |", "|--:|:--|:--|--:|--:|"]
    for j in result["path"]:
        k = kernels[j]
        lines.append(f"| {j} | `{short_name(k['name'])}` | {'×'.join(map(str, k['grid']))} | "
                     f"{times[j]:.1f} | {result['finish_us'][j]:.1f} |")
    return "\n".join(lines) + "\n"
