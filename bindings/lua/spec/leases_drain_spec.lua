-- leases_drain_spec.lua — leases and drain through the Lua binding, against
-- a real supervised with three pools (files: 2 slots with a file each; p: 1
-- slot; forkpool: 6 slots) and groups "drainer" (a Lua worker listening for
-- its drain notice; drain_signal "none", so the notice is all it gets) and
-- "forker" (tests/fork_host.c running a worker that holds a lease and forks
-- 4 children, each taking a lease of its own through a session). The spec
-- process is no worker: it holds leases through sessions and, as the
-- daemon's uid, may drain.
local H = require "spec.helper"
local sv = H.sv

local host = os.getenv("SV_LUA_FORK_HOST")
local POOLS = [[
pools = (
  { name = "files"; slots = 2; path = "{dir}/res/{slot}.dat"; on_release = "truncate"; },
  { name = "p"; slots = 1; },
  { name = "forkpool"; slots = 6; }
);]]

describe("leases and drain", function()
  local d, c

  setup(function()
    assert(host and host ~= "", "SV_LUA_FORK_HOST is not set")
    local worker = H.spec_dir .. "/lease_drain_worker.lua"
    d = H.start { top = POOLS, groups = {
      { name = "drainer", count = 1, argv = { H.lua, worker, "drain" },
        options = { ready = true, drain_signal = "none", drain_timeout_ms = 10000 } },
      { name = "forker", count = 1, argv = { host, worker, "fork", "forkpool" } },
    } }
    c = assert(sv.open(d.url, 5000))
  end)
  teardown(function()
    if c then c:close() end
    H.stop(d)
  end)

  it("acquires and releases with a fencing token and a resource path", function()
    local s = assert(c:session_open(10000))
    local first = assert(c:lease_acquire("files", { slot = 1, session = s }))
    assert.equals("files", first.pool)
    assert.equals(1, first.slot)
    assert.is_true(first.token > 0)
    assert.equals(d.dir .. "/res/1.dat", first.resource)
    assert.is_true(H.exists(first.resource))
    assert.equals("session:" .. s, first.holder)
    local listed = assert(c:leases("files", s))
    assert.equals(1, #listed)
    assert.equals(first.id, listed[1].id)
    assert.is_true(first:release())
    assert.equals(0, #assert(c:leases("files", s)))
    local second = assert(c:lease_acquire("files", { slot = 1, session = s }))
    assert.is_true(second.token > first.token)
    assert.equals(second.token, assert(second:renew()).token)
    assert(second:release())
    assert(c:session_close(s))
  end)

  it("with_lease releases when fn raises, and returns fn's results", function()
    local s = assert(c:session_open(10000))
    local seen
    local ok, err = sv.with_lease("p", { session = s, client = c }, function(l)
      seen = l
      assert.equals(1, #assert(c:leases("p", s)))
      error("boom")
    end)
    assert.is_false(ok)
    assert.matches("boom", tostring(err))
    assert.is_true(seen.released)
    assert.equals(0, #assert(c:leases("p", s)))
    local ok2, slot, n = sv.with_lease("p", { session = s, client = c }, function(l)
      return l.slot, #assert(c:leases("p", s))
    end)
    assert.is_true(ok2)
    assert.equals(0, slot)
    assert.equals(1, n)
    assert.equals(0, #assert(c:leases("p", s)))
    assert(c:session_close(s))
  end)

  it("refuses a release by a non-holder with EPERM", function()
    local owner = assert(c:session_open(10000))
    local thief = assert(c:session_open(10000))
    local l = assert(c:lease_acquire("p", { session = owner }))
    local ok, err = c:lease_release(l.id, thief)
    assert.is_nil(ok)
    assert.equals(sv.EPERM, err.code)
    assert.equals("EPERM", err.name)
    ok, err = c:lease_renew(l.id, thief)
    assert.is_nil(ok)
    assert.equals(sv.EPERM, err.code)
    assert.equals(l.id, assert(c:leases("p", owner))[1].id)
    -- Taken: EEXHAUSTED (any slot), EDEADLINE (12) after a wait.
    ok, err = c:lease_acquire("p", { session = thief })
    assert.is_nil(ok)
    assert.is_true(err.code == sv.EEXHAUSTED or err.code == sv.EBUSY)
    ok, err = c:lease_acquire("p", { session = thief, wait = 200 }, 3000)
    assert.is_nil(ok)
    assert.equals(12, sv.EDEADLINE)
    assert.equals(sv.EDEADLINE, err.code)
    assert.equals("EDEADLINE", err.name)
    assert(l:release())
    assert(c:session_close(owner))
    assert(c:session_close(thief))
  end)

  it("needs a session outside a worker", function()
    local ok, err = c:lease_acquire("p")
    assert.is_nil(ok)
    assert.equals(sv.ENOTWORKER, err.code)
    ok, err = sv.lease_acquire("p") -- no $SUPERVISE_URL: refused locally
    assert.is_nil(ok)
    assert.equals(sv.ENOTWORKER, err.code)
    ok, err = sv.drain_watch()
    assert.is_nil(ok)
    assert.equals(sv.ENOTWORKER, err.code)
  end)

  it("drains a Lua worker that acknowledges and exits", function()
    local w = H.wait_for(function()
      local ws = c:list("drainer")
      return ws and ws[1] and ws[1].ready and ws[1]
    end, 15000, "the drainer to be ready")
    local first = assert(c:drain("drainer", nil, 10000))
    assert.equals(1, #first.workers)
    assert.equals(w.pid, first.workers[1].pid)
    local report = H.wait_for(function()
      local r = assert(c:drain_report(first.id))
      return r.done and r
    end, 15000, "the drain to be done")
    local row = report.workers[1]
    local seen = H.parse_report(assert(H.read_file(d.out .. "/drain.report")))
    assert.equals(tostring(w.pid), seen.pid)
    assert.equals(tostring(first.id), seen.drain_id)
    assert.equals("event", seen.source)
    assert.is_true(tonumber(seen.notice_deadline) > 0)
    assert.equals("1", seen.handler_calls)
    assert.equals("true", seen.draining)
    assert.is_true(row.acknowledged)
    assert.is_false(row.killed)
    assert.is_true(row.exited)
    assert.equals(0, row.code)
    assert.equals(tonumber(seen.served), row.served)
  end)

  it("lets 4 forked children of a lease holder take leases of their own", function()
    local path = d.out .. "/lfork.report"
    H.wait_for(function() return H.exists(path) end, 30000, path)
    local p = H.parse_report(assert(H.read_file(path)))
    assert.equals("forkpool", p["mine.pool"])
    assert.equals("0", p["mine.slot"])
    assert.matches("^forker/0@", p["mine.holder"])
    assert.equals(p["mine.token"], p.renewed_token)
    local ids = {}
    for i = 1, 4 do
      assert.equals("exit 0", p["child." .. i], "child " .. i)
      local r = H.parse_report(assert(H.read_file(("%s/lfork-child-%d.report"):format(d.out, i))))
      assert.is_nil(r.error, r.error)
      assert.are_not.equals(p.pid, r.pid)
      assert.matches("^session:", r.holder)
      assert.are_not.equals(p["mine.slot"], r.slot)
      assert.equals("1:" .. r.id, r.listed)
      ids[r.id] = true
    end
    local n = 0
    for _ in pairs(ids) do n = n + 1 end
    assert.equals(4, n)
    local held = 0
    for _, l in ipairs(assert(c:leases("forkpool"))) do
      if l.holder == p["mine.holder"] then
        held = held + 1
        assert.equals(p["mine.id"], tostring(l.id))
      end
    end
    assert.equals(1, held)
  end)
end)
