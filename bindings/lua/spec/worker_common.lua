-- spec/worker_common.lua — what the spec workers share. Each worker is its
-- own lua5.4 process started by supervised; it loads this file with dofile
-- from its own directory (arg[0]). Not a spec: busted runs *_spec.lua only.
local C = {}

-- self_pid is this process's pid, from /proc/self/stat (Lua has no getpid).
function C.self_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("l"):match("^(%d+)")
  f:close()
  return pid
end

-- write_lines writes lines to path atomically (a temporary file, then a
-- rename): the spec sees the whole report or none.
function C.write_lines(path, lines)
  local f = assert(io.open(path .. ".tmp", "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  assert(os.rename(path .. ".tmp", path))
end

return C
