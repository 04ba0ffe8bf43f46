"""Every Pinocchio reference export in tests/data, recomputed from Python.

The exports (format ``karakuri-pinocchio-reference/1``, read as ``karakuri verify`` reads them in
crates/karakuri-cli/src/verify.rs) hold, per sample, the inputs (``q_plain``, ``v``, ``a``,
``tau``) and Pinocchio's outputs. Joints and dofs are matched by joint name through
``model.idx_q`` / ``model.idx_v`` (Pinocchio orders siblings by name, karakuri by document
order). Errors are scaled by ``max(1, |reference|)`` as in ``karakuri verify``.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import karakuri

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
REFERENCES = sorted(DATA.glob("*.json"))
TOL = 1e-9
# Solves of ill-conditioned systems (constrained dynamics, impulses), as karakuri verify.
TOL_SOLVED = 1e-7


def scaled_error(ours, reference):
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    assert ours.shape == reference.shape
    return float(np.max(np.abs(ours - reference) / np.maximum(1.0, np.abs(reference)), initial=0.0))


class Reference:
    """A loaded export, its model and the maps between the two orders."""

    def __init__(self, path):
        self.json = json.loads(path.read_text())
        floating = self.json["source"]["root_joint"] == "free_flyer"
        self.model = karakuri.load_urdf(DATA / (path.stem + ".urdf"), floating=floating)
        self.data = self.model.create_data()
        m = self.model
        joints = self.json["model"]["joints"]
        assert self.json["model"]["nv"] == m.nv
        assert len(joints) + 1 == m.njoints
        self.dofs = np.empty(m.nv, dtype=int)  # our dof of each reference dof
        self.q_map = []  # (our q start, reference q_plain start, size)
        self.joints = []  # our joint id of each reference joint
        for j in joints:
            jid = m.get_joint_id(j["name"])
            assert m.nvs[jid] == j["nv"] and m.nqs[jid] == j["nq_plain"]
            self.dofs[j["idx_v"] : j["idx_v"] + j["nv"]] = m.idx_v(j["name"]) + np.arange(j["nv"])
            self.q_map.append((m.idx_q(j["name"]), j["idx_q_plain"], j["nq_plain"]))
            self.joints.append(jid)

    def q(self, sample):
        q_plain = np.asarray(sample["q_plain"])
        q = np.zeros(self.model.nq)
        for ours, theirs, n in self.q_map:
            q[ours : ours + n] = q_plain[theirs : theirs + n]
        return q

    def ours(self, x):
        """A reference-ordered dof vector in our order."""
        out = np.empty(self.model.nv)
        out[self.dofs] = x
        return out

    def samples(self):
        for s in self.json["samples"]:
            yield s, self.q(s), self.ours(s["v"]), self.ours(s["a"]), self.ours(s["tau"])


@pytest.fixture(scope="module", params=REFERENCES, ids=lambda p: p.stem)
def ref(request):
    return Reference(request.param)


def test_references_exist():
    assert len(REFERENCES) >= 6, f"expected the Pinocchio exports in {DATA}"


def test_rnea_nle_gravity(ref):
    m, d = ref.model, ref.data
    for s, q, v, a, _ in ref.samples():
        assert scaled_error(karakuri.rnea(m, d, q, v, a)[ref.dofs], s["rnea"]) < TOL
        assert scaled_error(d.tau[ref.dofs], s["rnea"]) < TOL
        assert scaled_error(karakuri.nle(m, d, q, v)[ref.dofs], s["nle"]) < TOL
        assert scaled_error(karakuri.gravity(m, d, q)[ref.dofs], s["gravity_torque"]) < TOL


def test_crba_minverse(ref):
    m, d = ref.model, ref.data
    for s, q, *_ in ref.samples():
        M = karakuri.crba(m, d, q)
        assert M.shape == (m.nv, m.nv)
        assert scaled_error(M[np.ix_(ref.dofs, ref.dofs)], s["M"]) < TOL
        assert np.array_equal(M, M.T)
        Minv = karakuri.minverse(m, d, q)
        assert np.abs(Minv @ M - np.eye(m.nv)).max() < 1e-8


def test_aba(ref):
    m, d = ref.model, ref.data
    for s, q, v, _, tau in ref.samples():
        assert scaled_error(karakuri.aba(m, d, q, v, tau)[ref.dofs], s["aba"]) < TOL
        assert scaled_error(d.ddq[ref.dofs], s["aba"]) < TOL


def test_kinematics(ref):
    m, d = ref.model, ref.data
    for s, q, v, a, _ in ref.samples():
        karakuri.forward_kinematics(m, d, q)
        oMi = d.oMi
        assert oMi.shape == (m.njoints, 4, 4)
        for k, x in enumerate(s["oMi"]):
            j = ref.joints[k]
            assert scaled_error(oMi[j, :3, :3], x["R"]) < TOL
            assert scaled_error(oMi[j, :3, 3], x["p"]) < TOL
        karakuri.forward_kinematics(m, d, q, v, a)
        assert scaled_error(d.v[ref.joints], s["v_local"]) < TOL
        assert scaled_error(d.a[ref.joints], s["a_local"]) < TOL


def test_jacobian_com_energy(ref):
    m, d = ref.model, ref.data
    last = ref.json["model"]["last_joint"]
    for s, q, v, *_ in ref.samples():
        J_all = karakuri.compute_joint_jacobians(m, d, q)
        assert J_all.shape == (6, m.nv)
        J = karakuri.get_joint_jacobian(m, d, last, karakuri.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        assert scaled_error(J[:, ref.dofs], s["J_last_joint_lwa"]) < TOL
        # the same Jacobian by id and by the string name of the frame
        J2 = karakuri.get_joint_jacobian(m, d, m.get_joint_id(last), "local_world_aligned")
        assert np.array_equal(J, J2)
        assert scaled_error(karakuri.center_of_mass(m, d, q), s["com"]) < TOL
        assert scaled_error(karakuri.kinetic_energy(m, d, q, v), s["kinetic_energy"]) < TOL
        assert scaled_error(karakuri.potential_energy(m, d, q), s["potential_energy"]) < TOL


def test_hybrid(ref):
    m, d = ref.model, ref.data
    for s, q, v, *_ in ref.samples():
        h = s["hybrid"]
        known = ref.ours(h["known"])
        for method in ("aba", "crba"):
            qdd, tau = karakuri.hybrid_dynamics(m, d, q, v, known, h["forward_joints"], method=method)
            assert scaled_error(qdd[ref.dofs], h["qdd"]) < TOL_SOLVED
            assert scaled_error(tau[ref.dofs], h["tau"]) < TOL_SOLVED


def contact_set(ref, contacts):
    cs = karakuri.ConstraintSet(ref.model)
    for c in contacts:
        if c["kind"] == "3d":
            cs.add_point_contact_3d(c["joint"], name=c["joint"])
        else:
            cs.add_frame_contact_6d(c["joint"], name=c["joint"])
    return cs


def test_constrained_and_impulses(ref):
    d = ref.data
    for s, q, v, _, tau in ref.samples():
        for case in s["constrained"]:
            cs = contact_set(ref, case["contacts"])
            for method in ("direct", "range_space_sparse", "null_space", "kokkevis"):
                qdd = cs.forward_dynamics(d, q, v, tau, method=method)
                assert scaled_error(qdd[ref.dofs], case["qdd"]) < TOL_SOLVED, method
                assert scaled_error(cs.lambda_, case["lambda"]) < TOL_SOLVED, method
        for case in s["impulse"]:
            cs = contact_set(ref, case["contacts"])
            for method in ("direct", "range_space_sparse", "null_space"):
                v_plus = cs.compute_impulses(d, q, v, method=method)
                assert scaled_error(v_plus[ref.dofs], case["v_plus"]) < TOL_SOLVED, method
                assert scaled_error(cs.impulses, case["Lambda"]) < TOL_SOLVED, method


def test_derivatives(ref):
    """Pinocchio's computeRNEADerivatives / computeABADerivatives (q-derivatives in the tangent
    space), at the solved-quantity tolerance as ``karakuri verify``'s key ``derivatives``."""
    m, d = ref.model, ref.data
    ix = np.ix_(ref.dofs, ref.dofs)
    for s, q, v, a, tau in ref.samples():
        r = s["derivatives"]
        dtau_dq, dtau_dv, M = karakuri.compute_rnea_derivatives(m, d, q, v, a)
        assert dtau_dq.shape == dtau_dv.shape == M.shape == (m.nv, m.nv)
        assert scaled_error(dtau_dq[ix], r["dtau_dq"]) < TOL_SOLVED
        assert scaled_error(dtau_dv[ix], r["dtau_dv"]) < TOL_SOLVED
        assert scaled_error(M[ix], s["M"]) < TOL
        assert scaled_error(d.tau[ref.dofs], s["rnea"]) < TOL
        assert np.array_equal(d.M, M)
        ddq_dq, ddq_dv, Minv = karakuri.compute_aba_derivatives(m, d, q, v, tau)
        assert scaled_error(ddq_dq[ix], r["dqdd_dq"]) < TOL_SOLVED
        assert scaled_error(ddq_dv[ix], r["dqdd_dv"]) < TOL_SOLVED
        assert scaled_error(Minv[ix], r["dqdd_dtau"]) < TOL_SOLVED
        assert scaled_error(d.ddq[ref.dofs], s["aba"]) < TOL_SOLVED
        assert np.array_equal(d.Minv, Minv)
