-- example_spec.lua — examples/whoami_worker.lua under a real supervised
-- prints the C example's line for each worker and stays up until SIGTERM.
local H = require "spec.helper"
local sv = H.sv

describe("examples/whoami_worker.lua", function()
  local d

  setup(function()
    d = H.start { groups = { {
      name = "demo", count = 2, purpose = "show the Lua example",
      script = H.spec_dir .. "/../examples/whoami_worker.lua",
    } } }
  end)
  teardown(function() H.stop(d) end)

  it("prints one identity line per worker, in the C example's format", function()
    -- In the background the daemon writes its workers' output to log_file.
    local lines = H.wait_for(function()
      local found = {}
      for line in (H.read_file(d.log) or ""):gmatch("[^\n]+") do
        if line:match("^%[lua%] I am ") then found[#found + 1] = line end
      end
      return #found >= 2 and found
    end, 10000, "two identity lines in " .. d.log)
    table.sort(lines)
    local c <close> = assert(sv.open(d.url, 5000))
    for ord = 0, 1 do
      local st = assert(c:status("demo", ord))
      assert.equals(('[lua] I am demo[%d] generation 0 pid %d of 2, purpose "show the Lua example", '
                     .. "context process:demo/%d, parent none"):format(ord, st.pid, ord),
                    lines[ord + 1])
    end
  end)

  it("stays alive until SIGTERM, which ends it", function()
    local c <close> = assert(sv.open(d.url, 5000))
    local before = assert(c:status("demo", 0))
    assert.equals("running", before.state)
    assert.equals(0, before.restarts)
    assert.is_true(H.alive(before.pid))
    -- restart sends SIGTERM; the replacement is generation 1.
    assert.is_true(c:restart("demo", 0, 5000))
    H.wait_for(function() return not H.alive(before.pid) end, 10000, "the worker to exit")
    local after = H.wait_for(function()
      local st = c:status("demo", 0)
      return st and st.generation == 1 and st.state == "running" and st
    end, 10000, "generation 1 of demo[0]")
    assert.are_not.equals(before.pid, after.pid)
    assert.is_nil(after.last_exit_code) -- ended by the signal, not an exit
    assert.equals(15, after.last_signal)
  end)
end)
