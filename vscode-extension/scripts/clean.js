// Removes the given directories (a portable `rm -rf` for npm scripts).
const fs = require('node:fs');
for (const dir of process.argv.slice(2)) {
    fs.rmSync(dir, { recursive: true, force: true });
}
