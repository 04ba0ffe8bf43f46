#!/usr/bin/env python3
"""Ratio table karakuri/Pinocchio from one run of scripts/bench-vs-pinocchio.

Usage: compare_bench.py PINOCCHIO_results.json KARAKURI_results.jsonl [--write-doc docs/PERFORMANCE.md]
Pinocchio's column for each karakuri key is its fastest variant (native or lib build; LOCAL or
WORLD convention), so a ratio below 1 beats Pinocchio's best.
"""
import argparse
import json
import platform

# karakuri key -> Pinocchio columns (the fastest of them is the reference)
COLUMNS = {
    "fk_q": ["fk_q"], "fk_qv": ["fk_qv"], "fk_qva": ["fk_qva"], "rnea": ["rnea"], "nle": ["nle"],
    "gravity": ["gravity"], "crba": ["crba_local", "crba_world"], "aba": ["aba_local", "aba_world"],
    "minverse": ["minverse"], "jacobians": ["jacobians"], "rnea_derivatives": ["rnea_derivatives"],
    "aba_derivatives": ["aba_derivatives"], "cd_contacts3d": ["cd_contacts3d"],
}


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pinocchio")
    ap.add_argument("karakuri")
    ap.add_argument("--write-doc")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--time", default="0.5", help="the --time the run used (for the table's caption)")
    args = ap.parse_args()
    pin = json.load(open(args.pinocchio))
    # several builds per model: keep the fastest median per algorithm (as for Pinocchio)
    kar = []
    for line in open(args.karakuri):
        if not line.strip():
            continue
        d = json.loads(line)
        prev = next((m for m in kar if m["model"] == d["model"]), None)
        if prev is None:
            kar.append(d)
            continue
        for key, t in d["algorithms"].items():
            if key not in prev["algorithms"] or t["median_ns"] < prev["algorithms"][key]["median_ns"]:
                prev["algorithms"][key] = t
    pin_models = {}
    for variant in pin["variants"].values():
        for m in variant["models"]:
            pin_models.setdefault(m["name"], []).append(m.get("timings", {}))
    names = [k["model"] for k in kar]
    keys = [k for k in COLUMNS if any(k in m["algorithms"] for m in kar)] + \
        [k for k in ("hybrid",) if any(k in m["algorithms"] for m in kar)]
    lines = []
    lines.append("| algorithm | " + " | ".join(f"{n} ({m['nq']}/{m['nv']})" for n, m in zip(names, kar)) + " |")
    lines.append("| --- |" + " ---: |" * len(names))
    worst = 0.0
    above = []
    for key in keys:
        cells = []
        for m in kar:
            t = m["algorithms"].get(key)
            if t is None:
                cells.append("-")
                continue
            if key == "hybrid":
                r = m["algorithms"].get("rnea")
                cells.append(f"{t['median_ns']:.0f} ns = {t['median_ns'] / r['median_ns']:.2f} RNEA" if r else f"{t['median_ns']:.0f}")
                continue
            best = None
            for timings in pin_models.get(m["model"], []):
                for col in COLUMNS[key]:
                    if col in timings and timings[col].get("median_ns"):
                        v = timings[col]["median_ns"]
                        best = v if best is None else min(best, v)
            if best is None:
                cells.append(f"{t['median_ns']:.0f} / -")
                continue
            ratio = t["median_ns"] / best
            worst = max(worst, ratio)
            if ratio >= 1.0:
                above.append(f"{m['model']}:{key}")
            cells.append(f"{t['median_ns']:.0f} / {best:.0f} = **{ratio:.2f}**")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    print(f"\nworst ratio {worst:.2f}; at or above 1: {', '.join(above) if above else 'none'}")
    if args.write_doc:
        header = f"""# Performance: karakuri against Pinocchio

Cells: karakuri ns / Pinocchio ns = **ratio** (median ns per call, thread CPU time, ~5 ms batches,
1000 random samples cycled; below 1 = karakuri faster). Pinocchio's figure is its fastest build
(header-only `-O3 -march=native`, or the pip wheel's library) and, for CRBA and ABA, its faster
convention (LOCAL or WORLD); karakuri's is the faster of its two builds (`-C target-cpu=native`
and portable, both the release profile). `cd_contacts3d` is karakuri's range-space-sparse
constrained forward dynamics with the 3-D contacts of `models.tsv` against Pinocchio's
`constraintDynamics` (exact KKT settings). `rnea_derivatives` and `aba_derivatives` are
Pinocchio's `computeRNEADerivatives` (∂τ/∂q, ∂τ/∂v, M) and `computeABADerivatives` (∂q̈/∂q,
∂q̈/∂v, M⁻¹) against karakuri's functions of the same names, same outputs. `hybrid` (free flyer forward, all other joints inverse) is given as a
multiple of karakuri's own RNEA.

Machine: {cpu_model()}, 2 cores shared with other work; measured with
`scripts/bench-vs-pinocchio --time {args.time}{f" --rounds {args.rounds}" if args.rounds > 1 else ""} --write-doc` (both sides in the same run{
f"; {args.rounds} rounds, the two libraries interleaved robot by robot, each side's fastest median of the rounds per cell" if args.rounds > 1 else ""}).

"""
        # keep the hand-written part that follows the generated table
        marker = "<!-- end of generated table -->"
        rest = ""
        try:
            old = open(args.write_doc).read()
            if marker in old:
                rest = old[old.index(marker) + len(marker):]
        except OSError:
            pass
        open(args.write_doc, "w").write(header + table + f"\n\nWorst ratio: {worst:.2f}; at or above 1: {', '.join(above) if above else 'none'}.\n" + marker + rest)


if __name__ == "__main__":
    main()
