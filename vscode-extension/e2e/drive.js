// Drives the Crystal LSP extension in a real VS Code (code-server) with headless Chromium.
//
// Started by tests/ci/30-vscode-e2e.sh, which starts code-server with the .vsix installed, the
// fixture workspace and crystalLsp.interpreter pointing at the project's Python. Checks, both in
// the DOM and in the API-level dump the extension writes (CRYSTAL_LSP_E2E_DUMP):
//   1. the planted near-duplicate is in the Problems panel with its related location;
//   2. a setting change (severity) is applied live;
//   3. "Score selection against reference…" through the command palette, "best matches in the
//      workspace": scores in the notification equal the server's, n-grams are highlighted;
//   4. "Show trivially shared n-grams" and "Rebuild index";
//   5. (when FRESH_PYTHON is set) first run: the interpreter changes to a Python without the
//      server, the extension restarts, offers to install, we click Install, and it runs.
//   6. (before 5) blocks pasted in one edit: a renamed copy of a function gets a code lens naming
//      the original (the time from the paste is recorded), a new function "new code"; the lens
//      opens the diff view; "Show inserted code" lists both; the JSONL export is written; a
//      renamed copy written to the open file on disk (as an agent would) gets its lens too.
//   The hover's alignment must fit its box, and the "Compare with the other copy" quick fix
//   opens the diff view (1b), the renamed copy shown with the original's names under a header
//   listing the renaming. A copy under a hostile file name (Markdown: a command link, an
//   image, HTML) is shown as text in the hover, whose compare link (an id) still opens the diff (1c).
// Screenshots go to $SHOTS. Exit 0 on success, 1 on a failed check.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const env = (name, fallback) => {
    const v = process.env[name] ?? fallback;
    if (v === undefined) {
        throw new Error(`${name} is not set`);
    }
    return v;
};
const URL_ = env('CS_URL');
const SHOTS = env('SHOTS');
const DUMP = env('DUMP');
const WS = env('WS'); // the workspace folder; setting changes go to its .vscode/settings.json
const CHROMIUM = env('CHROMIUM', '/usr/bin/chromium');
const FRESH_PYTHON = process.env.FRESH_PYTHON || '';
const T_DIAG = Number(process.env.E2E_DIAG_TIMEOUT_MS || 180000);
const T_INSTALL = Number(process.env.E2E_INSTALL_TIMEOUT_MS || 300000);

const HYP = 'revenue.py';
const REF = 'pricing.py';

const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const results = [];
const check = (name, ok, detail) => {
    results.push({ name, ok: !!ok, detail });
    log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
};

const readJson = (name) => {
    try {
        return JSON.parse(fs.readFileSync(path.join(DUMP, name), 'utf8'));
    } catch {
        return undefined;
    }
};
const events = () => {
    try {
        return fs
            .readFileSync(path.join(DUMP, 'events.jsonl'), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l));
    } catch {
        return [];
    }
};
async function until(what, fn, timeoutMs, everyMs = 250) {
    const end = Date.now() + timeoutMs;
    for (;;) {
        const v = await fn();
        if (v) {
            return v;
        }
        if (Date.now() > end) {
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        }
        await new Promise((r) => setTimeout(r, everyMs));
    }
}
const crystalDiagnostics = (file) =>
    (readJson('diagnostics.json') || [])
        .filter((e) => e.uri.endsWith(`/${file}`))
        .flatMap((e) => e.diagnostics)
        .filter((d) => d.source === 'crystal');

// Workspace settings, as a user editing .vscode/settings.json would (the folder is watched).
function writeSettings(patch) {
    const file = path.join(WS, '.vscode', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const current = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
    fs.writeFileSync(file, JSON.stringify({ ...current, ...patch }, null, 2));
}

(async () => {
    const profile = fs.mkdtempSync(path.join(path.dirname(SHOTS), 'chromium-profile-'));
    const ctx = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1600, height: 1000 },
        deviceScaleFactor: 1,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(URL_).origin });
    const page = ctx.pages()[0] || (await ctx.newPage());
    const external = new Set();
    const outside = (r) => {
        const u = new URL(r.url());
        return !['127.0.0.1', 'localhost'].includes(u.hostname) && !['data:', 'blob:'].includes(u.protocol);
    };
    const note = (r, how) => {
        const origin = new URL(r.url()).origin;
        if (!external.has(origin)) {
            log(`request outside localhost (${how}):`, r.url().slice(0, 160));
        }
        external.add(origin);
    };
    // A webview's resources (the Markdown preview) are requested from
    // *.vscode-resource.vscode-cdn.net and answered by the webview's service worker from the
    // local server: only a response that did not come from a service worker left the machine.
    ctx.on('response', (resp) => {
        if (outside(resp.request()) && !resp.fromServiceWorker()) {
            note(resp.request(), 'answered by the network');
        }
    });
    ctx.on('requestfailed', (r) => {
        if (outside(r)) {
            note(r, 'failed');
        }
    });
    page.on('pageerror', (e) => log('pageerror:', e.message.slice(0, 200)));
    let shot = 0;
    const screenshot = async (name) => {
        const file = path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`);
        await page.screenshot({ path: file });
        log('screenshot', path.basename(file));
        return file;
    };

    // Text of a rendered webview (the Markdown preview) holding `needle`: webviews are frames.
    const renderedText = async (needle, timeoutMs) =>
        until(
            `a rendered view with "${needle}"`,
            async () => {
                for (const frame of page.frames()) {
                    const text = await frame.locator('body').innerText({ timeout: 500 }).catch(() => '');
                    if (text.includes(needle)) {
                        return text;
                    }
                }
                return '';
            },
            timeoutMs,
        ).catch(() => '');

    const palette = async (command) => {
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: 15000 });
        await input.fill(`>${command}`);
        const row = page.locator('.quick-input-list .monaco-list-row.focused', { hasText: command }).first();
        await row.waitFor({ timeout: 15000 });
        await page.keyboard.press('Enter');
    };
    const quickOpen = async (file, toSide = false) => {
        await page.keyboard.press('Control+P');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: 15000 });
        await input.fill(file);
        // wait for the filter to apply: the focused (first) row must be the file
        await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: file }).first().waitFor({ timeout: 15000 });
        await page.keyboard.press(toSide ? 'Control+Enter' : 'Enter');
        await page.locator(`.tabs-container .tab.active[aria-label*="${file}"]`).first().waitFor({ timeout: 30000 });
    };
    const toast = (text) => page.locator('.notifications-toasts .notification-toast', { hasText: text });
    const goToLine = async (line) => {
        await page.keyboard.press('Control+G');
        await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 10000 });
        await page.keyboard.type(String(line));
        await page.keyboard.press('Enter');
    };

    // A diff editor opened by crystal.compare: its tab, both panes' text, and the dump's record.
    // `renamed`: [original's name, copy's name] the view must show turned back (a renamed copy).
    const diffOpened = async (how, left, right, renamed) => {
        const tab = page.locator('.tabs-container .tab.active', { hasText: '↔' }).first();
        const ok = await tab.waitFor({ timeout: 15000 }).then(() => true, () => false);
        const title = ok ? await tab.innerText() : '';
        const panes = await page.locator('.monaco-diff-editor .editor.original, .monaco-diff-editor .editor.modified').count();
        const compared = await until('compare.json', () => readJson('compare.json'), 10000).catch(() => undefined);
        check(
            `DOM: ${how} opened the diff view of both copies`,
            ok && panes >= 2 && title.includes(left) && title.includes(right) && compared && compared.result.left.text.length > 0,
            `${title.replace(/\s+/g, ' ')}; ${panes} panes`,
        );
        if (renamed) {
            // the copy's pane shows the original's names under a header listing the renaming
            const [original, copy] = renamed;
            const modified = (await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().innerText().catch(() => ''))
                .replace(/\u00a0/g, ' ');
            const pairs = (compared && compared.result.renaming) || [];
            check(
                `DOM: ${how}: the renamed copy is shown with the original's names, the renaming listed above`,
                pairs.some(([x, y]) => x === original && y === copy) &&
                    modified.includes('renamed in the copy') &&
                    modified.includes(`${original} → ${copy}`) &&
                    modified.includes(`def ${original}(`) &&
                    !modified.includes(`def ${copy}(`) &&
                    title.includes('renamed'),
                `${JSON.stringify(pairs)}; ${modified.slice(0, 300).replace(/\s+/g, ' ')}`,
            );
        }
        await page.waitForTimeout(500);
        await screenshot(`diff-${how.replace(/\W+/g, '-')}`);
        await page.keyboard.press('Control+W');
    };

    // Paste `text` at the end of the active editor, as a user accepting or pasting a block would.
    const pasteAtEnd = async (text) => {
        // the cursor must be at the end of the active editor: click into it first
        await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+End');
        const cursor = page.locator('.statusbar-item', { hasText: /^Ln \d+, Col 1$/ });
        await cursor.first().waitFor({ timeout: 5000 }).catch(() => undefined);
        log('pasting at', await cursor.first().innerText().catch(() => '?'));
        await page.evaluate((t) => navigator.clipboard.writeText(t), text);
        const started = Date.now();
        await page.keyboard.press('Control+V');
        return started;
    };
    const lensTexts = () => page.locator('.monaco-editor .codelens-decoration').allInnerTexts().catch(() => []);

    const insertedBlocks = async () => {
        const stock = fs.readFileSync(path.join(WS, 'orders', 'stock.py'), 'utf8');
        const original = stock.slice(stock.indexOf('def reorder_quantities'));
        const renamed = original
            .replace('reorder_quantities', 'restock_amounts')
            .replace(/\bstock\b/g, 'inventory')
            .replace(/\borders\b/g, 'plan')
            .replace(/\bon_hand\b/g, 'available');
        await page.keyboard.press('Control+1');
        await quickOpen(HYP);
        const before = fs.readFileSync(path.join(WS, 'reports', HYP), 'utf8');
        const started = await pasteAtEnd('\n\n' + renamed);
        const lens = await until('the pasted block\'s code lens', async () => (await lensTexts()).find((t) => /copy of|new code/.test(t)), 60000, 50).catch(() => '');
        const ms = Date.now() - started;
        check(
            'DOM: a pasted renamed copy gets a lens naming the original',
            /renamed copy of orders\/stock\.py:\d+-\d+ \(function reorder_quantities\)/.test(lens),
            `"${lens}" ${ms} ms after the paste (goal: 2 s)`,
        );
        fs.writeFileSync(path.join(SHOTS, 'lens-latency.json'), JSON.stringify({ copyLensMs: ms }, null, 2));
        await screenshot('inserted-copy-lens');

        const fresh = [
            'def moving_average(values: list[float], window: int) -> list[float]:',
            '    """The mean of each run of `window` consecutive values."""',
            '    if window <= 0:',
            '        raise ValueError("window must be positive")',
            '    sums, total = [], 0.0',
            '    for i, value in enumerate(values):',
            '        total += value',
            '        if i >= window:',
            '            total -= values[i - window]',
            '        if i >= window - 1:',
            '            sums.append(total / window)',
            '    return sums',
            '',
        ].join('\n');
        const startedNew = await pasteAtEnd('\n\n' + fresh);
        const lensNew = await until('the new function\'s code lens', async () => (await lensTexts()).find((t) => /^new code/.test(t)), 60000, 50).catch(() => '');
        check('DOM: a new function gets "new code"', /^new code/.test(lensNew), `"${lensNew}" ${Date.now() - startedNew} ms after the paste`);
        await screenshot('inserted-new-lens');

        // the lens command opens the comparison (the lens is above the first pasted block)
        await goToLine(before.split('\n').length + 2);
        const link = page.locator('.monaco-editor .codelens-decoration a', { hasText: 'renamed copy of' }).first();
        await link.waitFor({ timeout: 15000 }).catch(() => undefined);
        if (await link.count()) {
            await link.click();
            await diffOpened('the lens', 'stock.py', HYP);
        } else {
            check('DOM: the lens is a link', false);
        }

        await palette('Crystal: Show inserted code');
        const tally = await until('insertions.json', () => readJson('insertions.json'), 30000).catch(() => undefined);
        check(
            'API: the session tally lists both blocks',
            tally && tally.summary.landed === 2 && tally.summary.copies === 1 && tally.summary.new === 1,
            tally && JSON.stringify(tally.summary),
        );
        const report = await renderedText('Inserted code (this session)', 15000);
        check('DOM: the tally report shows the verdicts', report.includes('renamed copy') && report.includes('new code'), report.split('\n').slice(0, 4).join(' | '));
        await screenshot('inserted-tally');

        await palette('Crystal: Export inserted code as JSONL');
        const dialog = page.locator('.quick-input-widget input');
        await dialog.waitFor({ state: 'visible', timeout: 15000 }).catch(() => undefined);
        log('save dialog:', JSON.stringify(await dialog.inputValue().catch(() => '')));
        await page.keyboard.press('Enter');
        const exported = await until('insertions-export.json', () => readJson('insertions-export.json'), 30000).catch(() => undefined);
        const file = path.join(WS, 'insertions.jsonl');
        const items = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
        check(
            'export: JSONL items for crystal-lsp score --jsonl',
            exported && items.length >= 1 && items[0].hypothesis.includes('def restock_amounts') && items[0].references.length >= 1,
            `${items.length} items in ${file}`,
        );

        // an agent writes the file on disk while it is open (saved, so VS Code reloads it)
        await page.keyboard.press('Control+1');
        await quickOpen(HYP);
        await page.keyboard.press('Control+S');
        const target = path.join(WS, 'reports', HYP);
        await until('the pasted blocks saved to disk', () => fs.readFileSync(target, 'utf8').includes('def moving_average'), 15000).catch(() => undefined);
        await page.locator('.tabs-container .tab.active.dirty').waitFor({ state: 'detached', timeout: 15000 }).catch(() => undefined);
        await page.waitForTimeout(1000); // VS Code has recorded the saved file's time
        const saved = fs.readFileSync(target, 'utf8');
        const sellers = saved.slice(saved.indexOf('def best_sellers'), saved.indexOf('\n\n\n', saved.indexOf('def best_sellers')));
        const agent = sellers.replace(/best_sellers/g, 'top_products').replace(/\bcounts\b/g, 'tally').replace(/\bsale\b/g, 'row');
        const wrote = Date.now();
        fs.writeFileSync(target, saved.replace(/\n*$/, '\n\n\n') + agent + '\n');
        const lensDisk = await until(
            'the lens of the block written on disk',
            async () => {
                await page.keyboard.press('Control+End'); // the block lands at the end: keep it in view
                return (await lensTexts()).find((t) => /copy of reports\/revenue\.py:\d+-\d+ \(function best_sellers\)/.test(t));
            },
            60000,
            100,
        ).catch(() => '');
        check('DOM: a function an agent wrote on disk gets a lens naming the original', !!lensDisk, `"${lensDisk}" ${Date.now() - wrote} ms after the write`);
        await screenshot('inserted-on-disk-lens');
    };

    try {
        log('goto', URL_);
        await page.goto(URL_, { waitUntil: 'domcontentloaded' });
        await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
        await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 60000 });
        log('workbench and explorer ready');
        await page.locator('.monaco-workbench').click({ position: { x: 800, y: 500 } }).catch(() => {});

        // --- 1. the planted near-duplicate, in the Problems panel with its related location ---
        await quickOpen(HYP);
        log(`${HYP} open; waiting for the server's diagnostic`);
        const statusItem = page.locator('.statusbar-item', { hasText: 'Crystal' }).first();
        const diags = await until('a crystal diagnostic on revenue.py (API dump)', () => {
            const d = crystalDiagnostics(HYP);
            return d.length > 0 ? d : undefined;
        }, T_DIAG, 500).catch(async (e) => {
            log('events so far:', JSON.stringify(events().slice(-10)));
            throw e;
        });
        const dup = diags[0];
        check('API: near-duplicate diagnostic on revenue.py', dup.code === 'near-duplicate' && dup.source === 'crystal', `${dup.message} [${dup.severity}]`);
        check(
            'API: related location points at the other copy',
            dup.relatedInformation.some((ri) => ri.uri.endsWith(`/orders/${REF}`)),
            JSON.stringify(dup.relatedInformation.map((ri) => `${path.basename(ri.uri)}:${ri.range.start.line + 1}`)),
        );
        const states = events().filter((e) => e.event === 'status').map((e) => e.state);
        check('API: crystal/status reported indexing, then ready', states.includes('indexing') && states.lastIndexOf('ready') > states.indexOf('indexing'), states.join(' → '));
        await page.waitForSelector('.monaco-editor .squiggly-info, .monaco-editor .squiggly-warning, .monaco-editor .squiggly-hint, .monaco-editor .squiggly-error', { timeout: 30000 }).catch(() => log('no squiggle element seen'));
        await page.keyboard.press('Control+Shift+M');
        const markerRows = page.locator('.markers-panel .monaco-list-row');
        await markerRows.first().waitFor({ timeout: 30000 });
        await until('the Problems panel to list the related location', async () => {
            const t = await markerRows.allInnerTexts();
            return t.some((x) => x.includes(REF)) ? t : undefined;
        }, 15000).catch(() => undefined);
        const rows = await markerRows.allInnerTexts();
        const aria = await markerRows.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
        log('Problems rows:', JSON.stringify(rows));
        const dupRowIndex = rows.findIndex((r) => /crystal/i.test(r) && /near-duplicate/i.test(r));
        check('DOM: Problems panel shows the crystal near-duplicate', dupRowIndex >= 0, rows[dupRowIndex]);
        check('DOM: Problems panel shows the related location', rows.some((r, i) => i > dupRowIndex && r.includes(REF)), rows.find((r, i) => i > dupRowIndex && r.includes(REF)));
        const statusText = await statusItem.innerText().catch(() => '');
        log('status bar:', JSON.stringify(statusText));
        check('DOM: status bar counts the duplicate', /duplicate/.test(statusText), statusText);
        await screenshot('problems-panel');
        fs.writeFileSync(path.join(SHOTS, 'problems.json'), JSON.stringify({ rows, aria, statusText }, null, 2));

        // --- 1b. hover and quick fix from the server, on the duplicate ---
        await page.locator(`.tabs-container .tab[aria-label*="${HYP}"]`).first().click();
        await goToLine(8);
        await page.keyboard.press('End'); // inside `def period_revenue(...)`, away from the lightbulb
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'clone class' });
        const hoverText = await hover
            .first()
            .innerText({ timeout: 15000 })
            .catch(() => '');
        const serverHover = hoverText.split('\n').filter((l) => /clone class|copy/.test(l));
        check('DOM: hover from the server describes the copy', /clone class/.test(hoverText) && hoverText.includes(REF), serverHover.slice(0, 2).join(' | '));
        // readable: the title, the compare link and the start of the alignment (a narrow diff)
        // are inside the hover's visible box (VS Code's hover is 250 px high), no column is cut
        const geometry = await hover
            .first()
            .evaluate((el) => {
                const box = el.getBoundingClientRect();
                const all = [...el.querySelectorAll('*')];
                const both = all.filter((e) => /def order_total\(/.test(e.textContent || '') && /def period_revenue\(/.test(e.textContent || ''));
                const block = both[both.length - 1]; // the innermost element holding the diff
                const link = all.find((e) => e.tagName === 'A' && (e.textContent || '').trim() === 'compare');
                if (!block || !link) {
                    return { found: { block: !!block, link: !!link }, html: el.innerHTML.slice(0, 1500) };
                }
                const visible = (e) => {
                    const r = e.getBoundingClientRect();
                    return r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.height > 0;
                };
                // how far the diff's text reaches past the hover's visible right edge
                const text = document.createRange();
                text.selectNodeContents(block);
                const cut = Math.max(0, Math.round(text.getBoundingClientRect().right - box.right));
                const overflow = [];
                for (let e = block; e && e !== el; e = e.parentElement) {
                    if (e.scrollWidth - e.clientWidth > 1) {
                        overflow.push(`${e.tagName.toLowerCase()}.${String(e.className).split(' ')[0]}:${e.scrollWidth - e.clientWidth}`);
                    }
                }
                const rows = (block.innerText || '').split('\n').filter((l) => l.trim());
                const shownRows = rows.length ? Math.floor(Math.max(0, Math.min(box.bottom, block.getBoundingClientRect().bottom) - block.getBoundingClientRect().top) / (block.getBoundingClientRect().height / rows.length)) : 0;
                return { hover: [Math.round(box.width), Math.round(box.height)], link: visible(link), cut, overflow, rows: rows.length, visibleRows: shownRows };
            })
            .catch((e) => ({ error: String(e) }));
        check(
            'DOM: the hover is readable: its head, the compare link and >= 4 diff lines in view, no column cut',
            geometry && geometry.link === true && geometry.cut <= 1 && geometry.visibleRows >= 4,
            JSON.stringify(geometry),
        );
        await screenshot('hover');
        await page.keyboard.press('Escape');
        await page.keyboard.press('Control+.');
        const actions = page.locator('.action-widget .monaco-list-row, .context-view .action-item');
        await actions.first().waitFor({ timeout: 15000 }).catch(() => undefined);
        const actionTexts = await actions.allInnerTexts().catch(() => []);
        log('quick fixes:', JSON.stringify(actionTexts));
        check('DOM: quick fix "Suppress this duplicate" offered', actionTexts.some((t) => /Suppress this duplicate/.test(t)));
        const choices = actionTexts.filter((t) => t.trim() && t.trim() !== 'Quick Fix'); // minus the group header
        const goToIndex = choices.findIndex((t) => t.includes('Go to the other copy'));
        check('DOM: quick fix "Go to the other copy" offered', goToIndex >= 0);
        if (goToIndex >= 0) {
            for (let i = 0; i < goToIndex; i++) {
                await page.keyboard.press('ArrowDown');
            }
            await page.keyboard.press('Enter');
            await page
                .locator(`.tabs-container .tab.active[aria-label*="${REF}"]`)
                .first()
                .waitFor({ timeout: 15000 })
                .then(
                    () => check('DOM: "Go to the other copy" opened the other copy', true),
                    () => check('DOM: "Go to the other copy" opened the other copy', false),
                );
        } else {
            await page.keyboard.press('Escape');
        }
        await quickOpen(HYP);
        // the compare quick fix: the editor's own diff view on both copies
        await goToLine(8);
        await page.keyboard.press('End');
        await page.keyboard.press('Control+.');
        await actions.first().waitFor({ timeout: 15000 }).catch(() => undefined);
        const fixes = (await actions.allInnerTexts().catch(() => [])).filter((t) => t.trim() && t.trim() !== 'Quick Fix');
        const compareIndex = fixes.findIndex((t) => t.includes('Compare with the other copy'));
        check('DOM: quick fix "Compare with the other copy" offered', compareIndex >= 0, fixes[compareIndex]);
        if (compareIndex >= 0) {
            for (let i = 0; i < compareIndex; i++) {
                await page.keyboard.press('ArrowDown');
            }
            await page.keyboard.press('Enter');
            await diffOpened('quick fix', REF, HYP, ['order_total', 'period_revenue']);
        } else {
            await page.keyboard.press('Escape');
        }
        await quickOpen(HYP);

        // --- 1c. a hostile file name in the hover: text, not a link, image or HTML ---
        await quickOpen('ledger.py');
        await goToLine(9);
        await page.keyboard.press('End');
        const hostileHover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'clone class' }).first();
        // the file was just opened: until the server has its diagnostics, a hover asked for is
        // empty and the editor does not ask again, so ask again (up to 6 times, 5 s each)
        for (let attempt = 0; attempt < 6; attempt++) {
            await page.keyboard.press('Control+K');
            await page.keyboard.press('Control+I');
            const shown = await hostileHover.waitFor({ timeout: 5000 }).then(() => true, () => false);
            if (shown) {
                break;
            }
            log(`hover on the hostile file name not shown yet (attempt ${attempt + 1}); asking again`);
            await page.keyboard.press('Escape');
        }
        const planted = await hostileHover
            .evaluate((el) => ({
                text: el.innerText,
                links: [...el.querySelectorAll('a')].map((a) => ({ text: (a.textContent || '').trim(), href: a.getAttribute('data-href') || a.getAttribute('href') || '' })),
                images: el.querySelectorAll('img').length,
            }))
            .catch((e) => ({ error: String(e), text: '', links: [], images: 0 }));
        const commandLinks = planted.links.filter((l) => l.href.startsWith('command:'));
        check(
            'DOM: a hostile file name in the hover is text: no link, image or HTML of its own',
            planted.text.includes('[click](command:crystal.compare?') && planted.text.includes('<img src=x>') && planted.images === 0 && !planted.links.some((l) => l.text === 'click'),
            JSON.stringify(planted.links),
        );
        check(
            'DOM: the only command link is the server\'s compare link, with an id and no path',
            commandLinks.length === 1 && commandLinks[0].text === 'compare' && /%22id%22/.test(commandLinks[0].href) && !/uri/.test(decodeURIComponent(commandLinks[0].href)),
            JSON.stringify(commandLinks),
        );
        await screenshot('hover-hostile-name');
        const compareLink = hostileHover.locator('a', { hasText: /^compare$/ }).first();
        if (await compareLink.count()) {
            await compareLink.click();
            await diffOpened('the hover\'s compare link (an id)', 'click', 'ledger.py');
        } else {
            await page.keyboard.press('Escape');
        }
        await quickOpen(HYP);

        // --- 2. settings are applied live: severity information -> warning ---
        const startsBefore = events().filter((e) => e.event === 'started').length;
        writeSettings({ 'crystalLsp.severity': 'warning' });
        const warned = await until('the diagnostic to become a warning', () => crystalDiagnostics(HYP).find((d) => d.severity === 'Warning'), 60000, 300).catch(() => undefined);
        check(
            'live setting: crystalLsp.severity=warning reaches the server without a restart',
            warned && events().filter((e) => e.event === 'started').length === startsBefore,
            warned && warned.message,
        );
        await page.waitForSelector('.monaco-editor .squiggly-warning', { timeout: 15000 }).then(
            () => check('DOM: warning squiggle in the editor', true),
            () => check('DOM: warning squiggle in the editor', false),
        );

        writeSettings({ 'crystalLsp.severity': 'information' });
        await until('the diagnostic to be information again', () => crystalDiagnostics(HYP).find((d) => d.severity === 'Information'), 60000, 300).catch(() => undefined);

        // --- 3. Score selection against reference… (palette, best matches in the workspace) ---
        await quickOpen(REF, true); // the other copy beside, to see its highlights too
        await page.keyboard.press('Control+1'); // back to revenue.py
        await page.locator(`.tabs-container .tab.active[aria-label*="${HYP}"]`).first().waitFor({ timeout: 10000 });
        await goToLine(8);
        await page.keyboard.press('Home');
        for (let i = 0; i < 12; i++) {
            await page.keyboard.press('Shift+ArrowDown');
        }
        await palette('Crystal: Score selection against reference');
        const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Best matches in the workspace' });
        await pick.first().waitFor({ timeout: 15000 });
        log('reference quick pick shown:', JSON.stringify(await page.locator('.quick-input-list .monaco-list-row').allInnerTexts()));
        await pick.first().click();
        const scoreToast = toast('CrystalBLEU');
        await scoreToast.first().waitFor({ timeout: 60000 });
        const toastText = (await scoreToast.first().locator('.notification-list-item-message').innerText()).trim();
        log('score notification:', JSON.stringify(toastText));
        const score = await until('score.json', () => readJson('score.json'), 10000);
        const m = /CrystalBLEU (\d\.\d{3}) · BLEU (\d\.\d{3})/.exec(toastText);
        check('DOM: notification shows CrystalBLEU and BLEU', !!m, toastText);
        check(
            'notification scores equal the server result',
            m && m[1] === score.result.crystalbleu.toFixed(3) && m[2] === score.result.bleu.toFixed(3),
            `server: crystalbleu=${score.result.crystalbleu} bleu=${score.result.bleu}`,
        );
        check('API: the best match is the planted copy', score.result.references.some((r) => (r.uri || '').endsWith(`/orders/${REF}`)), JSON.stringify(score.result.references.map((r) => r.label)));
        check('API: the scored selection is lines 8-19', score.params.hypothesis.range && score.params.hypothesis.range.start.line === 7, JSON.stringify(score.params.hypothesis));
        check('API: matched non-trivial n-grams highlighted', score.highlights.hypothesisSpans > 0 && score.highlights.ngrams > 0, JSON.stringify(score.highlights));
        await page.keyboard.press('ArrowLeft'); // drop the selection so the highlights show
        const highlighted = await page.locator('.monaco-editor .view-overlays > div > div[class*="ced-"], .monaco-editor .view-overlays div[class*="ced-"]').count();
        check('DOM: match highlights drawn in the editors', highlighted > 0, `${highlighted} decoration elements`);
        await page.waitForTimeout(500);
        const curated = await screenshot('score-selection');
        fs.copyFileSync(curated, path.join(SHOTS, 'screenshot.png'));

        // Details report from the notification's button.
        const details = scoreToast.first().locator('.monaco-button', { hasText: 'Details' });
        if (await details.count()) {
            await details.first().click();
            const reportTab = page.locator('.tabs-container .tab[aria-label*="Score of"]');
            await reportTab.first().waitFor({ timeout: 15000 }).then(
                () => check('DOM: score report opened from the notification', true),
                () => check('DOM: score report opened from the notification', false),
            );
            // the report is rendered: the Markdown preview, a webview (nested frames)
            const reportText = await renderedText('CrystalBLEU score of', 15000);
            check('DOM: the report is rendered (Markdown preview) and shows the CrystalBLEU score', reportText.includes(score.result.crystalbleu.toFixed(3)) && !reportText.includes('| ---'), reportText.split('\n').slice(0, 6).join(' | '));
            check('DOM: the report shows per-order statistics', /Statistics/.test(reportText) && /brevity penalty/.test(reportText), reportText.split('\n').filter((l) => /brevity/.test(l)).join(' | '));
            await screenshot('score-report');
        } else {
            check('DOM: notification has a Details button', false);
        }

        // --- 4. the other commands ---
        await page.keyboard.press('Control+1');
        await palette('Crystal: Show trivially shared n-grams');
        const lang = page.locator('.quick-input-list .monaco-list-row', { hasText: 'python' });
        await lang.first().waitFor({ timeout: 15000 });
        await lang.first().click();
        const trivial = await until('trivial.json', () => readJson('trivial.json'), 60000).catch(() => undefined);
        check('API: trivially shared n-grams of python', trivial && trivial.language && Array.isArray(trivial.ngrams), trivial && `k=${trivial.k}, ${trivial.ngrams.length} n-grams, e.g. ${JSON.stringify((trivial.ngrams[0] || {}).ngram)}`);
        await page
            .locator('.tabs-container .tab[aria-label*="Trivially shared"]')
            .first()
            .waitFor({ timeout: 15000 })
            .then(
                () => check('DOM: trivially shared n-grams report opened', true),
                () => check('DOM: trivially shared n-grams report opened', false),
            );
        await screenshot('trivial-ngrams');

        await palette('Crystal: Rebuild index');
        const rebuilt = await until('rebuild.json', () => readJson('rebuild.json'), 120000).catch(() => undefined);
        check('API: index rebuilt', rebuilt && typeof rebuilt.files === 'number' && rebuilt.files >= 2, JSON.stringify(rebuilt));
        await toast('index rebuilt').first().waitFor({ timeout: 15000 }).then(
            () => check('DOM: rebuild notification', true),
            () => check('DOM: rebuild notification', false),
        );

        const startsBeforeRestart = events().filter((e) => e.event === 'started').length;
        await palette('Crystal: Restart server');
        await until('a restart', () => events().filter((e) => e.event === 'started').length > startsBeforeRestart, 60000).then(
            () => check('API: "Restart server" restarted the server', true),
            () => check('API: "Restart server" restarted the server', false),
        );
        await until('the diagnostic after the restart', () => crystalDiagnostics(HYP).length > 0, T_DIAG, 500).then(
            () => check('API: diagnostics again after the restart', true),
            () => check('API: diagnostics again after the restart', false),
        );

        // --- 6. blocks landing in one edit: a lens with the verdict, the diff view, the tally ---
        await insertedBlocks();

        // --- 5. first run with a Python that lacks the server: restart, offer, install ---
        if (FRESH_PYTHON) {
            const startedBefore = events().filter((e) => e.event === 'started').length;
            await page.keyboard.press('Control+1');
            writeSettings({ 'crystalLsp.interpreter': [FRESH_PYTHON] });
            log('crystalLsp.interpreter ->', FRESH_PYTHON);
            const offer = toast('does not have the Crystal language server');
            await offer.first().waitFor({ timeout: 60000 });
            check('DOM: install offered for a Python without the server', true, (await offer.first().innerText()).split('\n')[0]);
            const statusNeeds = await statusItem.innerText().catch(() => '');
            check('DOM: status bar says not installed', /not installed/.test(statusNeeds), statusNeeds);
            await screenshot('install-offer');
            const button = offer.first().locator('.monaco-button', { hasText: /Install/ }).first();
            const label = await button.innerText();
            await button.click();
            log('clicked', JSON.stringify(label));
            await toast('installing the language server').first().waitFor({ timeout: 30000 }).then(
                async () => {
                    await page.waitForTimeout(1500);
                    await screenshot('installing');
                },
                () => log('no installing progress toast seen'),
            );
            const done = await until('installDone or installFailed', () => events().find((e) => e.event === 'installDone' || e.event === 'installFailed'), T_INSTALL, 1000);
            check('first run: one-click install succeeded', done.event === 'installDone', JSON.stringify(done));
            const started = await until('the server to start from the fresh environment', () => {
                const s = events().filter((e) => e.event === 'started');
                return s.length > startedBefore ? s[s.length - 1] : undefined;
            }, 60000).catch(() => undefined);
            check('first run: server restarted with the new interpreter', started && started.python.join(' ') === FRESH_PYTHON, started && started.python.join(' '));
            const again = await until('the diagnostic from the freshly installed server', () => {
                const s = events().filter((e) => e.event === 'started');
                const d = crystalDiagnostics(HYP);
                return s.length > startedBefore && d.length > 0 ? d : undefined;
            }, T_DIAG, 500).catch(() => undefined);
            check('first run: near-duplicate reported by the installed server', !!again, again && again[0].message);
            await page.waitForTimeout(1000);
            await screenshot('after-install');
        }
    } catch (e) {
        log('ERROR:', e && e.stack ? e.stack : e);
        check('drive completed', false, String(e && e.message));
        await screenshot('failure').catch(() => undefined);
    }

    const toasts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => []);
    log('notifications at the end:', JSON.stringify(toasts));
    check('no request left localhost', external.size === 0, JSON.stringify([...external]));
    fs.writeFileSync(path.join(SHOTS, 'results.json'), JSON.stringify({ results, events: events() }, null, 2));
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
    const failed = results.filter((r) => !r.ok);
    console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
    process.exit(failed.length ? 1 : 0);
})().catch((e) => {
    console.error('FAILED:', e);
    process.exit(2);
});
