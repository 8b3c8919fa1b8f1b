-- Headless Neovim 0.7 (no window/showDocument) runs crystal-lsp's "Go to the other copy" action.
-- Starts the server with init_options = {} (an empty Lua table, sent as []), waits for the
-- near-duplicate diagnostic, asks for code actions on it, executes the "Go to the other copy"
-- command and collects window/showMessage. Prints one JSON line:
--   {"ok": bool, "titles": [...], "result": {...}, "messages": [...]}
-- Usage and environment: as lsp_diag.lua.
local server_cmd = vim.split(os.getenv('LSP_CMD') or 'crystal-lsp serve', ' ', { trimempty = true })
local timeout_ms = tonumber(os.getenv('LSP_TIMEOUT_MS') or '30000')

local function out(s) io.stdout:write(s .. '\n') end

local bufnr = vim.api.nvim_get_current_buf()
local fname = vim.api.nvim_buf_get_name(bufnr)
local root = os.getenv('LSP_ROOT') or vim.fn.fnamemodify(fname, ':p:h')

local raw, messages = {}, {}
local client_id = vim.lsp.start_client({
  name = 'crystal-lsp',
  cmd = server_cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
  init_options = {},
  handlers = {
    ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
      if result and result.diagnostics and #result.diagnostics > 0 then
        raw = result.diagnostics
      end
    end,
    ['window/showMessage'] = function(_, result)
      table.insert(messages, result.message)
    end,
  },
})
if not client_id then
  out('{"ok": false, "error": "start_client failed"}')
  vim.cmd('cquit 2')
end
vim.lsp.buf_attach_client(bufnr, client_id)

local ok = vim.wait(timeout_ms, function() return #raw > 0 end, 50)
local titles, result = {}, vim.NIL
if ok then
  local client = vim.lsp.get_client_by_id(client_id)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = raw[1].range,
    context = { diagnostics = raw },
  }
  local actions = client.request_sync('textDocument/codeAction', params, timeout_ms, bufnr)
  local go = nil
  for _, action in ipairs((actions and actions.result) or {}) do
    table.insert(titles, action.title)
    if go == nil and action.command then go = action.command end
  end
  if go then
    local done = client.request_sync('workspace/executeCommand',
      { command = go.command, arguments = go.arguments }, timeout_ms, bufnr)
    result = (done and done.result) or vim.NIL
    vim.wait(5000, function() return #messages > 0 and messages[#messages]:find('other copy') ~= nil end, 50)
  end
end
out(vim.fn.json_encode({ ok = ok, titles = titles, result = result, messages = messages }))

vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
if ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
