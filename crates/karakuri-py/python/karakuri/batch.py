"""karakuri.batch: the dynamics of many states at once.

>>> import karakuri, numpy as np
>>> model = karakuri.load_urdf("tests/data/ur5.urdf")
>>> Q = np.stack([karakuri.random_configuration(model, seed=s) for s in range(1024)])
>>> V = np.zeros((1024, model.nv)); A = np.zeros((1024, model.nv))
>>> TAU = karakuri.batch.rnea(model, Q, V, A)          # (1024, nv)
>>> DDQ = karakuri.batch.aba(model, Q, V, TAU)         # ~0

Each function takes states stacked row by row, ``Q`` of shape ``(N, nq)`` and ``V``, ``A``,
``TAU`` of shape ``(N, nv)`` (any real arrays; converted to C-contiguous float64), and returns
new arrays with one result per row: row ``i`` equals, bit for bit, the single-state function
(``karakuri.rnea``, ...) at state ``i`` (``aba``: to rounding, within ``1e-12 (1 + max |ddq|)``). The work runs in Rust with the GIL released, on
``threads`` threads (default: every core the process may use), each thread on a contiguous
chunk of the states; a result does not depend on the number of threads. ``rnea``, ``nle`` and
``aba`` carry four states at once through the recursions in SIMD lanes where the model's
joints allow it. The buffers are allocated on a model's first batched call and kept for the
next ones.

NaN or infinite inputs, a wrong number of columns, or arguments with different numbers of
rows raise ``ValueError`` naming the argument.
"""

from . import _native

__all__ = [
    "forward_kinematics",
    "rnea",
    "nle",
    "gravity",
    "crba",
    "aba",
    "minverse",
    "joint_jacobians",
    "rnea_derivatives",
    "aba_derivatives",
    "inverse_dynamics",
    "nonlinear_effects",
    "gravity_torques",
    "mass_matrix",
    "forward_dynamics",
    "mass_matrix_inverse",
    "compute_joint_jacobians",
    "compute_rnea_derivatives",
    "compute_aba_derivatives",
]


def forward_kinematics(model, Q, threads=None):
    """World placement of every joint of each state, shape ``(N, njoints, 4, 4)`` (homogeneous
    matrices; joint 0, the universe, the identity): ``data.oMi`` after ``forward_kinematics``."""
    return _native._batch_forward_kinematics(model, Q, threads)


def rnea(model, Q, V, A, threads=None):
    """Inverse dynamics ``tau = M(q) a + C(q, v) v + g(q)`` of each state, shape ``(N, nv)``."""
    return _native._batch_rnea(model, Q, V, A, threads)


def nle(model, Q, V, threads=None):
    """Nonlinear effects ``C(q, v) v + g(q)`` of each state, shape ``(N, nv)``."""
    return _native._batch_nle(model, Q, V, threads)


def gravity(model, Q, threads=None):
    """Generalised gravity ``g(q)`` of each state, shape ``(N, nv)``."""
    return _native._batch_gravity(model, Q, threads)


def crba(model, Q, threads=None):
    """Mass matrix ``M(q)`` of each state, full symmetric, shape ``(N, nv, nv)``."""
    return _native._batch_crba(model, Q, threads)


def aba(model, Q, V, TAU, threads=None):
    """Forward dynamics ``ddq = M(q)^-1 (tau - C(q, v) v - g(q))`` of each state, ``(N, nv)``."""
    return _native._batch_aba(model, Q, V, TAU, threads)


def minverse(model, Q, threads=None):
    """``M(q)^-1`` of each state, full symmetric, shape ``(N, nv, nv)``."""
    return _native._batch_minverse(model, Q, threads)


def joint_jacobians(model, Q, threads=None):
    """World Jacobian columns of every dof (rows ``[linear; angular]``) of each state, shape
    ``(N, 6, nv)``: ``data.J`` after ``compute_joint_jacobians``."""
    return _native._batch_joint_jacobians(model, Q, threads)


def rnea_derivatives(model, Q, V, A, threads=None):
    """``(dtau_dq, dtau_dv, M)`` of ``tau = rnea(q, v, a)`` for each state, each of shape
    ``(N, nv, nv)`` (the q-derivative in the tangent space, as Pinocchio's)."""
    return _native._batch_rnea_derivatives(model, Q, V, A, threads)


def aba_derivatives(model, Q, V, TAU, threads=None):
    """``(ddq_dq, ddq_dv, Minv)`` of ``ddq = aba(q, v, tau)`` for each state, each of shape
    ``(N, nv, nv)``."""
    return _native._batch_aba_derivatives(model, Q, V, TAU, threads)


# the single-state API's other names
inverse_dynamics = rnea
nonlinear_effects = nle
gravity_torques = gravity
mass_matrix = crba
forward_dynamics = aba
mass_matrix_inverse = minverse
compute_joint_jacobians = joint_jacobians
compute_rnea_derivatives = rnea_derivatives
compute_aba_derivatives = aba_derivatives
