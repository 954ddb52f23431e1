-- supervise-scm-1.rockspec — the Lua 5.4 binding of libsupervise.
--
-- A C module built by luarocks' builtin backend against an installed (or
-- built) libsupervise, and the Lua files it runs when it loads (lua/). No
-- dependency but Lua itself, so luarocks never needs a server: install with
--   luarocks --lua-version=5.4 make --deps-mode=none supervise-scm-1.rockspec \
--     SUPERVISE_INCDIR=/prefix/include SUPERVISE_LIBDIR=/prefix/lib
-- (both default to luarocks' search of /usr/local and /usr).
rockspec_format = "3.0"
package = "supervise"
version = "scm-1"
source = {
   url = "git+file:///dev/null", -- built from a checkout with `luarocks make`
}
description = {
   summary = "Lua binding of libsupervise: durable, bounded worker identity",
   detailed = [[
      A worker started by supervised asks "which worker am I?" and gets its
      group, an ordinal in 0..N-1 and a generation, live over the
      supervise.v1 protocol or from its environment with no round trip.
   ]],
}
dependencies = {
   "lua >= 5.4",
}
external_dependencies = {
   SUPERVISE = {
      header = "supervise/client.h",
      library = "supervise",
   },
}
build = {
   type = "builtin",
   modules = {
      -- The C module: one file per family (src/lsv.h), entry src/module.c.
      supervise = {
         sources = {
            "src/module.c",
            "src/activity.c",
            "src/admin.c",
            "src/client.c",
            "src/clock.c",
            "src/drain.c",
            "src/enums.c",
            "src/errors.c",
            "src/events.c",
            "src/identity.c",
            "src/leases.c",
            "src/readiness.c",
            "src/scope.c",
            "src/subworkers.c",
            "src/values.c",
            "src/workers.c",
         },
         libraries = { "supervise" },
         incdirs = { "$(SUPERVISE_INCDIR)" },
         libdirs = { "$(SUPERVISE_LIBDIR)" },
      },
      -- Its Lua parts, installed on package.path (share/lua/5.4/supervise/)
      -- and run by the C module when it loads: not modules of their own.
      ["supervise.leases"] = "lua/supervise/leases.lua",
      ["supervise.drain"] = "lua/supervise/drain.lua",
      -- The codes, kinds and states of the C headers, generated from them
      -- (scripts/gen_enums.py, docs/bindings.md): require "supervise.enums".
      ["supervise.enums"] = "src/supervise/enums.lua",
   },
}
