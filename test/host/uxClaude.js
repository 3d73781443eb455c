#!/usr/bin/env node
// The UX check of issue 27, as a person meets it: the real Claude Code (its own CLI, driven offline
// by the scripted model of test/agents), hooked with `loop-guardian init claude` and watched, loops
// on `npm run build-missing`; the packaged .vsix in a real VS Code (code-server) opened on that
// project with Playwright and Debian's Chromium. It must show the loop named by the call and its
// real error (`Bash: npm run build-missing`, `Missing script`), no skipped-lines row, and one
// notification that, closed with its X, stays closed, also when the window opens again. Issue 33:
// the hook refused the loop and ended the run, so it is shown as handled (no alarm, no Circuit
// Break, not on the badge); deleting .claude/settings.local.json changes the Agents row within 2 s,
// and a hooked call brings "hook enforced" back within 2 s; Ctrl+Alt+Shift+S writes STOP and says
// what it reaches; under STOP, Claude Code without its hook looping on a build error in
// src/range.ts is an error notification within 2 s of the failure that made it, counted by the
// activity bar's badge, a Problems entry on src/range.ts (at most 3 related rows) with its quick
// fixes; the view's rows read whole (no error line run into the next, sessions named one way); a
// wrong threshold in config.json is underlined by the schema. Screenshots: test-artifacts/ux-claude-*.png.
// A fresh clone's npm ci, package and test:unit: test/host/freshClone.js, run after it by test:e2e.
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
    // Opened by its twistie when closed (a click on a group opened a moment before closes it again).
    if ((await agentsGroup.getAttribute('aria-expanded')) === 'false') await agentsGroup.locator('.monaco-tl-twistie').click();
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
    await stopAndUnhooked(page, sb, settingsFile, DRIVERS, liveRun);
    console.log('ux: a hooked Claude Code loop shows as "Bash: npm run build-missing", handled (Refused …; Claude Code\'s run ended), with its real error (Missing script), no Circuit Break, no badge; one notification, closed for good; the protection row follows the settings file within 2 s; the keybinding, the unhooked loop under STOP (error notification, badge, Problems on src/range.ts, quick fixes) and the schema (1 passed, 0 failed)');
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

/**
 * The Findings view's rows, every one opened (its twistie), as text, for asserting what a person
 * reads there. The list draws only the rows in sight: the window is made tall enough to show them all.
 */
async function openedTree(page, shot) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: size.width, height: 4000 });
  await page.waitForTimeout(500);
  const closed = page.locator('.part.sidebar .monaco-list-row[aria-expanded="false"] .monaco-tl-twistie');
  for (let round = 0; round < 80 && (await closed.count()) > 0; round++) {
    await closed.first().click();
    await page.waitForTimeout(150);
  }
  const rows = await page.locator('.part.sidebar .monaco-list-row').evaluateAll((els) => els.map((r) => ({ level: Number(r.getAttribute('aria-level')), text: (r.textContent ?? '').trim() })));
  await shot();
  await page.setViewportSize(size);
  await page.waitForTimeout(300);
  return rows;
}

/** The Problems panel's rows in order: level 1 a file, 2 an entry, 3 its related information. */
async function problemRows(page) {
  return page.locator('.markers-panel .monaco-list-row').evaluateAll((rows) => rows.map((r) => ({ level: Number(r.getAttribute('aria-level')), text: (r.textContent ?? '').trim() })));
}

async function showProblems(page) {
  if (await page.locator('.markers-panel').first().isVisible().catch(() => false)) return;
  await page.keyboard.press('F1');
  await page.keyboard.type('View: Focus on Problems View');
  await page.waitForTimeout(400);
  await page.keyboard.press('Enter');
  await page.locator('.markers-panel').first().waitFor({ timeout: 15_000 });
}

/** Each failed tool result (`is_error`) Claude Code's transcripts under HOME get from now on, with when this process first saw it. */
function watchErrors(home) {
  const seen = new Map();
  const root = path.join(home, '.claude', 'projects');
  let old = true;
  const scan = () => {
    const files = [];
    const walk = (dir) => {
      let entries = [];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.jsonl') && files.push(path.join(dir, e.name)));
    };
    walk(root);
    for (const f of files) {
      fs.readFileSync(f, 'utf8').split('\n').forEach((line, n) => {
        const key = `${f}:${n}`;
        if (seen.has(key) || !line.includes('"is_error":true')) return;
        try {
          const v = JSON.parse(line);
          if (Array.isArray(v.message?.content) && v.message.content.some((b) => b.type === 'tool_result' && b.is_error === true)) seen.set(key, old ? 0 : Date.now());
        } catch {
          // A line being written: read again on the next scan.
        }
      });
    }
  };
  scan();
  old = false;
  const timer = setInterval(scan, 20);
  return { times: () => [...seen.values()].filter((t) => t > 0).sort((a, b) => a - b), stop: () => clearInterval(timer) };
}

/**
 * Issue 33's other points, in the order a person meets them: Circuit Break by its keybinding (the
 * confirmation says what STOP reaches); Claude Code run without its hook under STOP, looping on a
 * build error in src/range.ts: an error notification within 2 s of the failure that made it, the
 * activity bar's badge counting it, the Problems entry on src/range.ts (at most 3 related rows)
 * with its quick fixes; the view's rows readable (each error line its own, sessions named one
 * way); and config.json's schema underlining a wrong threshold.
 */
async function stopAndUnhooked(page, sb, settingsFile, DRIVERS, liveRun) {
  const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `ux-claude-${name}.png`) });
  // (d) The keybinding, pressed in the workbench: STOP written, and said what it reaches.
  await page.locator('.part.editor').first().click();
  await page.keyboard.press('Control+Alt+Shift+KeyS');
  const confirm = page.locator('.notifications-toasts .notification-toast', { hasText: 'STOP written' }).first();
  await confirm.waitFor({ timeout: 10_000 });
  const confirmed = (await confirm.locator('.notification-list-item-message').first().textContent()) ?? '';
  assert.match(confirmed, /^STOP written to \.github\/guardian\/STOP_ALL in .*: every call of a hooked agent is refused \(Claude Code\)\. Committed, the file holds teammates' and cloud agents' hooked runs too\./, confirmed);
  assert.match(fs.readFileSync(path.join(sb.ws, '.github', 'guardian', 'STOP_ALL'), 'utf8'), /^STOP\b/);
  await shot('5-keybinding-confirmation');
  console.log(`ux: Ctrl+Alt+Shift+S wrote STOP and said: ${confirmed}`);
  await confirm.hover();
  await confirm.locator('[aria-label^="Clear Notification"]').first().click();

  // (a) Claude Code without its hook, under STOP: `npm run build` fails on src/range.ts, 5 times.
  fs.rmSync(settingsFile);
  fs.mkdirSync(path.join(sb.ws, 'src'), { recursive: true });
  fs.writeFileSync(path.join(sb.ws, 'src', 'range.ts'), 'export function inRange(x: number, lo: number, hi: number): number {\n  // clamp() is not imported\n  return clamp(x, lo, hi);\n}\n');
  // tsc's own words (non-pretty: microsoft/TypeScript formatDiagnostic), after a pause that spaces the failures out.
  fs.writeFileSync(path.join(sb.ws, 'build.js'), "setTimeout(() => { console.log(\"src/range.ts(3,10): error TS2304: Cannot find name 'clamp'.\"); process.exit(2); }, 1500);\n");
  const pkgFile = path.join(sb.ws, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  fs.writeFileSync(pkgFile, `${JSON.stringify({ ...pkg, scripts: { ...pkg.scripts, build: 'node build.js' } }, null, 2)}\n`);
  const errors = watchErrors(sb.home);
  const wentOn = page.locator('.notifications-toasts .notification-toast', { hasText: 'went on under STOP' }).first();
  // When the notification first shows, as the page sees it (the same clock as this process's).
  await page.evaluate(() => {
    const seen = () => [...document.querySelectorAll('.notifications-toasts .notification-toast')].some((t) => /went on under STOP/.test(t.textContent ?? ''));
    new MutationObserver((_, obs) => {
      if (seen()) {
        window.lgWentOnAt = Date.now();
        obs.disconnect();
      }
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  let shownAt;
  const toastSeen = wentOn.waitFor({ timeout: 180_000 }).then(async () => (shownAt = (await page.evaluate(() => window.lgWentOnAt)) ?? Date.now()));
  const run = await liveRun(DRIVERS.claude, (turn, a) => (turn.index <= 5 ? a.shell('npm run build', turn.tools) : { text: "Giving up: clamp is not defined anywhere." }), {
    sandbox: sb,
    hook: false,
    maxTurns: 7,
    prompt: 'Build the project with npm run build until it works.',
  });
  await Promise.race([toastSeen, page.waitForTimeout(15_000)]);
  errors.stop();
  const failures = errors.times();
  if (shownAt === undefined) {
    await shot('failed-under-stop');
    throw new Error(`no "went on under STOP" notification (${failures.length} failures in the transcript; the run: ${run.result.code})`);
  }
  const before = failures.filter((t) => t <= shownAt);
  assert.ok(before.length >= 3, `the notification came after ${before.length} failures`);
  const latency = shownAt - before[before.length - 1];
  const message = (await wentOn.locator('.notification-list-item-message').first().textContent()) ?? '';
  assert.equal(await wentOn.locator('.notification-list-item-icon[class*="error"]').count(), 1, `an error: ${await wentOn.innerHTML()}`);
  assert.match(message, /^Claude Code went on under STOP: .*npm run build.*Cannot find name 'clamp'\. STOP reaches only agents whose Loop Guardian hook runs\./, message);
  await shot('6-unhooked-under-stop');
  console.log(`ux: failures seen at ${failures.map((t) => new Date(t).toISOString().slice(11, 23)).join(', ')}; the notification at ${new Date(shownAt).toISOString().slice(11, 23)}`);
  console.log(`ux: under STOP, Claude Code without its hook: an error notification ${latency} ms after the failure that made it (failure ${before.length} of ${failures.length}): ${message}`);

  // (c) The badge: that loop, still going (the hooked one is handled, not counted).
  const badge = page.locator('.activitybar li.action-item', { has: page.locator('[aria-label^="Loop Guardian"]') }).locator('.badge-content');
  await page.waitForFunction(() => [...document.querySelectorAll('.activitybar li.action-item')].some((li) => li.querySelector('[aria-label^="Loop Guardian"]') && (li.querySelector('.badge-content')?.textContent ?? '').trim() === '1'), undefined, { timeout: 10_000 }).catch(async () => {
    await shot('failed-badge');
    throw new Error(`the badge: ${JSON.stringify(await badge.allTextContents())}`);
  });
  await shot('7-badge');
  console.log('ux: the Loop Guardian icon\'s badge says 1 (the unhooked loop; the handled one not counted)');

  // Item 8: the view's rows, all opened: each of the error's lines readable, sessions named one way.
  const rows = await openedTree(page, () => shot('8-view-opened'));
  const tree = rows.map((r) => `${'  '.repeat(Math.max(0, r.level - 1))}${r.text}`).join('\n');
  console.log(`ux: the view, opened:\n${tree}`);
  assert.doesNotMatch(tree, /npm error\s+npm error/, 'no error line run into the next');
  // A session's row (the hooked one, by its hook log; the unhooked one, by its transcript): the agent, when it started, its id's first 8.
  const sessionRows = rows.filter((r) => r.level === 1 && /^Claude Code/.test(r.text));
  assert.equal(sessionRows.length, 2, `both sessions shown:\n${tree}`);
  for (const r of sessionRows) assert.match(r.text, /^Claude Code · started [^·]+ · [0-9a-f]{8}…/, `a session is named as the others: ${r.text}`);
  assert.ok(rows.some((r) => r.level === 2 && /^Bash: npm run build-missing/.test(r.text)) && rows.some((r) => r.level === 2 && /^Bash: npm run build(?!-)/.test(r.text)), `both loops in the view:\n${tree}`);

  // (b) Problems on src/range.ts, at most 3 related rows; its quick fixes in the editor.
  await showProblems(page);
  await page.waitForFunction(() => [...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => /range\.ts/.test(r.textContent ?? '')), undefined, { timeout: 15_000 }).catch(async () => {
    await shot('failed-problems');
    throw new Error(`no Problems entry on src/range.ts: ${JSON.stringify(await problemRows(page))}`);
  });
  const problems = await problemRows(page);
  const at = problems.findIndex((r) => r.level === 1 && /range\.ts/.test(r.text));
  const next = problems.findIndex((r, i) => i > at && r.level === 1);
  const group = problems.slice(at, next === -1 ? undefined : next);
  const entries = group.filter((r) => r.level === 2);
  const related = group.filter((r) => r.level === 3);
  console.log(`ux: Problems on src/range.ts:\n${group.map((r) => `${'  '.repeat(r.level - 1)}${r.text}`).join('\n')}`);
  assert.equal(entries.length, 1, 'one entry for the loop');
  assert.match(entries[0].text, /Cannot find name 'clamp'/);
  assert.match(entries[0].text, /Loop Guardian/);
  assert.match(entries[0].text, /\[Ln 3, Col 10\]/);
  assert.ok(related.length >= 1 && related.length <= 3, `1 to 3 related rows: ${related.length}`);
  await shot('9-problems');
  // Opened from the Problems panel: the editor on line 3; Ctrl+. offers the loop's quick fixes.
  await page.locator('.markers-panel .monaco-list-row[aria-level="2"]', { hasText: "Cannot find name 'clamp'" }).first().dblclick();
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'return clamp' }).first().waitFor({ timeout: 10_000 });
  // Ctrl+. asks every provider, TypeScript's too: asked once TypeScript has read the file (else its answer can take the menu's place).
  const analyzing = () => /Analyzing|Initializing|Loading/.test(document.querySelector('.part.statusbar')?.textContent ?? '');
  await page.waitForFunction(analyzing, undefined, { timeout: 10_000, polling: 100 }).catch(() => undefined);
  await page.waitForFunction(() => !/Analyzing|Initializing|Loading/.test(document.querySelector('.part.statusbar')?.textContent ?? ''), undefined, { timeout: 120_000, polling: 200 });
  const fixes = page.locator('.action-widget .monaco-list-row', { hasText: /Show Loop|Mute|Circuit Break/ });
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Control+Period');
    const shown = await fixes.first().waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (shown) break;
    await page.keyboard.press('Escape');
    if (attempt === 6) {
      await shot('failed-quick-fix');
      throw new Error('no quick fix menu on src/range.ts');
    }
  }
  const offered = (await fixes.allTextContents()).map((t) => t.trim()).filter(Boolean);
  console.log(`ux: the quick fixes on src/range.ts: ${offered.join(' | ')}`);
  await shot('10-quick-fix');
  assert.ok(offered.some((t) => /^Show Loop/.test(t)), `Show Loop offered: ${offered.join(' | ')}`);
  assert.ok(offered.some((t) => /^Mute this loop/.test(t)), `Mute offered: ${offered.join(' | ')}`);
  // STOP is set: Circuit Break would write nothing new, so it is not offered.
  assert.ok(!offered.some((t) => /Circuit Break/.test(t)), `no Circuit Break under STOP: ${offered.join(' | ')}`);
  await page.keyboard.press('Escape');

  // (e) The schema: a wrong threshold in config.json underlined, and in Problems.
  const configFile = path.join(sb.ws, '.github', 'guardian', 'config.json');
  const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
  fs.writeFileSync(configFile, `${JSON.stringify({ ...config, signals: { 'identical-calls': { threshold: 0 } } }, null, 2)}\n`);
  await page.keyboard.press('F1');
  await page.keyboard.type('Loop Guardian: Open Configuration');
  await page.waitForTimeout(600);
  await page.keyboard.press('Enter');
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: /"threshold":\s0/ }).first().waitFor({ timeout: 15_000 });
  await page.locator('.editor-instance .monaco-editor .squiggly-warning, .editor-instance .monaco-editor .squiggly-error').first().waitFor({ timeout: 30_000 }).catch(async () => {
    await shot('failed-schema');
    throw new Error('no underline on the wrong threshold');
  });
  await showProblems(page);
  await page.waitForFunction(() => [...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => /below the minimum of 1/i.test(r.textContent ?? '')), undefined, { timeout: 15_000 }).catch(async () => {
    await shot('failed-schema');
    throw new Error(`no schema entry in Problems: ${JSON.stringify(await problemRows(page))}`);
  });
  const all = await problemRows(page);
  const configAt = all.findIndex((r) => r.level === 1 && /^config\.json/.test(r.text));
  const schemaRow = all.find((r, i) => i > configAt && /below the minimum of 1/i.test(r.text));
  assert.ok(configAt >= 0 && schemaRow && all.slice(configAt + 1, all.indexOf(schemaRow)).every((r) => r.level !== 1), `the schema's entry under config.json: ${JSON.stringify(all)}`);
  console.log(`ux: the schema on config.json: ${schemaRow.text}`);
  await shot('11-schema');
  fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  assert.ok(latency < 2000, `the error notification within 2 s of the failure: ${latency} ms`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
