-- enums_dump.lua: the Lua binding's view of the C enums, one fact a line.
--
-- Run by scripts/check_enums.py (ctest lua.enums) with LUA_CPATH naming the
-- built module and LUA_PATH naming src/ (for the generated supervise.enums),
-- which compares every line with the public headers. Lines are
-- tab-separated:
--   error CODE C_NAME C_NAME 1 TEXT   supervise.<NAME> error constants; the
--                                     text is supervise.enums' copy
--   enum  C_TYPE VALUE NAME           supervise.enums.kinds / .states
--   const SV_NAME VALUE               a constant the module exports
--   lib   CODE NAME TEXT              supervise.err_name / supervise.strerror
--   kindname 1 NAME                   the kind of from_env()'s identity (the
--                                     C module names kinds itself; the
--                                     checker sets SUPERVISE_* for this)
local sv = require "supervise"
local enums = require "supervise.enums"

local function line(...)
  print(table.concat({ ... }, "\t"))
end

local texts = {}
for _, row in ipairs(enums.errors) do
  texts[row[1]] = row[3]
end
-- every error constant the C module exports (ENOTFOUND = 4, ...)
local codes = {}
for k, v in pairs(sv) do
  if type(v) == "number" and k:match("^E[A-Z]+$") then
    codes[#codes + 1] = v
    line("error", v, k, k, 1, texts[v] or "(not in supervise.enums)")
  end
end
table.sort(codes)
for ctype, t in pairs({ sv_kind = enums.kinds, sv_state = enums.states }) do
  for value, name in pairs(t) do
    line("enum", ctype, value, name:upper())
  end
end
line("const", "SV_TIMEOUT_INFINITE", sv.TIMEOUT_INFINITE)
line("const", "SV_PROTOCOL_VERSION", sv.PROTOCOL_VERSION)
for name, value in pairs(enums.constants) do
  line("const", "SV_" .. name, value)
end
for _, code in ipairs(codes) do
  line("lib", code, sv.err_name(code), sv.strerror(code))
end
local id = assert(sv.from_env())
line("kindname", 1, id.kind)
