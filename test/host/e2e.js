#!/usr/bin/env node
// End to end, as a person would: the packaged .vsix installed into code-server, a workspace in
// which a simulated agent loops, the page driven by Playwright and Debian's Chromium. Screenshots go
// to test-artifacts/ (git-ignored). Measures the time from appending a looping line to the status
// bar showing it. `--vscode minimum|stable` as for runIntegration.js (code-server 4.100.3 or 4.139.1).
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { remoteUri, VERSION } = require('./codeServer');
const { launch } = require('./browser');
const { ROOT, ARTIFACTS, STATUS_ID, startPackaged } = require('./packaged');

const line = (e) => `${JSON.stringify({ v: 1, ...e })}\n`;
// No outcome recorded: the third identical call in a row is the first thing that halts.
const call = (session) => ({ type: 'tool', session, agent: 'coder', tool: 'read_file', args: { path: 'src/range.ts' }, ok: true, output: 'export function range() {}' });

async function main() {
  if (!process.argv.includes('--no-package')) execFileSync('npm', ['run', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-e2e-')));
  const ws = path.join(tmp, 'demo');
  const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
  fs.mkdirSync(path.dirname(log), { recursive: true });
  fs.writeFileSync(log, line({ type: 'user', session: 'e2e-0', text: 'Fix the off-by-one' }) + line(call('e2e-0')) + line(call('e2e-0')));
  // The launcher the extension may refresh stays in this run's folder, never the person's home.
  const server = await startPackaged(tmp, { LOOP_GUARDIAN_HOME: path.join(tmp, 'guardian-home') });
  const browser = await launch();
  const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
    await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(remoteUri(server.port, ws))}`);
    const status = page.locator(`[id="${STATUS_ID}"]`);
    await status.waitFor({ timeout: 60_000 });
    await page.waitForFunction((id) => /No loops/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 30_000 });
    await shot(page, '1-calm');

    // The agent loops: its 3rd identical call lands in the log; how long until the status bar shows it?
    const latencies = [];
    for (let round = 1; round <= 5; round++) {
      const session = `e2e-${round}`;
      fs.appendFileSync(log, line({ type: 'user', session: `e2e-${round - 1}`, text: 'try again' }));
      await page.waitForFunction((id) => /No loops/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 10_000, polling: 10 });
      fs.appendFileSync(log, line(call(session)) + line(call(session)));
      await page.waitForTimeout(300);
      const t0 = Date.now();
      fs.appendFileSync(log, line(call(session)));
      await page.waitForFunction((id) => /1 loop/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 10_000, polling: 5 });
      latencies.push(Date.now() - t0);
    }
    latencies.sort((a, b) => a - b);
    const text = (await status.textContent()) ?? '';
    assert.match(text, /1 loop/);
    await shot(page, '2-loop-detected');

    await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
    await page.locator('.monaco-list-row', { hasText: 'read_file src/range.ts' }).first().waitFor({ timeout: 15_000 });
    await shot(page, '3-sidebar');

    await page.keyboard.press('F1');
    await page.keyboard.type('Loop Guardian: Circuit Break');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Circuit Break' }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    const stopAll = path.join(ws, '.github', 'guardian', 'STOP_ALL');
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(stopAll) && Date.now() < deadline) await page.waitForTimeout(50);
    assert.match(fs.readFileSync(stopAll, 'utf8'), /^STOP \d{4}-\d\d-\d\dT[\d:.]+Z\n/);
    await page.waitForFunction((id) => /STOP/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 10_000 });
    await shot(page, '4-circuit-break');

    // The walkthrough opens from the palette, on its own page. (Extensions loaded from a
    // development path, as in the integration suites, do not register theirs in code-server: only
    // the installed .vsix proves it.)
    await page.keyboard.press('F1');
    await page.keyboard.type('Loop Guardian: Get Started');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started' }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    await page.locator('text=Get started with Loop Guardian').first().waitFor({ timeout: 15_000 });
    const tabs = await page.locator('.tab .label-name').allTextContents();
    // VS Code 1.100 titles the tab "Walkthrough: Agent Loop Guardian", 1.139 "Welcome" (its page is ours: the text above).
    assert.ok(tabs.some((t) => /Walkthrough: Agent Loop Guardian|^Welcome$/.test(t)), `the walkthrough's tab (${tabs.join(', ')})`);
    await shot(page, '5-walkthrough');

    const median = latencies[latencies.length >> 1];
    console.log(`e2e on code-server ${VERSION}: packaged .vsix installed, loop shown, sidebar opened, Circuit Break wrote STOP_ALL, the walkthrough opened`);
    console.log(`e2e: append → status bar latency: median ${median} ms, all ${latencies.join(', ')} ms (debounce 75 ms)`);
    console.log(`e2e: screenshots in ${path.relative(ROOT, ARTIFACTS)}/`);
  } catch (err) {
    await browser.contexts()[0]?.pages()[0]?.screenshot({ path: path.join(ARTIFACTS, 'failure.png') }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`e2e failed: ${err.stack || err}\n`);
  process.exit(1);
});
