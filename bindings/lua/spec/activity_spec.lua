-- spec/activity_spec.lua — supervise.activity(name, fn, ...): nesting,
-- results, popping on an error, a no-op without a region. Each case runs
-- spec/activity_worker.lua in a fresh lua5.4, since the module reads
-- SUPERVISE_ACTIVITY once per process.
local H = require "spec.helper"

describe("supervise.activity", function()
  local worker = H.spec_dir .. "/activity_worker.lua"

  it("records nested scopes and pops them on an error", function()
    local path = os.tmpname()
    local out, ok = H.run("SUPERVISE_ACTIVITY=" .. H.quote(path) .. " " ..
      H.quote(H.lua) .. " " .. H.quote(worker) .. " 2>&1")
    os.remove(path)
    assert.is_true(ok, out)
    assert.are.equal("OK\n", out)
  end)

  it("is a no-op without a region", function()
    local out, ok = H.run("env -u SUPERVISE_ACTIVITY " .. H.quote(H.lua) ..
      " " .. H.quote(worker) .. " noregion 2>&1")
    assert.is_true(ok, out)
    assert.are.equal("OK\n", out)
  end)
end)
