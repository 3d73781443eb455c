#!/usr/bin/env node
// `npm run test:agents`: installs the pinned agent CLIs into the git-ignored cache
// (.vscode-test/agents/, once per machine), then runs the live-agent suite with mocha.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const compiled = path.join(ROOT, 'out', 'test', 'agents', 'install.js');
const install = spawnSync(process.execPath, [compiled], { stdio: 'inherit', cwd: ROOT });
if (install.status !== 0) process.exit(install.status ?? 1);
const mocha = spawnSync(process.execPath, [require.resolve('mocha/bin/mocha.js'), '--config', '.mocharc.agents.json', ...process.argv.slice(2)], { stdio: 'inherit', cwd: ROOT });
process.exit(mocha.status ?? 1);
