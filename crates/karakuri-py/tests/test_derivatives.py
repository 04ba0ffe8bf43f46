"""compute_rnea_derivatives / compute_aba_derivatives against central finite differences of
rnea / aba (q perturbed in the tangent space through ``integrate``), on a floating-base
quadruped (free flyer + revolute joints) and an arm with continuous joints; their identities;
bad inputs."""

from pathlib import Path

import numpy as np
import pytest

import karakuri

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
EPS = 1e-6
# Central differences: truncation O(EPS²) and rounding O(1e-16 / EPS) relative to the entries.
TOL_FD = 1e-5


def central_difference(f, x, step):
    """Columns (f(step(x, +EPS e_j)) - f(step(x, -EPS e_j))) / 2 EPS for j over the tangent space."""
    cols = []
    for j in range(step.nv):
        e = np.zeros(step.nv)
        e[j] = EPS
        cols.append((f(step(x, e)) - f(step(x, -e))) / (2 * EPS))
    return np.array(cols).T


class Tangent:
    """x ⊕ e on the configuration space (``integrate``) or a vector space (``+``)."""

    def __init__(self, nv, integrate=None):
        self.nv, self.integrate = nv, integrate

    def __call__(self, x, e):
        return self.integrate(x, e) if self.integrate else x + e


def relative_error(ours, reference):
    return float(np.max(np.abs(ours - reference) / np.maximum(1.0, np.abs(reference))))


@pytest.fixture(scope="module", params=[("anymal", True), ("kinova_continuous", False)], ids=lambda p: p[0])
def robot(request):
    name, floating = request.param
    model = karakuri.load_urdf(DATA / f"{name}.urdf", floating=floating)
    rng = np.random.default_rng(17)
    q = karakuri.random_configuration(model, seed=17)
    v, a, tau = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    return model, model.create_data(), q, v, a, tau


def test_rnea_derivatives_match_finite_differences(robot):
    model, data, q, v, a, _ = robot
    dtau_dq, dtau_dv, M = (x.copy() for x in karakuri.compute_rnea_derivatives(model, data, q, v, a))
    on_q = Tangent(model.nv, lambda q, e: karakuri.integrate(model, q, e))
    on_v = Tangent(model.nv)
    fd_dq = central_difference(lambda q: karakuri.rnea(model, data, q, v, a), q, on_q)
    fd_dv = central_difference(lambda v: karakuri.rnea(model, data, q, v, a), v, on_v)
    fd_da = central_difference(lambda a: karakuri.rnea(model, data, q, v, a), a, on_v)
    assert np.abs(dtau_dq).max() > 1e-3  # not a trivially zero matrix
    assert relative_error(dtau_dq, fd_dq) < TOL_FD
    assert relative_error(dtau_dv, fd_dv) < TOL_FD
    assert relative_error(M, fd_da) < TOL_FD


def test_aba_derivatives_match_finite_differences(robot):
    model, data, q, v, _, tau = robot
    ddq_dq, ddq_dv, Minv = (x.copy() for x in karakuri.compute_aba_derivatives(model, data, q, v, tau))
    on_q = Tangent(model.nv, lambda q, e: karakuri.integrate(model, q, e))
    on_v = Tangent(model.nv)
    fd_dq = central_difference(lambda q: karakuri.aba(model, data, q, v, tau), q, on_q)
    fd_dv = central_difference(lambda v: karakuri.aba(model, data, q, v, tau), v, on_v)
    fd_dtau = central_difference(lambda t: karakuri.aba(model, data, q, v, t), tau, on_v)
    assert np.abs(ddq_dq).max() > 1e-3
    assert relative_error(ddq_dq, fd_dq) < TOL_FD
    assert relative_error(ddq_dv, fd_dv) < TOL_FD
    assert relative_error(Minv, fd_dtau) < TOL_FD


def test_identities(robot):
    """At ddq = aba(q, v, tau): ddq_d(q, v) = -M⁻¹ dtau_d(q, v) of rnea at a = ddq, and M⁻¹ M = 1."""
    model, data, q, v, _, tau = robot
    ddq_dq, ddq_dv, Minv = karakuri.compute_aba_derivatives(model, data, q, v, tau)
    ddq = data.ddq
    assert np.allclose(ddq, karakuri.aba(model, data, q, v, tau), rtol=0, atol=1e-10)
    dtau_dq, dtau_dv, M = karakuri.compute_rnea_derivatives(model, data, q, v, ddq)
    assert np.allclose(data.tau, tau, rtol=0, atol=1e-9)
    assert np.abs(Minv @ M - np.eye(model.nv)).max() < 1e-8
    assert relative_error(ddq_dq, -Minv @ dtau_dq) < 1e-8
    assert relative_error(ddq_dv, -Minv @ dtau_dv) < 1e-8


def test_results_are_new_arrays(robot):
    model, data, q, v, a, _ = robot
    first = karakuri.compute_rnea_derivatives(model, data, q, v, a)
    kept = [x.copy() for x in first]
    karakuri.compute_rnea_derivatives(model, data, q, 2 * v, a)
    for x, y in zip(first, kept):
        assert np.array_equal(x, y)


def test_bad_inputs(robot):
    model, data, q, v, a, tau = robot
    nq, nv = model.nq, model.nv
    with pytest.raises(
        ValueError, match=rf"compute_rnea_derivatives: argument 'q' must have shape \(nq,\) = \({nq},\), got \({nq - 1},\)"
    ):
        karakuri.compute_rnea_derivatives(model, data, q[:-1], v, a)
    with pytest.raises(ValueError, match=rf"compute_rnea_derivatives: argument 'a' must have shape \(nv,\) = \({nv},\)"):
        karakuri.compute_rnea_derivatives(model, data, q, v, np.zeros((nv, 1)))
    with pytest.raises(ValueError, match=rf"compute_aba_derivatives: argument 'tau' must have shape \(nv,\) = \({nv},\)"):
        karakuri.compute_aba_derivatives(model, data, q, v, tau[:-1])
    with pytest.raises(ValueError, match=r"compute_aba_derivatives: argument 'v' has NaN or infinite entries"):
        karakuri.compute_aba_derivatives(model, data, q, np.full(nv, np.inf), tau)
    other = karakuri.load_urdf(DATA / "ur5.urdf")
    with pytest.raises(ValueError, match="compute_aba_derivatives: data was created by another model"):
        karakuri.compute_aba_derivatives(other, data, karakuri.neutral(other), np.zeros(6), np.zeros(6))


def test_aliases():
    assert karakuri.computeRNEADerivatives is karakuri.compute_rnea_derivatives
    assert karakuri.computeABADerivatives is karakuri.compute_aba_derivatives
