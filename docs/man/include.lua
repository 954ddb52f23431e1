-- include.lua — pandoc Lua filter that builds the man pages of docs/man/
-- out of the project's docs, so that each fact is written once.
--
-- A Div with an `include` attribute is replaced by the blocks of that
-- Markdown file (a path relative to docs/man/):
--
--   ::: {include="../config.md" shift="0"}
--   :::
--
-- The included file's leading level-1 heading (its title) is dropped; its
-- other headings are shifted by `shift` levels (default 0: "##" stays a
-- man subsection, .SS; -1 makes "##" a section, .SH). Links are replaced
-- by their text everywhere: a man page cannot follow "config.md" or
-- "#exit-status", and the page names what it refers to in its words.

local here = PANDOC_STATE.input_files[1]:match("^(.*)/") or "."

-- read_doc returns the blocks of the Markdown file at path, or raises an
-- error naming it (a missing include fails the build, never a short page).
local function read_doc(path)
  local f, err = io.open(path, "r")
  if f == nil then
    error("include.lua: cannot read " .. path .. ": " .. tostring(err))
  end
  local text = f:read("a")
  f:close()
  return pandoc.read(text, "markdown").blocks
end

-- include_div replaces an include Div by the included blocks.
local function include_div(div)
  local path = div.attributes["include"]
  if path == nil then
    return nil
  end
  local shift = tonumber(div.attributes["shift"] or "0")
  local blocks = read_doc(here .. "/" .. path)
  local out = {}
  for i, b in ipairs(blocks) do
    if b.t == "Header" and b.level == 1 and i == 1 then
      -- the doc's title: the man page has its own NAME
    elseif b.t == "Header" then
      b.level = math.max(1, b.level + shift)
      table.insert(out, b)
    else
      table.insert(out, b)
    end
  end
  return pandoc.walk_block(pandoc.Div(out), { Link = function(l) return l.content end })
    .content
end

-- cell_blocks returns the blocks of a simple table's cell.
local function cell_blocks(cell)
  return cell
end

-- table_to_list turns a table into a definition list: the first cell of a
-- row is the term; the other cells are its definition, each but the last
-- labelled with its column's header ("type: int; default: 5000"). Wide
-- tables do not fit a terminal: tbl warns and cuts them, a list reflows.
local function table_to_list(tbl)
  local t = pandoc.utils.to_simple_table(tbl)
  local heads = {}
  for i, h in ipairs(t.headers) do
    heads[i] = pandoc.utils.stringify(h)
  end
  local items = {}
  for _, row in ipairs(t.rows) do
    local term = pandoc.utils.blocks_to_inlines(cell_blocks(row[1]))
    local labels = pandoc.List()
    local defs = pandoc.List()
    for i = 2, #row do
      local inl = pandoc.utils.blocks_to_inlines(cell_blocks(row[i]))
      if i < #row and #row > 2 then
        if #labels > 0 then
          labels:insert(pandoc.Str(";"))
          labels:insert(pandoc.Space())
        end
        labels:insert(pandoc.Emph({ pandoc.Str(heads[i] .. ":") }))
        labels:insert(pandoc.Space())
        labels:extend(inl)
      else
        defs:insert(pandoc.Para(inl))
      end
    end
    if #labels > 0 then
      defs:insert(1, pandoc.Para(labels))
    end
    table.insert(items, { term, { defs } })
  end
  return pandoc.DefinitionList(items)
end

return {
  { Div = include_div },
  { Table = table_to_list },
  { Link = function(l) return l.content end },
}
