-- identity_spec.lua — whoami in real Lua workers under a real supervised:
-- ordinals 0..N-1, generations, group and purpose, from_env against the live
-- answer, sub-processes, and the administration calls that change identities
-- (restart, scale, stop).
local H = require "spec.helper"
local sv = H.sv

local GROUP, N, PURPOSE = "luaw", 3, "lua identity spec workers"

describe("identity in a Lua worker", function()
  local d, client
  local reports = {}

  setup(function()
    d = H.start { groups = { { name = GROUP, count = N, purpose = PURPOSE } } }
    client = assert(sv.open(d.url, 5000))
    for ord = 0, N - 1 do reports[ord] = H.report(d, ord, 0) end
  end)

  teardown(function()
    if client then client:close() end
    H.stop(d)
  end)

  it("has no errors in any worker's report", function()
    for ord = 0, N - 1 do
      for k, v in pairs(reports[ord]) do
        assert.is_nil(k:match("_error$"), ("worker %d: %s=%s"):format(ord, k, v))
      end
    end
  end)

  it("gives each worker a distinct ordinal in 0..N-1, generation 0", function()
    local seen = {}
    for ord = 0, N - 1 do
      local r = reports[ord]
      local o = tonumber(r["live.ordinal"])
      assert.is_true(o >= 0 and o < N)
      assert.is_nil(seen[o])
      seen[o] = true
      assert.equals(ord, o)
      assert.equals("0", r["live.generation"])
      assert.equals(tostring(N), r["live.group_size"])
    end
  end)

  it("matches group, purpose, ordinal and generation of the environment", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      assert.equals(GROUP, r["live.group"])
      assert.equals(PURPOSE, r["live.purpose"])
      assert.equals(r["env.GROUP"], r["live.group"])
      assert.equals(r["env.PURPOSE"], r["live.purpose"])
      assert.equals(r["env.ORDINAL"], r["live.ordinal"])
      assert.equals(r["env.GENERATION"], r["live.generation"])
      assert.equals(r["env.SUPERVISOR_ID"], r["live.supervisor_id"])
      assert.equals(d.url, r["env.URL"])
    end
  end)

  it("reports the worker's own pid, kind process, one frame, no parent", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      assert.equals(r.pid, r["live.pid"])
      assert.equals("process", r["live.kind"])
      assert.equals("1", r["live.frames"])
      assert.equals(("process:%s/%d"):format(GROUP, ord), r["live.context.1"])
      assert.equals("none", r["live.parent"])
      assert.equals("live", r["live.source"])
    end
  end)

  it("gives the same answer on the default client and on an own client", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      for _, k in ipairs { "group", "ordinal", "generation", "kind", "pid", "purpose",
                           "supervisor_id", "group_size", "frames", "context.1", "parent" } do
        assert.equals(r["live." .. k], r["own." .. k], k)
      end
    end
  end)

  it("from_env equals the live answer on every field the environment has", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      for _, k in ipairs { "group", "ordinal", "generation", "kind", "purpose",
                           "supervisor_id", "frames", "context.1", "parent" } do
        assert.equals(r["live." .. k], r["fromenv." .. k], k)
      end
      assert.equals("env", r["fromenv.source"])
      -- Not in the environment: pid and group_size.
      assert.is_nil(r["fromenv.pid"])
      assert.is_nil(r["fromenv.group_size"])
    end
  end)

  it("answers hello inside the worker with the worker's supervisor id", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      assert.equals("1", r["hello.version"])
      assert.matches("^supervised/", r["hello.server_name"])
      assert.equals(r["live.supervisor_id"], r["hello.supervisor_id"])
    end
  end)

  it("gives four concurrent sub-processes their worker's identity", function()
    for ord = 0, N - 1 do
      local r = reports[ord]
      for i = 1, 4 do
        assert.equals(("%s %d 0 %s"):format(GROUP, ord, r.pid), r["child." .. i], "child " .. i)
      end
    end
  end)

  it("lists the workers with the pids they reported", function()
    local list = assert(client:list(GROUP))
    assert.equals(N, #list)
    for _, w in ipairs(list) do
      assert.equals(GROUP, w.group)
      assert.equals(reports[w.ordinal].pid, tostring(w.pid))
      assert.equals("running", w.state)
      assert.equals(PURPOSE, w.purpose)
    end
    local all = assert(client:list())
    assert.equals(N, #all)
    local one = assert(client:status(GROUP, 2))
    assert.equals(2, one.ordinal)
    assert.equals(reports[2].pid, tostring(one.pid))
  end)

  it("restart keeps the ordinal and bumps the generation", function()
    assert.is_true(client:restart(GROUP, 1, 5000))
    local r = H.report(d, 1, 1)
    assert.equals("1", r["live.ordinal"])
    assert.equals("1", r["live.generation"])
    assert.equals("1", r["fromenv.generation"])
    assert.are_not.equals(reports[1].pid, r.pid)
    assert.equals(r.pid, r["live.pid"])
    local st = assert(client:status(GROUP, 1))
    assert.equals(1, st.generation)
    assert.is_true(st.restarts >= 1)
  end)

  it("scale up adds ordinal N with the new group size; stop empties the group", function()
    assert.equals(N, client:scale(GROUP, N + 1, 5000))
    local r = H.report(d, N, 0)
    assert.equals(tostring(N), r["live.ordinal"])
    assert.equals(tostring(N + 1), r["live.group_size"])
    assert.equals(N + 1, #assert(client:list(GROUP)))
    assert.equals(N + 1, client:stop(GROUP, 5000))
    H.wait_for(function()
      local l = client:list(GROUP)
      return l and #l == 0
    end, 10000, "the group to be empty after stop")
  end)
end)
