-- durability_spec.lua — Hello's durability (docs/durability.md) through the
-- module: known and ok from a healthy supervisor; lost, with its reason,
-- while the state directory is full, and back once there is room again.
--
-- The full case puts state_dir on a 64 KiB tmpfs of its own, as
-- tests/integration/integration_durability.c does. Mounting needs root
-- (CAP_SYS_ADMIN); without it the case is pending (busted's skip), saying
-- why. It fills the tmpfs to the last byte, restarts workers (each restart
-- is journaled) until Hello says durability is lost, bounded by a number of
-- restarts, then removes the filler and waits, with a deadline, for the
-- daemon's once-a-second snapshot to bring durability back. Workers are
-- /bin/sleep.
local H = require "spec.helper"
local sv = H.sv
local gettime = require("system").gettime

local GROUP = "sleepers"
local NW = 2
local MAX_CHURN = 200 -- restarts tried before durability must be lost
local RESTORE_MS = 15000 -- the daemon retries a snapshot every second

local function groups()
  return { { name = GROUP, count = NW, argv = { "/bin/sleep", "3600" },
             purpose = "sleep while the lua binding reads durability" } }
end

-- now_ms: wall-clock milliseconds since the Unix epoch.
local function now_ms()
  return math.floor(gettime() * 1000)
end

-- mount_tmpfs mounts a 64 KiB tmpfs on path; returns nil or why it cannot.
local function mount_tmpfs(path)
  local uid = H.run("id -u"):gsub("%s+$", "")
  if uid ~= "0" then
    return "not root: mounting a tmpfs for state_dir needs CAP_SYS_ADMIN"
  end
  local out, ok = H.run("mount -t tmpfs -o size=64k,mode=0700 tmpfs " .. H.quote(path) .. " 2>&1")
  if not ok then
    return ("cannot mount a tmpfs on %s: %s"):format(path, (out:gsub("%s+$", "")))
  end
  return nil
end

-- fill writes path/filler until the filesystem refuses a byte.
local function fill(path)
  local f = assert(io.open(path .. "/filler", "wb"))
  f:setvbuf("no")
  local chunk = ("x"):rep(4096)
  while true do
    local ok, msg, code = f:write(chunk)
    if not ok then
      assert.equals(28, code, msg) -- ENOSPC
      if #chunk == 1 then break end
      chunk = chunk:sub(1, #chunk // 2)
    end
  end
  f:close()
end

-- restart restarts one worker and waits until its successor runs.
local function restart(c, ordinal)
  local gen = assert(c:status(GROUP, ordinal)).generation
  assert(c:restart(GROUP, ordinal, { expected_generation = gen }))
  H.wait_for(function()
    local w = assert(c:status(GROUP, ordinal))
    return w.generation > gen and w.state == "running"
  end, 10000, ("%s/%d after generation %d"):format(GROUP, ordinal, gen))
end

describe("hello's durability", function()
  it("is known and ok from a healthy supervisor", function()
    local before = now_ms()
    local d = H.start { groups = groups() }
    finally(function() H.stop(d) end)
    local c <close> = assert(sv.open(d.url, 5000))
    local h = assert(c:hello(5000))
    local found = false
    for _, f in ipairs(h.features) do found = found or f == "durable.status" end
    assert.is_true(found)
    assert.is_table(h.durability)
    assert.is_true(h.durability.known)
    assert.is_true(h.durability.ok)
    assert.equals("", h.durability.reason)
    assert.equals("", h.durability.message)
    assert.is_true(math.type(h.durability.since_ms) == "integer")
    assert.is_true(h.durability.since_ms >= before - 1000)
    assert.is_true(h.durability.since_ms <= now_ms() + 1000)
  end)

  it("is lost with ENOSPC on a full state_dir, and comes back", function()
    local top = H.tmpdir("sv-lua-dur")
    local mnt = top .. "/state"
    assert(os.execute("mkdir " .. H.quote(mnt)))
    local why = mount_tmpfs(mnt)
    if why then
      H.rmtree(top)
      pending(why)
      return
    end
    local d
    finally(function()
      H.stop(d)
      os.execute("umount -l " .. H.quote(mnt) .. " 2>/dev/null")
      H.rmtree(top)
    end)
    d = H.start { groups = groups(), top = ('state_dir = "%s";'):format(mnt) }
    local c <close> = assert(sv.open(d.url, 5000))
    H.wait_for(function()
      local ws = assert(c:list(GROUP))
      for _, w in ipairs(ws) do
        if w.state ~= "running" then return false end
      end
      return #ws == NW
    end, 10000, "workers running")
    assert.is_true(assert(c:hello()).durability.ok)
    local broke = now_ms()
    fill(mnt)
    local dur
    for n = 0, MAX_CHURN - 1 do
      restart(c, n % NW)
      dur = assert(c:hello()).durability
      if not dur.ok then break end
    end
    assert.is_true(dur.known)
    assert.is_false(dur.ok, "still durable after " .. MAX_CHURN .. " restarts")
    assert.equals("ENOSPC", dur.reason)
    assert.matches("No space left on device", dur.message, 1, true)
    assert.is_true(dur.since_ms >= broke)
    assert.is_true(dur.since_ms <= now_ms() + 1000)
    -- Supervision goes on meanwhile.
    restart(c, 0)
    assert.is_false(assert(c:hello()).durability.ok)
    -- Room again: a snapshot succeeds within a few seconds.
    assert(os.remove(mnt .. "/filler"))
    dur = H.wait_for(function()
      local x = assert(c:hello()).durability
      return x.ok and x or nil
    end, RESTORE_MS, "durability back")
    assert.equals("", dur.reason)
    assert.equals("", dur.message)
  end)
end)
