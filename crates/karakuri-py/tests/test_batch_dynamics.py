"""karakuri.batch against the single-state functions, row by row and bit for bit (aba, crba,
minverse, gravity and aba_derivatives: to rounding, records 0068, 0075, 0084 and 0086), on the reference robots; threads change no bit; bad arguments raise
ValueError naming them."""

from pathlib import Path

import numpy as np
import pytest

import karakuri

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
N = 13  # three lane groups of four and one state more


def robot(name, floating):
    model = karakuri.load_urdf(str(DATA / f"{name}.urdf"), floating=floating)
    rng = np.random.default_rng(len(name))
    Q = np.stack([karakuri.random_configuration(model, seed=s) for s in range(N)])
    V, A, TAU = (rng.uniform(-2, 2, (N, model.nv)) for _ in range(3))
    return model, Q, V, A, TAU


ROBOTS = [("ur5", False), ("panda", False), ("solo12", True), ("talos_reduced", True)]


@pytest.mark.parametrize("name,floating", ROBOTS)
def test_rows_equal_the_single_calls(name, floating):
    model, Q, V, A, TAU = robot(name, floating)
    d = model.create_data()
    b = karakuri.batch
    cases = [
        (b.rnea(model, Q, V, A), lambda i: karakuri.rnea(model, d, Q[i], V[i], A[i])),
        (b.nle(model, Q, V), lambda i: karakuri.nle(model, d, Q[i], V[i])),
        (b.joint_jacobians(model, Q), lambda i: karakuri.compute_joint_jacobians(model, d, Q[i])),
    ]
    for got, single in cases:
        for i in range(N):
            assert np.array_equal(got[i], single(i)), (name, i)
    # gravity: the single call sums the subtrees' weights (0086), the lanes run RNEA's passes
    G = b.gravity(model, Q)
    for i in range(N):
        want = karakuri.gravity(model, d, Q[i])
        assert np.max(np.abs(G[i] - want)) <= 1e-12 * (1 + np.max(np.abs(want))), (name, i)
    # CRBA and M⁻¹ in lanes sum the inertias in world axes and factorise in their own order:
    # equal to rounding, M within 1e-12 (1 + max|M|), M⁻¹ within that times max|M⁻¹|² (0075)
    Ms, Minvs = b.crba(model, Q), b.minverse(model, Q)
    for i in range(N):
        M, Minv = karakuri.crba(model, d, Q[i]), karakuri.minverse(model, d, Q[i])
        tol = 1e-12 * (1 + np.max(np.abs(M)))
        assert np.max(np.abs(Ms[i] - M)) <= tol, (name, i)
        assert np.max(np.abs(Minvs[i] - Minv)) <= tol * np.max(np.abs(Minv)) ** 2, (name, i)
    # ABA in lanes takes cheaper operations than the single call: equal to rounding
    ddq = b.aba(model, Q, V, TAU)
    for i in range(N):
        want = karakuri.aba(model, d, Q[i], V[i], TAU[i])
        assert np.max(np.abs(ddq[i] - want)) <= 1e-12 * (1 + np.max(np.abs(want))), (name, i)
    fk = b.forward_kinematics(model, Q)
    assert fk.shape == (N, model.njoints, 4, 4)
    for i in range(N):
        karakuri.forward_kinematics(model, d, Q[i])
        assert np.array_equal(fk[i], d.oMi), (name, i)
    batched = b.rnea_derivatives(model, Q, V, A)
    for i in range(N):
        for got, want in zip(batched, karakuri.compute_rnea_derivatives(model, d, Q[i], V[i], A[i])):
            assert np.array_equal(got[i], want), (name, i)
    # the ABA derivatives in lanes factorise M and form M⁻¹ as minverse does: M⁻¹ within 0075's
    # tolerance, ∂q̈/∂q and ∂q̈/∂v within it times 1 + max|∂τ/∂q| + max|∂τ/∂v| at a = q̈ (0084)
    dq_b, dv_b, minv_b = b.aba_derivatives(model, Q, V, TAU)
    for i in range(N):
        dq, dv, Minv = (x.copy() for x in karakuri.compute_aba_derivatives(model, d, Q[i], V[i], TAU[i]))
        M = karakuri.crba(model, d, Q[i]).copy()
        qdd = karakuri.aba(model, d, Q[i], V[i], TAU[i]).copy()
        dtau_dq, dtau_dv, _ = (x.copy() for x in karakuri.compute_rnea_derivatives(model, d, Q[i], V[i], qdd))
        tol = 1e-12 * (1 + np.max(np.abs(M))) * np.max(np.abs(Minv)) ** 2
        assert np.max(np.abs(minv_b[i] - Minv)) <= tol, (name, i)
        tol *= 1 + np.max(np.abs(dtau_dq)) + np.max(np.abs(dtau_dv))
        assert np.max(np.abs(dq_b[i] - dq)) <= tol, (name, i)
        assert np.max(np.abs(dv_b[i] - dv)) <= tol, (name, i)


def test_threads_change_no_bit():
    model, Q, V, A, TAU = robot("talos_reduced", True)
    Q, V, A = (np.concatenate([x] * 6) for x in (Q, V, A))  # 78 states: two chunks of 32+
    one = karakuri.batch.rnea(model, Q, V, A, threads=1)
    assert np.array_equal(one, karakuri.batch.rnea(model, Q, V, A, threads=2))
    assert np.array_equal(one, karakuri.batch.rnea(model, Q, V, A, threads=3))
    one = karakuri.batch.aba(model, Q, V, A, threads=1)
    assert np.array_equal(one, karakuri.batch.aba(model, Q, V, A, threads=2))


def test_bad_arguments_name_the_argument():
    model, Q, V, A, _ = robot("ur5", False)
    with pytest.raises(ValueError, match="'v'.*\\(N, nv\\)"):
        karakuri.batch.rnea(model, Q, V[:, :3], A)
    with pytest.raises(ValueError, match="'a' has 12 rows"):
        karakuri.batch.rnea(model, Q, V, A[:12])
    bad = V.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="'v' has a NaN or infinite entry in row 4"):
        karakuri.batch.rnea(model, Q, bad, A)
    with pytest.raises(ValueError, match="threads"):
        karakuri.batch.rnea(model, Q, V, A, threads=0)
    # lists and float32 arrays are converted
    tau = karakuri.batch.rnea(model, Q.tolist(), V.astype(np.float32), A)
    assert tau.shape == (N, model.nv)
