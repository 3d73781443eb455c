#!/usr/bin/env node
// `npm start` leaves the person's machine as it was (issue 27): run as a person runs it, with a
// HOME whose ~/.loop-guardian already holds a launcher (their agents' hooks run it), the page
// opened so that the extension activates and the simulated agent loops; then ~/.loop-guardian is
// compared with what it was, file by file.
'use strict';
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { launch } = require('./browser');

const ROOT = path.resolve(__dirname, '..', '..');
const STATUS_ID = 'loop-guardian.agent-loop-guardian.loopGuardian.status';

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Every file under a folder with its content and mode. */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = `${(fs.statSync(p).mode & 0o777).toString(8)} ${fs.readFileSync(p, 'utf8')}`;
    }
  };
  walk(dir);
  return out;
}

async function main() {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-start-home-')));
  const mine = path.join(home, '.loop-guardian', 'bin');
  fs.mkdirSync(mine, { recursive: true });
  // The person's own launcher, pointing at their own install.
  fs.writeFileSync(path.join(mine, 'loop-guardian'), "#!/bin/sh\ncli='/home/me/.vscode/extensions/loop-guardian/dist/cli.js'\nexec node \"$cli\" \"$@\"\n", { mode: 0o755 });
  fs.writeFileSync(path.join(mine, 'loop-guardian.js'), "require('/home/me/.vscode/extensions/loop-guardian/dist/cli.js');\n");
  const before = snapshot(path.join(home, '.loop-guardian'));
  const port = await freePort();
  const env = { ...process.env, HOME: home, PORT: String(port) };
  delete env.LOOP_GUARDIAN_HOME;
  const start = spawn(process.execPath, [path.join(ROOT, 'scripts', 'start.js'), '--no-package'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  start.stdout.on('data', (d) => (out += d));
  start.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => start.on('exit', resolve));
  const browser = await launch();
  try {
    const deadline = Date.now() + 180_000;
    let url;
    while (!(url = /Open\s+(http:\/\/\S+)/.exec(out)?.[1])) {
      if (Date.now() > deadline || start.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(url);
    await page.locator(`[id="${STATUS_ID}"]`).waitFor({ timeout: 90_000 });
    // The simulated agent starts after the countdown, works, then loops: the extension sees it.
    await page.waitForFunction((id) => /loop/i.test(document.getElementById(id)?.textContent ?? '') && !/No loops/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 90_000 });
  } finally {
    await browser.close();
    start.kill('SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (start.exitCode === null) start.kill('SIGKILL');
  }
  assert.deepEqual(snapshot(path.join(home, '.loop-guardian')), before, '~/.loop-guardian is as it was');
  fs.rmSync(home, { recursive: true, force: true });
  console.log('npm start: the page showed the demo agent\'s loop; ~/.loop-guardian is as it was (1 passed, 0 failed)');
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
