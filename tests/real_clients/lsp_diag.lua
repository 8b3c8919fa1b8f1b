-- Headless Neovim 0.7 as a real LSP client of crystal-lsp (see test_neovim.py).
-- Starts the server with vim.lsp.start_client, attaches it to the buffer of the file given on
-- the command line, waits for a publishDiagnostics that has diagnostics, and prints one JSON line:
--   {"ok": bool, "count": n, "diagnostics": [...vim.diagnostic.get()...], "raw": [...LSP diagnostics...]}
-- "raw" keeps what vim.diagnostic drops, such as relatedInformation.
-- Usage: nvim --headless --clean -c "luafile lsp_diag.lua" FILE
-- Environment: LSP_CMD (the server command, split at spaces), LSP_ROOT (workspace folder),
-- LSP_TIMEOUT_MS (default 30000).
local server_cmd = vim.split(os.getenv('LSP_CMD') or 'crystal-lsp serve', ' ', { trimempty = true })
local timeout_ms = tonumber(os.getenv('LSP_TIMEOUT_MS') or '30000')

local function out(s) io.stdout:write(s .. '\n') end

local bufnr = vim.api.nvim_get_current_buf()
local fname = vim.api.nvim_buf_get_name(bufnr)
local root = os.getenv('LSP_ROOT') or vim.fn.fnamemodify(fname, ':p:h')

local raw = {}
local client_id = vim.lsp.start_client({
  name = 'crystal-lsp',
  cmd = server_cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
  init_options = { settings = { debounceMs = 0 } },
  handlers = {
    ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
      if result and result.diagnostics and #result.diagnostics > 0 then
        raw = result.diagnostics
      end
    end,
  },
  on_exit = function(code, signal)
    io.stderr:write(('server exited code=%s signal=%s\n'):format(code, signal))
  end,
})
if not client_id then
  out('{"ok": false, "error": "start_client failed"}')
  vim.cmd('cquit 2')
end
vim.lsp.buf_attach_client(bufnr, client_id) -- didOpen once the server is initialized

local ok = vim.wait(timeout_ms, function() return #raw > 0 end, 50)
local simple = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(simple, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message, source = d.source, code = d.code,
  })
end
out(vim.fn.json_encode({ ok = ok, count = #simple, diagnostics = simple, raw = raw }))

vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
if ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
