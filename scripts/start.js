#!/usr/bin/env node
// npm start: builds and packages the extension, installs it into code-server (a real VS Code, cached
// in .vscode-test/), opens a demo workspace (outside the checkout) in which a simulated agent works
// and then loops, and prints the URL to open in a browser. The agent starts when the page is opened
// (the editor connects), after a visible countdown, so the story is seen from its start. Ctrl-C
// stops everything.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { ensureCodeServer } = require('../test/host/codeServer');

const ROOT = path.resolve(__dirname, '..');
const PORT = Number(process.env.PORT || 8080);
const HOST = process.env.HOST || '127.0.0.1';
// Outside the checkout: VS Code would otherwise offer the checkout's Git repository to the demo.
const demo = path.join(os.tmpdir(), 'loop-guardian-demo', 'workspace');
const exts = path.join(ROOT, '.vscode-test', 'demo-extensions');
const data = path.join(ROOT, '.vscode-test', 'demo-data');
// The launcher the demo's extension keeps current, in the demo's own folder: never the person's
// ~/.loop-guardian, which their agents' hooks run (the demo's copy goes with the checkout).
const guardianHome = path.join(data, 'guardian-home');
/** Seconds between the editor connecting and the agent's first step: the window loads meanwhile. */
const COUNTDOWN = 5;

/** Resolves when HOST:PORT can be listened on; a taken port is said before anything is built or wiped. */
function portFree() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(err));
    probe.listen(PORT, HOST, () => probe.close(() => resolve()));
  });
}

async function main() {
  try {
    await portFree();
  } catch (err) {
    process.stderr.write(`Cannot listen on ${HOST}:${PORT} (${err.code || err.message}). Set PORT= to another port, e.g. PORT=${PORT + 1} npm start\n`);
    process.exit(2);
  }
  // `--no-package`: the .vsix is already built (the test that runs the demo builds it once).
  if (!process.argv.includes('--no-package')) {
    console.log('Building and packaging the extension…');
    execFileSync('npm', ['run', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const entry = ensureCodeServer();
  execFileSync(process.execPath, [entry, '--extensions-dir', exts, '--install-extension', path.join(ROOT, 'loop-guardian.vsix'), '--force'], { stdio: ['ignore', 'ignore', 'inherit'] });

  fs.rmSync(demo, { recursive: true, force: true });
  fs.mkdirSync(path.join(demo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(demo, 'src', 'range.ts'), 'export const range = (n: number) => [...Array(n + 1).keys()];\n');
  // The agent's log is there before it starts, as in a workspace an agent is set up in: the
  // extension activates on it when the page opens.
  fs.mkdirSync(path.join(demo, '.tmp', 'current', 'logs'), { recursive: true });
  fs.writeFileSync(path.join(demo, '.tmp', 'current', 'logs', 'agent.jsonl'), '');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(data, 'User', 'settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none' }, null, 2));

  const server = spawn(
    process.execPath,
    [entry, '--auth', 'none', '--bind-addr', `${HOST}:${PORT}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', '--user-data-dir', data, '--extensions-dir', exts, demo],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOOP_GUARDIAN_HOME: guardianHome } },
  );
  let agent;
  let listening = false;
  let countdown;
  let out = '';
  const startAgent = () => {
    if (agent || countdown) return;
    let left = COUNTDOWN;
    process.stdout.write(`The editor is open. The simulated agent starts in ${left}…`);
    countdown = setInterval(() => {
      left--;
      if (left > 0) return void process.stdout.write(` ${left}…`);
      clearInterval(countdown);
      process.stdout.write(' now.\n');
      agent = spawn(process.execPath, [path.join(__dirname, 'simulatedAgent.js'), demo], { stdio: 'inherit', env: { ...process.env, LOOP_GUARDIAN_HOME: guardianHome } });
    }, 1000);
  };
  const onData = (d) => {
    out += d.toString();
    if (!listening && /HTTP server listening/.test(out)) {
      listening = true;
      console.log(`\nLoop Guardian demo is running.\n\n  Open  http://${HOST}:${PORT}/?folder=${encodeURIComponent(demo)}\n`);
      console.log('When the page opens, a simulated agent works for a few seconds, then loops on an edit that cannot apply.');
      console.log('Watch the status bar and the Loop Guardian view; run "Loop Guardian: Circuit Break (STOP all agents)" (F1) to stop it.');
      console.log('Ctrl-C stops the demo.\n');
    }
    // code-server logs the window's extension host connecting: someone opened the page.
    if (listening && /\[ExtensionHostConnection\] New connection established/.test(out)) startAgent();
    if (out.length > 1_000_000) out = out.slice(-100_000);
  };
  server.stdout.on('data', onData);
  server.stderr.on('data', onData);
  server.on('exit', (code) => {
    if (!listening) process.stderr.write(out);
    agent?.kill();
    process.exit(code ?? 0);
  });
  const stop = () => {
    agent?.kill();
    server.kill();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
