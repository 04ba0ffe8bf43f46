"""Type stubs of karakuri: rigid-body dynamics in Rust with Pinocchio's conventions.

Vectors are float64 numpy arrays: ``q`` has shape ``(nq,)``, ``v``, ``a``, ``tau`` ``(nv,)``.
Other real arrays and sequences are converted; wrong shapes, non-real dtypes and NaN or
infinite entries raise ``ValueError`` naming the argument and the expected shape. Results are
new arrays.
"""

import enum
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

Vector = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float64]
ArrayLike = npt.ArrayLike
JointRef = Union[str, int]
"""A joint given by name or by id (0 is the universe)."""
FrameRef = Union["ReferenceFrame", str]
"""A ReferenceFrame or one of "world", "local", "local_world_aligned"."""

class UrdfError(ValueError):
    """A URDF file that cannot be loaded; the message says ``file:line: <element>: reason``."""

class MjcfError(ValueError):
    """An MJCF file that cannot be loaded; the message says ``file:line: <element>: reason``."""

class BodyError(ValueError):
    """A Choreonoid ``.body`` file that cannot be loaded; the message says ``file:line: key: reason``."""

class ConstraintError(ValueError):
    """Constraints that cannot all hold (conflicting rows) or that are malformed."""

class SceneError(ValueError):
    """A scene file that cannot be loaded: ``file: path.inside: reason``."""

class SimulationError(RuntimeError):
    """The simulation cannot go on (diverged): step, time, body, reason."""

class ControllerError(RuntimeError):
    """A Python controller raised; the message has the time, ``__cause__`` the exception."""

class ControlIo:
    """What a controller reads (a snapshot of the world just before its call) and writes
    (commands applied when it returns). Joint arrays follow :attr:`joint_names`, command
    arrays :attr:`actuator_names`."""

    @property
    def time(self) -> float:
        """Simulated time (s)."""
    @property
    def steps(self) -> int:
        """Steps taken."""
    @property
    def joint_names(self) -> List[str]:
        """The one-dof joints."""
    @property
    def actuator_names(self) -> List[str]:
        """The actuated joints, the order of :meth:`set_targets`."""
    @property
    def sensor_names(self) -> List[str]:
        """The sensors, the order of :attr:`readings`."""
    def joint_index(self, name: str) -> int:
        """Index of a joint in the joint arrays."""
    @property
    def q(self) -> Vector:
        """Joint positions ``(njoints,)``."""
    @property
    def dq(self) -> Vector:
        """Joint velocities ``(njoints,)``."""
    @property
    def tau(self) -> Vector:
        """Torques that drove the joints over the last step ``(njoints,)``."""
    def joint_state(self, joint: str) -> Tuple[float, float, float]:
        """``(q, dq, tau)`` of one joint."""
    def sensor(self, name: str) -> Vector:
        """A sensor's reading: 3 values (accelerometer, gyro) or 6 (force)."""
    @property
    def readings(self) -> Matrix:
        """Every sensor's reading ``(nsensors, 6)``, 3-value sensors zero-padded."""
    def set_target(self, joint: str, target: float) -> None:
        """Target of a joint's actuator (torque, position or speed by its mode)."""
    def set_targets(self, targets: ArrayLike) -> None:
        """Every actuator's target ``(nactuators,)``."""
    def set_torque(self, joint: str, torque: float) -> None:
        """A joint's torque, added to its actuator's."""
    def set_torques(self, torques: ArrayLike) -> None:
        """Every joint's torque ``(njoints,)``."""

class Snapshot:
    """A world's full state at one step (:meth:`World.snapshot`), restorable into a world of
    the same scene; picklable. Python controllers' own state is not in it."""

    @property
    def time(self) -> float:
        """Simulated time of the snapshot (s)."""
    @property
    def steps(self) -> int:
        """Steps taken when it was taken."""
    def to_json(self) -> str:
        """The checkpoint as JSON text (numbers exact)."""
    @classmethod
    def from_json(cls, text: str) -> "Snapshot":
        """A snapshot from :meth:`to_json`'s text; ``ValueError`` if it is not one."""

class World:
    """A simulated world from a scene file (docs/SCENE_FORMAT.md). Joint arrays follow
    :attr:`joint_names`, commands :attr:`actuator_names`, sensors :attr:`sensor_names`, body
    states :attr:`body_names` (world axes)."""

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"]) -> "World":
        """Loads a scene file; raises :class:`SceneError`."""
    def step(self, n: int = 1) -> None:
        """Advances ``n`` steps with the GIL released, calling the controllers on their
        periods; :class:`SimulationError` if the simulation diverges,
        :class:`ControllerError` if a controller raises, ``ValueError`` for a bad command."""
    def snapshot(self) -> Snapshot:
        """The full state now; :meth:`restore` continues from it bit for bit."""
    def restore(self, snapshot: Snapshot) -> None:
        """Sets the world to a snapshot of the same scene; ``ValueError`` otherwise."""
    def add_controller(self, controller: Callable[[ControlIo], None], period: float) -> None:
        """Calls ``controller(io)`` every ``period`` seconds (whole steps), before the step."""
    def set_joint_torque(self, joint: str, torque: float) -> None:
        """Torque of a one-dof joint by name, from the next step on."""
    def set_joint_torques(self, torques: ArrayLike) -> None:
        """Torque of every one-dof joint ``(njoints,)``."""
    def set_joint_target(self, joint: str, target: float) -> None:
        """Target of a joint's actuator by name (torque, position or speed by its mode)."""
    def set_targets(self, targets: ArrayLike) -> None:
        """Target of every actuator ``(nactuators,)``."""
    def set_joint_positions(self, q: ArrayLike) -> None:
        """Position of every one-dof joint ``(njoints,)``; the rest of the state kept."""
    def set_joint_velocities(self, dq: ArrayLike) -> None:
        """Velocity of every one-dof joint ``(njoints,)``; the rest of the state kept."""
    def step_derivatives(self) -> Tuple[Matrix, Matrix]:
        """``(A, B)`` of the next step: ``∂x⁺/∂x`` ``(2nv, 2nv)`` and ``∂x⁺/∂u`` ``(2nv, nactuators)``
        in the tangent space (README, "Derivatives of the step")."""
    @property
    def track_names(self) -> List[str]:
        """The track surfaces (scene bodies with ``track``, ``robot/link`` for robots')."""
    def track_speed(self, track: str) -> float:
        """A track's surface speed command (m/s) by name."""
    def set_track_speed(self, track: str, speed: float) -> None:
        """A track's surface speed (m/s) by name, from the next step on."""
    @property
    def time(self) -> float:
        """Simulated time (s)."""
    @property
    def dt(self) -> float:
        """Time step (s)."""
    @property
    def steps(self) -> int:
        """Steps taken."""
    @property
    def energy(self) -> float:
        """Kinetic + gravitational energy (J)."""
    @property
    def warnings(self) -> List[str]:
        """Non-fatal remarks of the load."""
    @property
    def joint_names(self) -> List[str]:
        """The one-dof joints (``robot/joint`` for robots)."""
    @property
    def actuator_names(self) -> List[str]:
        """The actuated joints, the order of :meth:`set_targets`."""
    @property
    def sensor_names(self) -> List[str]:
        """The sensors, the order of :attr:`readings`."""
    def joint_index(self, name: str) -> int:
        """Index of a joint in the joint arrays."""
    @property
    def q(self) -> Vector:
        """Joint positions ``(njoints,)``."""
    @property
    def dq(self) -> Vector:
        """Joint velocities ``(njoints,)``."""
    @property
    def tau(self) -> Vector:
        """Torques that drove the joints over the last step ``(njoints,)``."""
    def joint_state(self, joint: str) -> Tuple[float, float, float]:
        """``(q, dq, tau)`` of one joint."""
    def sensor(self, name: str) -> Vector:
        """A sensor's reading: 3 values (accelerometer, gyro) or 6 (force), sensor axes."""
    @property
    def readings(self) -> Matrix:
        """Every sensor's reading ``(nsensors, 6)``, 3-value sensors zero-padded."""
    def observation(self) -> Vector:
        """``q``, ``dq``, then every sensor's values: :class:`Batch`'s observation row."""
    @property
    def observation_names(self) -> List[str]:
        """Names of the observation entries."""
    def body_index(self, name: str) -> int:
        """Index of a body in the state arrays."""
    @property
    def body_names(self) -> List[str]:
        """Body names, the order of the state arrays."""
    @property
    def positions(self) -> Matrix:
        """Body frame origins ``(nbodies, 3)``."""
    @property
    def poses(self) -> npt.NDArray[np.float64]:
        """Body placements, 4x4 homogeneous ``(nbodies, 4, 4)``."""
    @property
    def linear_velocities(self) -> Matrix:
        """Velocities of the body frame origins ``(nbodies, 3)``."""
    @property
    def angular_velocities(self) -> Matrix:
        """Angular velocities ``(nbodies, 3)``."""
    @property
    def contacts(self) -> List[Dict[str, object]]:
        """Contacts of the last step: bodies, point, normal, depth, force."""
    @property
    def contact_wrenches(self) -> Tuple[Matrix, Matrix]:
        """Net contact ``(forces, torques)`` on each body ``(nbodies, 3)`` each."""
    @property
    def gravity(self) -> List[float]:
        """Gravity now (m/s², world axes)."""
    def set_gravity(self, g: Sequence[float]) -> None:
        """Sets gravity from the next step on; ``ValueError`` when not finite or too large."""
    def set_contact_mode(
        self,
        a: Union[str, Sequence[str]],
        b: Union[str, Sequence[str]],
        mode: str,
        stiffness: Optional[float] = None,
        damping: Optional[float] = None,
    ) -> int:
        """Contact mode (``none``, ``lcp``, ``penalty``) of every pair of a body of ``a`` with
        one of ``b`` (a body, a robot or ``"*"``) from the next step on; returns the shape
        pairs reached."""
    def set_material(
        self,
        bodies: Union[str, Sequence[str]],
        static_friction: float,
        dynamic_friction: Optional[float] = None,
        restitution: float = 0.0,
    ) -> None:
        """Material of every collision shape of ``bodies`` from the next step on."""
    @property
    def contact_params(self) -> Dict[str, float]:
        """The contact block's numbers now (thresholds, tolerance, correction rate, ...)."""
    def set_contact_params(self, **numbers: float) -> None:
        """Sets some of :attr:`contact_params` by keyword from the next step on."""
    def set_self_collision(self, robot: str, on: bool) -> int:
        """A robot's self-collision off or back on; returns the shape pairs reached."""
    @property
    def joint_accelerations(self) -> Vector:
        """``(dq⁺ − dq)/dt`` of the last step over :attr:`joint_names` (Choreonoid's ``ddq``)."""
    @property
    def body_accelerations(self) -> Tuple[Matrix, Matrix]:
        """Each body's ``(linear, angular)`` acceleration over the last step ``(nbodies, 3)``."""

class Batch:
    """``n`` worlds of one scene stepped in parallel Rust threads, GIL released; world ``i``
    follows the trajectory of a single :class:`World` given the same commands, bit for bit.
    Actions: ``(n, num_actuators)`` targets; observations: ``(n, obs_dim)``, ``q``, ``dq``,
    then the sensors' values (:attr:`observation_names`)."""

    def __init__(self, scene: Union[str, "os.PathLike[str]"], n: int, seed: Optional[int] = None, perturb: bool = True) -> None: ...
    def step(self, actions: Optional[ArrayLike] = None, steps: int = 1) -> Matrix:
        """Sets the targets, advances every world ``steps`` steps, returns the observations."""
    def observations(self) -> Matrix:
        """The observations now ``(n, obs_dim)``."""
    def reset(self, indices: Optional[Sequence[int]] = None, seed: Optional[int] = None) -> Matrix:
        """Rebuilds the listed worlds (all by default) at the initial state; the observations."""
    def __len__(self) -> int: ...
    @property
    def num_worlds(self) -> int:
        """Number of worlds."""
    @property
    def dt(self) -> float:
        """Time step (s)."""
    @property
    def times(self) -> Vector:
        """Each world's time ``(n,)``."""
    @property
    def joint_names(self) -> List[str]:
        """The one-dof joints."""
    @property
    def actuator_names(self) -> List[str]:
        """The actuated joints, the columns of ``actions``."""
    @property
    def sensor_names(self) -> List[str]:
        """The sensors."""
    @property
    def observation_names(self) -> List[str]:
        """Names of the observation columns."""
    @property
    def obs_dim(self) -> int:
        """Length of an observation row."""
    @property
    def num_actuators(self) -> int:
        """Columns of ``actions``."""
    @property
    def action_bounds(self) -> Tuple[Vector, Vector]:
        """``(low, high)`` per action column, from the actuators' and joints' limits."""
    @property
    def joint_limits(self) -> Tuple[Vector, Vector]:
        """``(low, high)`` per joint position (±inf where none)."""
    @property
    def body_names(self) -> List[str]:
        """Body names, the order of :attr:`positions`."""
    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """Body frame origins of every world ``(n, nbodies, 3)``."""
    @property
    def poses(self) -> npt.NDArray[np.float64]:
        """Body frames of every world as 4x4 homogeneous matrices ``(n, nbodies, 4, 4)``."""
    @property
    def linear_velocities(self) -> npt.NDArray[np.float64]:
        """World velocity of every body frame origin ``(n, nbodies, 3)``."""
    @property
    def angular_velocities(self) -> npt.NDArray[np.float64]:
        """World angular velocity of every body ``(n, nbodies, 3)``."""

class ReferenceFrame(enum.Enum):
    """The frame a Jacobian is expressed in (Pinocchio's ``pin.ReferenceFrame``); rows are
    ``[linear; angular]``."""

    WORLD = 0
    """Spatial velocity at the world origin, world axes."""
    LOCAL = 1
    """Spatial velocity in the joint's (frame's) own frame."""
    LOCAL_WORLD_ALIGNED = 2
    """Velocity of the joint (frame) origin and angular velocity, world axes."""

class Model:
    """A kinematic tree (immutable). Joint 0 is the universe; joint ``i`` moves body ``i``."""

    @property
    def nq(self) -> int:
        """Size of the configuration vector ``q``."""
    @property
    def nv(self) -> int:
        """Number of degrees of freedom."""
    @property
    def njoints(self) -> int:
        """Number of joints, the universe included."""
    @property
    def name(self) -> str:
        """The model's name (URDF robot name)."""
    @property
    def names(self) -> List[str]:
        """Joint names, ``"universe"`` first (index = joint id)."""
    @property
    def body_names(self) -> List[str]:
        """Body (link) names, index = the joint that moves the body."""
    @property
    def parents(self) -> List[int]:
        """Parent joint of each joint."""
    @property
    def idx_qs(self) -> List[int]:
        """First configuration index of each joint."""
    @property
    def idx_vs(self) -> List[int]:
        """First velocity index of each joint."""
    @property
    def nqs(self) -> List[int]:
        """Configuration size of each joint."""
    @property
    def nvs(self) -> List[int]:
        """Velocity size of each joint."""
    @property
    def lower_position_limit(self) -> Vector:
        """Lower position limits ``(nq,)``, ``-inf`` where none."""
    @property
    def upper_position_limit(self) -> Vector:
        """Upper position limits ``(nq,)``, ``+inf`` where none."""
    @property
    def velocity_limit(self) -> Vector:
        """Velocity limits ``(nv,)``."""
    @property
    def effort_limit(self) -> Vector:
        """Effort limits ``(nv,)``."""
    @property
    def gravity(self) -> Vector:
        """Gravity's linear part in the world ``(3,)``."""
    @property
    def total_mass(self) -> float:
        """Total mass of the moving bodies (kg)."""
    def create_data(self) -> "Data":
        """A new :class:`Data` with every buffer of every algorithm allocated once."""
    def createData(self) -> "Data":
        """Alias of :meth:`create_data`."""
    def get_joint_id(self, name: JointRef) -> int:
        """Id of the joint named ``name``."""
    def getJointId(self, name: JointRef) -> int:
        """Alias of :meth:`get_joint_id`."""
    def idx_q(self, joint: JointRef) -> int:
        """First index in ``q`` of ``joint``."""
    def idx_v(self, joint: JointRef) -> int:
        """First index in ``v``, ``a``, ``tau`` of ``joint``."""

class Data:
    """Work buffers and results for one :class:`Model`; each attribute read returns a copy."""

    @property
    def tau(self) -> Vector:
        """Torques of the last ``rnea`` / ``nle`` / ``gravity`` / ``compute_rnea_derivatives`` ``(nv,)``."""
    @property
    def ddq(self) -> Vector:
        """Accelerations of the last ``aba`` / ``compute_aba_derivatives`` ``(nv,)``."""
    @property
    def M(self) -> Matrix:
        """Mass matrix of the last ``crba`` (or derivatives call) ``(nv, nv)``."""
    @property
    def Minv(self) -> Matrix:
        """Inverse mass matrix of the last ``minverse`` / ``compute_aba_derivatives`` ``(nv, nv)``."""
    @property
    def J(self) -> Matrix:
        """World Jacobian columns of every dof from ``compute_joint_jacobians`` ``(6, nv)``."""
    @property
    def oMi(self) -> npt.NDArray[np.float64]:
        """World placements of every joint, 4x4 homogeneous ``(njoints, 4, 4)``; raises
        ``RuntimeError`` unless placements are up to date."""
    @property
    def liMi(self) -> npt.NDArray[np.float64]:
        """Placements in the parent joint frames ``(njoints, 4, 4)``."""
    @property
    def v(self) -> Matrix:
        """Body spatial velocities in their joint frames ``(njoints, 6)``."""
    @property
    def a(self) -> Matrix:
        """Body spatial accelerations in their joint frames ``(njoints, 6)``, gravity not included."""
    @property
    def com(self) -> Vector:
        """Centre of mass of the last ``center_of_mass`` ``(3,)``."""
    @property
    def vcom(self) -> Vector:
        """Centre-of-mass velocity of the last ``center_of_mass(model, data, q, v)`` ``(3,)``."""
    @property
    def kinetic_energy(self) -> float:
        """Kinetic energy of the last ``kinetic_energy`` (J)."""
    @property
    def potential_energy(self) -> float:
        """Potential energy of the last ``potential_energy`` (J)."""

class ConstraintSet:
    """Contacts, frame welds and loop constraints on one model; constrained forward dynamics
    and impulses by ``"direct"``, ``"range_space_sparse"``, ``"null_space"``, ``"kokkevis"``."""

    def __init__(self, model: Model) -> None:
        """An empty set of constraints on ``model``."""
    def add_contact(self, joint: JointRef, point: ArrayLike, normal: ArrayLike, name: Optional[str] = None) -> int:
        """One row: the velocity of ``point`` (joint frame) along the world ``normal`` is zero."""
    def add_point_contact_3d(self, joint: JointRef, point: Optional[ArrayLike] = None, name: Optional[str] = None) -> int:
        """Three rows along the world axes at ``point`` (joint frame; default its origin)."""
    def add_frame_contact_6d(self, joint: JointRef, placement: Optional[ArrayLike] = None, name: Optional[str] = None) -> int:
        """Six rows welding the frame at ``placement`` (4x4, joint_from_frame)."""
    def add_loop_constraint(
        self,
        predecessor: JointRef,
        predecessor_frame: Optional[ArrayLike],
        successor: JointRef,
        successor_frame: Optional[ArrayLike],
        axes: ArrayLike,
        name: Optional[str] = None,
    ) -> int:
        """Rows along ``axes`` ``(k, 6)`` (predecessor frame) of the relative motion."""
    def set_baumgarte(self, time_constant: Optional[float], constraint: Optional[Union[int, str]] = None) -> None:
        """Baumgarte stabilisation (time constant in s) of one constraint or all."""
    def set_anchors_to_current(self, data: Data, q: ArrayLike) -> None:
        """Holds the contacts and frames where they are at ``q``."""
    def find(self, name: str) -> int:
        """Index of the constraint named ``name``."""
    def forward_dynamics(self, data: Data, q: ArrayLike, v: ArrayLike, tau: ArrayLike, method: str = "direct") -> Vector:
        """Constrained accelerations ``(nv,)``; forces in ``lambda_`` and ``forces``."""
    def compute_impulses(self, data: Data, q: ArrayLike, v_minus: ArrayLike, method: str = "direct") -> Vector:
        """Velocities after impact ``(nv,)``; impulses in ``impulses``."""
    def __len__(self) -> int:
        """Number of constraints."""
    @property
    def rows(self) -> int:
        """Number of scalar rows."""
    @property
    def lambda_(self) -> Vector:
        """Constraint forces of the last ``forward_dynamics`` ``(rows,)``."""
    @property
    def impulses(self) -> Vector:
        """Impulses of the last ``compute_impulses`` ``(rows,)``."""
    @property
    def qdd(self) -> Vector:
        """Accelerations of the last ``forward_dynamics``."""
    @property
    def v_plus(self) -> Vector:
        """Velocities of the last ``compute_impulses``."""
    @property
    def G(self) -> Matrix:
        """Constraint Jacobian of the last solve ``(rows, nv)``."""
    @property
    def gamma(self) -> Vector:
        """Acceleration bias of the last solve ``(rows,)``."""
    @property
    def impulse_target(self) -> Vector:
        """Target velocities after an impact ``(rows,)`` (default zero)."""
    @impulse_target.setter
    def impulse_target(self, target: ArrayLike) -> None: ...
    @property
    def forces(self) -> Matrix:
        """Force of each constraint on its body, ``[force; torque]`` at the world origin ``(len, 6)``."""
    @property
    def report(self) -> Dict[str, Union[str, int, bool, float]]:
        """What the last solve found: method, rows, rank, fallback, residual."""

def load_urdf(path: Union[str, "os.PathLike[str]"], floating: bool = False) -> Model:
    """Loads a URDF file; ``floating=True`` adds a free-flyer root. Raises :class:`UrdfError`."""

def load_mjcf(path: Union[str, "os.PathLike[str]"]) -> Model:
    """Loads a MuJoCo MJCF file (joints and dofs in MuJoCo's order). Raises :class:`MjcfError`."""

def load_body(path: Union[str, "os.PathLike[str]"]) -> Model:
    """Loads a Choreonoid ``.body`` file (links depth first, fixed links merged). Raises :class:`BodyError`."""

def from_mujoco_qpos(model: Model, qpos: ArrayLike) -> Vector:
    """karakuri's ``q`` from MuJoCo's ``qpos`` (quaternions ``[w x y z]`` to ``[x y z w]``)."""

def from_mujoco_qvel(model: Model, qpos: ArrayLike, qvel: ArrayLike) -> Vector:
    """karakuri's ``v`` from MuJoCo's ``qpos``, ``qvel`` (free joints' linear velocity to body axes)."""

def to_mujoco_qpos(model: Model, q: ArrayLike) -> Vector:
    """MuJoCo's ``qpos`` from karakuri's ``q``."""

def to_mujoco_qvel(model: Model, q: ArrayLike, v: ArrayLike) -> Vector:
    """MuJoCo's ``qvel`` from karakuri's ``q``, ``v``."""

def rnea(model: Model, data: Data, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> Vector:
    """Inverse dynamics (recursive Newton-Euler): ``tau = M a + C v + g``."""

def nle(model: Model, data: Data, q: ArrayLike, v: ArrayLike) -> Vector:
    """Nonlinear effects ``C v + g``."""

def gravity(model: Model, data: Data, q: ArrayLike) -> Vector:
    """Generalized gravity ``g(q)``."""

def crba(model: Model, data: Data, q: ArrayLike) -> Matrix:
    """Mass matrix ``M(q)`` (composite rigid body), full symmetric ``(nv, nv)``."""

def aba(model: Model, data: Data, q: ArrayLike, v: ArrayLike, tau: ArrayLike) -> Vector:
    """Forward dynamics (articulated body): ``ddq`` with ``M ddq + C v + g = tau``."""

def minverse(model: Model, data: Data, q: ArrayLike) -> Matrix:
    """Inverse mass matrix ``M(q)⁻¹``, full symmetric."""

def forward_kinematics(
    model: Model, data: Data, q: ArrayLike, v: Optional[ArrayLike] = None, a: Optional[ArrayLike] = None
) -> None:
    """Placements (``data.oMi``), with ``v`` velocities (``data.v``), with ``a`` accelerations."""

def compute_joint_jacobians(model: Model, data: Data, q: ArrayLike) -> Matrix:
    """World Jacobian columns of every dof ``(6, nv)``; then :func:`get_joint_jacobian`."""

def get_joint_jacobian(model: Model, data: Data, joint: JointRef, frame: FrameRef) -> Matrix:
    """Jacobian of ``joint`` in ``frame`` ``(6, nv)``; needs :func:`compute_joint_jacobians`."""

def get_frame_jacobian(model: Model, data: Data, frame_name: str, frame: FrameRef) -> Matrix:
    """Jacobian of a URDF frame (link or joint) in ``frame`` ``(6, nv)``."""

def center_of_mass(model: Model, data: Data, q: ArrayLike, v: Optional[ArrayLike] = None) -> Vector:
    """Centre of mass ``(3,)``; with ``v`` also ``data.vcom``."""

def center_of_mass_jacobian(model: Model, data: Data, q: ArrayLike) -> Matrix:
    """Jacobian of the centre of mass ``(3, nv)``."""

def kinetic_energy(model: Model, data: Data, q: ArrayLike, v: ArrayLike) -> float:
    """Kinetic energy ``½ vᵀ M v``."""

def potential_energy(model: Model, data: Data, q: ArrayLike) -> float:
    """Potential energy ``-Σ m g·c`` (zero at z = 0)."""

def hybrid_dynamics(
    model: Model,
    data: Data,
    q: ArrayLike,
    v: ArrayLike,
    known: ArrayLike,
    forward_joints: Sequence[JointRef],
    method: str = "aba",
) -> Tuple[Vector, Vector]:
    """``(ddq, tau)``: forward joints have known tau, the others known ddq (``known``)."""

def compute_rnea_derivatives(
    model: Model, data: Data, q: ArrayLike, v: ArrayLike, a: ArrayLike
) -> Tuple[Matrix, Matrix, Matrix]:
    """``(dtau_dq, dtau_dv, M)`` of ``tau = rnea(q, v, a)``, each ``(nv, nv)``; q in the tangent space."""

def compute_aba_derivatives(
    model: Model, data: Data, q: ArrayLike, v: ArrayLike, tau: ArrayLike
) -> Tuple[Matrix, Matrix, Matrix]:
    """``(ddq_dq, ddq_dv, Minv)`` of ``ddq = aba(q, v, tau)``, each ``(nv, nv)``; q in the tangent space."""

def neutral(model: Model) -> Vector:
    """The neutral configuration."""

def random_configuration(model: Model, seed: Optional[int] = None) -> Vector:
    """A random configuration within the limits (reproducible with ``seed``)."""

def integrate(model: Model, q: ArrayLike, v: ArrayLike) -> Vector:
    """``q ⊕ v`` (unit time)."""

def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> Vector:
    """``q1 ⊖ q0``: the velocity from ``q0`` to ``q1`` in unit time."""

def normalize(model: Model, q: ArrayLike) -> Vector:
    """``q`` with its quaternions renormalised."""

# Pinocchio's names and descriptive aliases (the same function objects)
buildModelFromUrdf = load_urdf
buildModelFromMJCF = load_mjcf
inverse_dynamics = rnea
nonlinear_effects = nle
nonLinearEffects = nle
gravity_torques = gravity
compute_generalized_gravity = gravity
computeGeneralizedGravity = gravity
mass_matrix = crba
forward_dynamics = aba
mass_matrix_inverse = minverse
compute_minverse = minverse
computeMinverse = minverse
forwardKinematics = forward_kinematics
joint_jacobians = compute_joint_jacobians
computeJointJacobians = compute_joint_jacobians
getJointJacobian = get_joint_jacobian
getFrameJacobian = get_frame_jacobian
centerOfMass = center_of_mass
jacobianCenterOfMass = center_of_mass_jacobian
computeKineticEnergy = kinetic_energy
computePotentialEnergy = potential_energy
randomConfiguration = random_configuration
computeRNEADerivatives = compute_rnea_derivatives
computeABADerivatives = compute_aba_derivatives
