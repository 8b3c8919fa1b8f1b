// Refuses to package an extension without exactly one bundled crystal-lsp wheel (a first-time
// user's one-click install needs it), or with a placeholder README/CHANGELOG/LICENSE.
const fs = require('node:fs');
const path = require('node:path');
const root = path.join(__dirname, '..');
const dir = path.join(root, 'bundled');
const wheels = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^crystal_lsp-.*\.whl$/.test(f)) : [];
if (wheels.length !== 1) {
    console.error(`bundled/ must hold exactly one crystal_lsp wheel, found ${wheels.length}: run scripts/build-wheel.sh`);
    process.exit(1);
}
const version = /^crystal_lsp-([^-]+)-/.exec(wheels[0])[1];
const ext = require(path.join(root, 'package.json')).version;
if (version !== ext) {
    console.warn(`warning: bundled wheel ${wheels[0]} is version ${version}, the extension is ${ext}`);
}
for (const f of ['README.md', 'CHANGELOG.md', 'LICENSE.txt']) {
    const text = fs.existsSync(path.join(root, f)) ? fs.readFileSync(path.join(root, f), 'utf8') : '';
    if (!text || /^\s*#\s*TODO/m.test(text)) {
        console.error(`${f} is missing or still has a TODO`);
        process.exit(1);
    }
}
console.log(`bundle ok: ${wheels[0]}`);
