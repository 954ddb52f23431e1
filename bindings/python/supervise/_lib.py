"""Loading libsupervise.so.0 and declaring its C functions for ctypes.

Design: the shared library is loaded lazily, on the first call that needs it,
so that ``import supervise`` works on a machine without the library.
``lib()`` returns the loaded ``ctypes.CDLL`` with every prototype of ``supervise/client.h`` and
``supervise/supervise.h`` declared (argument and result types), so no call
goes through ctypes' default ``int`` conversion.

Where the library comes from, in order:

1. ``$SUPERVISE_LIBRARY``: a path to the .so, for an uninstalled build
   (``build/libsupervise.so.0``);
2. the installed soname ``libsupervise.so.0``, found by the dynamic loader.

Failing both raises ``LibraryNotFound``, one exception whose message names
both ways, instead of a ctypes traceback.

Opaque handles (``sv_client *``, ``sv_identity *``...) are ``c_void_p``:
client.h has no struct layout for ctypes to know, by design.
"""

import ctypes
import os
import threading

from . import _enums

ENV_LIBRARY = "SUPERVISE_LIBRARY"
SONAME = "libsupervise.so.0"
# The library major version this binding speaks (the soname's number).
ABI_MAJOR = 0


class LibraryNotFound(ImportError):
    """libsupervise could not be loaded (or is not a compatible version)."""

    __module__ = "supervise"


_lock = threading.Lock()
_lib = None


def _reset_lock_in_child():
    # Another thread may have held the lock at fork(); the child has only
    # the forking thread, so a fresh lock is the correct state.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_lock_in_child)

_vp = ctypes.c_void_p
_pvp = ctypes.POINTER(ctypes.c_void_p)
_cp = ctypes.c_char_p
_int = ctypes.c_int
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_size = ctypes.c_size_t
_pu32 = ctypes.POINTER(ctypes.c_uint32)
_pu64 = ctypes.POINTER(ctypes.c_uint64)
_pint = ctypes.POINTER(ctypes.c_int)
_pcp = ctypes.POINTER(ctypes.c_char_p)



class IdentityFields(ctypes.Structure):
    """sv_identity_fields (client.h): an identity's scalars in one call."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("group", ctypes.c_char_p),
        ("purpose", ctypes.c_char_p),
        ("supervisor_id", ctypes.c_char_p),
        ("pid", ctypes.c_int64),
        ("generation", ctypes.c_uint64),
        ("drain_deadline_in_ms", ctypes.c_uint64),
        ("frame_count", ctypes.c_uint64),
        ("ordinal", ctypes.c_uint32),
        ("group_size", ctypes.c_uint32),
        ("kind", ctypes.c_int32),
        ("draining", ctypes.c_int32),
    ]


class FrameFields(ctypes.Structure):
    """sv_frame_fields (client.h): one context frame, flat."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("generation", ctypes.c_uint64),
        ("ordinal", ctypes.c_uint32),
        ("kind", ctypes.c_int32),
    ]


# Capacities of sv_whoami_result (client.h), generated from it.
WHOAMI_MAX_FRAMES = _enums.WHOAMI_MAX_FRAMES
WHOAMI_TEXT_BYTES = _enums.WHOAMI_TEXT_BYTES


class WhoamiResult(ctypes.Structure):
    """sv_whoami_result (client.h): a whole whoami answer, strings inside.

    Filled by sv_client_whoami_copy in one foreign call; the strings point
    into ``text``, so the struct owns them and nothing is freed.
    ``unchanged`` is 1 when the answer equals the one the struct held.
    """
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("fields", IdentityFields),
        ("n_frames", ctypes.c_uint32),
        ("has_parent", ctypes.c_int32),
        ("text_used", ctypes.c_uint32),
        ("unchanged", ctypes.c_int32),
        ("parent", FrameFields),
        ("frames", FrameFields * WHOAMI_MAX_FRAMES),
        ("text", ctypes.c_char * WHOAMI_TEXT_BYTES),
    ]


# name: (restype, argtypes). Enums (sv_err, sv_kind, sv_state) are C ints.
_PROTOTYPES = {
    "sv_identity_get_fields": (_int, [_vp, ctypes.POINTER(IdentityFields)]),
    "sv_client_whoami_copy": (_int, [_vp, _int,
                                     ctypes.POINTER(WhoamiResult)]),
    "sv_identity_from_env": (_int, [ctypes.POINTER(ctypes.c_char_p),
                                    ctypes.POINTER(WhoamiResult)]),
    # supervise.h
    "sv_strerror": (_cp, [_int]),
    "sv_err_name": (_cp, [_int]),
    "sv_version": (_cp, []),
    # client.h: open / close
    "sv_client_open": (_int, [_pvp, _cp, _int]),
    "sv_default_url": (_int, [ctypes.c_char_p, _size]),
    "sv_client_close": (None, [_vp]),
    "sv_client_error_message": (_cp, [_vp]),
    # hello
    "sv_client_hello": (_int, [_vp, _int, _pvp]),
    "sv_hello_version": (_u32, [_vp]),
    "sv_hello_minor_version": (_u32, [_vp]),
    "sv_hello_server_name": (_cp, [_vp]),
    "sv_hello_supervisor_id": (_cp, [_vp]),
    "sv_hello_feature_count": (_size, [_vp]),
    "sv_hello_feature": (_cp, [_vp, _size]),
    "sv_hello_events_url": (_cp, [_vp]),
    "sv_hello_durability_known": (_int, [_vp]),
    "sv_hello_durability_ok": (_int, [_vp]),
    "sv_hello_durability_reason": (_cp, [_vp]),
    "sv_hello_durability_since_ms": (_u64, [_vp]),
    "sv_hello_durability_message": (_cp, [_vp]),
    "sv_hello_free": (None, [_vp]),
    # whoami
    "sv_client_whoami": (_int, [_vp, _int, _pvp]),
    "sv_identity_group": (_cp, [_vp]),
    "sv_identity_ordinal": (_u32, [_vp]),
    "sv_identity_generation": (_u64, [_vp]),
    "sv_identity_kind": (_int, [_vp]),
    "sv_identity_pid": (_i64, [_vp]),
    "sv_identity_purpose": (_cp, [_vp]),
    "sv_identity_supervisor_id": (_cp, [_vp]),
    "sv_identity_group_size": (_u32, [_vp]),
    "sv_identity_frame_count": (_size, [_vp]),
    "sv_identity_frame": (_int, [_vp, _size, _pint, _pu32, _pcp]),
    "sv_identity_parent": (_int, [_vp, _pint, _pu32, _pcp]),
    "sv_identity_free": (None, [_vp]),
    # sub-workers (v1.4, subworker.py)
    "sv_identity_frame_generation": (_int, [_vp, _size, _pu64]),
    "sv_client_subworker_register": (_int, [_vp, _int, _cp, _i64, _i64,
                                            _int, _pvp, _pint]),
    "sv_client_subworker_release": (_int, [_vp, _vp, _int]),
    # list / status
    "sv_client_list": (_int, [_vp, _cp, _int, _pvp]),
    "sv_client_status": (_int, [_vp, _cp, _u32, _int, _pvp]),
    "sv_workers_count": (_size, [_vp]),
    "sv_workers_group": (_cp, [_vp, _size]),
    "sv_workers_ordinal": (_u32, [_vp, _size]),
    "sv_workers_generation": (_u64, [_vp, _size]),
    "sv_workers_pid": (_i64, [_vp, _size]),
    "sv_workers_state": (_int, [_vp, _size]),
    "sv_workers_uptime_ms": (_u64, [_vp, _size]),
    "sv_workers_purpose": (_cp, [_vp, _size]),
    "sv_workers_restarts": (_u64, [_vp, _size]),
    "sv_workers_last_exit_code": (_i32, [_vp, _size]),
    "sv_workers_last_signal": (_i32, [_vp, _size]),
    "sv_workers_ready": (_int, [_vp, _size]),
    "sv_workers_fast_failures": (_u32, [_vp, _size]),
    "sv_workers_restart_in_ms": (_u64, [_vp, _size]),
    "sv_workers_status_text": (_cp, [_vp, _size]),
    # v1.4: drain and activity in a worker's status (client.WorkerStatus)
    "sv_workers_draining": (_int, [_vp, _size]),
    "sv_workers_drain_deadline_in_ms": (_u64, [_vp, _size]),
    "sv_workers_activities": (_u32, [_vp, _size]),
    "sv_workers_activity": (_cp, [_vp, _size]),
    "sv_workers_activity_age_ms": (_u64, [_vp, _size]),
    "sv_workers_free": (None, [_vp]),
    "sv_state_name": (_cp, [_int]),
    # administration
    "sv_client_scale": (_int, [_vp, _cp, _u32, _int, _pu32]),
    "sv_client_stop": (_int, [_vp, _cp, _int, _pu32]),
    "sv_client_restart": (_int, [_vp, _cp, _u32, _int]),
    "sv_client_restart_if": (_int, [_vp, _cp, _u32, _u64, _int]),
    "sv_client_reset": (_int, [_vp, _cp, _int]),
    # groups
    "sv_client_groups": (_int, [_vp, _cp, _int, _pvp]),
    "sv_groups_count": (_size, [_vp]),
    "sv_groups_name": (_cp, [_vp, _size]),
    "sv_groups_count_wanted": (_u32, [_vp, _size]),
    "sv_groups_max_count": (_u32, [_vp, _size]),
    "sv_groups_failed": (_int, [_vp, _size]),
    "sv_groups_failure_reason": (_cp, [_vp, _size]),
    "sv_groups_restart": (_cp, [_vp, _size]),
    "sv_groups_strategy": (_cp, [_vp, _size]),
    "sv_groups_running": (_u32, [_vp, _size]),
    "sv_groups_ready": (_u32, [_vp, _size]),
    "sv_groups_starting": (_u32, [_vp, _size]),
    "sv_groups_stopping": (_u32, [_vp, _size]),
    "sv_groups_backoff": (_u32, [_vp, _size]),
    "sv_groups_purpose": (_cp, [_vp, _size]),
    "sv_groups_free": (None, [_vp]),
    # readiness and watchdog (sent by a worker about itself)
    "sv_client_ready": (_int, [_vp, _cp, _int]),
    "sv_client_heartbeat": (_int, [_vp, _int]),
    # events
    "sv_events_open": (_int, [_pvp, _cp, _cp, _int]),
    "sv_events_next": (_int, [_vp, _int, _pvp]),
    "sv_events_error_message": (_cp, [_vp]),
    "sv_events_close": (None, [_vp]),
    "sv_event_seq": (_u64, [_vp]),
    "sv_event_kind": (_cp, [_vp]),
    "sv_event_group": (_cp, [_vp]),
    "sv_event_is_worker": (_int, [_vp]),
    "sv_event_ordinal": (_u32, [_vp]),
    "sv_event_generation": (_u64, [_vp]),
    "sv_event_pid": (_i64, [_vp]),
    "sv_event_time_unix_ms": (_u64, [_vp]),
    "sv_event_supervisor_id": (_cp, [_vp]),
    "sv_event_details": (_cp, [_vp]),
    "sv_event_free": (None, [_vp]),
    # v1.3: draining, as WhoAmI reports it
    "sv_identity_draining": (_int, [_vp]),
    "sv_identity_drain_deadline_in_ms": (_u64, [_vp]),
    # leases (leases.py)
    "sv_client_lease_acquire": (_int, [_vp, _cp, _i64, _u32, _u64, _int,
                                       _pvp]),
    "sv_client_lease_renew": (_int, [_vp, _u64, _u64, _int, _pvp]),
    "sv_client_lease_release": (_int, [_vp, _u64, _u64, _int]),
    "sv_client_lease_claim": (_int, [_vp, _cp, _u32, _u64, _u64, _int,
                                     _pvp]),
    "sv_client_lease_list": (_int, [_vp, _cp, _u64, _int, _pvp]),
    "sv_leases_count": (_size, [_vp]),
    "sv_leases_at": (_vp, [_vp, _size]),
    "sv_leases_free": (None, [_vp]),
    "sv_lease_id": (_u64, [_vp]),
    "sv_lease_pool": (_cp, [_vp]),
    "sv_lease_slot": (_u32, [_vp]),
    "sv_lease_token": (_u64, [_vp]),
    "sv_lease_expires_in_ms": (_u64, [_vp]),
    "sv_lease_resource": (_cp, [_vp]),
    "sv_lease_holder_name": (_cp, [_vp]),
    "sv_lease_unclaimed": (_int, [_vp]),
    "sv_lease_epoch": (_u64, [_vp]),
    "sv_lease_free": (None, [_vp]),
    "sv_client_session_open": (_int, [_vp, _u64, _int, _pu64]),
    "sv_client_session_renew": (_int, [_vp, _u64, _int]),
    "sv_client_session_close": (_int, [_vp, _u64, _int]),
    "sv_client_pools": (_int, [_vp, _int, _pvp]),
    "sv_pools_count": (_size, [_vp]),
    "sv_pools_name": (_cp, [_vp, _size]),
    "sv_pools_slots": (_u32, [_vp, _size]),
    "sv_pools_held": (_u32, [_vp, _size]),
    "sv_pools_ttl_ms": (_u64, [_vp, _size]),
    "sv_pools_grace_ms": (_u64, [_vp, _size]),
    "sv_pools_path": (_cp, [_vp, _size]),
    "sv_pools_on_release": (_cp, [_vp, _size]),
    "sv_pools_kind": (_cp, [_vp, _size]),
    "sv_pools_free": (None, [_vp]),
    # drain (drain.py)
    "sv_client_drain": (_int, [_vp, _cp, _i64, _u64, _int, _pvp]),
    "sv_client_drain_report": (_int, [_vp, _u64, _int, _pvp]),
    "sv_client_drain_extend": (_int, [_vp, _u64, _int]),
    "sv_client_drain_ack": (_int, [_vp, _u64, _int]),
    "sv_drain_report_id": (_u64, [_vp]),
    "sv_drain_report_done": (_int, [_vp]),
    "sv_drain_report_count": (_size, [_vp]),
    "sv_drain_report_group": (_cp, [_vp, _size]),
    "sv_drain_report_ordinal": (_u32, [_vp, _size]),
    "sv_drain_report_generation": (_u64, [_vp, _size]),
    "sv_drain_report_pid": (_i64, [_vp, _size]),
    "sv_drain_report_is_reaped": (_int, [_vp, _size]),
    "sv_drain_report_exited": (_int, [_vp, _size]),
    "sv_drain_report_code": (_i32, [_vp, _size]),
    "sv_drain_report_signal": (_i32, [_vp, _size]),
    "sv_drain_report_acknowledged": (_int, [_vp, _size]),
    "sv_drain_report_killed": (_int, [_vp, _size]),
    "sv_drain_report_time_to_exit_ms": (_u64, [_vp, _size]),
    "sv_drain_report_served": (_u64, [_vp, _size]),
    "sv_drain_report_free": (None, [_vp]),
    # activity.h (activity.py)
    "sv_activity_region_open": (_int, [_pvp, _cp]),
    "sv_activity_region_close": (None, [_vp]),
    "sv_activity_enter": (_int, [_vp, _cp]),
    "sv_activity_leave": (_int, [_vp]),
    "sv_activity_depth": (_int, [_vp, _pu32]),
}


def _declare(cdll, where):
    """Declares every prototype on cdll; a missing symbol raises
    LibraryNotFound."""
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            raise LibraryNotFound(
                "%s has no symbol %s: not a compatible libsupervise %d.x"
                % (where, name, ABI_MAJOR)
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
    version = cdll.sv_version().decode("ascii", "replace")
    if version.split(".")[0] != str(ABI_MAJOR):
        raise LibraryNotFound(
            "%s is libsupervise %s; this binding needs %d.x"
            % (where, version, ABI_MAJOR)
        )


def _load():
    """Loads the library the documented way; raises LibraryNotFound."""
    path = os.environ.get(ENV_LIBRARY, "")
    if path:
        where = "%s=%s" % (ENV_LIBRARY, path)
        target = path
    else:
        where = SONAME
        target = SONAME
    try:
        cdll = ctypes.CDLL(target)
    except OSError as e:
        raise LibraryNotFound(
            "cannot load libsupervise from %s (%s). Either install "
            "libsupervise so that the dynamic loader finds %s "
            "(cmake --install, then ldconfig), or set %s to the path of "
            "an uninstalled build's library, e.g. build/%s"
            % (where, e, SONAME, ENV_LIBRARY, SONAME)
        ) from None
    _declare(cdll, where)
    return cdll


def lib():
    """Returns the loaded, declared library (loading it on first use).

    Raises LibraryNotFound when it cannot be loaded. A failed load is not
    cached: setting SUPERVISE_LIBRARY and calling again retries.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            _lib = _load()
        return _lib


def text(raw):
    """Decodes a C string from the library (None stays None)."""
    if raw is None:
        return None
    return raw.decode("utf-8", "replace")


def library_version():
    """Returns sv_version() of the loaded library ("0.1.0")."""
    return text(lib().sv_version())
