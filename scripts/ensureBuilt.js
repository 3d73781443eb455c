#!/usr/bin/env node
// Before a test script run on its own (`npm run test:unit` in a fresh clone): compiles the sources
// and bundles them when out/ or dist/ is missing or older than any source, so that the tests run
// on what is in the tree, never on nothing or on an older build. `npm test` builds first anyway
// (its `pretest`, `--always`), and then this finds everything fresh and does nothing.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const STAMP = path.join(ROOT, 'out', '.built');

function newest(dir) {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(p));
    else if (/\.(ts|js|json)$/.test(entry.name)) latest = Math.max(latest, fs.statSync(p).mtimeMs);
  }
  return latest;
}

const sources = Math.max(...['src', 'test', 'bench'].map((d) => newest(path.join(ROOT, d))), ...['package.json', 'tsconfig.json', 'esbuild.js'].map((f) => fs.statSync(path.join(ROOT, f)).mtimeMs));
const built = fs.existsSync(STAMP) && fs.existsSync(path.join(ROOT, 'dist', 'cli.js')) ? fs.statSync(STAMP).mtimeMs : 0;
// `--always` (npm test's `pretest`): build whatever the stamps say.
if (built >= sources && !process.argv.includes('--always')) process.exit(0);
for (const script of ['compile', 'build']) {
  const r = spawnSync('npm', ['run', '--silent', script], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
