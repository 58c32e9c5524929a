"""The adaptive curriculum across machines: one named, detached Ray actor holds it.

A multi-node verl run draws rows and scores them in processes on several machines, where one
journal file behind a file lock (:class:`~npgym.integrations.curriculum.CurriculumJournal`)
cannot be shared. When Ray is initialised,
:func:`npgym.integrations.verl_curriculum.curriculum_draws` starts (or finds) a
:class:`CurriculumService` actor on the node that builds the dataset, keeping the journal there:
the dataset's processes (dataloader workers included) draw from that journal file directly, and
every reward process on every node reports to the actor through a :class:`RayCurriculum` handle
(a row's ``extra_info`` names it), which appends to the same journal.

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.integrations.curriculum import KEY_FIELD, CurriculumJournal, report_to_journal
from npgym.results import Score

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
ACTOR_FIELD = "curriculum_actor"
"""The ``extra_info`` field naming the actor a verl row's reports go to."""
NAMESPACE_FIELD = "curriculum_namespace"
"""The ``extra_info`` field naming that actor's Ray namespace."""
TIMEOUT_FIELD = "curriculum_timeout"
"""The ``extra_info`` field holding the per-call timeout reports use."""

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
    made from a row's ``extra_info`` (:meth:`from_row`) only finds it.
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
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        handle = cls(actor_name(journal), ACTOR_NAMESPACE, _checked_timeout(timeout, "timeout"))
        start_timeout = _checked_timeout(start_timeout, "start_timeout")
        _refuse_fork()
        if not ray.is_initialized():
            raise CurriculumError("RayCurriculum.start needs ray.init() first")
        here = ray.get_runtime_context().get_node_id()
        actor: Any = (
            ray.remote(CurriculumService)
            .options(
                name=handle.name,
                namespace=handle.namespace,
                lifetime="detached",
                get_if_exists=True,
                num_cpus=0,
                max_restarts=MAX_RESTARTS,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
            )
            .remote(curriculum, str(Path(journal).absolute()))
        )
        header = handle._wait(actor.header.remote(), start_timeout, "start")
        state = curriculum.state_dict()
        wanted = {"curriculum": {key: state[key] for key in ("version", "tasks", "options")}}
        if header != wanted:
            raise CurriculumError(
                f"curriculum actor {handle.name!r} keeps a curriculum with other options "
                f"({header['curriculum']}); use a new journal file"
            )
        _handles[(handle.namespace, handle.name)] = actor
        node = handle.node_id()
        if node != here:
            raise CurriculumError(
                f"curriculum actor {handle.name!r} lives on Ray node {node}, not on this one "
                f"({here}), so its journal is not this node's file: end it (ray.kill) or build "
                "the dataset on its node"
            )
        return handle

    @classmethod
    def from_row(cls, extra_info: Mapping[str, Any]) -> RayCurriculum:
        """The handle a verl row's ``extra_info`` names (see :meth:`row_fields`)."""
        return cls(
            str(extra_info[ACTOR_FIELD]),
            str(extra_info.get(NAMESPACE_FIELD, ACTOR_NAMESPACE)),
            _checked_timeout(extra_info.get(TIMEOUT_FIELD, CALL_TIMEOUT_S), "timeout"),
        )

    def row_fields(self) -> dict[str, Any]:
        """What a row's ``extra_info`` carries so that its reward worker reports here."""
        return {
            ACTOR_FIELD: self.name,
            NAMESPACE_FIELD: self.namespace,
            TIMEOUT_FIELD: self.timeout,
        }

    def next(self) -> CurriculumItem:
        """Draw the next item (appended to the actor's journal before this returns)."""
        item: CurriculumItem = self._call("next")
        return item

    def report(self, key: str, score: Score) -> None:
        """Report a score under ``key`` (in the actor's journal before this returns)."""
        self._call("report", key, score.to_dict())

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


def report_score(extra_info: Mapping[str, Any], score: Score) -> bool:
    """Report ``score`` where a row's ``extra_info`` says: its curriculum actor, else its journal;
    ``False`` when it names neither (a row not drawn from a curriculum)."""
    if extra_info.get(ACTOR_FIELD) and extra_info.get(KEY_FIELD):
        RayCurriculum.from_row(extra_info).report(str(extra_info[KEY_FIELD]), score)
        return True
    return report_to_journal(extra_info, score)
