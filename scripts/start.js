#!/usr/bin/env node
// npm start: builds and packages the extension, installs it into code-server (a real VS Code, cached
// in .vscode-test/), opens a demo workspace in which a simulated agent starts looping, and prints the
// URL to open in a browser. Ctrl-C stops everything.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ensureCodeServer } = require('../test/host/codeServer');

const ROOT = path.resolve(__dirname, '..');
const PORT = Number(process.env.PORT || 8080);
const HOST = process.env.HOST || '127.0.0.1';
const demo = path.join(ROOT, '.demo', 'workspace');
const exts = path.join(ROOT, '.vscode-test', 'demo-extensions');
const data = path.join(ROOT, '.vscode-test', 'demo-data');

console.log('Building and packaging the extension…');
execFileSync('npm', ['run', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
const entry = ensureCodeServer();
execFileSync(process.execPath, [entry, '--extensions-dir', exts, '--install-extension', path.join(ROOT, 'loop-guardian.vsix'), '--force'], { stdio: ['ignore', 'ignore', 'inherit'] });

fs.rmSync(demo, { recursive: true, force: true });
fs.mkdirSync(path.join(demo, 'src'), { recursive: true });
fs.writeFileSync(path.join(demo, 'src', 'range.ts'), 'export const range = (n: number) => [...Array(n + 1).keys()];\n');
fs.mkdirSync(path.join(data, 'User'), { recursive: true });
fs.writeFileSync(path.join(data, 'User', 'settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none' }, null, 2));

const server = spawn(
  process.execPath,
  [entry, '--auth', 'none', '--bind-addr', `${HOST}:${PORT}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', '--user-data-dir', data, '--extensions-dir', exts, demo],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let agent;
let out = '';
const onData = (d) => {
  out += d.toString();
  if (!agent && /HTTP server listening/.test(out)) {
    agent = spawn(process.execPath, [path.join(__dirname, 'simulatedAgent.js'), demo], { stdio: 'inherit' });
    console.log(`\nLoop Guardian demo is running.\n\n  Open  http://${HOST}:${PORT}/?folder=${encodeURIComponent(demo)}\n`);
    console.log('A simulated agent works for a few seconds, then loops on an edit that cannot apply.');
    console.log('Watch the status bar and the Loop Guardian view; run "Loop Guardian: Circuit Break" (F1) to stop it.');
    console.log('Ctrl-C stops the demo.\n');
  }
};
server.stdout.on('data', onData);
server.stderr.on('data', onData);
server.on('exit', (code) => {
  if (!agent) process.stderr.write(out);
  agent?.kill();
  process.exit(code ?? 0);
});
const stop = () => {
  agent?.kill();
  server.kill();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
