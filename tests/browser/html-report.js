// Renders `crystal-lsp scan --format html` in Debian's Chromium (playwright-core) and checks it:
//   1. the page renders: the title, the summary, one article per finding of the JSON report;
//   2. every line of code of every location (lines with text) is on the page, once expanded;
//   3. nothing is requested but the page itself, and no Content-Security-Policy violation;
//   4. the script works: "collapse all" / "expand all", the path filter;
//   5. the page has no horizontal scrollbar at 1400 px (long lines wrap instead of being cut);
//   6. (with LARGE) a report of 10,000 findings opens and is usable: the findings the page holds,
//      the note sending to the JSON for the rest, the filter (the time to open it is logged).
// Started by tests/ci/40-html-report.sh with REPORT (the page), JSON (the same scan as JSON),
// SHOTS (screenshot folder) and CHROMIUM. Exit 0 on success, 1 on a failed check.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const env = (name, fallback) => {
    const v = process.env[name] ?? fallback;
    if (v === undefined) {
        throw new Error(`${name} is not set`);
    }
    return v;
};
const REPORT = path.resolve(env('REPORT'));
const JSON_REPORT = env('JSON');
const SHOTS = env('SHOTS');
const CHROMIUM = env('CHROMIUM', '/usr/bin/chromium');

const results = [];
const check = (name, ok, detail) => {
    results.push({ name, ok: !!ok, detail });
    console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
};

// The code lines each location holds, from the files the scan read.
function expectedLines(doc) {
    const out = [];
    for (const finding of doc.findings) {
        for (const loc of finding.locations) {
            const text = fs.readFileSync(path.join(doc.root, loc.path), 'utf8').split('\n');
            for (let n = loc.start.line; n <= loc.end.line; n++) {
                const line = text[n - 1].trim();
                if (line) {
                    out.push({ where: `${loc.path}:${n}`, line });
                }
            }
        }
    }
    return out;
}

async function main() {
    const doc = JSON.parse(fs.readFileSync(JSON_REPORT, 'utf8'));
    fs.mkdirSync(SHOTS, { recursive: true });
    const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const url = pathToFileURL(REPORT).href;
    const pages = new Set([url, ...(process.env.LARGE ? [pathToFileURL(path.resolve(process.env.LARGE)).href] : [])]);
    const requests = [];
    page.on('request', (r) => {
        if (r.url() !== url) {
            requests.push(r.url());
        }
    });
    // anything but the pages themselves is refused (and counted above) should it be asked for
    await context.route('**/*', (route) => (pages.has(route.request().url()) ? route.continue() : route.abort()));
    const problems = [];
    page.on('console', (m) => {
        if (m.type() === 'error' || /Content.Security.Policy|Refused to/i.test(m.text())) {
            problems.push(m.text());
        }
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(url, { waitUntil: 'load' });

    const title = await page.title();
    check('the page renders', /^crystal-lsp: \d+ clone classes in /.test(title), title);
    const articles = await page.locator('article.finding').count();
    check('one article per finding', articles === doc.findings.length, `${articles} of ${doc.findings.length}`);
    const summary = await page.locator('#summary dl.stats').innerText();
    check('the summary shows the duplicated lines', /duplicated lines\s+[\d,]+ of [\d,]+ \(\d+\.\d %\)/.test(summary), summary.split('\n').slice(0, 2).join(' '));
    const folders = await page.locator('table.folders tbody tr').count();
    check('the folder table has rows', folders > 0, `${folders} folders`);

    await page.click('#collapse');
    const openAfterCollapse = await page.locator('details[open]').count();
    check('"collapse all" closes every section', openAfterCollapse === 0, `${openAfterCollapse} open`);
    await page.click('#expand');
    const closed = await page.locator('details:not([open])').count();
    check('"expand all" opens every section', closed === 0, `${closed} closed`);

    const text = await page.locator('body').innerText();
    const expected = expectedLines(doc);
    const missing = expected.filter((e) => !text.includes(e.line));
    check('every line of code of every copy is on the page', expected.length > 0 && missing.length === 0,
        `${expected.length - missing.length} of ${expected.length} lines${missing.length ? `; missing ${missing.slice(0, 3).map((m) => m.where).join(', ')}` : ''}`);
    const marks = await page.locator('table.sbs mark').count();
    check('differing tokens are marked', marks > 0, `${marks} marks`);

    const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    check('no horizontal scrolling at 1400 px', wide <= 0, `${wide} px wider`);

    await page.screenshot({ path: path.join(SHOTS, 'html-report-full.png'), fullPage: true });
    await page.screenshot({ path: path.join(SHOTS, 'html-report.png'), fullPage: false });

    if (doc.findings.length > 1) {
        const target = doc.findings[1].locations[0].path;
        await page.fill('#filter', target);
        const shown = await page.locator('article.finding:not(.hidden)').count();
        const all = await page.locator('article.finding').count();
        check('the filter keeps the findings of a path', shown >= 1 && shown < all, `${shown} of ${all} for ${target}`);
        await page.fill('#filter', '');
    }

    if (process.env.LARGE) {
        await largeReport(context, Number(process.env.LARGE_SHOWN || 0));
    }

    check('nothing is fetched from the network', requests.length === 0, requests.slice(0, 3).join(', ') || '0 requests');
    check('no script error or CSP violation', problems.length === 0, problems.slice(0, 3).join(' | '));
    await browser.close();
    const failed = results.filter((r) => !r.ok);
    console.log(`html report: ${results.length - failed.length} passed, ${failed.length} failed`);
    return failed.length ? 1 : 0;
}

// A report of 10,000 findings (issue 33: 6,743 made a page Chromium did not render in 300 s).
async function largeReport(context, shown) {
    const page = await context.newPage();
    const url = pathToFileURL(path.resolve(process.env.LARGE)).href;
    const size = fs.statSync(process.env.LARGE).size;
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'load', timeout: 120000 });
    const loadMs = Date.now() - t0;
    const timing = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        return nav ? Math.round(nav.loadEventEnd) : -1;
    });
    console.log(`large report: ${(size / 1e6).toFixed(1)} MB opened in ${loadMs} ms (navigation load event at ${timing} ms)`);
    const articles = await page.locator('article.finding').count();
    check('a report of 10,000 findings opens with the findings the page holds', articles === shown, `${articles} of ${shown}; ${(size / 1e6).toFixed(1)} MB, ${loadMs} ms`);
    const note = await page.locator('#capped').innerText().catch(() => '');
    check('the large page says what it leaves off and where the rest is', /more findings are not on this page/.test(note) && /--format json/.test(note), note.slice(0, 200));
    const t1 = Date.now();
    await page.fill('#filter', 'no-such-path-anywhere');
    const hidden = await page.locator('article.finding.hidden').count();
    check('the filter works on the large page', hidden === articles, `${hidden} hidden in ${Date.now() - t1} ms`);
    await page.screenshot({ path: path.join(SHOTS, 'html-report-large.png'), fullPage: false });
    await page.close();
}

main().then(
    (code) => process.exit(code),
    (err) => {
        console.error(err);
        process.exit(1);
    },
);
