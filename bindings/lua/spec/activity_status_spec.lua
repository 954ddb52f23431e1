-- spec/activity_status_spec.lua — the activity fields of a worker table
-- (status and list; docs/activity.md) against a real supervised: a worker
-- inside "request" > "db query" shows one in-flight activity named
-- "request: db query" whose age grows; an idle worker (the control) shows
-- none.
local H = require "spec.helper"

describe("activity in status", function()
  local d
  local worker = H.spec_dir .. "/activity_status_worker.lua"

  setup(function()
    d = H.start { groups = {
      { name = "busy", count = 1, argv = { H.lua, worker, "busy" } },
      { name = "idle", count = 1, argv = { H.lua, worker, "idle" } },
    } }
  end)
  teardown(function() H.stop(d) end)

  -- report(group) waits for and parses the worker's <group>.report.
  local function report(group)
    local path = ("%s/%s.report"):format(d.out, group)
    H.wait_for(function() return H.exists(path) end, 30000, path)
    return H.parse_report(assert(H.read_file(path)))
  end

  it("shows a busy worker's oldest activity and its age", function()
    local r = report("busy")
    assert.equals("2", r.depth, "the worker recorded both scopes")
    local c <close> = assert(H.sv.open(d.url, 5000))
    -- The supervisor's view is at most 100 ms stale: poll with a deadline.
    local w = H.wait_for(function()
      local x = c:status("busy", 0)
      return x and x.activities > 0 and x
    end, 10000, "busy[0] to show its activity")
    assert.equals(tonumber(r.pid), w.pid)
    assert.equals(1, w.activities)
    assert.equals("request: db query", w.activity)
    local later = H.wait_for(function()
      local x = c:status("busy", 0)
      return x and x.activity_age_ms > w.activity_age_ms and x
    end, 10000, "the activity to age")
    assert.equals("request: db query", later.activity)
    local listed = assert(c:list("busy"))[1]
    assert.same({ 1, "request: db query" }, { listed.activities, listed.activity })
    assert.is_false(listed.draining)
  end)

  it("shows nothing for an idle worker", function()
    local r = report("idle")
    assert.equals("0", r.depth)
    local c <close> = assert(H.sv.open(d.url, 5000))
    local w = assert(c:status("idle", 0))
    assert.equals(tonumber(r.pid), w.pid)
    assert.same({ 0, "", 0 }, { w.activities, w.activity, w.activity_age_ms })
  end)
end)
