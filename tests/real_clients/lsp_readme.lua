-- Headless Neovim with the README's snippet loaded as written (--cmd "luafile snippet.lua"):
-- waits until the buffer given on the command line has diagnostics and prints one JSON line
--   {"ok": bool, "root": the client's root_dir, "diagnostics": [...vim.diagnostic.get()...]}
-- Environment: LSP_TIMEOUT_MS (default 30000).
local timeout_ms = tonumber(os.getenv('LSP_TIMEOUT_MS') or '30000')
local bufnr = vim.api.nvim_get_current_buf()
local ok = vim.wait(timeout_ms, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
local simple, root = {}, nil
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(simple, { lnum = d.lnum, message = d.message, source = d.source })
end
for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do root = client.config.root_dir end
io.stdout:write(vim.fn.json_encode({ ok = ok, root = root, diagnostics = simple }) .. '\n')
vim.lsp.stop_client(vim.lsp.get_active_clients())
vim.wait(5000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
if ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
