#!/usr/bin/env python3
"""iLQR swinging a cart-pole up with karakuri's step derivatives (World.step_derivatives).

The cart slides along x on a force actuator (a torque-mode actuator on the slider, ±20 N); the
pole hangs from it on a hinge. From rest hanging down, iLQR finds the forces over 2 s that bring
the pole upright over the cart: each iteration rolls the world out (snapshot, restore) and
takes A, B of every step of the rollout, then the usual backward pass (Li & Todorov 2004) with
a line search on the feed-forward.

    python3 crates/karakuri-py/examples/ilqr_cartpole.py [--iterations 100]
"""

import argparse
import math
import tempfile
from pathlib import Path

import numpy as np

import karakuri

SCENE = """
world: {gravity: [0, 0, -9.81], dt: 0.02}
engine: {integrator: semi_implicit_euler}
bodies:
  - name: cart
    mass: 1.0
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{name: slider, type: prismatic, axis: [1, 0, 0],
              actuator: {mode: torque, target: 0, effort_limit: 20}}]
  - name: pole
    parent: cart
    mass: 0.2
    com: [0, 0, -0.5]
    inertia: [[0.0167, 0, 0], [0, 0.0167, 0], [0, 0, 0.0001]]
    joints: [{name: hinge, type: revolute, axis: [0, 1, 0], damping: 0.01}]
"""
LIMIT = 20.0
GOAL = np.array([0.0, math.pi, 0.0, 0.0])  # cart at 0, pole up (its centre above the hinge)
Q = np.diag([0.01, 0.01, 0.001, 0.001])
QF = np.diag([100.0, 100.0, 10.0, 10.0])
R = 1e-4


def make_world():
    path = Path(tempfile.mkdtemp()) / "cartpole.yaml"
    path.write_text(SCENE)
    return karakuri.World.from_file(str(path))


def rollout(world, start, us):
    """States (T + 1, 4) and A (T, 4, 4), B (T, 4, 1) along the forces `us` (clipped)."""
    world.restore(start)
    xs, As, Bs = [np.concatenate([world.q, world.dq])], [], []
    for u in us:
        world.set_targets([u])
        A, B = world.step_derivatives()
        As.append(A)
        Bs.append(B)
        world.step()
        xs.append(np.concatenate([world.q, world.dq]))
    return np.array(xs), np.array(As), np.array(Bs)


def cost(xs, us):
    d = xs - GOAL
    return float(np.einsum("ti,ij,tj->", d[:-1], Q, d[:-1]) + R * np.sum(us**2) + d[-1] @ QF @ d[-1])


def backward(xs, us, As, Bs, mu):
    """Feed-forward k (T,) and gains K (T, 4) of the quadratic model, regularised by mu."""
    T = len(us)
    k, K = np.zeros(T), np.zeros((T, 4))
    vx, vxx = 2 * QF @ (xs[-1] - GOAL), 2 * QF
    for t in reversed(range(T)):
        A, B = As[t], Bs[t][:, 0]
        qx = 2 * Q @ (xs[t] - GOAL) + A.T @ vx
        qu = 2 * R * us[t] + B @ vx
        qxx = 2 * Q + A.T @ vxx @ A
        quu = 2 * R + B @ vxx @ B + mu
        qux = B @ vxx @ A
        k[t], K[t] = -qu / quu, -qux / quu
        vx = qx + K[t] * quu * k[t] + K[t] * qu + qux * k[t]
        vxx = qxx + np.outer(K[t], K[t]) * quu + np.outer(K[t], qux) + np.outer(qux, K[t])
        vxx = 0.5 * (vxx + vxx.T)
    return k, K


def ilqr(iterations=100, steps=100, log=print):
    """Runs iLQR from the pole hanging at rest; returns (costs per iteration, final state)."""
    world = make_world()
    start = world.snapshot()
    us = np.zeros(steps)
    xs, As, Bs = rollout(world, start, us)
    costs, mu = [cost(xs, us)], 1e-6
    for it in range(iterations):
        k, K = backward(xs, us, As, Bs, mu)
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
            world.restore(start)
            new_us, new_xs = np.zeros(steps), [xs[0]]
            for t in range(steps):
                u = us[t] + alpha * k[t] + K[t] @ (new_xs[-1] - xs[t])
                new_us[t] = min(max(u, -LIMIT), LIMIT)
                world.set_targets([new_us[t]])
                world.step()
                new_xs.append(np.concatenate([world.q, world.dq]))
            c = cost(np.array(new_xs), new_us)
            if c < costs[-1]:
                break
        else:
            mu *= 10.0
            continue
        mu = max(mu / 2, 1e-9)
        us = new_us
        xs, As, Bs = rollout(world, start, us)
        costs.append(c)
        log(f"iteration {it:3d}: cost {c:10.4f}, pole at {xs[-1][1]:6.3f} rad, alpha {alpha}")
    return costs, xs[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=100)
    args = ap.parse_args()
    costs, final = ilqr(args.iterations)
    print(f"cost {costs[0]:.3f} -> {costs[-1]:.3f}; final cart {final[0]:.3f} m, pole {final[1]:.3f} rad (upright: {math.pi:.3f})")


if __name__ == "__main__":
    main()
