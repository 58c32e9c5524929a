"""The adaptive curriculum across machines: one named, detached Ray actor holds it.

A multi-node verl run draws rows and scores them in processes on several machines, where one
journal file behind a file lock (:class:`~npgym.integrations.curriculum.CurriculumJournal`)
cannot be shared. When Ray is initialised,
:func:`npgym.integrations.verl_curriculum.curriculum_draws` starts (or finds) a
:class:`CurriculumService` actor on the node that builds the dataset, keeping the journal there:
the dataset's processes (dataloader workers included) draw from that journal file directly, and
every reward process on every node reports to the actor through a :class:`RayCurriculum` handle,
which appends to the same journal.

- **Configuration, not rows.** A reward process learns where to report from its environment,
  never from the row (a row carries only its key): ``NPGYM_CURRICULUM_JOURNAL``
  (:data:`~npgym.integrations.curriculum.JOURNAL_ENV`, the journal's absolute path, which also
  names the actor), ``NPGYM_CURRICULUM_BACKEND`` (:data:`BACKEND_ENV`: ``ray`` or ``journal``;
  unset, ``ray`` when the process is connected to Ray) and ``NPGYM_CURRICULUM_ACTOR_TIMEOUT``
  (:data:`TIMEOUT_ENV`, seconds per call; unset, :data:`CALL_TIMEOUT_S`). The dataset sets all
  three in its own process (:func:`export_environment`); Ray workers started elsewhere need
  them from the launch (exported before Ray starts, or in Ray's ``runtime_env``). A row that
  names an actor, namespace or timeout (``curriculum_actor``, ``curriculum_namespace``,
  ``curriculum_timeout``, as earlier npgym versions wrote) is ignored with a warning.

- **Name.** The actor is named ``npgym-curriculum:<journal path>`` (:func:`actor_name`; the path
  made absolute on the node that starts it) in the Ray namespace ``npgym``
  (:data:`ACTOR_NAMESPACE`), so one run (one journal) has one actor, and a run restarted with the
  same journal finds it again. It is detached: it outlives the driver until
  ``ray.kill(ray.get_actor(name, namespace="npgym"))`` or the cluster stops.
- **Journal.** The actor keeps the curriculum in a ``CurriculumJournal`` on its own node's disk,
  under the same ``flock`` protocol as any other replica: each draw and each report is appended
  before the call returns, and before answering anything the actor replays the lines other
  processes on its node appended (the dataset's draws), so it sees every draw and report. The
  journal is its checkpoint. The actor is pinned to the node that starts it (hard node
  affinity, 0 CPUs), so the journal stays on that node's disk even when nodes share none, and
  :meth:`RayCurriculum.start` refuses an existing actor on another node (its journal is not
  this node's file). A restarted actor (Ray restarts a crashed one, :data:`MAX_RESTARTS`; a new
  run starts a new one) replays the journal and continues exactly.
- **Order.** The journal's lock orders draws and reports, wherever they come from, and the
  actor runs one call at a time: the same sequence of draws and reports gives the same items as
  one :class:`~npgym.curriculum.AdaptiveCurriculum`.
- **Bounds.** Every call waits at most ``timeout`` seconds (:data:`CALL_TIMEOUT_S` by default;
  the actor's start, which replays the journal, :data:`START_TIMEOUT_S`); a call past it, a
  missing actor or a dead one raise :class:`~npgym.curriculum.CurriculumError`, never hang
  (finding the actor by name is bounded by Ray's own GCS timeouts). A timed-out call may still
  take effect in the actor. A process whose actor was killed and started anew (not restarted by
  Ray, which keeps the handle) gets one ``CurriculumError`` on its old handle, then finds the
  new actor by name.
- **Fork.** Ray cannot be used from a process forked from a Ray process (a PyTorch DataLoader
  worker): a :class:`RayCurriculum` call there is refused with a clear error instead of hanging.
  Draws need no Ray (they read the journal), so such workers draw as usual.

Without Ray, nothing here is used: verl's curriculum is the single-machine journal.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.integrations.curriculum import (
    JOURNAL_ENV,
    JOURNAL_FIELD,
    KEY_FIELD,
    CurriculumJournal,
    JournalWarning,
    check_key,
    configured_journal,
    journal_header,
    report_to_journal,
)
from npgym.results import Score

if TYPE_CHECKING:
    from npgym.datasets import ReferenceMode

ACTOR_NAMESPACE = "npgym"
"""The Ray namespace of curriculum actors."""
ACTOR_NAME_PREFIX = "npgym-curriculum:"
"""A curriculum actor's name is this followed by its journal's absolute path."""
CALL_TIMEOUT_S = 60.0
"""Default seconds a draw, report or query waits for the actor before raising."""
START_TIMEOUT_S = 600.0
"""Default seconds to wait for a new actor to start (its journal's replay included)."""
MAX_TIMEOUT_S = 86400.0
"""The longest call or start timeout accepted."""
MAX_RESTARTS = -1
"""Ray restarts a crashed curriculum actor on its node this many times (-1: always)."""
BACKENDS = ("auto", "ray", "journal")
"""Where the curriculum lives: ``auto`` is ``ray`` when Ray is initialised, else ``journal``."""
BACKEND_ENV = "NPGYM_CURRICULUM_BACKEND"
"""The environment variable saying whether reports go to the actor (``ray``) or to the journal
file (``journal``); unset or ``auto``: the actor when this process is connected to Ray."""
TIMEOUT_ENV = "NPGYM_CURRICULUM_ACTOR_TIMEOUT"
"""The environment variable holding the seconds a report waits for the actor (default
:data:`CALL_TIMEOUT_S`)."""
ACTOR_FIELD = "curriculum_actor"
"""The ``extra_info`` field where rows of earlier npgym versions named their actor: ignored."""
NAMESPACE_FIELD = "curriculum_namespace"
"""The ``extra_info`` field where rows of earlier npgym versions named the actor's namespace:
ignored."""
TIMEOUT_FIELD = "curriculum_timeout"
"""The ``extra_info`` field where rows of earlier npgym versions held a timeout: ignored."""
ROW_DESTINATION_FIELDS = (JOURNAL_FIELD, ACTOR_FIELD, NAMESPACE_FIELD, TIMEOUT_FIELD)
"""Fields by which a row once said where to report: a row holding any is warned about, and the
field is never read."""

_handles: dict[tuple[str, str], Any] = {}
"""Actor handles this process has looked up, by (namespace, name)."""
_forked_from_ray = False
"""Set in a child forked from a process where Ray was initialised (Ray cannot work there)."""


def _mark_fork() -> None:
    global _forked_from_ray
    ray = sys.modules.get("ray")
    _forked_from_ray = _forked_from_ray or (ray is not None and ray.is_initialized())
    _handles.clear()


os.register_at_fork(after_in_child=_mark_fork)


def ray_initialized() -> bool:
    """Whether this process is connected to a Ray cluster (``False`` when Ray is not installed)."""
    try:
        import ray
    except ImportError:
        return False
    return bool(ray.is_initialized())


def actor_name(journal: str | Path) -> str:
    """The name of the curriculum actor that keeps ``journal`` (see the module docstring)."""
    return ACTOR_NAME_PREFIX + str(Path(journal).absolute())


def _checked_timeout(timeout: float, what: str) -> float:
    """``timeout`` as a float, refused unless in ``(0, MAX_TIMEOUT_S]`` (NaN included)."""
    if isinstance(timeout, bool) or not 0 < float(timeout) <= MAX_TIMEOUT_S:
        raise ValueError(f"{what} must be in (0, {MAX_TIMEOUT_S:g}] seconds, got {timeout!r}")
    return float(timeout)


class CurriculumService:
    """The actor's body: a curriculum kept in a journal on this node, one call at a time."""

    def __init__(self, curriculum: AdaptiveCurriculum, journal: str) -> None:
        self.journal = CurriculumJournal(curriculum, journal)

    def header(self) -> dict[str, Any]:
        """The journal's first line (the curriculum's tasks and options)."""
        return self.journal.header

    def next(self) -> CurriculumItem:
        """Draw the next item (after the journal's new lines) and append the draw."""
        return self.journal.next()

    def report(self, key: str, score: dict[str, Any]) -> None:
        """Append a report to the journal and apply it (an unknown key is counted, not raised)."""
        self.journal.report(key, Score(**score))

    def state_dict(self) -> dict[str, Any]:
        """The curriculum's state (:meth:`AdaptiveCurriculum.state_dict`), every line of the
        journal so far replayed."""
        self.journal.sync()
        return self.journal.curriculum.state_dict()

    def stats(self) -> dict[str, dict[str, float]]:
        """Per task: frontier difficulty, issued items, reports and pass rate (every line of
        the journal so far replayed)."""
        self.journal.sync()
        return self.journal.curriculum.stats()

    def node_id(self) -> str:
        """The Ray node this actor (and its journal) lives on."""
        import ray

        return str(ray.get_runtime_context().get_node_id())


@dataclass(frozen=True, slots=True)
class RayCurriculum:
    """A handle on a curriculum actor, usable from any process of the cluster (and picklable).

    :meth:`start` creates the actor (or finds the one already keeping that journal); a handle
    made directly (``RayCurriculum(actor_name(journal))``) only finds it.
    """

    name: str
    namespace: str = ACTOR_NAMESPACE
    timeout: float = CALL_TIMEOUT_S

    @classmethod
    def start(
        cls,
        curriculum: AdaptiveCurriculum,
        journal: str | Path,
        *,
        timeout: float = CALL_TIMEOUT_S,
        start_timeout: float = START_TIMEOUT_S,
    ) -> RayCurriculum:
        """The actor keeping ``journal``, started on this node if the cluster has none; an
        existing actor whose curriculum has other options, or that lives on another node (its
        journal is not this node's file), is refused."""
        handle, _, here = cls._launch(
            CurriculumService,
            (curriculum, str(Path(journal).absolute())),
            curriculum,
            journal,
            timeout=timeout,
            start_timeout=start_timeout,
        )
        handle.check_node(here)
        return handle

    @classmethod
    def _launch(
        cls,
        service: type,
        arguments: tuple[Any, ...],
        curriculum: AdaptiveCurriculum,
        journal: str | Path,
        *,
        timeout: float,
        start_timeout: float,
    ) -> tuple[Any, Any, str]:
        """Start ``service(*arguments)`` as the detached actor keeping ``journal``, pinned to this
        node (or find the one already running), refuse it if its curriculum has other options,
        and remember its handle; returns the handle, the actor and this node's id."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        handle = cls(actor_name(journal), ACTOR_NAMESPACE, _checked_timeout(timeout, "timeout"))
        start_timeout = _checked_timeout(start_timeout, "start_timeout")
        _refuse_fork()
        if not ray.is_initialized():
            raise CurriculumError(f"{cls.__name__} needs ray.init() first")
        here = ray.get_runtime_context().get_node_id()
        actor: Any = (
            ray.remote(service)
            .options(
                name=handle.name,
                namespace=handle.namespace,
                lifetime="detached",
                get_if_exists=True,
                num_cpus=0,
                max_restarts=MAX_RESTARTS,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
            )
            .remote(*arguments)
        )
        header = handle._wait(actor.header.remote(), start_timeout, "start")
        if header != journal_header(curriculum):
            raise CurriculumError(
                f"curriculum actor {handle.name!r} keeps a curriculum with other options "
                f"({header['curriculum']}); use a new journal file"
            )
        _handles[(handle.namespace, handle.name)] = actor
        return handle, actor, here

    def check_node(self, here: str) -> None:
        """Refuse the actor unless it lives on node ``here``: its journal is that node's file."""
        node = self.node_id()
        if node != here:
            raise CurriculumError(
                f"curriculum actor {self.name!r} lives on Ray node {node}, not on this one "
                f"({here}), so its journal is not this node's file: end it (ray.kill) or build "
                "the dataset on its node"
            )

    def next(self) -> CurriculumItem:
        """Draw the next item (appended to the actor's journal before this returns)."""
        item: CurriculumItem = self._call("next")
        return item

    def report(self, key: str, score: Score) -> None:
        """Report a score under ``key`` (checked: :func:`~npgym.integrations.curriculum.check_key`;
        in the actor's journal before this returns)."""
        self._call("report", check_key(key), score.to_dict())

    def state_dict(self) -> dict[str, Any]:
        """The actor's curriculum state."""
        state: dict[str, Any] = self._call("state_dict")
        return state

    def stats(self) -> dict[str, dict[str, float]]:
        """The actor's per-task statistics."""
        stats: dict[str, dict[str, float]] = self._call("stats")
        return stats

    def node_id(self) -> str:
        """The Ray node the actor and its journal live on."""
        node: str = self._call("node_id")
        return node

    def _actor(self) -> Any:
        import ray

        _refuse_fork()
        if not ray.is_initialized():
            raise CurriculumError(
                f"curriculum actor {self.name!r}: this process is not connected to Ray "
                "(ray.init) and so cannot reach it"
            )
        key = (self.namespace, self.name)
        if key not in _handles:
            try:
                _handles[key] = ray.get_actor(self.name, namespace=self.namespace)
            except ValueError as error:
                raise CurriculumError(
                    f"no curriculum actor {self.name!r} in Ray namespace {self.namespace!r}: it "
                    "was never started in this cluster, or was killed"
                ) from error
        return _handles[key]

    def _call(self, method: str, *args: Any) -> Any:
        actor = self._actor()
        return self._wait(getattr(actor, method).remote(*args), self.timeout, method)

    def _wait(self, reference: Any, timeout: float, what: str) -> Any:
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError

        try:
            return ray.get(reference, timeout=timeout)
        except GetTimeoutError as error:
            raise CurriculumError(
                f"curriculum actor {self.name!r} did not answer {what} within {timeout:g} s "
                "(unreachable, or its node is overloaded)"
            ) from error
        except RayActorError as error:
            _handles.pop((self.namespace, self.name), None)
            raise CurriculumError(
                f"curriculum actor {self.name!r} died during {what}: {error}"
            ) from error


def _refuse_fork() -> None:
    if _forked_from_ray:
        raise CurriculumError(
            "this process was forked from a Ray process (a DataLoader worker?), where Ray cannot "
            "be used: call the curriculum actor from a Ray process (draws from verl's dataset "
            "read the journal file instead, and work here)"
        )


def configured_timeout() -> float:
    """The seconds a report waits for the actor: :data:`TIMEOUT_ENV`, else
    :data:`CALL_TIMEOUT_S`."""
    value = os.environ.get(TIMEOUT_ENV)
    if not value:
        return CALL_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV} must be a number of seconds, got {value!r}") from None
    return _checked_timeout(seconds, TIMEOUT_ENV)


def configured_backend() -> str:
    """Where this process's reports go, ``ray`` or ``journal``: :data:`BACKEND_ENV`, or when it
    is unset (or ``auto``) ``ray`` if this process is connected to Ray."""
    backend = os.environ.get(BACKEND_ENV) or "auto"
    if backend not in BACKENDS:
        raise ValueError(f"{BACKEND_ENV} must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        return "ray" if ray_initialized() else "journal"
    return backend


CONFIG_KEY = "npgym_curriculum"
"""The verl config block (``data.npgym_curriculum``) that :func:`read_curriculum_config` reads."""


@dataclass(frozen=True)
class CurriculumConfig:
    """``data.npgym_curriculum`` as verl's curriculum datasets (plain and self-play) read it."""

    tasks: list[str]
    journal: Path
    """The journal named in the block, else the one the environment names."""
    size: int
    reference: ReferenceMode
    timeout: float
    start_timeout: float
    backend: str
    """``ray`` or ``journal`` (``auto`` resolved)."""
    options: dict[str, Any]
    """The :class:`AdaptiveCurriculum` options (every key not read here)."""


def read_curriculum_config(
    settings: Mapping[str, Any], max_samples: int, needs: str
) -> CurriculumConfig:
    """The shared keys of a ``data.npgym_curriculum`` mapping, checked; every other key is left
    in :attr:`CurriculumConfig.options`. ``needs`` names who needs the tasks, in the errors."""
    settings = dict(settings)
    if not settings.get("tasks"):
        raise ValueError(f"{needs} needs data.{CONFIG_KEY}.tasks (a list of npgym tasks)")
    tasks = list(settings.pop("tasks"))
    named = settings.pop("journal", None)
    journal = Path(named).absolute() if named else configured_journal()
    if journal is None:
        raise ValueError(
            f"{needs} needs a journal: data.{CONFIG_KEY}.journal or {JOURNAL_ENV} (a file path "
            "that every process can reach)"
        )
    size = int(settings.pop("size", 0)) or max_samples
    if size <= 0:
        raise ValueError(
            f"give data.{CONFIG_KEY}.size (or data.train_max_samples): the epoch length verl sees"
        )
    reference = settings.pop("reference", "exact")
    if reference not in ("exact", "heuristic", "none"):
        raise ValueError(f"data.{CONFIG_KEY}.reference must be exact, heuristic or none")
    timeout = float(settings.pop("actor_timeout", configured_timeout()))
    start_timeout = float(settings.pop("actor_start_timeout", START_TIMEOUT_S))
    backend = settings.pop("backend", os.environ.get(BACKEND_ENV) or "auto")
    if backend not in BACKENDS:
        raise ValueError(f"data.{CONFIG_KEY}.backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        backend = "ray" if ray_initialized() else "journal"
    if "target" in settings:
        settings["target"] = tuple(settings["target"])
    return CurriculumConfig(
        tasks, journal, size, reference, timeout, start_timeout, backend, settings
    )


_exported: dict[str, str] = {}
"""The values :func:`export_environment` set in this process, by variable."""


def _agrees(name: str, current: str, value: str) -> bool:
    """Whether a variable's ``current`` value says what ``value`` says (``auto`` agrees with
    either backend; timeouts compare as numbers)."""
    if current in (value, _exported.get(name)):
        return True
    if name == BACKEND_ENV:
        return current == "auto"
    if name == TIMEOUT_ENV:
        try:
            return float(current) == float(value)
        except ValueError:
            return False
    return False


def export_environment(journal: Path, backend: str, timeout: float) -> None:
    """Tell this process, and every process started from it, where reports go: set
    :data:`~npgym.integrations.curriculum.JOURNAL_ENV` (``journal``, absolute),
    :data:`BACKEND_ENV` (``ray`` or ``journal``) and :data:`TIMEOUT_ENV`. A variable already
    set to something else (not by an earlier call here) is refused: the reward workers would
    report elsewhere than the dataset draws from."""
    values = {JOURNAL_ENV: str(journal), BACKEND_ENV: backend, TIMEOUT_ENV: repr(timeout)}
    for name, value in values.items():
        current = os.environ.get(name)
        if current and not _agrees(name, current, value):
            raise ValueError(
                f"the environment sets {name}={current!r}, but the curriculum is configured "
                f"with {value!r}: reward workers would report elsewhere; unset it or make them "
                "agree"
            )
    os.environ.update(values)
    _exported.update(values)


def report_score(extra_info: Mapping[str, Any], score: Score) -> bool:
    """Report ``score`` under a row's ``curriculum_key`` to the curriculum this process is
    configured with (its environment: the module docstring), never to anything the row names;
    ``False`` for a row without a key (not drawn from a curriculum). The key is checked
    (:func:`~npgym.integrations.curriculum.check_key`); a key with no journal configured is a
    :class:`~npgym.curriculum.CurriculumError`."""
    named = [field for field in ROW_DESTINATION_FIELDS if field in extra_info]
    if named:
        warnings.warn(
            f"a row's extra_info names where to report ({', '.join(named)}): ignored; rows "
            f"carry only {KEY_FIELD}, and reports go to the journal that {JOURNAL_ENV} names",
            JournalWarning,
            stacklevel=2,
        )
    key = extra_info.get(KEY_FIELD)
    if key is None or key == "":
        return False
    key = check_key(key)
    journal = configured_journal()
    if journal is None:
        raise CurriculumError(
            f"a row carries {KEY_FIELD} {key!r}, but {JOURNAL_ENV} is not set in this process: "
            "set it (the journal's absolute path) for every reward worker"
        )
    if configured_backend() == "ray":
        RayCurriculum(actor_name(journal), ACTOR_NAMESPACE, configured_timeout()).report(key, score)
    else:
        report_to_journal(journal, key, score)
    return True
