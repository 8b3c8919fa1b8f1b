-- Headless Neovim 0.7: blocks pasted into a buffer get crystal-lsp's code lenses, and the lens
-- runs the documented diff recipe (docs/neovim/crystal-lsp.lua). Starts the server, waits for the
-- first diagnostics publication (the folder is indexed), appends a renamed copy of a function of
-- the workspace (PASTE_COPY, a file of lines) and then a new function (PASTE_NEW) with
-- nvim_buf_set_lines (one didChange each), asks for lenses with vim.lsp.codelens.refresh() until
-- each one's lens arrives, runs the copy's lens (vim.lsp.codelens.run()) and reads the diff tab
-- the recipe opens. Prints one JSON line:
--   {"ok": bool, "copy": {...lens...}, "new": {...}, "diff": {"windows", "left", "right"}}
-- Environment: as lsp_diag.lua, plus CRYSTAL_RECIPE, PASTE_COPY, PASTE_NEW.
local server_cmd = vim.split(os.getenv('LSP_CMD') or 'crystal-lsp serve', ' ', { trimempty = true })
local timeout_ms = tonumber(os.getenv('LSP_TIMEOUT_MS') or '30000')
local function out(s) io.stdout:write(s .. '\n') end

local bufnr = vim.api.nvim_get_current_buf()
local root = os.getenv('LSP_ROOT')
local published = 0
local client_id = vim.lsp.start_client({
  name = 'crystal-lsp',
  cmd = server_cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
  init_options = { settings = { debounceMs = 100 } },
  handlers = {
    ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
      published = published + 1
    end,
  },
})
if not client_id then
  out('{"ok": false, "error": "start_client failed"}')
  vim.cmd('cquit 2')
end
vim.lsp.buf_attach_client(bufnr, client_id)
local recipe = dofile(os.getenv('CRYSTAL_RECIPE'))
recipe.attach_lenses(bufnr)

local function read(path) return vim.fn.readfile(path) end

-- wait for a lens whose title matches `pattern`, asking for lenses again every 150 ms
local function lens_like(pattern)
  local found = nil
  local started = vim.loop.hrtime()
  local function seen()
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
      if lens.command and lens.command.title:find(pattern) then
        found = lens
        return true
      end
    end
    return false
  end
  while not found and (vim.loop.hrtime() - started) / 1e6 < timeout_ms do
    vim.lsp.codelens.refresh()
    vim.wait(150, seen, 10)
  end
  if not found then return nil end
  return { title = found.command.title, line = found.range.start.line, command = found.command.command,
    ms = (vim.loop.hrtime() - started) / 1e6 }
end

local report = { ok = false }
if vim.wait(timeout_ms, function() return published > 0 end, 20) then
  local last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, last, last, false, read(os.getenv('PASTE_COPY')))
  report.copy = lens_like('copy of')
  last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, last, last, false, read(os.getenv('PASTE_NEW')))
  report.new = lens_like('^new code')
  if report.copy then
    vim.api.nvim_win_set_cursor(0, { report.copy.line + 1, 0 })
    vim.lsp.codelens.run()
    local opened = vim.wait(timeout_ms, function() return vim.fn.tabpagenr('$') == 2 end, 20)
    if opened then
      local windows = vim.api.nvim_tabpage_list_wins(0)
      local texts = {}
      for _, win in ipairs(windows) do
        local buf = vim.api.nvim_win_get_buf(win)
        table.insert(texts, { diff = vim.wo[win].diff, name = vim.api.nvim_buf_get_name(buf),
          lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) })
      end
      report.diff = { windows = #windows, sides = texts }
    end
  end
  report.ok = report.copy ~= nil and report.new ~= nil and report.diff ~= nil
  if not report.ok then report.messages = vim.fn.execute('messages') end
end
out(vim.fn.json_encode(report))
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
if report.ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
