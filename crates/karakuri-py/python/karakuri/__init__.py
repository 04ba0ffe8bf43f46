"""karakuri: rigid-body dynamics in Rust with Pinocchio's conventions, numpy in and numpy out.

>>> import karakuri, numpy as np
>>> model = karakuri.load_urdf("tests/data/ur5.urdf")
>>> data = model.create_data()
>>> q = karakuri.neutral(model)
>>> v = np.zeros(model.nv)
>>> tau = karakuri.rnea(model, data, q, v, v)   # gravity compensation
>>> ddq = karakuri.aba(model, data, q, v, tau)  # ~0

Every function has a descriptive name and, where it differs, Pinocchio's name as an alias
(``rnea`` = ``inverse_dynamics``, ``minverse`` = ``computeMinverse``, ...). See
docs/PINOCCHIO_TO_KARAKURI.md in the repository.
"""

from ._native import *  # noqa: F401,F403
from ._native import __doc__ as _native_doc, __version__  # noqa: F401
from . import batch  # noqa: F401  (karakuri.batch: many states at once)

__all__ = [name for name in dir() if not name.startswith("_")]
