#!/usr/bin/env python3
"""Pinocchio's view of URDF files, as JSON on stdout, for karakuri's example-robot-data tests.

    python3 pinocchio_mass_matrices.py FILE.urdf ... > out.json

For each file and each root (`fixed`: buildModel(file); `free`: with a JointModelFreeFlyer), either
{"error": "..."} when Pinocchio refuses it, or the joints (name, idx_v, nv), the total mass and
the mass matrix (CRBA, both triangles, row-major) at a configuration both sides can build from
joint names alone: every 1-dof joint at angle 0.5 sin(sum of the bytes of its name) (continuous
joints as (cos, sin) of it), every other joint at its neutral value.
"""
import json
import math
import sys

import numpy as np
import pinocchio as pin


def angle(name):
    return 0.5 * math.sin(sum(name.encode()))


def summary(model):
    q = pin.neutral(model)
    for j in range(1, model.njoints):
        name, jm = model.names[j], model.joints[j]
        if jm.nv != 1:
            continue
        a = angle(name)
        if jm.nq == 1:
            q[jm.idx_q] = a
        elif jm.nq == 2:
            q[jm.idx_q : jm.idx_q + 2] = (math.cos(a), math.sin(a))
    data = model.createData()
    m = pin.crba(model, data, q)
    m = np.triu(m) + np.triu(m, 1).T
    return {
        "joints": [
            {"name": model.names[j], "idx_v": model.joints[j].idx_v, "nv": model.joints[j].nv}
            for j in range(1, model.njoints)
        ],
        "mass": float(sum(model.inertias[j].mass for j in range(1, model.njoints))),
        "nv": model.nv,
        "mass_matrix": [float(x) for x in m.flatten()],
    }


def main():
    out = {}
    for path in sys.argv[1:]:
        entry = {}
        for root in ("fixed", "free"):
            try:
                if root == "fixed":
                    model = pin.buildModelFromUrdf(path)
                else:
                    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
                entry[root] = summary(model)
            except Exception as e:  # Pinocchio raises ValueError / RuntimeError on refusal
                entry[root] = {"error": str(e).strip()}
        out[path] = entry
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
