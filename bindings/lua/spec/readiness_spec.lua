-- readiness_spec.lua — worker calls against a real supervised: ready with a
-- status line in a group that uses readiness, heartbeat against a group's
-- watchdog, and the typed errors outside a worker and in a descendant of
-- one. Each behaviour has a control group that does not make the call (a
-- worker that never calls ready stays "starting"; one that sends no
-- heartbeat is restarted by the watchdog), so the assertions can fail.
local H = require "spec.helper"
local sv = H.sv

local WATCHDOG_MS = 1000

describe("worker calls", function()
  local d

  setup(function()
    local script = H.spec_dir .. "/readiness_worker.lua"
    d = H.start { groups = {
      { name = "waiter", count = 1, argv = { H.lua, script, "ready", "up" },
        options = { ready = true } },
      { name = "sleeper", count = 1, argv = { "/bin/sleep", "3600" },
        options = { ready = true } },
      { name = "beater", count = 1, argv = { H.lua, script, "heartbeat", "200" },
        options = { ready = true, watchdog_ms = WATCHDOG_MS } },
      { name = "silent", count = 1, argv = { "/bin/sleep", "3600" },
        options = { watchdog_ms = WATCHDOG_MS } },
    } }
  end)
  teardown(function() H.stop(d) end)

  local function report()
    local path = d.out .. "/ready-waiter-0-0.report"
    H.wait_for(function() return H.exists(path) end, 20000, "the ready worker's report")
    return H.parse_report(assert(H.read_file(path)))
  end

  it("ready with a status shows in the worker list", function()
    assert.equals("ok", report().ready)
    local c <close> = assert(sv.open(d.url, 5000))
    local w = H.wait_for(function()
      local x = assert(c:status("waiter", 0))
      return x.ready and x
    end, 15000, "waiter to be ready")
    assert.equals("running", w.state)
    assert.equals("up", w.status_text)
    assert.equals(0, w.generation)
    assert.equals(0, w.fast_failures)
    assert.equals(0, w.restart_in_ms)
    local listed = {}
    for _, x in ipairs(assert(c:list())) do
      if x.group == "waiter" then listed[#listed + 1] = x end
    end
    assert.equals(1, #listed)
    assert.is_true(listed[1].ready)
    assert.equals("up", listed[1].status_text)
    -- The control: same settings, no ready call.
    local other = assert(c:status("sleeper", 0))
    assert.equals("starting", other.state)
    assert.is_false(other.ready)
    assert.equals("", other.status_text)
    local info = {}
    for _, g in ipairs(assert(c:groups())) do info[g.name] = g end
    assert.equals(1, info.waiter.ready)
    assert.equals(0, info.waiter.starting)
    assert.equals(0, info.sleeper.ready)
    assert.equals(1, info.sleeper.starting)
  end)

  it("refuses ready from a descendant of the worker with EPERM", function()
    assert.equals(sv.EPERM .. " EPERM", report().descendant)
  end)

  it("keeps a heartbeating worker past its watchdog", function()
    local c <close> = assert(sv.open(d.url, 5000))
    -- Wait on a deadline until the beater has run three watchdog intervals
    -- and the silent control was restarted by its watchdog.
    local pair = H.wait_for(function()
      local b = assert(c:status("beater", 0))
      local s = assert(c:status("silent", 0))
      if b.uptime_ms >= 3 * WATCHDOG_MS and s.generation >= 1 then return { b, s } end
    end, 30000, "three watchdog intervals")
    local beater, silent = pair[1], pair[2]
    assert.equals(0, beater.generation)
    assert.equals(0, beater.restarts)
    assert.equals("running", beater.state)
    assert.is_true(silent.generation >= 1) -- the control: the watchdog works
  end)

  it("returns ENOTWORKER outside a worker", function()
    local c <close> = assert(sv.open(d.url, 5000))
    for _, call in ipairs {
      function() return c:ready() end,
      function() return c:ready("x") end,
      function() return c:heartbeat() end,
      function() return c:set_status("x") end,
    } do
      local v, err = call()
      assert.is_nil(v)
      assert.equals(sv.ENOTWORKER, err.code)
      assert.is_true(#err.message > 0)
    end
    -- Module level without $SUPERVISE_URL: no round trip.
    local out = H.lua_sub([[local sv = require "supervise"
      for _, f in ipairs { function() return sv.ready("up") end, sv.heartbeat,
                           function() return sv.set_status("up") end } do
        local v, err = f() io.write(err.name, " ")
      end]], "env -u SUPERVISE_URL")
    assert.equals("ENOTWORKER ENOTWORKER ENOTWORKER ", out)
    assert.has_error(function() c:ready(("x"):rep(1025)) end)
    assert.has_error(function() c:ready(42) end)
    assert.has_error(function() c:set_status() end)
  end)
end)
