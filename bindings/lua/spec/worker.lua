-- spec/worker.lua — the worker the busted specs run under supervised.
--
-- It learns who it is every way the binding offers and writes it, one
-- "key=value" per line, to $SV_LUA_OUT/<ordinal>-<generation>.report
-- (through a temporary name and a rename, so readers never see half a
-- report). Then it blocks until SIGTERM ends it.
--
-- Keys: pid (read from /proc/self/stat, not from the binding), env.* (the
-- raw SUPERVISE_* variables), live.* (supervise.whoami on the default
-- client), own.* (whoami on a client of its own, closed by <close>),
-- fromenv.* (supervise.from_env), hello.*, child.1..4 (what four
-- sub-processes, started at once, got from whoami), and *_error for failures.
local sv = require "supervise"

local out_dir = assert(os.getenv("SV_LUA_OUT"), "SV_LUA_OUT is not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "=" .. tostring(v) end

local function put_identity(prefix, id)
  for _, k in ipairs { "group", "ordinal", "generation", "kind", "pid",
                       "purpose", "supervisor_id", "group_size", "source" } do
    if id[k] ~= nil then put(prefix .. "." .. k, id[k]) end
  end
  put(prefix .. ".frames", #id.context)
  for i, f in ipairs(id.context) do
    put(("%s.context.%d"):format(prefix, i), ("%s:%s/%d"):format(f.kind, f.name, f.ordinal))
  end
  put(prefix .. ".parent", id.parent and "yes" or "none")
end

local f = assert(io.open("/proc/self/stat"))
put("pid", f:read("l"):match("^(%d+)"))
f:close()
for _, k in ipairs { "GROUP", "ORDINAL", "GENERATION", "PURPOSE", "SUPERVISOR_ID", "URL" } do
  put("env." .. k, os.getenv("SUPERVISE_" .. k) or "")
end

-- Module-level call: the default client, opened lazily from $SUPERVISE_URL.
local live, err = sv.whoami(5000)
if live then put_identity("live", live) else put("live_error", err) end

-- A client of our own, closed when the block ends.
do
  local c <close>, oerr = sv.open(nil, 5000)
  if c then
    local id, werr = c:whoami(5000)
    if id then put_identity("own", id) else put("own_error", werr) end
    local h, herr = c:hello(5000)
    if h then
      put("hello.version", h.version)
      put("hello.server_name", h.server_name)
      put("hello.supervisor_id", h.supervisor_id)
    else
      put("hello_error", herr)
    end
  else
    put("own_error", oerr)
  end
end

local env_id, eerr = sv.from_env()
if env_id then put_identity("fromenv", env_id) else put("fromenv_error", eerr) end

-- Four sub-processes at once (fork + exec through io.popen): each asks
-- whoami and gets the identity of its nearest supervised ancestor, us.
local lua = os.getenv("SV_LUA") or "lua5.4"
local code = 'local sv = require "supervise" local id, err = sv.whoami(5000) '
  .. 'if id then io.write(id.group, " ", id.ordinal, " ", id.generation, " ", id.pid) '
  .. 'else io.write("error ", tostring(err)) end'
local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local pipes = {}
for i = 1, 4 do
  pipes[i] = assert(io.popen(quote(lua) .. " -e " .. quote(code) .. " 2>&1", "r"))
end
for i = 1, 4 do
  put("child." .. i, (pipes[i]:read("a"):gsub("\n", " ")))
  pipes[i]:close()
end

local id = live or env_id or {}
local name = ("%s/%s-%s.report"):format(out_dir, tostring(id.ordinal), tostring(id.generation))
local tmp = name .. ".tmp"
local w = assert(io.open(tmp, "w"))
w:write(table.concat(lines, "\n"), "\n")
w:close()
assert(os.rename(tmp, name))

-- Nothing else to do: block until SIGTERM (default action) ends us.
while true do sv.sleep(3600 * 1000) end
