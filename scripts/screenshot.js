#!/usr/bin/env node
// The README's picture, from the real extension: the packaged .vsix installed into code-server, a
// workspace where an agent retries the same failing build, the Loop Guardian view open on its one
// loop and the one notification on screen. Writes media/screenshot.png. Needs what the tests in a
// real VS Code need (docs/development.md).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ensureCodeServer, startCodeServer, remoteUri } = require('../test/host/codeServer');
const { launch } = require('../test/host/browser');

const ROOT = path.resolve(__dirname, '..');
const VSIX = path.join(ROOT, 'loop-guardian.vsix');
const OUT = path.join(ROOT, 'media', 'screenshot.png');
const STATUS_ID = 'loop-guardian.agent-loop-guardian.loopGuardian.status';

const line = (e) => `${JSON.stringify({ v: 1, session: 'fix-build', agent: 'claude-code', ts: new Date().toISOString(), ...e })}\n`;
const build = (i) => line({ type: 'tool', tool: 'Bash', id: `b${i}`, args: { command: 'npm run build', description: 'Build the project' }, ok: false, error: "src/range.ts(14,7): error TS2304: Cannot find name 'clamp'." });

async function main() {
  if (!process.argv.includes('--no-package')) execFileSync('npm', ['run', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const entry = ensureCodeServer();
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-shot-')));
  const exts = path.join(tmp, 'exts');
  execFileSync(process.execPath, [entry, '--extensions-dir', exts, '--install-extension', VSIX], { stdio: ['ignore', 'ignore', 'inherit'] });
  const ws = path.join(tmp, 'my-project');
  const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
  fs.mkdirSync(path.dirname(log), { recursive: true });
  fs.writeFileSync(log, line({ type: 'user', text: 'Fix the build' }) + line({ type: 'tool', tool: 'Read', id: 'r1', args: { file_path: 'src/range.ts' }, ok: true, output: 'export function range…' }));
  const data = path.join(tmp, 'data');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(data, 'User', 'settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'workbench.colorTheme': 'Default Dark Modern' }));
  const server = await startCodeServer({ extensionsDir: exts, userDataDir: data });
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(remoteUri(server.port, ws))}`);
    await page.locator(`[id="${STATUS_ID}"]`).waitFor({ timeout: 60_000 });
    await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
    // A wider sidebar: drag the sash between it and the editor.
    const sash = page.locator('.monaco-sash.vertical').first();
    const box = await sash.boundingBox().catch(() => null);
    if (box) {
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + 260, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
    }
    // The agent retries the same failing build, once a second.
    for (let i = 1; i <= 4; i++) {
      fs.appendFileSync(log, build(i));
      await page.waitForTimeout(1000);
    }
    await page.waitForFunction((id) => /1 loop/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 15_000 });
    const row = page.locator('.monaco-list-row', { hasText: 'Bash: npm run build' }).first();
    await row.waitFor({ timeout: 15_000 });
    await row.click();
    await page.keyboard.press('ArrowRight');
    const toast = page.locator('.notification-toast', { hasText: 'npm run build' }).first();
    await toast.waitFor({ timeout: 15_000 });
    // Expanded, the notification shows its whole message and its actions.
    await toast.hover();
    await toast.locator('.codicon-notifications-expand').first().click({ timeout: 5_000 }).catch(() => undefined);
    await page.mouse.move(600, 300);
    await page.waitForTimeout(500);
    await page.screenshot({ path: OUT });
    process.stdout.write(`${path.relative(ROOT, OUT)} written\n`);
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`screenshot failed: ${err.stack || err}\n`);
  process.exit(1);
});
