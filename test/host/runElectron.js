#!/usr/bin/env node
// The same integration suites under @vscode/test-electron, for people with desktop VS Code and
// internet access (it downloads VS Code). CI here runs them in code-server: runIntegration.js.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runTests } = require('@vscode/test-electron');

const ROOT = path.resolve(__dirname, '..', '..');

function folder(parent, name) {
  const dir = path.join(parent, name);
  fs.mkdirSync(path.join(dir, '.tmp', 'current', 'logs'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.tmp', 'current', 'logs', 'agent.jsonl'), '');
  return dir;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lg-electron-'));
  const multi = path.join(tmp, 'multi.code-workspace');
  fs.writeFileSync(multi, JSON.stringify({ folders: [{ path: folder(tmp, 'alpha') }, { path: folder(tmp, 'beta') }] }));
  fs.mkdirSync(path.join(tmp, 'gamma'));
  const scenarios = [
    ['single', folder(tmp, 'project'), ['--disable-workspace-trust']],
    ['multi', multi, ['--disable-workspace-trust']],
    ['untrusted', folder(tmp, 'untrusted'), []],
  ];
  for (const [suite, target, flags] of scenarios) {
    await runTests({
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: path.join(ROOT, 'out', 'test', 'integration', 'index.js'),
      launchArgs: [target, '--disable-extensions', ...flags],
      extensionTestsEnv: { LOOP_GUARDIAN_SUITE: suite, LOOP_GUARDIAN_CLI: path.join(ROOT, 'dist', 'cli.js'), LOOP_GUARDIAN_HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'lg-home-')) },
    });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
