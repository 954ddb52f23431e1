-- fork_spec.lua — a worker that used the binding forks 4 children that each
-- use it at once. Lua 5.4 on Debian has no fork() (lua-posix is built for
-- 5.1-5.3), so the worker is tests/fork_host.c, a C program embedding Lua
-- that gives spec/fork_worker.lua a host.fork() ($SV_LUA_FORK_HOST).
local H = require "spec.helper"

local host = os.getenv("SV_LUA_FORK_HOST")

describe("fork", function()
  local d

  setup(function()
    assert(host and host ~= "", "SV_LUA_FORK_HOST is not set")
    d = H.start { groups = { {
      name = "prefork", count = 1,
      argv = { host, H.spec_dir .. "/fork_worker.lua" },
    } } }
  end)
  teardown(function() H.stop(d) end)

  it("lets 4 forked children use the inherited clients, and the parent after them", function()
    local path = d.out .. "/fork.report"
    H.wait_for(function() return H.exists(path) end, 30000, path)
    local p = H.parse_report(assert(H.read_file(path)))
    local want = ("prefork 0 0 %s"):format(p.pid)
    assert.equals(want, p.before)
    assert.equals(want, p.own_before)
    for i = 1, 4 do
      assert.equals("exit 0", p["child." .. i], "child " .. i)
      local r = H.parse_report(assert(H.read_file(("%s/fork-child-%d.report"):format(d.out, i))))
      assert.are_not.equals(p.pid, r.pid) -- a child process of its own
      -- Its own round trips, answered with the worker it descends from.
      assert.equals(want, r.default, "child " .. i .. " default client")
      assert.equals(want, r.own, "child " .. i .. " inherited client")
      assert.matches("^supervised/", r.hello)
    end
    assert.equals(want, p.after)
    assert.equals(want, p.own_after)
  end)
end)
