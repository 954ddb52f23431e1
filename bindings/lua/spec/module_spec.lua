-- module_spec.lua — how `require "supervise"` is put together: the C module
-- runs its Lua parts (lua/supervise/leases.lua, drain.lua) from beside its
-- own file, those parts refuse to be loaded as modules of their own, and
-- every request is both a module function and a client method.
local H = require "spec.helper"
local sv = H.sv

-- The directory of the C module that was loaded.
local function module_dir()
  local so = assert(package.searchpath("supervise", package.cpath))
  return so:match("^(.*)/[^/]*$")
end

describe("the module", function()
  it("runs its Lua parts from the supervise/ directory beside the C module", function()
    local dir = module_dir()
    for name, fn in pairs { leases = sv.with_lease, drain = sv.drain_watch } do
      local want = "@" .. dir .. "/supervise/" .. name .. ".lua"
      assert.equals(want, debug.getinfo(fn, "S").source, name)
    end
    -- The lease methods come from the same Lua part.
    local Lease = debug.getregistry()["supervise.Lease"]
    assert.equals("@" .. dir .. "/supervise/leases.lua",
      debug.getinfo(Lease.__index.release, "S").source)
  end)

  it("has Lua parts that refuse to load as modules of their own", function()
    for _, name in ipairs { "leases", "drain" } do
      local path = module_dir() .. "/supervise/" .. name .. ".lua"
      local chunk = assert(loadfile(path))
      -- require passes the module name and the file, not the module table.
      local ok, err = pcall(chunk, "supervise." .. name, path)
      assert.is_false(ok)
      assert.matches("is part of the supervise module", err)
    end
  end)

  it("makes every request a module function and a client method", function()
    local Client = debug.getregistry()["supervise.Client"].__index
    for _, name in ipairs {
      "hello", "whoami", "list", "status", "scale", "stop", "restart", "reset",
      "groups", "ready", "set_status", "heartbeat", "lease_acquire",
      "lease_renew", "lease_release", "leases", "session_open", "session_renew",
      "session_close", "drain", "drain_report", "drain_extend", "drain_ack",
      "draining", "register_thread", "release_thread", "register_child",
      "release_child",
    } do
      assert.equals("function", type(sv[name]), name)
      assert.equals("function", type(Client[name]), name)
    end
    for _, name in ipairs { "close", "closed", "events" } do
      assert.equals("function", type(Client[name]), name)
    end
  end)
end)
