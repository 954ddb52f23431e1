"""sv_broken_subworkers.py — the sub-worker table of the broken-supervisor proxy.

Design: sv_broken_proxy.py relays requests to the real daemon, which would
take the proxy for the caller, so the proxy serves RegisterSubWorker and
ReleaseSubWorker (docs/protocol.md section 13, docs/subworkers.md) itself,
from the caller's kernel pid (SO_PEERCRED) and parent pid (/proc), as a
supervisor must. This module is that table, written from the protocol
pages alone (not from the daemon's code): per worker process (group,
ordinal, generation) two spaces of numbered slots (THREAD, PROCESS), each
slot holding its label, its current and next sub-generation and, for a
child, its pid. Choice of a number: re-claim, requested number, label
memory, lowest free; the bound is the group's max_subworkers (both kinds
together). A dead worker's slots are freed and its table is inherited by
the next generation of its ordinal; a registered child's slot is freed
when the child is gone.

The defect "subworker-not-reclaimed" (reclaim=False) keeps a dead worker's
slots held, so its next generation inherits them held: what SUBW-7 forbids.

Not thread-safe by itself: the proxy calls it under one lock. Bounded by
the live workers, the bound per worker and one remembered table per
(group, ordinal).
"""

THREAD, PROCESS = 2, 1  # WorkerKind numbers
LABEL_MAX = 64
DEFAULT_MAX = 256


class Refused(Exception):
    """A refusal: .code is the ErrorCode name, str() the message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Slot:
    def __init__(self):
        self.held = False
        self.cur_gen = 0
        self.next_gen = 0
        self.label = ""
        self.pid = 0


class Proc:
    def __init__(self, key, pid, bound):
        self.key = key          # (group, ordinal, generation)
        self.pid = pid
        self.bound = bound
        self.live = True
        self.spaces = {THREAD: {}, PROCESS: {}}  # number -> Slot

    def held(self):
        return sum(1 for sp in self.spaces.values() for sl in sp.values() if sl.held)


def child_alive(pid):
    """True while pid runs (not gone, not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class Table:
    def __init__(self, bounds, reclaim=True):
        self.bounds = bounds    # group -> max_subworkers
        self.reclaim = reclaim
        self.procs = {}         # key -> Proc (live ones and memory)
        self.children = {}      # child pid -> (key, number)

    # -- keeping up with the world -------------------------------------------
    def refresh(self, workers):
        """workers: {pid: (group, ordinal, generation)} of the live workers.
        Reclaims what dead workers and dead children held."""
        live_keys = set(workers.values())
        for p in self.procs.values():
            if p.live and p.key not in live_keys:
                p.live = False
                if self.reclaim:
                    self._free_all(p)
        for pid, (key, n) in list(self.children.items()):
            if not child_alive(pid):
                self._free(self.procs[key], PROCESS, n)
        for pid, key in workers.items():
            if key not in self.procs:
                self._attach(key, pid)

    def _attach(self, key, pid):
        group, ordinal, gen = key
        p = Proc(key, pid, self.bounds.get(group, DEFAULT_MAX))
        older = [q for q in self.procs.values() if not q.live and q.key[:2] == key[:2]
                 and q.key[2] < gen]
        if older:
            q = max(older, key=lambda x: x.key[2])
            p.spaces = q.spaces  # the memory of the latest dead generation
            for sp in p.spaces.values():
                for sl in sp.values():
                    if sl.held and sl.pid:
                        self.children[sl.pid] = (key, self._number(p, PROCESS, sl))
            del self.procs[q.key]
        self.procs[key] = p

    @staticmethod
    def _number(p, kind, slot):
        return next(n for n, sl in p.spaces[kind].items() if sl is slot)

    def _free(self, p, kind, n):
        sl = p.spaces[kind][n]
        if kind == PROCESS:
            self.children.pop(sl.pid, None)
        sl.held = False
        sl.pid = 0

    def _free_all(self, p):
        for kind, sp in p.spaces.items():
            for n, sl in sp.items():
                if sl.held:
                    self._free(p, kind, n)

    def _by_pid(self, pid):
        for p in self.procs.values():
            if p.live and p.pid == pid:
                return p
        return None

    # -- requests --------------------------------------------------------------
    def register(self, pid, ppid, kind, label, number, has_number):
        """Returns (proc, kind, number, sub-generation, label, again)."""
        if kind not in (THREAD, PROCESS):
            raise Refused("BAD_REQUEST", "kind must be THREAD or PROCESS")
        raw = label.encode("utf-8")
        if len(raw) > LABEL_MAX or "\0" in label or (kind == THREAD and not raw):
            raise Refused("BAD_REQUEST", "a thread's label must be 1..64 bytes without NUL")
        if kind == THREAD:
            p = self._by_pid(pid)
            if p is None:
                if pid in self.children:
                    raise Refused("TOO_LARGE", "sub-workers nest two levels at most")
                raise Refused("NOT_A_WORKER", "the caller is not a live worker process")
        else:
            if self._by_pid(pid) is not None:
                raise Refused("PERMISSION_DENIED", "a worker is not its own child")
            p = self._by_pid(ppid)
            if p is None:
                if ppid in self.children:
                    raise Refused("TOO_LARGE", "sub-workers nest two levels at most")
                raise Refused("NOT_A_WORKER", "the caller's parent is not a live worker process")
        if has_number and number >= p.bound:
            raise Refused("BAD_REQUEST", "number at or over max_subworkers")
        sp = p.spaces[kind]
        if kind == THREAD:
            for n, sl in sp.items():
                if sl.held and sl.label == label:
                    if has_number and number != n:
                        raise Refused("CONFLICT", "the label is held under another number")
                    return p, kind, n, sl.cur_gen, sl.label, True
        elif pid in self.children:
            key, n = self.children[pid]
            if key != p.key:
                raise Refused("PERMISSION_DENIED", "registered under another worker")
            if has_number and number != n:
                raise Refused("CONFLICT", "registered under another number")
            sl = sp[n]
            return p, kind, n, sl.cur_gen, sl.label, True
        if p.held() >= p.bound:
            raise Refused("EXHAUSTED", "the process holds max_subworkers sub-workers")
        n = self._pick(p, sp, label, number, has_number)
        sl = sp.setdefault(n, Slot())
        sl.held = True
        sl.cur_gen = sl.next_gen
        sl.next_gen += 1
        sl.label = label
        if kind == PROCESS:
            sl.pid = pid
            self.children[pid] = (p.key, n)
        return p, kind, n, sl.cur_gen, label, False

    @staticmethod
    def _pick(p, sp, label, number, has_number):
        if has_number:
            if number in sp and sp[number].held:
                raise Refused("CONFLICT", "the number is held by another live sub-worker")
            return number
        if label:
            for n in sorted(sp):
                if n < p.bound and not sp[n].held and sp[n].label == label:
                    return n
        for n in range(p.bound):
            if n not in sp or not sp[n].held:
                return n
        raise Refused("EXHAUSTED", "the process holds max_subworkers sub-workers")

    def release(self, pid, kind, number, generation):
        """Ends the caller's grant (kind, number, generation); a stale one
        is a successful no-op."""
        if kind == THREAD:
            p = self._by_pid(pid)
            if p is None:
                if pid in self.children:
                    raise Refused("PERMISSION_DENIED", "a child cannot release its worker's thread")
                raise Refused("NOT_FOUND", "the caller is not a live worker process")
        elif kind == PROCESS:
            if self._by_pid(pid) is not None:
                raise Refused("PERMISSION_DENIED", "a worker cannot release its child")
            if pid not in self.children:
                return
            key, n = self.children[pid]
            p = self.procs[key]
            if n != number:
                return
        else:
            raise Refused("BAD_REQUEST", "kind must be THREAD or PROCESS")
        sl = p.spaces[kind].get(number)
        if sl is not None and sl.held and sl.cur_gen == generation:
            self._free(p, kind, number)

    def child(self, pid):
        """(proc, PROCESS, number, sub-generation, label, True) of a
        registered child, or None."""
        if pid not in self.children:
            return None
        key, n = self.children[pid]
        p = self.procs[key]
        sl = p.spaces[PROCESS][n]
        return p, PROCESS, n, sl.cur_gen, sl.label, True
