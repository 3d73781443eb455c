// The packaged extension in code-server, as the end-to-end checks start it: the .vsix installed
// into a fresh extensions folder, a throw-away profile that opens on nothing, and the DOM id of
// the status bar's loop indicator.
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ensureCodeServer, nodeFor, startCodeServer } = require('./codeServer');

const ROOT = path.resolve(__dirname, '..', '..');
const VSIX = path.join(ROOT, 'loop-guardian.vsix');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const STATUS_ID = 'loop-guardian.agent-loop-guardian.loopGuardian.status';

/** code-server with the packaged .vsix (and nothing else) installed, its profile under `tmp`; `env` for its extension host. */
async function startPackaged(tmp, env) {
  const exts = path.join(tmp, 'exts');
  execFileSync(nodeFor(), [ensureCodeServer(), '--extensions-dir', exts, '--install-extension', VSIX], { stdio: ['ignore', 'ignore', 'inherit'] });
  const installed = fs.readdirSync(exts).filter((d) => d.startsWith('loop-guardian.agent-loop-guardian-'));
  assert.equal(installed.length, 1, `the .vsix is installed (${fs.readdirSync(exts).join(', ')})`);
  const data = path.join(tmp, 'data');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(data, 'User', 'settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none', 'workbench.tips.enabled': false }));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return startCodeServer({ extensionsDir: exts, userDataDir: data, env });
}

module.exports = { ROOT, VSIX, ARTIFACTS, STATUS_ID, startPackaged };
