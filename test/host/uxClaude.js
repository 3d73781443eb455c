#!/usr/bin/env node
// The UX check of issue 27, as a person meets it: the real Claude Code (its own CLI, driven offline
// by the scripted model of test/agents), hooked with `loop-guardian init claude` and watched, loops
// on `npm run build-missing`; the packaged .vsix in a real VS Code (code-server) opened on that
// project with Playwright and Debian's Chromium. It must show the loop named by the call and its
// real error (`Bash: npm run build-missing`, `Missing script`), no skipped-lines row, and one
// notification, a warning whose offers show as buttons, that, closed with its X, stays closed, also
// when the window opens again.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { remoteUri } = require('./codeServer');
const { launch } = require('./browser');
const { ROOT, ARTIFACTS, STATUS_ID, startPackaged } = require('./packaged');

async function main() {
  const { DRIVERS } = require(path.join(ROOT, 'out', 'test', 'agents', 'drivers.js'));
  const { liveRun } = require(path.join(ROOT, 'out', 'test', 'agents', 'live.js'));
  // The hooked loop, by Claude Code itself: two real failures, then refusals (its run ended).
  const run = await liveRun(DRIVERS.claude, (turn, a) => a.shell('npm run build-missing', turn.tools), {
    maxTurns: 8,
    config: { agents: { claude: { enabled: true } } },
  });
  const sb = run.sb;
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-ux-')));
  // The editor runs as the person who ran the agent: the same HOME (its transcripts, its launcher).
  const server = await startPackaged(tmp, { HOME: sb.home, LOOP_GUARDIAN_HOME: path.join(sb.home, '.loop-guardian') });
  const browser = await launch();
  const url = `http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(remoteUri(server.port, sb.ws))}`;
  const toasts = (page) => page.locator('.notifications-toasts .notification-toast', { hasText: 'build-missing' });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
    await page.goto(url);
    await page.locator(`[id="${STATUS_ID}"]`).waitFor({ timeout: 60_000 });
    await page.waitForFunction((id) => /1 loop/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 60_000 });
    await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Bash: npm run build-missing' }).first();
    await row.waitFor({ timeout: 30_000 });
    // Opened by its twistie (a click on the row itself opens the log at the loop's line).
    await row.locator('.monaco-tl-twistie').click();
    // Its reasons beneath it, in the agent's words: the real error, not the guardian's refusals.
    await page.locator('.part.sidebar .monaco-list-row', { hasText: 'Missing script' }).first().waitFor({ timeout: 15_000 });
    const tree = (await page.locator('.part.sidebar .monaco-list-row').allTextContents()).join('\n');
    assert.doesNotMatch(tree, /Refused by Loop Guardian/, tree);
    assert.doesNotMatch(tree, /skipped/i, `no skipped-lines row:\n${tree}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-1-loop.png') });
    // One notification for the loop; its X closes it for good.
    await toasts(page).first().waitFor({ timeout: 30_000 });
    assert.equal(await toasts(page).count(), 1, 'one notification');
    // A loop that halted the agent is a warning (not the blue information icon); its offers are
    // buttons that show without expanding it; it is closed as a person closes it, by its X.
    const toast = toasts(page).first();
    assert.equal(await toast.locator('.notification-list-item-icon[class*="warning"]').count(), 1, `a warning icon: ${await toast.innerHTML()}`);
    for (const offer of ['Circuit Break', 'Show Details', 'Mute']) assert.ok(await toast.locator('.monaco-button', { hasText: offer }).first().isVisible(), `${offer} shows without expanding it`);
    assert.match((await toast.textContent()) ?? '', /Missing script/);
    await toast.hover();
    await toast.locator('[aria-label^="Clear Notification"]').first().click();
    await page.waitForTimeout(1500);
    assert.equal(await toasts(page).count(), 0, 'closed');
    // The window opens again: the loop is still shown, not announced again.
    await page.reload();
    await page.waitForFunction((id) => /1 loop/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 60_000 });
    await page.waitForTimeout(4000);
    assert.equal(await toasts(page).count(), 0, 'not announced again when the window opens');
    await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-2-reopened.png') });
    console.log('ux: a hooked Claude Code loop shows as "Bash: npm run build-missing" with its real error (Missing script), no skipped lines; one notification, closed for good (1 passed, 0 failed)');
  } catch (err) {
    await browser.contexts()[0]?.pages()[0]?.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-failure.png') }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    sb.cleanup();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
