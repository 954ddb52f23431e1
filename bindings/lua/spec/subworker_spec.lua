-- subworker_spec.lua — sub-workers in Lua (docs/subworkers.md, and the
-- "Sub-workers" section of README.md): the thread running a Lua state and
-- forked children of a worker, against a real supervised. Two workers
-- (tests/fork_host.c running spec/subworker_worker.lua, which writes what
-- the supervisor answered) of a group with max_subworkers = 3; one is then
-- restarted to check that a dead process's numbers come back to its next
-- generation.
local H = require "spec.helper"

local host = os.getenv("SV_LUA_FORK_HOST")

-- "kind ordinal generation pid=P ctx=A>B parent=F" -> table
local function parse(s)
  local kind, ord, gen, pid, ctx, parent = s:match("^(%a+) (%d+) (%d+) pid=(%d+) ctx=(%S+) parent=(%S+)$")
  assert(kind, "not an identity: " .. tostring(s))
  local frames = {}
  for f in ctx:gmatch("[^>]+") do frames[#frames + 1] = f end
  return { kind = kind, ordinal = tonumber(ord), generation = tonumber(gen), pid = tonumber(pid),
           context = frames, parent = parent }
end

describe("sub-workers", function()
  local d

  setup(function()
    assert(host and host ~= "", "SV_LUA_FORK_HOST is not set")
    d = H.start { groups = { {
      name = "subw", count = 2,
      argv = { host, H.spec_dir .. "/subworker_worker.lua" },
      options = { max_subworkers = 3 },
    } } }
  end)
  teardown(function() H.stop(d) end)

  local function child(ord, gen, i)
    local path = ("%s/%d-%d-child-%d.report"):format(d.out, ord, gen, i)
    return H.parse_report(assert(H.read_file(path), path))
  end

  it("registers the state's thread as [process p, thread t], durably", function()
    local r = H.report(d, 0, 0, 30000)
    local w = parse(r.worker)
    local pframe = ("process:subw/%d@%d"):format(w.ordinal, w.generation)
    local t = parse(r.thread)
    assert.same({ "thread", 0, tonumber(r.pid) }, { t.kind, t.ordinal, t.pid })
    assert.same({ pframe, "thread:main/0@" .. t.generation }, t.context)
    assert.equals(pframe, t.parent)
    assert.equals("false", r["thread.again"])
    assert.equals("true", r["thread.same"])
    assert.equals("EBUSY", r["thread.other"])
    assert.equals("true", r["thread.release"])
    -- Released and registered again: the same number, the next sub-generation.
    local back = parse(r["thread.back"])
    assert.same({ 0, t.generation + 1 }, { back.ordinal, back.generation })
    assert.equals("EPERM", r["self.child"])
  end)

  it("tells two processes' thread 0 apart by the parent frame", function()
    local a, b = H.report(d, 0, 0, 30000), H.report(d, 1, 0, 30000)
    local ta, tb = parse(a.thread), parse(b.thread)
    assert.same({ 0, 0 }, { ta.ordinal, tb.ordinal })
    assert.equals("process:subw/0@0", ta.parent)
    assert.equals("process:subw/1@0", tb.parent)
    assert.are_not.equals(ta.pid, tb.pid)
  end)

  it("registers forked children as [process p, process c] within the bound", function()
    local r = H.report(d, 0, 0, 30000)
    local pframe = "process:subw/0@0"
    for i = 1, 3 do assert.equals("exit 0", r["child." .. i], "child " .. i) end
    for i = 1, 2 do
      local c = child(0, 0, i)
      local me = parse(c.me)
      assert.same({ "process", i - 1, tonumber(c.pid) }, { me.kind, me.ordinal, me.pid })
      assert.are_not.equals(r.pid, c.pid)
      assert.same({ pframe, ("process:kid-%d/%d@%d"):format(i, i - 1, me.generation) }, me.context)
      assert.equals(pframe, me.parent)
      assert.equals(c.me, c.who, "the child's whoami is its sub-worker identity")
      assert.equals("true", c.again)
      assert.equals("ETOOLARGE", c.nested)
    end
    -- The thread holds one of 3 numbers and two children hold two.
    assert.equals("error EEXHAUSTED", child(0, 0, 3).me)
  end)

  it("gives a dead process's numbers back to its next generation", function()
    local old = parse(H.report(d, 1, 0, 30000)["thread.back"])
    local c = assert(H.sv.open(d.url, 5000))
    assert(c:restart("subw", 1, { expected_generation = 0 }))
    c:close()
    local r = H.report(d, 1, 1, 30000)
    local t = parse(r.thread)
    assert.equals("process:subw/1@1", t.parent)
    assert.equals(0, t.ordinal)
    assert.is_true(t.generation > old.generation, "sub-generations keep growing")
  end)

  it("refuses outside a worker, with no round trip", function()
    local out = H.lua_sub([[
      local sv = require "supervise"
      local _, e1 = sv.register_thread("x")
      local _, e2 = sv.register_child()
      local ok = pcall(sv.register_thread, ("x"):rep(65))
      io.write(e1.name, " ", e2.name, " ", tostring(ok))
    ]], "env -u SUPERVISE_URL")
    assert.equals("ENOTWORKER ENOTWORKER false", out)
  end)
end)
