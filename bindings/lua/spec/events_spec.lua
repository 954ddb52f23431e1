-- events_spec.lua — the event reader, groups, reset and restart with an
-- expected generation, against a real supervised. A subscription is live
-- only once the supervisor has taken the reader's connection (PUB keeps
-- nothing for a reader not yet connected), so a test first asks for a no-op
-- scale, which publishes group_scaled, and waits for that event: no sleep.
local H = require "spec.helper"
local sv = H.sv

local N = 2

describe("events", function()
  local d

  before_each(function()
    d = H.start { groups = { { name = "ev", count = N, purpose = "watched by the event tests",
                               argv = { "/bin/sleep", "3600" } } } }
    local c <close> = assert(sv.open(d.url, 5000))
    H.wait_for(function()
      local ws = assert(c:list("ev"))
      return #ws == N and ws[1].state == "running" and ws[2].state == "running"
    end, 15000, "both workers running")
  end)
  after_each(function() H.stop(d) end)

  -- next_matching reads r until an event satisfies match, before the
  -- deadline (H.now_ms); every event read is appended to seen.
  local function next_matching(r, deadline, match, seen)
    while true do
      local left = deadline - H.now_ms()
      if left <= 0 then error("no matching event; saw " .. #(seen or {}), 2) end
      local ev, err = r:next(left)
      if ev then
        if seen then seen[#seen + 1] = ev end
        if match(ev) then return ev end
      elseif err.code ~= sv.ETIMEDOUT then
        error(tostring(err), 2)
      end
    end
  end

  -- sync makes sure r's subscription is live: the PUB socket may attach a
  -- new reader a moment after it connects, and an event published before
  -- that is not delivered; so scale (a no-op) again until one arrives.
  local function sync(c, r)
    local deadline = H.now_ms() + 10000
    while true do
      assert(c:scale("ev", N, 5000))
      local ok = pcall(next_matching, r, math.min(deadline, H.now_ms() + 300),
        function(e) return e.kind == "group_scaled" and e.group == "ev" end)
      if ok then return end
      if H.now_ms() >= deadline then error("the event reader never became live", 2) end
    end
  end

  it("see a restart: stopping, then started with generation + 1", function()
    local c <close> = assert(sv.open(d.url, 5000))
    assert.matches("/events%.sock$", assert(c:hello()).events_url)
    local one <close> = assert(c:events("w/ev/1/")) -- opened before the sync
    local every <close> = assert(c:events())
    sync(c, every)
    local old = assert(c:status("ev", 1))
    assert.equals(0, old.generation)
    assert.is_true(c:restart("ev", 1, { expected_generation = 0 }))
    local deadline = H.now_ms() + 15000
    for _, r in ipairs { every, one } do
      local seen = {}
      local stopping = next_matching(r, deadline, function(e)
        return e.kind == "stopping" and e.group == "ev" and e.ordinal == 1
      end, seen)
      local started = next_matching(r, deadline, function(e)
        return e.kind == "started" and e.group == "ev" and e.ordinal == 1
      end, seen)
      assert.equals(0, stopping.generation)
      assert.equals(old.pid, stopping.pid)
      assert.equals("reason=restart", stopping.details)
      assert.equals(1, started.generation)
      assert.is_true(started.pid ~= 0 and started.pid ~= old.pid)
      assert.is_true(stopping.seq < started.seq)
      assert.is_true(stopping.is_worker and started.is_worker)
      assert.is_true(math.abs(started.time - os.time()) < 60)
      assert.equals(math.type(started.time_ms), "integer")
      if r == one then
        for _, e in ipairs(seen) do
          assert.equals("ev", e.group)
          assert.equals(1, e.ordinal)
        end
      end
    end
    assert.equals(1, assert(c:status("ev", 1)).generation)
    one:close()
    one:close() -- twice is fine
    assert.is_true(one:closed())
    local v, err = one:next(0)
    assert.is_nil(v)
    assert.equals(sv.ECLOSED, err.code)
  end)

  it("iterate with a generic for, ending when none comes in time", function()
    local c <close> = assert(sv.open(d.url, 5000))
    local r <close> = assert(c:events { prefix = "g/ev/", wait = 10000 })
    sync(c, r)
    assert(c:scale("ev", N))
    local got = {}
    for ev in r:iter() do -- the reader's wait: 10 s
      got[#got + 1] = ev
      break
    end
    assert.equals(1, #got)
    assert.equals("group_scaled", got[1].kind)
    assert.equals(("previous=%d count=%d"):format(N, N), got[1].details)
    assert.is_false(got[1].is_worker)
    assert.equals(0, got[1].pid)
    local t0 = H.now_ms()
    for _ in r:iter(200) do error("no event expected") end
    assert.is_true(H.now_ms() - t0 >= 150)
    local v, err = r:next(0)
    assert.is_nil(v)
    assert.equals(sv.ETIMEDOUT, err.code)
    assert.is_false(r:closed())
  end)

  it("supervise.events closes its reader when the loop ends", function()
    -- Module level: events.sock beside $SUPERVISE_URL, in a sub-process
    -- that has it; the loop ends by timeout since nothing happens.
    local out = H.lua_sub([[local sv = require "supervise"
      local n = 0
      for ev in sv.events { prefix = "g/ev/", wait = 100 } do n = n + 1 end
      local r = assert(sv.open_events("w/"))
      io.write(n, " ", tostring(r), " ")
      r:close()
      io.write(tostring(r))]], "SUPERVISE_URL=" .. H.quote(d.url))
    assert.equals("0 supervise.Events(w/) supervise.Events(closed)", out)
    local ok, err = pcall(function()
      for _ in sv.events { url = "ipc://" .. d.dir .. "/none.sock", timeout = 200 } do end
    end)
    assert.is_false(ok)
    assert.is_true(sv.is_error(err))
    assert.equals(sv.ECONNECT, err.code)
    local r, oerr = sv.open_events { url = "ipc://" .. d.dir .. "/none.sock", timeout = 200 }
    assert.is_nil(r)
    assert.equals(sv.ECONNECT, oerr.code)
    assert.has_error(function() sv.open_events(("w/"):rep(150)) end)
    assert.has_error(function() sv.open_events(42) end)
  end)

  it("groups, reset and a restart with a wrong generation", function()
    local c <close> = assert(sv.open(d.url, 5000))
    local gs = assert(c:groups("ev"))
    assert.equals(1, #gs)
    local g = gs[1]
    assert.equals("ev", g.name)
    assert.equals(N, g.count)
    assert.equals("watched by the event tests", g.purpose)
    assert.is_false(g.failed)
    assert.equals("", g.failure_reason)
    assert.equals("permanent", g.restart)
    assert.equals("one_for_one", g.strategy)
    assert.equals(N, g.running)
    assert.equals(N, g.ready)
    local _, nerr = c:groups("nope")
    assert.equals(sv.ENOTFOUND, nerr.code)
    local r <close> = assert(c:events("g/ev/"))
    sync(c, r)
    assert.is_true(c:reset("ev")) -- not failed: still accepted
    next_matching(r, H.now_ms() + 10000, function(e) return e.kind == "group_reset" end)
    assert.is_false(assert(c:groups("ev"))[1].failed)
    local _, rerr = c:reset("nope")
    assert.equals(sv.ENOTFOUND, rerr.code)
    local before = assert(c:status("ev", 0))
    local v, err = c:restart("ev", 0, { expected_generation = before.generation + 5 })
    assert.is_nil(v)
    assert.equals(sv.ECONFLICT, err.code)
    assert.equals("ECONFLICT", err.name)
    assert.equals("restart", err.op)
    local after = assert(c:status("ev", 0))
    assert.equals(before.generation, after.generation)
    assert.equals(before.pid, after.pid)
    assert.equals("running", after.state)
    assert.has_error(function() c:restart("ev", 0, { expected_generation = -1 }) end)
  end)
end)
