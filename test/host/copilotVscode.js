#!/usr/bin/env node
// GitHub Copilot's agent mode, live, in the same VS Code as the extension (issue 35): code-server
// 4.139.1 (VS Code 1.139.1) with its built-in Copilot Chat 0.67.0, run offline without a GitHub
// sign-in against the scripted model of test/agents (a BYOK "Custom Endpoint", Chat Completions
// SSE: ../shared/docs/copilot-vscode-live.md), the packaged .vsix installed beside it, and
// `loop-guardian init copilot` run in each workspace as a user runs it. The chat is driven with
// Playwright and Debian's Chromium. Every assertion is on what Copilot itself did: the requests it
// sent the model (and what it told the model of each call), the commands its terminal really ran
// (each run of the project's build appends a line to a file), and the session files it wrote.
// `node test/host/copilotVscode.js [--no-package] [--grep <a pattern of the scenarios' names>]`.
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startCodeServer, ensureCodeServer, nodeFor, remoteUri, NEWEST } = require('./codeServer');
const { launch } = require('./browser');
const { ROOT, VSIX, ARTIFACTS, STATUS_ID } = require('./packaged');

const VERSION = NEWEST;
const REFUSED = /Loop Guardian refused this call|Loop Guardian ended this run/;
const STOPPED = /STOP_ALL is set to STOP/;
/** The most tool-calling requests a scenario's model answers with a call; then it ends its answer (the harness's runaway guard, not Copilot's). */
const MAX_TURNS = 6;
const DONE = 'Stopping here.';

/** A project whose build fails the same way every time, and says so in a file each time it really runs. */
function project(ws) {
  fs.writeFileSync(path.join(ws, 'package.json'), `${JSON.stringify({ name: 'live-project', version: '1.0.0', private: true, scripts: { build: 'node build.js', test: 'node test.js' } }, null, 2)}\n`);
  fs.writeFileSync(path.join(ws, 'build.js'), "require('fs').appendFileSync('build-runs.log', 'ran\\n');\nconsole.error('Error: Cannot find module ./config/missing.json');\nprocess.exit(1);\n");
  fs.writeFileSync(path.join(ws, 'test.js'), "require('fs').appendFileSync('test-runs.log', 'ran\\n');\nconsole.log('tests pass: ' + require('./value.js'));\n");
  fs.writeFileSync(path.join(ws, 'value.js'), 'module.exports = 1;\n');
  // A migration that cannot reach its database; with NOISY set, its error carries what changes every run (clock times, a pid, a UUID, a temp path, a random number).
  const noise = "if (process.env.NOISY || require('fs').existsSync('noisy')) console.error('[' + new Date().toISOString() + '] ' + new Date().toTimeString().slice(0, 8) + ' pid ' + process.pid + ' request ' + require('crypto').randomUUID() + ' workdir /tmp/tmp.' + Math.random().toString(36).slice(2, 10) + ' nonce ' + Math.random());";
  fs.writeFileSync(path.join(ws, 'migrate.js'), `require('fs').appendFileSync('migrate-runs.log', 'ran\\n');\n${noise}\nconsole.error('Error: connect ECONNREFUSED 127.0.0.1:5432');\nprocess.exit(1);\n`);
  fs.writeFileSync(path.join(ws, 'finish.js'), "require('fs').writeFileSync('finished.txt', 'done\\n');\nconsole.log('finished');\n");
  const pkg = JSON.parse(fs.readFileSync(path.join(ws, 'package.json'), 'utf8'));
  pkg.scripts['db:migrate'] = 'node migrate.js';
  fs.writeFileSync(path.join(ws, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
}

/** How models retry a failing command: the same migration written another way each time (as test/agents/live.test.ts). */
function retryVariation(k, ws, first = 0) {
  const forms = ['npm run db:migrate', 'npm run db:migrate 2>&1', `cd ${ws} && npm run db:migrate`, 'sleep 1 && npm run db:migrate', 'npm run db:migrate --verbose', 'npm run db:migrate 2>&1 | tail -20'];
  return forms[(first + k - 1) % forms.length];
}

const buildRuns = (ws) => count(path.join(ws, 'build-runs.log'));
const testRuns = (ws) => count(path.join(ws, 'test-runs.log'));
const migrateRuns = (ws) => count(path.join(ws, 'migrate-runs.log'));
function count(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** Copilot's terminal tool, with the arguments VS Code 1.139 requires (its schema: command, explanation, goal, mode). */
const shell = (command, explanation = 'Run it') => ({ tool: 'run_in_terminal', args: { command, explanation, goal: 'Build the project', mode: 'sync' } });
const replace = (file, from, to) => ({ tool: 'replace_string_in_file', args: { filePath: file, oldString: from, newString: to } });

/** The guardian's hook records of a workspace. */
function hookRecords(ws) {
  const dir = path.join(ws, '.tmp', 'current', 'logs');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('hook-'))
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)));
}
const guardianLog = (ws) => (fs.existsSync(path.join(ws, '.tmp', 'guardian', 'guardian.log')) ? fs.readFileSync(path.join(ws, '.tmp', 'guardian', 'guardian.log'), 'utf8') : '');
const refusedRecords = (ws) => hookRecords(ws).filter((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian'));

/*
 * The scenarios. `script(k, turn, ctx)` answers the k-th tool-calling request of the scenario;
 * `check(s)` asserts on what happened. Each runs in its own workspace (a window of its own), on
 * one code-server and one scripted model.
 */
const SCENARIOS = [
  {
    name: 'loop: the same failing command is refused by the 3rd call',
    script: () => shell('npm run build'),
    check(s) {
      assert.match(s.said, /Cannot find module \.\/config\/missing\.json/, s.describe());
      // VS Code's PostToolUse gives the terminal's text and no exit code (seen: `tool_response`
      // "\n> live-project@1.0.0 build\n> node build.js\n\nError: …", the same text the model reads);
      // the exit code comes from the extension's record of the terminal's shell integration: the
      // hook knows two calls that failed with the same output, and refuses the 3rd.
      assert.equal(buildRuns(s.ws), 2, `the build ran twice, then was refused\n${s.describe()}`);
      assert.ok(refusedRecords(s.ws).length >= 1, s.describe());
      const read = s.turns.findIndex((t) => REFUSED.test(t.lastResult));
      assert.equal(read, 3, `the model read the refusal of the 3rd call in its 4th request\n${s.describe()}`);
      // Not ended: Copilot asks its model again after every refusal (the scripted one keeps calling).
      assert.ok(s.turns.slice(read).every((t) => REFUSED.test(t.lastResult)), `every later call refused\n${s.describe()}`);
      s.measure('halt', s.turns.length - read);
    },
  },
  {
    name: 'STOP before a run: no call runs',
    before: (ws) => write(ws, '.github/guardian/STOP_ALL', 'STOP\n'),
    script: () => shell('npm run build'),
    check(s) {
      assert.equal(buildRuns(s.ws), 0, s.describe());
      // Refused at UserPromptSubmit (`{"continue": false}`): the turn is blocked before any tool-calling request.
      assert.match(guardianLog(s.ws), /refused a prompt in session/, s.describe());
      assert.equal(s.turns.length, 0, s.describe());
      s.measure('stopBefore', s.turns.length);
      s.measure('stopBeforeAll', s.requests.length);
    },
  },
  {
    name: 'STOP during a run: the call after it is refused',
    atTurn: { turn: 2, run: (ws) => write(ws, '.github/guardian/STOP_ALL', `STOP ${new Date().toISOString()}\n`) },
    script: (k) => shell(k === 1 ? 'npm test' : 'npm run build'),
    check(s) {
      assert.equal(testRuns(s.ws), 1, s.describe());
      assert.equal(buildRuns(s.ws), 0, `nothing ran after STOP\n${s.describe()}`);
      assert.ok(s.turns.some((t) => STOPPED.test(t.lastResult)), `the model read STOP\n${s.describe()}`);
      s.measure('stopMid', s.turns.length - 2);
    },
  },
  ...[false, true].map((noisy) => ({
    name: `variations${noisy ? ' with noise' : ''}: the same failing command retried with trivial variations (2>&1, cd, sleep, --verbose, | tail), a new explanation each time${noisy ? ', its error full of noise (clock times, pids, UUIDs, temp paths, random numbers)' : ''}, is refused by the 4th call`,
    before: (ws) => noisy && write(ws, 'noisy', '1\n'),
    script: (k, turn, ws) => shell(retryVariation(k, ws, noisy ? 4 : 0), `Retry the migration (${k})`),
    check(s) {
      assert.match(s.said, /ECONNREFUSED 127\.0\.0\.1:5432/, s.describe());
      const records = hookRecords(s.ws);
      // VS Code 1.139.1's result gives no exit code (its sync run ends on the idle prompt: docs/agents.md);
      // the failures come from the exit codes the extension heard from the terminal's shell
      // integration (src/vscode/agentTerminalExits.ts), read by the hook after each call.
      const failed = records.filter((e) => e.type === 'tool_result' && e.ok === false);
      assert.ok(failed.length >= 2 && failed.every((e) => /\(exit code 1\)$/.test(String(e.error))), `the tries' failures known from their exit codes\n${JSON.stringify(records.map((e) => [e.type, e.ok, String(e.error ?? '').slice(-40)]))}\n${s.describe()}`);
      const first = records.findIndex((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian'));
      const tries = records.slice(0, first).filter((e) => e.type === 'tool').length;
      assert.ok(first >= 0 && tries <= 3, `tried ${tries} times before the refusal\n${s.describe()}`);
      assert.equal(migrateRuns(s.ws), tries, `what ran is what the hook let through\n${s.describe()}`);
      assert.match(String(records[first].error), /repeated-error|failing-call/, s.describe());
      const read = s.turns.findIndex((t) => REFUSED.test(t.lastResult));
      assert.ok(read >= 0 && read <= 4, `the model read the refusal\n${s.describe()}`);
      s.measure(noisy ? 'noiseTries' : 'variationTries', tries);
      s.measure(noisy ? 'noiseHalt' : 'variationHalt', s.turns.length - read);
    },
  })),
  {
    name: 'non-shell loop: reading a file that does not exist, again and again, is refused by the 4th call',
    script: (k, turn, ws) => ({ tool: 'read_file', args: { filePath: path.join(ws, 'config', 'missing.json'), startLine: 1, endLine: 50 } }),
    check(s) {
      const read = s.turns.findIndex((t) => REFUSED.test(t.lastResult));
      assert.ok(read >= 0 && read <= 4, `the model read the refusal by the 4th call\n${s.describe()}`);
      assert.ok(refusedRecords(s.ws).length >= 1, s.describe());
      s.measure('readHalt', s.turns.length - read);
    },
  },
  {
    name: 'PAUSE: a delegation to a subagent is refused, the agent\'s own work goes on',
    before: (ws) => write(ws, '.github/guardian/STOP_ALL', `PAUSE ${new Date().toISOString()}\n`),
    // Once seen on CI: "Tool runSubagent is currently disabled by the user" (not offered in the first request).
    needs: 'runSubagent',
    script: (k) => (k === 1 ? { tool: 'runSubagent', args: { prompt: 'Run npm run build and report what fails.', description: 'Build the project' } } : k === 2 ? shell('node finish.js', 'Finish it myself') : { text: 'Finished without a subagent.' }),
    check(s) {
      assert.ok(s.turns.length >= 2, s.describe());
      assert.match(s.turns[1].lastResult, /STOP_ALL is set to PAUSE/, `the delegation was refused\n${s.describe()}`);
      assert.ok(fs.existsSync(path.join(s.ws, 'finished.txt')), `its own work ran under PAUSE\n${s.describe()}`);
      assert.equal(refusedRecords(s.ws).length, 0, 'a PAUSE refusal is not a loop record');
    },
  },
  {
    // Copilot Chat 0.67.0 runs Stop only once a round has no tool call (the model ended its answer),
    // and reads only `hookSpecificOutput.decision: "block"` there, which makes the loop go on
    // (microsoft/vscode-copilot-chat `toolCallingLoop.ts` `executeStopHook`; its dist/extension.js):
    // a Stop hook can lengthen a run, never end one that keeps calling tools.
    name: "Stop hook: its `decision: block` after a refusal ends nothing (it fires once the model has ended its answer)",
    before: (ws) => {
      // A hook file of the person's beside the guardian's: on Stop it records its input and, the first time, answers `decision: block`.
      write(ws, 'stop-probe.sh', '#!/bin/sh\nin=$(cat)\nprintf \'%s\\n\' "$in" >> stop-hook.log\ncase "$in" in *\'"stop_hook_active":true\'*) exit 0;; esac\nprintf \'%s\\n\' \'{"decision":"block","reason":"Loop Guardian refused this run: end it now."}\'\n');
      fs.chmodSync(path.join(ws, 'stop-probe.sh'), 0o755);
      write(ws, '.github/hooks/stop-probe.json', JSON.stringify({ version: 1, hooks: { Stop: [{ type: 'command', command: path.join(ws, 'stop-probe.sh'), timeout: 15 }] } }));
    },
    script: () => shell('npm run build'),
    check(s) {
      const read = s.turns.findIndex((t) => REFUSED.test(t.lastResult));
      assert.equal(read, 3, s.describe());
      const log = fs.existsSync(path.join(s.ws, 'stop-hook.log')) ? fs.readFileSync(path.join(s.ws, 'stop-hook.log'), 'utf8').split('\n').filter(Boolean) : [];
      s.note(`Stop hook calls: ${log.length}; ${log.map((l) => l.slice(0, 160)).join(' | ')}`);
      assert.equal(log.length, 1, `the Stop hook ran once\n${s.describe()}`);
      const stop = JSON.parse(log[0]);
      assert.equal(stop.stop_hook_active, false, log[0]);
      // It ran after the model's last request, when the run was over: every tool-calling request came first, and none after it.
      assert.ok(Date.parse(stop.timestamp) >= s.turns[s.turns.length - 1].at, `${log[0]}\n${s.describe()}`);
      assert.equal(s.turns.length, MAX_TURNS + 1, `the top-level decision: block asked for no further request\n${s.describe()}`);
      s.measure('stopHookCalls', log.length);
      s.measure('stopHookHalt', s.turns.length - read);
    },
  },
  {
    // The UX check with Copilot (issue 35): what a person sees of a Copilot loop beside the agent.
    name: 'ux: a Copilot loop refused is shown once in the view and in one notification; its Circuit Break writes STOP, and the next prompt is refused',
    script: () => shell('npm run build'),
    async ui(page, ux) {
      const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `copilot-vscode-ux-${name}.png`) });
      const toasts = page.locator('.notifications-toasts .notification-toast', { hasText: 'run_in_terminal: npm run build' });
      await toasts.first().waitFor({ timeout: 60_000 });
      ux.toasts = await toasts.count();
      ux.toast = (await toasts.first().locator('.notification-list-item-message').first().textContent()) ?? '';
      ux.offers = await toasts.first().locator('.monaco-button').allTextContents();
      ux.status = (await page.locator(`[id="${STATUS_ID}"]`).textContent()) ?? '';
      await page.locator('.activitybar [aria-label^="Loop Guardian"]').first().click();
      const rows = page.locator('.part.sidebar .monaco-list-row', { hasText: 'run_in_terminal: npm run build' });
      await rows.first().waitFor({ timeout: 30_000 });
      ux.rows = (await rows.allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
      await shot('1-loop-refused');
      // STOP from where the person is told of the loop: the notification's Circuit Break. VS Code
      // hides an information toast after 10 s (notificationsToasts' PURGE_TIMEOUT, Info 1e4, in
      // code-server 4.139.1's workbench.js); it stays in the notification center, where a person
      // who looked at the view first finds it.
      ux.breakFrom = await circuitBreak(page, toasts.first(), 'run_in_terminal: npm run build');
      const stopFile = path.join(ux.ws, '.github', 'guardian', 'STOP_ALL');
      const until = Date.now() + 15_000;
      while (Date.now() < until && !(fs.existsSync(stopFile) && /^STOP\b/.test(fs.readFileSync(stopFile, 'utf8')))) await page.waitForTimeout(200);
      ux.stopAll = fs.existsSync(stopFile) ? fs.readFileSync(stopFile, 'utf8') : '';
      await page.waitForFunction((id) => /STOP/.test(document.getElementById(id)?.textContent ?? ''), STATUS_ID, { timeout: 15_000 }).catch(() => undefined);
      ux.statusAfter = (await page.locator(`[id="${STATUS_ID}"]`).textContent()) ?? '';
      const confirm = page.locator('.notifications-toasts .notification-toast', { hasText: 'STOP written' }).first();
      await confirm.waitFor({ timeout: 15_000 });
      ux.confirm = (await confirm.locator('.notification-list-item-message').first().textContent()) ?? '';
      await shot('2-circuit-break');
      // Closed by its X: it covers the chat's input.
      await confirm.hover();
      await confirm.locator('[aria-label^="Clear Notification"]').first().click();
      // The person's next prompt: Copilot asks for it, the hook refuses it under STOP.
      ux.buildsBefore = buildRuns(ux.ws);
      const turnsBefore = ux.model.turns().length;
      const from = ux.model.requests.length;
      const input = page.locator('.interactive-input-part:visible .monaco-editor').first();
      await input.click();
      await page.keyboard.type('Try the build once more.');
      await page.keyboard.press('Enter');
      // Refused at UserPromptSubmit: the guardian's log says so; then the chat is left to settle (a refused turn may send the model nothing).
      const refusedBy = Date.now() + 60_000;
      while (Date.now() < refusedBy && !/refused a prompt in session/.test(guardianLog(ux.ws))) await page.waitForTimeout(500);
      await page.waitForTimeout(8000);
      ux.requestsAfterStop = ux.model.requests.length - from;
      ux.turnsAfterStop = ux.model.turns().length - turnsBefore;
      ux.buildsAfter = buildRuns(ux.ws);
      await shot('3-prompt-refused');
    },
    check(s) {
      const ux = s.ux;
      const read = s.turns.findIndex((t) => REFUSED.test(t.lastResult));
      assert.equal(read, 3, `the 3rd call refused\n${s.describe()}`);
      assert.equal(ux.toasts, 1, `one notification: ${ux.toast}`);
      assert.match(ux.toast, /run_in_terminal: npm run build.*Cannot find module \.\/config\/missing\.json/s, ux.toast);
      assert.ok(ux.offers.includes('Circuit Break'), `offers: ${ux.offers.join(', ')}`);
      assert.equal(ux.rows.length, 1, `shown once in the view: ${ux.rows.join(' | ')}`);
      // Handled: the hook refused it (Copilot's run is not ended, so the notification still offers Circuit Break).
      assert.match(ux.rows[0], /Handled.*refused \d+/, ux.rows[0]);
      assert.match(ux.status, /handled|loop/, ux.status);
      assert.match(ux.stopAll, /^STOP\b/, `Circuit Break wrote STOP: ${JSON.stringify(ux.stopAll)}`);
      assert.match(ux.confirm, /^STOP written to \.github\/guardian\/STOP_ALL in .*: every call of a hooked agent is refused \(GitHub Copilot \(VS Code\)/, ux.confirm);
      assert.match(ux.statusAfter, /STOP/, ux.statusAfter);
      assert.equal(ux.turnsAfterStop, 0, 'the next prompt made no tool-calling request');
      assert.equal(ux.buildsAfter, ux.buildsBefore, 'nothing ran after STOP');
      assert.match(guardianLog(s.ws), /refused a prompt in session/, 'the prompt was refused at UserPromptSubmit');
      s.note(`notification: ${ux.toast.replace(/\s+/g, ' ')}; row: ${ux.rows[0]}; status bar: ${ux.status.trim()} -> ${ux.statusAfter.trim()}; Circuit Break clicked in the ${ux.breakFrom}; after STOP: ${ux.requestsAfterStop} requests, ${ux.turnsAfterStop} with tools`);
      s.measure('uxStopRequests', ux.requestsAfterStop);
    },
  },
  {
    name: 'healthy: edit, test, edit, test… is never refused',
    script: (k, turn, ws) => {
      if (k > 4) return { text: 'All done: the tests pass.' };
      // Odd turns edit value.js (a new value each time), even turns run the tests.
      const n = Math.ceil(k / 2);
      return k % 2 === 1 ? replace(path.join(ws, 'value.js'), `module.exports = ${n};`, `module.exports = ${n + 1};`) : shell('npm test');
    },
    check(s) {
      assert.equal(refusedRecords(s.ws).length, 0, s.describe());
      assert.equal(testRuns(s.ws), 2, s.describe());
      assert.match(fs.readFileSync(path.join(s.ws, 'value.js'), 'utf8'), /= 3;/, s.describe());
      assert.ok(!s.turns.some((t) => REFUSED.test(t.lastResult) || STOPPED.test(t.lastResult)), s.describe());
    },
  },
];

/**
 * Clicks a notification's Circuit Break: on its toast while it shows, else in the notification
 * center (VS Code hides an information toast after 10 s). Says where it was clicked.
 */
async function circuitBreak(page, toast, hasText) {
  try {
    await toast.locator('.monaco-button', { hasText: 'Circuit Break' }).first().click({ timeout: 3000 });
    return 'toast';
  } catch {
    // Hidden meanwhile: the notification center lists it.
  }
  await page.keyboard.press('F1');
  await page.keyboard.type('Notifications: Show Notifications');
  await page.waitForTimeout(400);
  await page.keyboard.press('Enter');
  const item = page.locator('.notifications-center .notification-list-item', { hasText }).first();
  await item.waitFor({ timeout: 15_000 });
  const button = item.locator('.monaco-button', { hasText: 'Circuit Break' }).first();
  // A collapsed notification shows its buttons once expanded (a click on it expands it).
  if (!(await button.isVisible())) await item.click();
  await button.click({ timeout: 15_000 });
  return 'notification center';
}

function write(root, rel, text) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** code-server's user settings for Copilot's agent mode offline (copilot-vscode-live.md, section 2). */
function profile(data, modelUrl) {
  write(data, 'User/chatLanguageModels.json', JSON.stringify([
    {
      vendor: 'customendpoint',
      name: 'Scripted',
      apiType: 'chat-completions',
      models: [{ id: 'scripted-model', name: 'Scripted Model', url: `${modelUrl}/v1/chat/completions`, apiType: 'chat-completions', toolCalling: true, vision: false, maxInputTokens: 128000, maxOutputTokens: 16000 }],
    },
  ], null, 2));
  write(data, 'User/settings.json', JSON.stringify({
    'chat.allowAnonymousAccess': true,
    'chat.utilityModel': 'customendpoint/scripted-model',
    'chat.utilitySmallModel': 'customendpoint/scripted-model',
    // "Allow all": the person lets the agent run its commands without asking (the setting is the picker's starting level).
    'chat.permissions.default': 'autoApprove',
    'chat.useHooks': true,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
  }, null, 2));
}

async function main() {
  const grep = process.argv.includes('--grep') ? process.argv[process.argv.indexOf('--grep') + 1] : undefined;
  const scenarios = SCENARIOS.filter((s) => grep === undefined || new RegExp(grep).test(s.name));
  if (!process.argv.includes('--no-package')) execFileSync('npm', ['run', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const { startScriptedModel } = require(path.join(ROOT, 'out', 'test', 'agents', 'model.js'));
  const { makeSandbox, guardian } = require(path.join(ROOT, 'out', 'test', 'agents', 'sandbox.js'));
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-copilot-vscode-')));
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  // npm's update notice would make one run's output differ from the next.
  const env = { HOME: home, LOOP_GUARDIAN_HOME: path.join(home, '.loop-guardian'), npm_config_update_notifier: 'false' };
  fs.mkdirSync(ARTIFACTS, { recursive: true });

  // One model for every scenario: the scenario running now answers.
  let current;
  const model = await startScriptedModel((turn) => {
    if (current === undefined) return { text: DONE };
    const k = turn.index - current.base;
    current.atTurn?.(k);
    return k > MAX_TURNS ? { text: DONE } : current.script(k, turn, current.ws);
  });

  const exts = path.join(tmp, 'exts');
  const data = path.join(tmp, 'data');
  execFileSync(nodeFor(VERSION), [ensureCodeServer(VERSION), '--extensions-dir', exts, '--install-extension', VSIX], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  profile(data, model.url);
  // LOOP_GUARDIAN_VSCODE_LOG=debug|trace: the window's log level too (code-server hands it to the workbench).
  const logArgs = process.env.LOOP_GUARDIAN_VSCODE_LOG ? ['--log', process.env.LOOP_GUARDIAN_VSCODE_LOG] : [];
  const server = await startCodeServer({ version: VERSION, extensionsDir: exts, userDataDir: data, env, args: logArgs });
  const browser = await launch();
  const measured = {};
  const results = [];
  try {
    // A scenario that needs a tool in Copilot's first request (`needs`) runs once more in a new
    // window when that request lacked it: such a window says nothing of the guardian.
    for (const scenario of scenarios) for (let attempt = 1; attempt <= 2; attempt++) {
      let retry;
      const sb = makeSandbox('copilot-vscode');
      const ws = sb.ws;
      project(ws);
      const as = { ...sb, env: { ...sb.env, ...env } };
      const init = guardian(as, ['init', 'copilot']);
      assert.equal(init.status ?? init.code, 0, `loop-guardian init copilot: ${init.stderr}${init.stdout}`);
      scenario.before?.(ws);
      current = {
        base: model.turns().length,
        ws,
        script: scenario.script,
        atTurn: scenario.atTurn ? (k) => k === scenario.atTurn.turn && !current.fired && ((current.fired = true), scenario.atTurn.run(ws)) : undefined,
      };
      const from = model.requests.length;
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `copilot-vscode-${name}.png`) }).catch(() => undefined);
      const slug = scenario.name.split(':')[0].replace(/\W+/g, '-');
      let ok = false;
      const notes = [];
      const gaps = [];
      try {
        await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(remoteUri(server.port, ws))}`, { timeout: 180_000 });
        await page.locator(`[id="${STATUS_ID}"]`).waitFor({ timeout: 300_000 });
        const input = page.locator('.interactive-input-part:visible .monaco-editor').first();
        await input.waitFor({ timeout: 60_000 });
        // VS Code registers its built-in chat tools (runSubagent among them) in the workbench's last
        // phase, "Eventually", when the window is idle 2.5-5 s after it restored: a prompt sent before
        // would go without them. The workbench marks the contribution's creation (a performance mark).
        await page.waitForFunction(() => performance.getEntriesByName('code/didCreateWorkbenchContribution/4/chat.builtinTools').length > 0, undefined, { timeout: 120_000 });
        await input.click();
        await page.keyboard.type('Build the project with npm run build until it works.');
        await page.keyboard.press('Enter');
        await quiet(model, page, from);
        await shot(slug);
        const ux = { ws, model };
        if (scenario.ui) await scenario.ui(page, ux);
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE === '1') await saveWindowLogs(page, slug);
        const turns = model.turns().slice(current.base);
        const s = {
          ws,
          turns,
          // Every request Copilot sent, its title and progress-message requests (no tools) too.
          requests: model.requests.slice(from),
          said: turns.map((t) => t.lastResult).join('\n'),
          describe: () => `${turns.length} tool-calling requests\n${turns.map((t, i) => `#${i + 1}: ${String(t.step && ('tool' in t.step ? `${t.step.tool} ${t.step.args.command ?? ''}` : t.step.text))} <- ${t.lastResult.slice(0, 200).replace(/\s+/g, ' ')}`).join('\n')}\nbuild runs ${buildRuns(ws)}, test runs ${testRuns(ws)}; hook records ${hookRecords(ws).length}, refused ${refusedRecords(ws).length}`,
          measure: (key, value) => (measured[key] = value),
          note: (text) => notes.push(text),
          gap: (text) => gaps.push(text),
          ux,
        };
        const offered = turns[0]?.tools ?? [];
        if (scenario.needs !== undefined && !offered.includes(scenario.needs)) {
          const why = `Copilot's first request offered no ${scenario.needs} (${offered.length} tools: ${offered.join(' ')})`;
          if (attempt === 1) {
            retry = why;
            console.log(`  ... ${scenario.name}: ${why}; once more in a new window`);
            continue;
          }
          throw new Error(`${why}\n${s.describe()}`);
        }
        scenario.check(s);
        ok = true;
        console.log(`  ${gaps.length > 0 ? 'GAP' : 'ok '} ${scenario.name}${gaps.map((g) => `\n      known gap: ${g}`).join('')}`);
        for (const n of notes) console.log(`      ${n}`);
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE === '1') console.log(`      ${s.describe().replace(/\n/g, '\n      ')}\n      workspace ${ws}`);
      } catch (err) {
        await shot(`${slug}-failure`);
        console.log(`  FAIL ${scenario.name}\n${err.stack || err}`);
      } finally {
        if (retry === undefined) results.push(ok);
        current = undefined;
        await page.close().catch(() => undefined);
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') sb.cleanup();
      }
      if (retry === undefined) break;
    }
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    await model.close();
    if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') fs.rmSync(tmp, { recursive: true, force: true });
    else console.log(`kept: ${tmp}`);
  }
  const passed = results.filter(Boolean).length;
  console.log(`measured: ${JSON.stringify(measured)}`);
  console.log(`copilot in VS Code ${VERSION}: model requests after the halt ${measured.halt ?? '-'}, after STOP mid-run ${measured.stopMid ?? '-'}, with STOP before the run ${measured.stopBefore ?? '-'} with tools (${measured.stopBeforeAll ?? '-'} in all) (${passed} passed, ${results.length - passed} failed)`);
  if (passed !== results.length) process.exit(1);
}

/**
 * The window's own logs (VS Code in a browser keeps them in IndexedDB: `vscode-web-db`, object store
 * `vscode-logs-store`, its workbench.js), written under test-artifacts/ for a kept run: the terminal
 * log says which execute strategy `run_in_terminal` took and with what exit code.
 */
async function saveWindowLogs(page, slug) {
  const logs = await page.evaluate(() => new Promise((resolve) => {
    const open = indexedDB.open('vscode-web-db');
    open.onerror = () => resolve({});
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains('vscode-logs-store')) return resolve({});
      const store = db.transaction('vscode-logs-store').objectStore('vscode-logs-store');
      const out = {};
      const cursor = store.openCursor();
      cursor.onsuccess = () => {
        const c = cursor.result;
        if (!c) return resolve(out);
        const v = c.value;
        out[String(c.key)] = typeof v === 'string' ? v : new TextDecoder().decode(v instanceof Uint8Array ? v : new Uint8Array(v.buffer ?? v));
        c.continue();
      };
      cursor.onerror = () => resolve(out);
    };
  })).catch(() => ({}));
  for (const [key, text] of Object.entries(logs)) {
    const file = path.join(ARTIFACTS, `copilot-vscode-${slug}-logs`, key.replace(/^\/+/, ''));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

/**
 * Waits for the agent's run to end: a request reached the model, the chat is no longer busy, and
 * the model has had no request for a while.
 */
async function quiet(model, page, from, idleMs = 8000, timeoutMs = 420_000) {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    await page.waitForTimeout(1000);
    const last = model.requests[model.requests.length - 1];
    if (model.requests.length === from || last === undefined || Date.now() - last.at < idleMs) continue;
    // The send button is back (the run's stop button is gone).
    const busy = await page.locator('.interactive-input-part:visible .codicon-stop-circle, .interactive-input-part:visible .codicon-debug-stop').count();
    if (busy === 0) return;
  }
  throw new Error(`the agent's run did not end within ${timeoutMs / 1000} s`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
