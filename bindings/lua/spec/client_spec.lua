-- client_spec.lua — the client object: hello, timeouts, and resource
-- cleanup (close, <close>, __gc, supervise.scope), with the process's file
-- descriptors as the witness that connections really are released.
local H = require "spec.helper"
local sv = H.sv

describe("the client", function()
  local d

  setup(function()
    d = H.start { groups = { { name = "idle", count = 1 } } }
  end)
  teardown(function() H.stop(d) end)

  it("says hello", function()
    local c <close> = assert(sv.open(d.url, 5000))
    local h = assert(c:hello(5000))
    assert.equals(1, h.version)
    assert.equals(sv.PROTOCOL_VERSION, h.version)
    assert.is_number(h.minor_version)
    assert.matches("^supervised/", h.server_name)
    assert.is_true(#h.supervisor_id > 0)
    assert.is_table(h.features)
    -- The worker's supervisor id is the one hello reports.
    assert.equals(h.supervisor_id, H.report(d, 0, 0)["live.supervisor_id"])
    assert.matches("^supervise%.Client%(ipc://", tostring(c))
  end)

  it("fails to open with ECONNECT where nobody listens, within its timeout", function()
    local t0 = H.now_ms()
    local c, err = sv.open("ipc://" .. d.dir .. "/nobody.sock", 200)
    assert.is_nil(c)
    assert.equals(sv.ECONNECT, err.code)
    assert.equals("open", err.op)
    assert.matches("nobody%.sock", err.message)
    assert.is_true(H.now_ms() - t0 < 3000)
  end)

  it("closes twice without harm and then answers ECLOSED", function()
    local c = assert(sv.open(d.url, 5000))
    assert.is_false(c:closed())
    c:close()
    c:close()
    assert.is_true(c:closed())
    assert.equals("supervise.Client(closed)", tostring(c))
    for _, call in ipairs {
      function() return c:hello() end,
      function() return c:whoami() end,
      function() return c:list() end,
      function() return c:status("idle", 0) end,
      function() return c:scale("idle", 1) end,
      function() return c:stop("idle") end,
      function() return c:restart("idle", 0) end,
    } do
      local v, err = call()
      assert.is_nil(v)
      assert.equals(sv.ECLOSED, err.code)
    end
    c = nil
    collectgarbage()
    collectgarbage() -- __gc of a closed client: nothing to do, no crash
  end)

  it("is closed by <close> at the end of its block, also on error", function()
    local held
    do
      local c <close> = assert(sv.open(d.url, 5000))
      held = c
      assert.is_truthy(c:hello(5000))
    end
    assert.is_true(held:closed())
    local held2
    local ok = pcall(function()
      local c <close> = assert(sv.open(d.url, 5000))
      held2 = c
      error("boom")
    end)
    assert.is_false(ok)
    assert.is_true(held2:closed())
    held2:close() -- and closing again is harmless
  end)

  it("releases its connection when closed or collected (file descriptors)", function()
    -- Warm up nng's own descriptors (poller, notifiers) with one client.
    local warm = assert(sv.open(d.url, 5000))
    assert.is_truthy(warm:hello(5000))
    warm:close()
    local function settles_at(n)
      return function() return H.fd_count() <= n end
    end
    H.wait_for(settles_at(H.fd_count()), 5000, "descriptors to settle")
    local base = H.fd_count()

    local clients = {}
    for i = 1, 20 do
      clients[i] = assert(sv.open(d.url, 5000))
      assert.is_truthy(clients[i]:hello(5000))
    end
    -- The witness works: 20 live connections hold at least 20 descriptors.
    assert.is_true(H.fd_count() >= base + 20)
    for i = 1, 10 do clients[i]:close() end
    clients = nil -- the other 10 are left to the garbage collector
    collectgarbage()
    collectgarbage()
    H.wait_for(settles_at(base), 5000, "descriptors back to " .. base)
  end)

  it("keeps working after an unrelated client closes", function()
    local a = assert(sv.open(d.url, 5000))
    local b = assert(sv.open(d.url, 5000))
    a:close()
    assert.is_truthy(b:hello(5000))
    b:close()
  end)
end)

describe("supervise.scope", function()
  local d

  setup(function()
    d = H.start { groups = { { name = "idle", count = 1 } } }
  end)
  teardown(function() H.stop(d) end)

  it("returns true and the results, and closes what it opened", function()
    local held
    local ok, a, b = sv.scope(function(s, x)
      held = assert(s:open(d.url, 5000))
      local h = assert(held:hello(5000))
      return x * 2, h.version
    end, 21)
    assert.is_true(ok)
    assert.equals(42, a)
    assert.equals(1, b)
    assert.is_true(held:closed())
  end)

  it("runs cleanups last-first even when the body raises, and returns false, err", function()
    local order, held = {}, nil
    local ok, err = sv.scope(function(s)
      s:defer(function() order[#order + 1] = "first" end)
      held = assert(s:open(d.url, 5000))
      s:defer(function(x) order[#order + 1] = x end, "second")
      error(sv.error(sv.EBUSY, "body failed"))
    end)
    assert.is_false(ok)
    assert.equals(sv.EBUSY, err.code)
    assert.same({ "second", "first" }, order)
    assert.is_true(held:closed())
  end)

  it("reports a failing cleanup when the body succeeded, and still runs the others", function()
    local ran = false
    local ok, err = sv.scope(function(s)
      s:defer(function() ran = true end)
      s:defer(function() error("cleanup failed", 0) end)
      return "fine"
    end)
    assert.is_false(ok)
    assert.equals("cleanup failed", err)
    assert.is_true(ran)
  end)

  it("works as a <close> variable too", function()
    local held
    do
      local s <close> = sv.scope()
      held = assert(s:open(d.url, 5000))
    end
    assert.is_true(held:closed())
  end)
end)
