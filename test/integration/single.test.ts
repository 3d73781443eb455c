import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import type { LoopGuardianApi } from '../../src/vscode/api';
import { append, exists, folderPath, guardian, label, waitFor, walk } from './util';

const run = promisify(execFile);

describe('Loop Guardian in a real VS Code: one trusted folder', () => {
  let api: LoopGuardianApi;
  let root: string;
  let log: string;
  const edit = { type: 'tool', session: 's1', agent: 'coder', tool: 'apply_code_edit', args: { path: 'a.py', search: 'x = 1' }, error: 'Error: search string not found in file a.py' };

  before(async () => {
    root = folderPath();
    log = path.join(root, '.tmp', 'current', 'logs', 'agent.jsonl');
    api = await guardian();
  });

  it('activates on the workspace log, quickly, and is calm', async () => {
    assert.ok(vscode.extensions.getExtension('loop-guardian.agent-loop-guardian')?.isActive);
    console.log(`      activation took ${api.activationMs.toFixed(1)} ms`);
    assert.ok(api.activationMs < 1000, `activation took ${api.activationMs} ms`);
    await api.idle();
    const bar = api.statusBar();
    assert.match(bar.text, /No loops/);
    assert.equal(bar.background, undefined);
    assert.equal(bar.command, 'loopGuardian.focus');
  });

  it('shows a loop appended to the log in the status bar, the trees and the Problems panel', async () => {
    await append(log, [edit, edit, edit]);
    const bar = await waitFor('a halt in the status bar', () => {
      const b = api.statusBar();
      return /halt/.test(b.text) && b;
    });
    assert.equal(bar.background, 'statusBarItem.errorBackground');
    assert.match(bar.tooltip, /identical-calls/);

    const nodes = await walk(api.findingsTree);
    const session = nodes.find((n) => n.node.kind === 'session');
    assert.equal(session && label(session.item), 's1');
    const finding = nodes.find((n) => n.node.kind === 'finding' && n.node.finding.signal === 'identical-calls');
    assert.ok(finding, 'the identical-calls finding is in the tree');
    assert.equal(label(finding.item), 'identical-calls (3/3)');
    const evidence = (await walk(api.findingsTree, finding.node)).filter((n) => n.node.kind === 'evidence');
    assert.deepEqual(evidence.map((e) => label(e.item)), ['.tmp/current/logs/agent.jsonl:1', '.tmp/current/logs/agent.jsonl:2', '.tmp/current/logs/agent.jsonl:3']);
    const open = evidence[1]?.item.command;
    assert.equal(open?.command, 'vscode.open');
    assert.equal((open?.arguments?.[1] as { selection: vscode.Range }).selection.start.line, 1);

    const diagnostics = await waitFor('diagnostics on the log', () => {
      const d = vscode.languages.getDiagnostics(vscode.Uri.file(log));
      return d.length > 0 && d;
    });
    const identical = diagnostics.filter((d) => d.code === 'identical-calls');
    assert.deepEqual(identical.map((d) => d.range.start.line), [0, 1, 2]);
    assert.ok(identical.every((d) => d.severity === vscode.DiagnosticSeverity.Error && d.source === 'Loop Guardian'));
  });

  it('notifies a new halt once, however long the loop goes on', async () => {
    const first = await waitFor('a notification', () => api.notifications().length > 0 && api.notifications());
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.match(first[0]?.text ?? '', /findings|repeated/);
    assert.deepEqual(first[0]?.actions, ['Circuit Break', 'Pause', 'Show Details', 'Mute this Finding']);
    await append(log, [edit]);
    await waitFor('the count to grow', () => api.folders()[0]?.findings.find((f) => f.signal === 'identical-calls' && f.count === 4));
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(api.notifications().length, 1);
  });

  it('skips a corrupt line, reports it, and goes on watching', async () => {
    await append(log, [{ type: 'user', session: 's1', text: 'stop that' }], '{this is not json\n');
    await waitFor('the loop to end at the user message', () => api.folders()[0]?.findings.length === 0);
    assert.equal(api.folders()[0]?.skipped, 1);
    assert.match(api.statusBar().text, /No loops/);
    await waitFor('diagnostics cleared', () => vscode.languages.getDiagnostics(vscode.Uri.file(log)).length === 0);
    const out = [1, 2, 3].map(() => ({ type: 'output', session: 's2', text: 'I will now fix the bug.' }));
    await append(log, out.slice(0, 2));
    await waitFor('a new finding after the corrupt line', () => api.folders()[0]?.findings.some((f) => f.signal === 'identical-output'));
    const nodes = await walk(api.findingsTree);
    assert.ok(nodes.some((n) => /1 line skipped/.test(label(n.item))));
  });

  it('writes a valid STOP_ALL on Circuit Break and shows STOP', async () => {
    await vscode.commands.executeCommand('loopGuardian.circuitBreak');
    const text = await fs.readFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'utf8');
    assert.match(text, /^STOP \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n/);
    await waitFor('STOP in the status bar', () => /STOP/.test(api.statusBar().text));
    await vscode.commands.executeCommand('loopGuardian.resume');
    assert.match(await fs.readFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'utf8'), /^CLEAR /);
    await waitFor('STOP gone', () => !/STOP/.test(api.statusBar().text));
  });

  it('follows STOP_ALL edited by another tool', async () => {
    await fs.writeFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), `PAUSE ${new Date().toISOString()}\nreason: by hand\n`);
    await waitFor('PAUSE in the status bar', () => /PAUSE/.test(api.statusBar().text));
    await fs.writeFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'CLEAR\n');
    await waitFor('PAUSE gone', () => !/PAUSE/.test(api.statusBar().text));
  });

  it('lists blocked tasks with their diagnostics, and unblocks and escalates them', async () => {
    const attempt = (line: number) => ({ type: 'attempt', session: 'orch', task: 'abc12345', tier: 2, ok: false, gate: 'lint', error: `lint error on line ${line}`, description: 'Add feature with tests' });
    await append(log, [attempt(45), attempt(48)]);
    const task = await waitFor('the task in Blocked Tasks', async () => (await walk(api.blockedTasksTree)).find((n) => n.node.kind === 'task'));
    assert.equal(label(task.item), 'abc12345');
    assert.equal(task.item.contextValue, 'blockedTask.finding');

    await run(process.execPath, [process.env.LOOP_GUARDIAN_CLI as string, 'break', 'abc12345', '--workspace', root]);
    const registered = await waitFor('the registered task', async () => (await walk(api.blockedTasksTree)).find((n) => n.node.kind === 'task' && n.item.contextValue === 'blockedTask.summary'));
    const details = (await walk(api.blockedTasksTree, registered.node)).map((n) => label(n.item));
    for (const d of ['Pattern', 'Suspected cause', 'Count', 'Last error', 'Suggested action', 'Summary']) assert.ok(details.includes(d), `${d} in ${details.join(', ')}`);
    assert.ok(details.some((d) => /agent\.jsonl:\d+$/.test(d)), 'evidence items');

    const escalated = (await vscode.commands.executeCommand('loopGuardian.forceEscalate', registered.node)) as { outcome: string; to: number };
    assert.deepEqual([escalated.outcome, escalated.to], ['escalated', 4]);
    assert.equal(JSON.parse(await fs.readFile(path.join(root, '.tmp', 'guardian', 'tasks', 'abc12345.json'), 'utf8')).tier, 4);

    assert.equal(await vscode.commands.executeCommand('loopGuardian.unblockTask', registered.node), true);
    await waitFor('the registry entry gone', async () => !(await walk(api.blockedTasksTree)).some((n) => n.item.contextValue === 'blockedTask.summary'));
  });

  it('creates the configuration from the defaults and applies changes to it', async () => {
    const config = path.join(root, '.github', 'guardian', 'config.json');
    assert.equal(await exists(config), false);
    await vscode.commands.executeCommand('loopGuardian.openConfig');
    const written = JSON.parse(await fs.readFile(config, 'utf8'));
    assert.equal(written.signals['identical-calls'].threshold, 3);
    written.signals['identical-output'].enabled = false;
    await fs.writeFile(config, JSON.stringify(written));
    await waitFor('identical-output off', () => !api.folders()[0]?.findings.some((f) => f.signal === 'identical-output'));
  });
});
