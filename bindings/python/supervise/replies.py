"""The values the Client returns, and how each is read from its C result
handle.

Design: every reply is an immutable NamedTuple copied field by field from
the C accessors (client.h) by one function here (hello_of, worker_of,
group_of, durability_of), called while the caller still owns the C handle
and frees it after; nothing returned holds C memory. client.py makes the
calls; this module only knows the shapes.
"""

from typing import NamedTuple, Tuple

from . import _enums, _lib

# State of a worker slot (sv_state), generated from client.h with every
# state the header declares (DRAINING included): see _enums.py.
State = _enums.State


class Durability(NamedTuple):
    """Whether the supervisor's journal follows its state (Hello's
    ``durability``, docs/durability.md).

    ``known`` is False from a server without the feature
    ``durable.status`` (before v1.5); the other fields then read False,
    "", 0, "". ``ok`` is True while every change is journaled, False while
    durability is lost (a full, read-only or failing state directory):
    ``reason`` is then the system error's name ("ENOSPC", "EROFS", "EIO",
    "EWOULDBLOCK", ...; "" when ok) and ``message`` says what failed, one
    line for people. ``since_ms`` is when the current condition began:
    wall-clock milliseconds since the Unix epoch.
    """

    known: bool = False
    ok: bool = False
    reason: str = ""
    since_ms: int = 0
    message: str = ""


class Hello(NamedTuple):
    """The supervisor's HelloReply."""

    version: int
    minor_version: int
    server_name: str
    supervisor_id: str
    features: Tuple[str, ...]
    events_url: str = ""  # the event socket ("" from a v1.0 server)
    # The journal's durability (v1.5; known False from an older server).
    durability: Durability = Durability()


class WorkerStatus(NamedTuple):
    """One worker slot, as ``list`` and ``status`` report it."""

    group: str
    ordinal: int
    generation: int
    pid: int
    state: State
    uptime_ms: int
    purpose: str
    restarts: int
    last_exit_code: int
    last_signal: int
    ready: bool = True        # reported ready (or no readiness in its group)
    status_text: str = ""     # the worker's last status line
    fast_failures: int = 0    # consecutive fast failures (backoff step)
    restart_in_ms: int = 0    # in BACKOFF: ms before the restart
    draining: bool = False    # told to drain (v1.3)
    drain_deadline_in_ms: int = 0  # draining: ms before it is killed
    # Activity (v1.4, docs/activity.md): threads inside an activity, the
    # oldest one's composed name ("request: db query") and its age; 0, ""
    # and 0 when idle (or `activity = false`, or an older server).
    activities: int = 0
    activity: str = ""
    activity_age_ms: int = 0


class GroupInfo(NamedTuple):
    """One group, as ``groups`` reports it (docs/protocol.md GroupInfo)."""

    name: str
    count: int            # ordinals held (workers wanted)
    max_count: int
    failed: bool          # restart intensity exceeded; reset() clears it
    failure_reason: str
    restart: str          # "permanent", "transient" or "temporary"
    strategy: str         # "one_for_one", "one_for_all" or "rest_for_one"
    running: int
    ready: int
    starting: int
    stopping: int
    backoff: int
    purpose: str


def hello_of(cdll, h):
    """Copies the sv_hello h (still owned by the caller) into a Hello."""
    n = min(cdll.sv_hello_feature_count(h), 256)
    return Hello(
        version=cdll.sv_hello_version(h),
        minor_version=cdll.sv_hello_minor_version(h),
        server_name=_lib.text(cdll.sv_hello_server_name(h)),
        supervisor_id=_lib.text(cdll.sv_hello_supervisor_id(h)),
        features=tuple(_lib.text(cdll.sv_hello_feature(h, i))
                       for i in range(n)),
        events_url=_lib.text(cdll.sv_hello_events_url(h)) or "",
        durability=durability_of(cdll, h))


def durability_of(cdll, h):
    """The Durability of the sv_hello h (still owned by the caller)."""
    return Durability(
        known=bool(cdll.sv_hello_durability_known(h)),
        ok=bool(cdll.sv_hello_durability_ok(h)),
        reason=_lib.text(cdll.sv_hello_durability_reason(h)) or "",
        since_ms=cdll.sv_hello_durability_since_ms(h),
        message=_lib.text(cdll.sv_hello_durability_message(h)) or "")


def group_of(cdll, g, i):
    """Copies entry i of an sv_groups into a GroupInfo."""
    text = _lib.text
    return GroupInfo(
        name=text(cdll.sv_groups_name(g, i)),
        count=cdll.sv_groups_count_wanted(g, i),
        max_count=cdll.sv_groups_max_count(g, i),
        failed=bool(cdll.sv_groups_failed(g, i)),
        failure_reason=text(cdll.sv_groups_failure_reason(g, i)),
        restart=text(cdll.sv_groups_restart(g, i)),
        strategy=text(cdll.sv_groups_strategy(g, i)),
        running=cdll.sv_groups_running(g, i),
        ready=cdll.sv_groups_ready(g, i),
        starting=cdll.sv_groups_starting(g, i),
        stopping=cdll.sv_groups_stopping(g, i),
        backoff=cdll.sv_groups_backoff(g, i),
        purpose=text(cdll.sv_groups_purpose(g, i)))


def worker_of(cdll, w, i):
    """Copies entry i of an sv_workers into a WorkerStatus."""
    state = cdll.sv_workers_state(w, i)
    try:
        state = State(state)
    except ValueError:
        pass
    return WorkerStatus(
        group=_lib.text(cdll.sv_workers_group(w, i)),
        ordinal=cdll.sv_workers_ordinal(w, i),
        generation=cdll.sv_workers_generation(w, i),
        pid=cdll.sv_workers_pid(w, i),
        state=state,
        uptime_ms=cdll.sv_workers_uptime_ms(w, i),
        purpose=_lib.text(cdll.sv_workers_purpose(w, i)),
        restarts=cdll.sv_workers_restarts(w, i),
        last_exit_code=cdll.sv_workers_last_exit_code(w, i),
        last_signal=cdll.sv_workers_last_signal(w, i),
        ready=bool(cdll.sv_workers_ready(w, i)),
        status_text=_lib.text(cdll.sv_workers_status_text(w, i)) or "",
        fast_failures=cdll.sv_workers_fast_failures(w, i),
        restart_in_ms=cdll.sv_workers_restart_in_ms(w, i),
        draining=bool(cdll.sv_workers_draining(w, i)),
        drain_deadline_in_ms=cdll.sv_workers_drain_deadline_in_ms(w, i),
        activities=cdll.sv_workers_activities(w, i),
        activity=_lib.text(cdll.sv_workers_activity(w, i)) or "",
        activity_age_ms=cdll.sv_workers_activity_age_ms(w, i))
