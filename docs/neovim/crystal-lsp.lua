-- crystal-lsp in Neovim (0.7 or newer): code lenses of inserted blocks, and "compare" in
-- Neovim's own diff mode. Load it after starting the client, e.g. `dofile(path)` or copy it into
-- your config. tests/real_clients/test_neovim.py runs this very file.
--
-- * Lenses: crystal scores each block that lands in one edit (a paste, an accepted completion,
--   an agent's edit) and answers textDocument/codeLens with its verdict. Neovim before 0.10 does
--   not act on workspace/codeLens/refresh, so ask for lenses when the buffer settles.
-- * Compare: the lens command, the "Compare with the other copy" code action and the hover's link
--   are `crystal.compare`; the server answers both ranges' texts, shown here side by side in a
--   new tab with :diffthis (the other copy on the left). `vim.lsp.codelens.run()` on a lens line
--   runs it.
local M = {}

--- Refresh the buffer's code lenses when it settles (attach once per buffer).
function M.attach_lenses(bufnr)
  vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave', 'TextChanged' }, {
    buffer = bufnr,
    callback = function() vim.lsp.codelens.refresh() end,
  })
end

local function lines(text)
  local out = vim.split(text, '\n', { plain = true })
  if out[#out] == '' then table.remove(out) end
  return out
end

local function show(side, filetype, first)
  if not first then vim.cmd('vnew') end
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines(side.text))
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  pcall(vim.api.nvim_buf_set_name, buf, 'crystal://' .. side.label)
  vim.cmd('diffthis')
end

vim.lsp.commands['crystal.compare'] = function(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local spec = vim.deepcopy(command.arguments[1])
  spec.goTo = false -- the texts only: the diff is shown here
  local filetype = vim.bo[ctx.bufnr or 0].filetype
  client.request('workspace/executeCommand', { command = command.command, arguments = { spec } },
    function(err, result)
      if err or not result then
        vim.notify('crystal.compare: ' .. (err and err.message or 'no answer'), vim.log.levels.WARN)
        return
      end
      vim.cmd('tabnew')
      show(result.right, filetype, true) -- this copy on the right ...
      show(result.left, filetype, false) -- ... the other copy (vnew opens it on the left)
    end, ctx.bufnr)
end

return M
