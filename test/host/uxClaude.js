#!/usr/bin/env node
// The UX check of issue 27, as a person meets it: the real Claude Code (its own CLI, driven offline
// by the scripted model of test/agents), hooked with `loop-guardian init claude` and watched, loops
// on `npm run build-missing`; the packaged .vsix in a real VS Code (code-server) opened on that
// project with Playwright and Debian's Chromium. It must show the loop named by the call and its
// real error (`Bash: npm run build-missing`, `Missing script`), no skipped-lines row, and one
// notification that, closed with its X, stays closed, also when the window opens again. Issue 33:
// the hook refused the loop and ended the run, so it is shown as handled (no alarm, no Circuit
// Break, not on the badge); deleting .claude/settings.local.json changes the Agents row within 2 s,
// and a hooked call brings "hook enforced" back within 2 s; under STOP, the same loop run by Claude
// Code without its hook is an error notification; the activity bar's badge counts that loop.
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
    // The hook refused the loop and ended the run: handled, not an alarm.
    await page.waitForFunction((id) => /1 handled/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 60_000 }).catch(async (err) => {
      await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-failed-handled.png') });
      throw new Error(`the status bar never said "1 handled": it says ${JSON.stringify(await page.locator(`[id="${STATUS_ID}"]`).textContent())} (${err.message})`);
    });
    assert.doesNotMatch((await page.locator(`[id="${STATUS_ID}"]`).textContent()) ?? '', /1 loop/, 'a handled loop is not counted as a loop going on');
    await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Bash: npm run build-missing' }).first();
    await row.waitFor({ timeout: 30_000 });
    assert.match((await row.textContent()) ?? '', /Handled/, `the row says handled: ${await row.textContent()}`);
    // The Loop Guardian icon's own badge (the other icons have theirs: Source Control's changes).
    const badge = page.locator('.activitybar li.action-item', { has: page.locator('[aria-label^="Loop Guardian"]') }).locator('.badge-content');
    const shown = await badge.evaluateAll((els) => els.filter((e) => e.offsetParent !== null && (e.textContent ?? '').trim() !== '').map((e) => e.textContent));
    assert.deepEqual(shown, [], 'no badge for a handled loop');
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
    // A loop the hook handled leads with what it did, as information; its offers are buttons that
    // show without expanding it, and Circuit Break is not among them; closed by its X.
    const toast = toasts(page).first();
    assert.equal(await toast.locator('.notification-list-item-icon[class*="info"]').count(), 1, `an information icon: ${await toast.innerHTML()}`);
    for (const offer of ['Show Details', 'Mute']) assert.ok(await toast.locator('.monaco-button', { hasText: offer }).first().isVisible(), `${offer} shows without expanding it`);
    assert.equal(await toast.locator('.monaco-button', { hasText: 'Circuit Break' }).count(), 0, 'no Circuit Break for a loop the hook ended');
    const message = (await toast.locator('.notification-list-item-message').first().textContent()) ?? '';
    assert.match(message, /^Refused \d calls?; Claude Code's run ended/);
    assert.match(message, /Missing script/);
    await toast.hover();
    await toast.locator('[aria-label^="Clear Notification"]').first().click();
    await page.waitForTimeout(1500);
    assert.equal(await toasts(page).count(), 0, 'closed');
    // The window opens again: the loop is still shown, not announced again.
    await page.reload();
    await page.waitForFunction((id) => /1 handled/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 60_000 }).catch(async (err) => {
      await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-failed-handled.png') });
      throw new Error(`the status bar never said "1 handled": it says ${JSON.stringify(await page.locator(`[id="${STATUS_ID}"]`).textContent())} (${err.message})`);
    });
    await page.waitForTimeout(4000);
    assert.equal(await toasts(page).count(), 0, 'not announced again when the window opens');
    await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-2-reopened.png') });

    // Protection, re-read by a file watcher: the Agents row, opened.
    // The window reopened with the view shown or not: a click on its icon shows it, or hides it (then once more).
    const agentsGroup = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Agents in this folder' }).first();
    if (!(await agentsGroup.isVisible())) {
      await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
      await agentsGroup.waitFor({ timeout: 5_000 }).catch(() => page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click());
    }
    await agentsGroup.waitFor({ timeout: 30_000 });
    const claudeRow = () => page.locator('.part.sidebar .monaco-list-row', { hasText: 'Claude Code' }).filter({ hasText: /session|hook|watched/ }).first();
    if ((await claudeRow().count()) === 0) await agentsGroup.click();
    await claudeRow().waitFor({ timeout: 15_000 });
    await page.waitForFunction(() => [...document.querySelectorAll('.part.sidebar .monaco-list-row')].some((r) => /Claude Code/.test(r.textContent ?? '') && /hook enforced/.test(r.textContent ?? '')), undefined, { timeout: 30_000 });
    const settingsFile = path.join(sb.ws, '.claude', 'settings.local.json');
    const settings = fs.readFileSync(settingsFile, 'utf8');
    let t0 = Date.now();
    fs.rmSync(settingsFile);
    await page.waitForFunction(() => [...document.querySelectorAll('.part.sidebar .monaco-list-row')].some((r) => /Claude Code/.test(r.textContent ?? '') && !/hook (enforced|installed)/.test(r.textContent ?? '') && /session/.test(r.textContent ?? '')), undefined, { timeout: 10_000 });
    const removed = Date.now() - t0;
    await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-3-hook-removed.png') });
    // Back, and the first hooked call: "hook enforced" again.
    fs.writeFileSync(settingsFile, settings);
    const command = JSON.parse(settings).hooks.PreToolUse[0].hooks[0].command;
    await page.waitForFunction(() => [...document.querySelectorAll('.part.sidebar .monaco-list-row')].some((r) => /Claude Code/.test(r.textContent ?? '') && /hook (installed|enforced)/.test(r.textContent ?? '')), undefined, { timeout: 10_000 });
    const { execFileSync } = require('node:child_process');
    execFileSync('sh', ['-c', command], { cwd: sb.ws, env: { ...process.env, ...sb.env, HOME: sb.home, CLAUDE_PROJECT_DIR: sb.ws }, input: JSON.stringify({ session_id: 'ux-call', hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'package.json' }, tool_use_id: 'ux1' }) });
    t0 = Date.now();
    await page.waitForFunction(() => [...document.querySelectorAll('.part.sidebar .monaco-list-row')].some((r) => /Claude Code/.test(r.textContent ?? '') && /hook enforced/.test(r.textContent ?? '')), undefined, { timeout: 10_000 });
    const enforced = Date.now() - t0;
    console.log(`ux: the Agents row changed ${removed} ms after .claude/settings.local.json was deleted, and said "hook enforced" ${enforced} ms after the first hooked call`);
    assert.ok(removed < 2000 && enforced < 2000, `within 2 s: ${removed} ms, ${enforced} ms`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-4-enforced.png') });
    console.log('ux: a hooked Claude Code loop shows as "Bash: npm run build-missing", handled (Refused …; Claude Code\'s run ended), with its real error (Missing script), no Circuit Break, no badge; one notification, closed for good; the protection row follows the settings file within 2 s (1 passed, 0 failed)');
  } catch (err) {
    await browser.contexts()[0]?.pages()[0]?.screenshot({ path: path.join(ARTIFACTS, 'ux-claude-failure.png') }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== "1") fs.rmSync(tmp, { recursive: true, force: true });
    if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== "1") sb.cleanup();
    else console.log(`kept: ${sb.dir}`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
