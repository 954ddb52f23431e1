-- spec/helper.lua — fixture of the Lua binding's busted specs.
--
-- Starts a real `supervised` (path from $SUPERVISED) with a temporary config
-- and a temporary socket_dir, with groups whose workers run spec/worker.lua;
-- each worker writes what it learned to OUT/<ordinal>-<generation>.report
-- (written to a temporary name, then renamed, so a report is read whole).
--
-- Synchronisation: `supervised` without --foreground returns only once its
-- socket listens, which is the start event; everything else (reports, exits)
-- has no notification a Lua 5.4 process can wait on, so it is polled with a
-- deadline (wait_for). The daemon is stopped by its pid (SIGTERM, then a
-- deadline); only processes this file started are signalled.
local sv = require "supervise"

local H = { sv = sv }

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
H.quote = shell_quote

-- The directory of this file, to find worker.lua from any working directory.
local function spec_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  local dir = src:match("^(.*)/[^/]*$") or "."
  if dir:sub(1, 1) ~= "/" then
    local p = io.popen("pwd")
    dir = p:read("l") .. "/" .. dir
    p:close()
  end
  return dir
end
H.spec_dir = spec_dir()

-- The Lua interpreter used for workers and sub-processes.
H.lua = os.getenv("SV_LUA") or "lua5.4"

-- run(cmd) runs a shell command and returns its whole stdout and whether it
-- exited 0.
function H.run(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok == true
end

function H.read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end
H.exists = exists

-- now_ms: the monotonic clock of lua-system (a dependency of busted).
local monotime = require("system").monotime
function H.now_ms()
  return math.floor(monotime() * 1000)
end

-- wait_for(fn, timeout_ms, what) polls fn every 20 ms until it returns a
-- true value (returned) or the deadline passes; then raises.
function H.wait_for(fn, timeout_ms, what)
  local deadline = H.now_ms() + timeout_ms
  while true do
    local v = fn()
    if v then return v end
    if H.now_ms() >= deadline then
      error(("timed out after %d ms waiting for %s"):format(timeout_ms, what), 2)
    end
    sv.sleep(20)
  end
end

-- parse_report turns "key=value" lines into a table (values are strings).
function H.parse_report(text)
  local t = {}
  for line in text:gmatch("[^\n]+") do
    local k, v = line:match("^([%w_.]+)=(.*)$")
    if k then t[k] = v end
  end
  return t
end

-- report(d, ordinal, generation, timeout_ms) waits for and parses the
-- report of that worker.
function H.report(d, ordinal, generation, timeout_ms)
  local path = ("%s/%d-%d.report"):format(d.out, ordinal, generation)
  H.wait_for(function() return exists(path) end, timeout_ms or 10000,
             "report " .. path)
  return H.parse_report(assert(H.read_file(path)))
end

local function alive(pid)
  local stat = H.read_file("/proc/" .. pid .. "/stat")
  if not stat then return false end
  -- A zombie has exited; it only waits for its (new) parent to reap it.
  local state = stat:match("^%d+ %b() (%a)")
  return state ~= nil and state ~= "Z"
end
H.alive = alive

-- start{groups = {{name=, count=, purpose=, script= or argv=, options=}, ...},
-- top = "pools = (...);"}
-- (script: a Lua file run by H.lua, default worker.lua; options: other keys
-- of docs/config.md, {ready = true, watchdog_ms = 500}) writes a config, starts
-- supervised in the background and returns the daemon:
-- {dir, out, url, pid, conf, log}.
-- tmpdir(name) makes a new private directory $TMPDIR/NAME.XXXXXX (/tmp
-- when TMPDIR is unset) and returns its path; the caller removes it
-- (H.rmtree).
function H.tmpdir(name)
  local dir = H.run("mktemp -d " .. '"${TMPDIR:-/tmp}"/' .. name .. ".XXXXXX"):gsub("%s+$", "")
  assert(dir ~= "", "mktemp failed")
  return dir
end

-- rmtree(path) removes path and everything below it.
function H.rmtree(path)
  os.execute("rm -rf " .. shell_quote(path))
end

function H.start(opts)
  local daemon = assert(os.getenv("SUPERVISED"), "SUPERVISED is not set")
  local dir = H.tmpdir("sv-lua-spec")
  local d = {
    dir = dir,
    sock = dir .. "/sock",
    out = dir .. "/out",
    conf = dir .. "/supervised.conf",
    log = dir .. "/supervised.log",
  }
  d.url = "ipc://" .. d.sock .. "/control.sock"
  assert(H.run("mkdir " .. shell_quote(d.out)) ~= nil)
  local worker = H.spec_dir .. "/worker.lua"
  local lines = {
    "# written by bindings/lua/spec/helper.lua",
    ('socket_dir = "%s";'):format(d.sock),
    ('log_file = "%s";'):format(d.log),
    "stop_timeout_ms = 3000;",
  }
  -- opts.top: more top-level config text (pools), "{dir}" is d.dir.
  if opts.top then lines[#lines + 1] = (opts.top:gsub("{dir}", dir)) end
  lines[#lines + 1] = "groups = ("
  for i, g in ipairs(opts.groups) do
    lines[#lines + 1] = "  {"
    lines[#lines + 1] = ('    name = "%s";'):format(g.name)
    local argv = g.argv or { H.lua, g.script or worker }
    local quoted = {}
    for k, a in ipairs(argv) do quoted[k] = ('"%s"'):format(a) end
    lines[#lines + 1] = ("    argv = [ %s ];"):format(table.concat(quoted, ", "))
    lines[#lines + 1] = ("    count = %d;"):format(g.count)
    lines[#lines + 1] = ('    purpose = "%s";'):format(g.purpose or ("lua spec " .. g.name))
    lines[#lines + 1] = "    min_uptime_ms = 0;"
    local keys = {}
    for k in pairs(g.options or {}) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = g.options[k]
      lines[#lines + 1] = ("    %s = %s;"):format(k, type(v) == "string" and ('"%s"'):format(v) or tostring(v))
    end
    lines[#lines + 1] = ('    env = [ "LUA_CPATH=%s", "SV_LUA_OUT=%s", "SV_LUA=%s" ];')
      :format(package.cpath, d.out, H.lua)
    lines[#lines + 1] = i < #opts.groups and "  }," or "  }"
  end
  lines[#lines + 1] = ");"
  local f = assert(io.open(d.conf, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  -- In the background, supervised returns once its socket listens.
  local out, ok = H.run(shell_quote(daemon) .. " --config " .. shell_quote(d.conf) .. " 2>&1")
  if not ok then
    error("supervised did not start: " .. out .. (H.read_file(d.log) or ""))
  end
  local pid = tonumber((H.read_file(d.sock .. "/supervised.pid") or ""):match("%d+"))
  assert(pid, "no pid file in " .. d.sock)
  d.pid = pid
  return d
end

-- stop(d) sends SIGTERM to the daemon this file started and waits for it to
-- exit (10 s); past the deadline it sends SIGKILL and raises. Removes the
-- temporary directory once the daemon is gone.
function H.stop(d)
  if not d or not d.pid then return end
  local pid = d.pid
  d.pid = nil
  os.execute("kill -TERM " .. pid .. " 2>/dev/null")
  local ok = pcall(H.wait_for, function() return not alive(pid) end, 10000,
                   "supervised " .. pid .. " to exit")
  if not ok then
    os.execute("kill -KILL " .. pid .. " 2>/dev/null")
    io.stderr:write(H.read_file(d.log) or "", "\n")
    error("supervised " .. pid .. " did not exit within 10 s of SIGTERM")
  end
  if os.getenv("SV_LUA_KEEP") == nil then
    H.rmtree(d.dir)
  end
end

-- fd_count: the number of open file descriptors of this process.
function H.fd_count()
  local lfs = require "lfs"
  local n = 0
  for name in lfs.dir("/proc/self/fd") do
    if name ~= "." and name ~= ".." then n = n + 1 end
  end
  return n
end

-- lua_sub(code, env_prefix) runs code in a fresh interpreter (with
-- `env_prefix` such as "env -u SUPERVISE_URL") and returns its stdout.
function H.lua_sub(code, env_prefix)
  return H.run((env_prefix or "") .. " " .. shell_quote(H.lua) .. " -e " .. shell_quote(code) .. " 2>&1")
end

return H
