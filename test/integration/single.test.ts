import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import type { LoopGuardianApi } from '../../src/vscode/api';
import { chat, failing, loopingSession } from '../unit/agents/copilotChatShapes';
import { append, exists, folderPath, guardian, label, waitFor, walk, note } from './util';

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
    note(`      activation took ${api.activationMs.toFixed(1)} ms`);
    assert.ok(api.activationMs < 1000, `activation took ${api.activationMs} ms`);
    await api.idle();
    const bar = api.statusBar();
    assert.match(bar.text, /No loops/);
    assert.equal(bar.background, undefined);
    assert.equal(bar.command, 'loopGuardian.focus');
  });

  it('shows a loop appended to the log as one incident: in the status bar, the tree (its reasons beneath) and one Problems entry', async () => {
    await append(log, [edit, edit, edit]);
    const bar = await waitFor('a loop in the status bar', () => {
      const b = api.statusBar();
      return /1 loop/.test(b.text) && b;
    });
    assert.equal(bar.background, 'statusBarItem.errorBackground');
    // The tooltip is Markdown: its punctuation comes escaped.
    assert.match(bar.tooltip.replace(/\\(.)/g, '$1'), /apply_code_edit a\.py: search "x = 1"/);
    assert.ok(!/\{"/.test(bar.tooltip), 'no argument JSON in the tooltip');

    const nodes = await walk(api.findingsTree);
    const session = nodes.find((n) => n.node.kind === 'session');
    assert.match(session ? label(session.item) : '', /^coder · s1$/);
    const incidents = nodes.filter((n) => n.node.kind === 'incident');
    assert.equal(incidents.length, 1, 'one row for the loop');
    const [incident] = incidents;
    assert.equal(label(incident!.item), 'apply_code_edit a.py: search "x = 1"');
    assert.match(String(incident!.item.description), /^Loop · 3 times · \d signals$/);
    assert.equal(api.view().badge, 1, 'the view\'s badge counts the loop');
    const reasons = (await walk(api.findingsTree, incident!.node)).filter((n) => n.node.kind === 'finding');
    // In plain words, no internal ids (issue 33 item 8).
    assert.ok(reasons.some((r) => label(r.item) === 'The same call, repeated'), 'each signal that fired is a reason beneath');
    assert.ok(reasons.every((r) => !/^[a-z]+(?:-[a-z]+)+$/.test(label(r.item))), reasons.map((r) => label(r.item)).join(' | '));
    const finding = reasons.find((r) => label(r.item) === 'The same call, repeated');
    const evidence = (await walk(api.findingsTree, finding!.node)).filter((n) => n.node.kind === 'evidence');
    // The line number first: what a narrow sidebar cuts is a label's end.
    assert.deepEqual(evidence.map((e) => label(e.item)), ['line 1 · agent.jsonl', 'line 2 · agent.jsonl', 'line 3 · agent.jsonl']);
    const open = evidence[1]?.item.command;
    assert.equal(open?.command, 'vscode.open');
    assert.equal((open?.arguments?.[1] as { selection: vscode.Range }).selection.start.line, 1);

    const diagnostics = await waitFor('diagnostics on the log', () => {
      const d = vscode.languages.getDiagnostics(vscode.Uri.file(log));
      return d.length > 0 && d;
    });
    assert.equal(diagnostics.length, 1, 'one Problems entry for one loop');
    assert.equal(diagnostics[0]?.range.start.line, 2, 'at its latest evidence');
    assert.deepEqual(diagnostics[0]?.relatedInformation?.map((r) => r.location.range.start.line), [1, 0], "the earlier calls, the latest first");
    assert.ok(diagnostics[0]?.severity === vscode.DiagnosticSeverity.Error && diagnostics[0]?.source === 'Loop Guardian');
  });

  it('publishes the loop as an OpenTelemetry log record (the editor started with OTEL_EXPORTER_OTLP_ENDPOINT)', async () => {
    const capture = process.env.LOOP_GUARDIAN_OTLP_CAPTURE;
    assert.ok(capture, 'the runner starts a receiver and names its file');
    type Value = { stringValue?: string; intValue?: string | number };
    type Req = { path: string; body: { resourceLogs?: { resource: { attributes: { key: string; value: Value }[] }; scopeLogs: { logRecords: { eventName?: string; attributes: { key: string; value: Value }[] }[] }[] }[] } | null };
    const record = await waitFor(
      'the loop at the OTLP receiver',
      async () => {
        const lines = (await fs.readFile(capture, 'utf8')).split('\n').filter((l) => l.trim() !== '');
        for (const r of lines.map((l) => JSON.parse(l) as Req)) {
          for (const rl of r.body?.resourceLogs ?? []) {
            for (const lr of rl.scopeLogs.flatMap((s) => s.logRecords)) {
              const attrs = Object.fromEntries(lr.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));
              const resource = Object.fromEntries(rl.resource.attributes.map((a) => [a.key, a.value.stringValue]));
              if (lr.eventName === 'loop_guardian.incident' && attrs['loop_guardian.incident.state'] === 'opened') return { attrs, resource };
            }
          }
        }
        return undefined;
      },
      15_000,
    );
    assert.equal(record.attrs['loop_guardian.action'], 'halt');
    assert.equal(record.attrs['gen_ai.conversation.id'], 's1');
    assert.equal(record.attrs['gen_ai.agent.name'], 'coder');
    assert.equal(record.resource['loop_guardian.source'], 'extension');
    assert.equal(record.attrs['loop_guardian.workspace'], root);
  });

  it('leaves the Problems panel alone while the log grows without changing the loop', async () => {
    const uri = vscode.Uri.file(log).toString();
    // The extension's own entry, as the editor holds it: set again, it is a new object. (Counting
    // every onDidChangeDiagnostics of the log is not that: VS Code 1.139 also fires it when another
    // owner's markers for the file change, its "_generated_mirror" collection deleting an empty
    // set, with our entry untouched.)
    const ours = () => vscode.languages.getDiagnostics(vscode.Uri.file(log)).find((d) => d.source === 'Loop Guardian');
    const entry = ours();
    assert.ok(entry, 'the loop has its Problems entry');
    let problemChanges = 0;
    let stateChanges = 0;
    const watching = [
      vscode.languages.onDidChangeDiagnostics((e) => {
        if (e.uris.some((u) => u.toString() === uri) && ours() !== entry) problemChanges++;
      }),
      api.onDidChange(() => stateChanges++),
    ];
    try {
      // Another session's ordinary work: every line changes the guardians' state, none the loop.
      for (let i = 0; i < 3; i++) {
        await append(log, [{ type: 'tool', session: 's9', tool: 'read_file', args: { path: `src/f${i}.ts` }, ok: true, output: `text ${i}` }]);
        await waitFor(`line ${i + 1} read`, () => stateChanges > i);
      }
      await api.idle();
      assert.equal(problemChanges, 0, 'the Problems entry was not set again');
      assert.equal(ours(), entry, 'the Problems entry is the one set before');
      assert.equal(vscode.languages.getDiagnostics(vscode.Uri.file(log)).length, 1, 'and is still there');
    } finally {
      for (const w of watching) w.dispose();
    }
  });

  it('notifies a halting loop once, as a warning whose offers are buttons, and not again while it grows', async () => {
    const first = await waitFor('a notification', () => api.notifications().length > 0 && api.notifications());
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.equal(first[0]?.level, 'warning', 'a loop that halts an agent is a warning, not information');
    assert.match(first[0]?.text ?? '', /^(Same action|Retry loop|apply_code_edit).*3 times/);
    assert.deepEqual(first[0]?.actions, ['Circuit Break', 'Show Details', 'Mute']);
    await append(log, [edit]);
    await waitFor('the count to grow', () => api.folders()[0]?.incidents[0]?.count === 4);
    await api.idle();
    assert.equal(api.notifications().length, 1, 'still one notification');
  });

  it('skips a corrupt line, reports it, and goes on watching', async () => {
    await append(log, [{ type: 'user', session: 's1', text: 'stop that' }], '{this is not json\n');
    await waitFor('the loop to end at the user message', () => api.folders()[0]?.findings.length === 0);
    assert.equal(api.folders()[0]?.skipped, 1);
    assert.match(api.statusBar().text, /No loops/);
    assert.equal(api.folders()[0]?.closedIncidents[0]?.end, 'progress', 'over, and kept');
    await waitFor('diagnostics cleared', () => vscode.languages.getDiagnostics(vscode.Uri.file(log)).length === 0);
    const out = [1, 2, 3].map(() => ({ type: 'output', session: 's2', text: 'I will now fix the bug.' }));
    await append(log, out.slice(0, 2));
    await waitFor('a new finding after the corrupt line', () => api.folders()[0]?.findings.some((f) => f.signal === 'identical-output'));
    const nodes = await walk(api.findingsTree);
    assert.ok(nodes.some((n) => /1 line skipped/.test(label(n.item))));
  });

  it('writes a valid STOP_ALL on Circuit Break, says what it reaches, shows STOP, and offers Resume instead of Circuit Break', async () => {
    const manifest = vscode.extensions.getExtension('loop-guardian.agent-loop-guardian')?.packageJSON as { contributes: { keybindings: { command: string; key: string }[] } };
    assert.ok(manifest.contributes.keybindings.some((k) => k.command === 'loopGuardian.circuitBreak' && k.key !== ''), 'Circuit Break has a keybinding');
    assert.equal(api.view().stopStatus, 'CLEAR');
    await vscode.commands.executeCommand('loopGuardian.circuitBreak');
    const text = await fs.readFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'utf8');
    assert.match(text, /^STOP \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n/);
    assert.match(api.stopConfirmations().at(-1) ?? '', /^STOP written to \.github\/guardian\/STOP_ALL in .*: every call of a hooked agent is refused.* Committed, the file holds teammates' and cloud agents' hooked runs too\.$/);
    await waitFor('STOP in the status bar', () => /STOP/.test(api.statusBar().text));
    await waitFor('the toolbar offers Resume', () => api.view().stopStatus === 'STOP');
    await vscode.commands.executeCommand('loopGuardian.resume');
    assert.match(await fs.readFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'utf8'), /^CLEAR /);
    await waitFor('STOP gone', () => !/STOP/.test(api.statusBar().text));
    await waitFor('the toolbar offers Circuit Break again', () => api.view().stopStatus === 'CLEAR');
  });

  it('follows STOP_ALL edited by another tool', async () => {
    await fs.writeFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), `PAUSE ${new Date().toISOString()}\nreason: by hand\n`);
    await waitFor('PAUSE in the status bar', () => /PAUSE/.test(api.statusBar().text));
    await fs.writeFile(path.join(root, '.github', 'guardian', 'STOP_ALL'), 'CLEAR\n');
    await waitFor('PAUSE gone', () => !/PAUSE/.test(api.statusBar().text));
  });

  it('one agent retrying one failing edit for 8 seconds: one notification, one Problems entry, one loop in the status bar, and, when it goes on under STOP, one error that says so', async () => {
    assert.ok((await vscode.commands.executeCommand<number>('loopGuardian.dismissAll')) >= 0);
    await waitFor('calm', () => !/loop/.test(api.statusBar().text.replace('No loops', '')));
    const retryLog = path.join(root, '.tmp', 'current', 'logs', 'retry.jsonl');
    const before = api.notifications().length;
    const retry = (i: number) => ({ type: 'tool', session: 'r8', agent: 'coder', ts: new Date().toISOString(), tool: 'apply_code_edit', id: `e${i}`, args: { file_path: 'src/a.ts', search: 'foo()', replace: 'bar()' }, ok: false, error: 'search text "foo()" not found in src/a.ts' });
    for (let i = 0; i < 8; i++) {
      await append(retryLog, [retry(i)]);
      await new Promise((r) => setTimeout(r, 1000));
    }
    await waitFor('all 8 retries read', () => api.folders()[0]?.incidents.find((x) => x.session === 'r8')?.count === 8);
    const notifications = api.notifications().slice(before);
    const problems = vscode.languages.getDiagnostics(vscode.Uri.file(retryLog));
    const bar = api.statusBar().text;
    note(`      8 s of retries: ${notifications.length} notification(s), ${problems.length} Problems entr${problems.length === 1 ? 'y' : 'ies'}, status bar "${bar.replace(/\$\([\w-]+\)\s*/g, '')}"`);
    assert.equal(notifications.length, 1);
    assert.equal(problems.length, 1);
    assert.match(bar, /^\$\(error\) 1 loop$/);
    assert.match(notifications[0]?.text ?? '', /apply_code_edit src\/a\.ts: search "foo\(\)"/);
    assert.ok(!/\{"/.test(notifications[0]?.text ?? ''), 'no argument JSON');

    // STOP, and the agent (only logged: nothing refuses its calls) goes on. One more call may have
    // been under way when STOP was set; the second after it is a loop that STOP did not stop.
    await vscode.commands.executeCommand('loopGuardian.circuitBreak');
    await waitFor('STOP', () => /STOP/.test(api.statusBar().text));
    await append(retryLog, [retry(8)]);
    await waitFor('the 9th retry read', () => api.folders()[0]?.incidents.find((x) => x.session === 'r8')?.count === 9);
    await api.idle();
    assert.equal(api.notifications().length - before, 1, 'one call after STOP may have been under way: no alarm yet');
    await append(retryLog, [retry(9)]);
    const alarm = await waitFor('the loop that went on under STOP announced', () => api.notifications().slice(before).find((n) => n.level === 'error'));
    note(`      went on under STOP: "${alarm.text}" [${alarm.actions.join(', ')}]`);
    assert.match(alarm.text, /went on under STOP: .*apply_code_edit src\/a\.ts/);
    assert.ok(!alarm.actions.includes('Circuit Break'), 'STOP is set: no offer to set it');
    await append(retryLog, [retry(10)]);
    await waitFor('the 11th retry read', () => api.folders()[0]?.incidents.find((x) => x.session === 'r8')?.count === 11);
    await api.idle();
    assert.equal(api.notifications().slice(before).filter((n) => n.level === 'error').length, 1, 'announced once');
    await vscode.commands.executeCommand('loopGuardian.resume');
    await waitFor('CLEAR', () => !/STOP/.test(api.statusBar().text));

    // Show Details selects it; Mute says so and can be undone; Dismiss ends it, and it stays under Over.
    const id = api.folders()[0]?.incidents.find((x) => x.session === 'r8')?.id;
    assert.equal(await vscode.commands.executeCommand('loopGuardian.showIncident', { folder: vscode.workspace.workspaceFolders?.[0]?.uri.toString(), incident: id }), id);
    assert.equal(await vscode.commands.executeCommand('loopGuardian.muteIncident', { folder: vscode.workspace.workspaceFolders?.[0]?.uri.toString(), incident: id }), true);
    const muted = (await walk(api.findingsTree)).find((n) => n.node.kind === 'incident' && n.node.incident.id === id);
    assert.match(String(muted?.item.description), /muted/);
    assert.equal(await vscode.commands.executeCommand('loopGuardian.unmuteIncident', { folder: vscode.workspace.workspaceFolders?.[0]?.uri.toString(), incident: id }), true);
    assert.equal(await vscode.commands.executeCommand('loopGuardian.dismissIncident', { folder: vscode.workspace.workspaceFolders?.[0]?.uri.toString(), incident: id }), true);
    await waitFor('calm again', () => /No loops/.test(api.statusBar().text));
    const over = (await walk(api.findingsTree)).find((n) => n.node.kind === 'closed');
    assert.ok(over, 'an Over group');
    assert.ok((await walk(api.findingsTree, over.node)).some((n) => n.node.kind === 'incident' && n.node.incident.id === id && /dismissed/.test(String(n.item.description))));
    assert.equal(vscode.languages.getDiagnostics(vscode.Uri.file(retryLog)).length, 0, 'no Problems entry once over');
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
    assert.ok(details.some((d) => /^line \d+ · agent\.jsonl$/.test(d)), 'evidence items');

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
  it('validates config.json with its schema: a wrong threshold is underlined where it is written', async () => {
    const config = path.join(root, '.github', 'guardian', 'config.json');
    const before = await fs.readFile(config, 'utf8');
    const wrong = JSON.parse(before);
    wrong.signals['repeated-error'].threshold = 'three';
    await fs.writeFile(config, JSON.stringify(wrong, null, 2));
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(config));
    await vscode.window.showTextDocument(doc);
    // An editor an earlier test left open on the file is read again from the disk.
    await vscode.commands.executeCommand('workbench.action.files.revert');
    const problem = () => vscode.languages.getDiagnostics(doc.uri).find((d) => /integer|type/i.test(d.message));
    try {
      await waitFor('the wrong threshold in the editor', () => doc.getText().includes('"three"'), 20_000);
      await waitFor('the schema\'s diagnostic', () => problem() !== undefined, 30_000);
      const at = problem() as vscode.Diagnostic;
      assert.match(doc.getText(at.range), /"three"/);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      await fs.writeFile(config, before);
    }
  });

  it('installs the agent hook from the command palette; the hook refuses a loop and its calls show live', async () => {
    const result = (await vscode.commands.executeCommand('loopGuardian.installHook', { agent: 'claude' })) as { file: string; added: string[] };
    assert.deepEqual(result.added, ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit']);
    // The per-user file, and the launcher rather than this extension's path: it survives a commit and an update.
    assert.equal(result.file, '.claude/settings.local.json');
    const settings = JSON.parse(await fs.readFile(path.join(root, '.claude', 'settings.local.json'), 'utf8'));
    const command = settings.hooks.PreToolUse[0].hooks[0].command as string;
    assert.match(command, /bin\/loop-guardian" \] \|\| .*hook claude "\$@"' loop-guardian$/);
    const home = process.env.LOOP_GUARDIAN_HOME;
    assert.ok(home, 'the suite runs with its own LOOP_GUARDIAN_HOME');
    assert.match(await fs.readFile(path.join(home, 'bin', 'loop-guardian'), 'utf8'), /dist\/cli\.js'/);
    const sh = (input: unknown) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile('sh', ['-c', command], { cwd: root, env: { ...process.env, CLAUDE_PROJECT_DIR: root } }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
        child.stdin?.end(JSON.stringify(input));
      });
    const pre = (id: string) => ({ session_id: 'hook-sess', hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: 'src/a.ts', old_string: 'x', new_string: 'y' }, tool_use_id: id });
    for (const id of ['e1', 'e2']) {
      assert.equal(await sh(pre(id)), '');
      await sh({ ...pre(id), hook_event_name: 'PostToolUseFailure', error: 'String to replace not found in file.' });
    }
    const refused = JSON.parse(await sh(pre('e3'))) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(refused.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(refused.hookSpecificOutput.permissionDecisionReason, /Edit/);
    const session = await waitFor('the hook session in the Findings tree', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'session' && /hook-sess$/.test(label(n.item))));
    assert.match(label(session.item), /^Claude Code · started .+ · hook-sess$/, 'a session is named by its agent and start time');
    const findings = (await walk(api.findingsTree, session.node)).filter((n) => n.node.kind === 'incident');
    assert.ok(findings.length > 0);
  });

  it('shows an opted-in agent transcript in the sidebar per session, and its loop as it happens', async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'lg-claude-home-'));
    const dir = path.join(home, 'projects', root.replace(/[^A-Za-z0-9]/g, '-'));
    await fs.mkdir(dir, { recursive: true });
    const transcript = path.join(dir, 'c0ffee00-0000-4000-8000-000000000001.jsonl');
    const step = (i: number) =>
      [
        { type: 'assistant', uuid: `a${i}`, sessionId: 'c0ffee00-0000-4000-8000-000000000001', timestamp: new Date().toISOString(), message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: 'npm run build' } }] } },
        { type: 'user', uuid: `u${i}`, sessionId: 'c0ffee00-0000-4000-8000-000000000001', timestamp: new Date().toISOString(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'Exit code 2\nsrc/a.ts(1,1): error TS1005', is_error: true }] } },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
    await fs.writeFile(transcript, step(1));
    const config = path.join(root, '.github', 'guardian', 'config.json');
    const current = JSON.parse(await fs.readFile(config, 'utf8'));
    current.agents = { ...current.agents, claude: { enabled: true, home } };
    await fs.writeFile(config, JSON.stringify(current, null, 2));
    // The transcript's node shows as soon as it is found, its start time once its first lines are read.
    const agent = await waitFor('the Claude Code session in the sidebar', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'agent' && / · started /.test(label(n.item))));
    assert.match(label(agent.item), /^Claude Code · started .+ · c0ffee00…$/);
    assert.match(String(agent.item.description), /2 events · no loops/);
    await fs.appendFile(transcript, step(2) + step(3));
    const looping = await waitFor('the loop under the session', async () => {
      const node = (await walk(api.findingsTree)).find((n) => n.node.kind === 'agent');
      return node && node.node.kind === 'agent' && node.node.incidents.some((i) => i.action === 'halt') && node;
    });
    const children = await walk(api.findingsTree, looping.node);
    assert.ok(children.some((n) => n.node.kind === 'evidence' && n.node.ref.file === transcript && /^line \d+ · /.test(label(n.item))));
  });

  it("shows a Copilot Chat session from the window's own storage, and its loop as it happens, once copilot is opted in", async () => {
    const storage = api.editorStorage();
    assert.ok(storage, 'the extension knows its window storage folder');
    const dir = path.join(storage, 'GitHub.copilot-chat', 'transcripts');
    await fs.mkdir(dir, { recursive: true });
    const transcript = path.join(dir, 'vs-session-1.jsonl');
    const now = () => new Date().toISOString();
    const start = { type: 'session.start', data: { sessionId: 'vs-session-1', version: 1, producer: 'copilot-agent', copilotVersion: '0.33.0', vscodeVersion: '1.106.0', startTime: now() }, id: 's0', timestamp: now(), parentId: null };
    const step = (i: number) =>
      [
        { type: 'tool.execution_start', data: { toolCallId: `call_${i}`, toolName: 'run_in_terminal', arguments: { command: 'npm test', explanation: `Run the tests (${i})` } }, id: `a${i}`, timestamp: now(), parentId: null },
        { type: 'tool.execution_complete', data: { toolCallId: `call_${i}`, success: false }, id: `b${i}`, timestamp: now(), parentId: null },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
    await fs.writeFile(transcript, `${JSON.stringify(start)}\n${step(1)}`);
    const config = path.join(root, '.github', 'guardian', 'config.json');
    const current = JSON.parse(await fs.readFile(config, 'utf8'));
    current.agents = { ...current.agents, copilot: { enabled: true } };
    await fs.writeFile(config, JSON.stringify(current, null, 2));
    await waitFor('the Copilot session in the sidebar', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'agent' && label(n.item).startsWith('GitHub Copilot (VS Code)')));
    await fs.appendFile(transcript, step(2) + step(3));
    await waitFor('its loop in the status bar', async () => /loop/.test(api.statusBar().text) && api.folders()[0]?.findings.some((f) => f.agent === 'copilot-vscode' && f.action === 'halt'));
  });

  it('lists the agents found in the folder, with one click to watch and one to install the hook', async () => {
    await fs.mkdir(path.join(root, '.cursor'), { recursive: true });
    await fs.writeFile(path.join(root, '.cursor', 'hooks.json'), '{"version": 1, "hooks": {}}\n');
    await vscode.commands.executeCommand('loopGuardian.scanNow');
    const cursor = await waitFor('Cursor among the agents found', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'cursor'));
    assert.match(String(cursor.item.description), /no hook/);
    assert.match(String(cursor.item.contextValue), /hookable/);
    await vscode.commands.executeCommand('loopGuardian.installHook', cursor.node);
    const hooked = await waitFor('Cursor hooked', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'cursor' && n.node.agent.hooked));
    assert.match(String(hooked.item.description), /hook installed/);
    assert.match(await fs.readFile(path.join(root, '.cursor', 'hooks.json'), 'utf8'), /loop-guardian/);

    const claude = (await walk(api.findingsTree)).find((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'claude');
    assert.ok(claude, 'Claude Code is found: its hook settings are in the folder');
    assert.equal(await vscode.commands.executeCommand('loopGuardian.unwatchAgent', claude.node), false);
    const config = JSON.parse(await fs.readFile(path.join(root, '.github', 'guardian', 'config.json'), 'utf8'));
    assert.equal(config.agents.claude.enabled, false);
    assert.equal(await vscode.commands.executeCommand('loopGuardian.watchAgent', { agent: 'claude' }), true);
    assert.equal(JSON.parse(await fs.readFile(path.join(root, '.github', 'guardian', 'config.json'), 'utf8')).agents.claude.enabled, true);
    await waitFor('Claude Code watched', async () => (await walk(api.findingsTree)).some((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'claude' && n.node.agent.watched));

  });

  it('lists sessions newest first: the session whose loop grew last is on top', async () => {
    const loop = (session: string) => ({ type: 'tool', session, agent: 'coder', tool: 'read_file', args: { path: `src/${session}.ts` } });
    await append(log, [loop('older-1'), loop('older-1'), loop('older-1')]);
    await waitFor('the older loop', async () => (await walk(api.findingsTree)).some((n) => n.node.kind === 'session' && /older-1$/.test(label(n.item))));
    await new Promise((r) => setTimeout(r, 50));
    await append(log, [loop('newer-2'), loop('newer-2'), loop('newer-2')]);
    await waitFor('the newer session first', async () => {
      const sessions = (await walk(api.findingsTree)).filter((n) => n.node.kind === 'session').map((n) => label(n.item));
      const newer = sessions.findIndex((l) => /newer-2$/.test(l));
      const older = sessions.findIndex((l) => /older-1$/.test(l));
      return newer >= 0 && older >= 0 && newer < older;
    });
  });

  it('says once, impossible to miss, that an agent is not protected: its hook installed but not running here (with the cause and the fix); STOP names the agents it cannot reach', async () => {
    const cli = process.env.LOOP_GUARDIAN_CLI as string;
    // A Codex hook, registered as a user registers it, in a folder Codex does not trust (this
    // machine's Codex settings trust nothing): Codex would skip it without a word.
    await new Promise<void>((resolve, reject) => execFile(process.execPath, [cli, 'init', 'codex', '--workspace', root], (err) => (err ? reject(err) : resolve())));
    await vscode.commands.executeCommand('loopGuardian.scanNow');
    const codex = await waitFor('Codex among the agents, not running', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'codex' && n.node.agent.state === 'not-running'));
    assert.match(String(codex.item.description), /hook installed but not running/);
    assert.match(String(codex.item.tooltip), /not trusted.*Fix: /s);
    const warning = await waitFor('one warning', () => api.protectionWarnings().find((w) => /Codex CLI is not protected/.test(w)));
    assert.match(warning, /installed but does not run/);
    // Looked at again: the same cause is not said twice.
    await vscode.commands.executeCommand('loopGuardian.scanNow');
    await api.idle();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(api.protectionWarnings().filter((w) => /Codex CLI is not protected/.test(w)).length, 1);
    // Under STOP, the status bar's tooltip names the agents it does not reach.
    await vscode.commands.executeCommand('loopGuardian.circuitBreak');
    await waitFor('STOP shown, with whom it cannot reach', () => /STOP/.test(api.statusBar().text) && /does not reach .*Codex CLI \(its hook does not run\)/.test(api.statusBar().tooltip));
    await vscode.commands.executeCommand('loopGuardian.resume');
    await waitFor('STOP cleared', () => !/STOP/.test(api.statusBar().text));
  });

  it("shows a Copilot chat session from VS Code's own session log (chatSessions/*.jsonl) as VS Code saves it, and its loop, counting nothing twice when VS Code compacts the file", async () => {
    const storage = api.editorStorage();
    assert.ok(storage, 'the extension knows its window storage folder');
    const log = path.join(storage, 'chatSessions', 'chat-int-1.jsonl');
    await fs.mkdir(path.dirname(log), { recursive: true });
    const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const session = loopingSession('chat-int-1');
    // A save while the agent works: the snapshot, the prompt, the first failing npm test.
    await fs.writeFile(log, lines(session.slice(0, 4)));
    const config = path.join(root, '.github', 'guardian', 'config.json');
    const current = JSON.parse(await fs.readFile(config, 'utf8'));
    if (current.agents?.copilot?.enabled !== true) {
      current.agents = { ...current.agents, copilot: { enabled: true } };
      await fs.writeFile(config, JSON.stringify(current, null, 2));
    }
    const halts = () => Number(/(\d+) loops?/.exec(api.statusBar().text)?.[1] ?? 0);
    const before = halts();
    const node = async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'agent' && n.node.source.file === log);
    const shown = await waitFor('the session log in the sidebar', node);
    assert.match(label(shown.item), /^GitHub Copilot \(VS Code\)/);
    assert.match(String(shown.item.description), /^2 events · no loops/);
    // The next save: the second and third failing runs.
    await fs.appendFile(log, lines(session.slice(4)));
    const looping = await waitFor('its loop under the session and in the status bar', async () => {
      const n = await node();
      return n && n.node.kind === 'agent' && n.node.incidents.some((i) => i.action === 'halt' && i.session === 'chat-int-1') && halts() > before && n;
    });
    assert.match(String(looping.item.description), /^4 events · 1 loop/);
    const evidence = (await walk(api.findingsTree, looping.node)).filter((n) => n.node.kind === 'evidence');
    assert.ok(evidence.some((e) => e.node.kind === 'evidence' && e.node.ref.file === log && label(e.item) === `line ${e.node.ref.line} · ${path.basename(log)}`), 'evidence points into the session log');
    // VS Code compacts the log: the same file, written over with one snapshot of the same state;
    // then the person asks again (a new prompt ends the loop).
    const { snapshot, request, text, push } = chat;
    const state = snapshot([request('request_1', 'make the tests pass', [text('Let me run the tests.'), failing('call_1'), text('Still failing; again.'), failing('call_2'), text('Once more.'), failing('call_3')], 1)], 'chat-int-1');
    await fs.writeFile(log, lines([state]));
    await fs.appendFile(log, lines([push(['requests'], [request('request_2', 'try something else')])]));
    const calm = await waitFor('the new prompt read after the rewrite, nothing counted twice', async () => {
      const n = await node();
      return n && /^5 events · no loops/.test(String(n.item.description)) && n;
    });
    assert.ok(calm);
  });

  it('runs the OTLP receiver itself when asked (loopGuardian.otlp.listen, loopback only): a remote agent\'s loop shows beside the local ones', async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const settings = vscode.workspace.getConfiguration('loopGuardian');
    const post = (body: unknown) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: free, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    const kv = (key: string, v: string | number) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });
    const failingCall = (seq: number) => ({ attributes: [kv('event.name', 'tool_result'), kv('session.id', 'remote-1'), kv('event.sequence', seq), kv('tool_name', 'Bash'), kv('tool_use_id', `toolu_${seq}`), kv('success', 'false'), kv('error', 'Shell command failed'), kv('tool_input', JSON.stringify({ command: 'make deploy' }))] });
    try {
      // Not a loopback address, and remote not allowed: it does not listen.
      await settings.update('otlp.listen', `0.0.0.0:${free}`, vscode.ConfigurationTarget.Global);
      await new Promise((r) => setTimeout(r, 500));
      await assert.rejects(post({}), /ECONNREFUSED/);
      await settings.update('otlp.listen', `127.0.0.1:${free}`, vscode.ConfigurationTarget.Global);
      const status = await waitFor('the receiver listening', () => post({ resourceLogs: [{ resource: { attributes: [kv('service.name', 'claude-code'), kv('host.name', 'ci-runner')] }, scopeLogs: [{ logRecords: [1, 2, 3].map(failingCall) }] }] }).catch(() => undefined));
      assert.equal(status, 200);
      const nodes = await waitFor('the remote session in the sidebar', async () => {
        const all = await walk(api.findingsTree);
        return all.some((n) => n.node.kind === 'session' && /remote-1/.test(label(n.item))) && all;
      });
      assert.ok(nodes.some((n) => n.node.kind === 'incident' && /make deploy/.test(label(n.item))), nodes.map((n) => label(n.item)).join(' | '));
      assert.ok(await exists(path.join(root, '.tmp', 'otlp', 'logs', 'otlp-claude-code-ci-runner.jsonl')));
    } finally {
      await settings.update('otlp.listen', undefined, vscode.ConfigurationTarget.Global);
    }
    await waitFor('the receiver closed', () => post({}).then(() => false, () => true));
  });

  it('the real Claude Code, its telemetry sent to the receiver the editor runs, shows its loop in the sidebar (no hook, no transcript)', async function () {
    this.timeout(180_000);
    const { AGENT_PACKAGES } = await import('../agents/install');
    const pkg = AGENT_PACKAGES.claude!;
    const installed = path.resolve(__dirname, '..', '..', '..', '.vscode-test', 'agents', `${pkg.id}-${pkg.version}`, '.installed');
    if (!(await exists(installed))) {
      note(`      skipped: ${pkg.label} ${pkg.version} is not installed (npm run test:agents installs it; npm test runs that first)`);
      this.skip();
    }
    const { liveRun } = await import('../agents/live');
    const { DRIVERS } = await import('../agents/drivers');
    const free = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const settings = vscode.workspace.getConfiguration('loopGuardian');
    await settings.update('otlp.listen', `127.0.0.1:${free}`, vscode.ConfigurationTarget.Global);
    let run: Awaited<ReturnType<typeof liveRun>> | undefined;
    try {
      // Listening once a request is answered.
      await waitFor('the receiver listening', () => new Promise<boolean>((resolve) => net.connect(free, '127.0.0.1').on('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).on('error', () => resolve(false))));
      run = await liveRun(DRIVERS.claude!, (_turn, a) => a.shell('npm run build-missing', _turn.tools), {
        hook: false,
        maxTurns: 4,
        env: { CLAUDE_CODE_ENABLE_TELEMETRY: '1', OTEL_LOGS_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'none', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${free}`, OTEL_LOGS_EXPORT_INTERVAL: '500', OTEL_LOG_TOOL_DETAILS: '1' },
      });
      const nodes = await waitFor(
        'the Claude Code session and its loop in the sidebar',
        async () => {
          const all = await walk(api.findingsTree);
          return all.some((n) => n.node.kind === 'incident' && /Bash: npm run build-missing/.test(label(n.item))) && all;
        },
        30_000,
      );
      const incident = nodes.find((n) => n.node.kind === 'incident' && /Bash: npm run build-missing/.test(label(n.item)));
      note(`      the real Claude Code's loop, by its telemetry: "${label(incident!.item)}" (${String(incident!.item.description)})`);
      assert.match(String(incident!.item.description), /^Loop · [34] times/);
    } finally {
      await settings.update('otlp.listen', undefined, vscode.ConfigurationTarget.Global);
      run?.sb.cleanup();
    }
  });

  describe('the editor tells the truth (issue 33)', () => {
    const claudeSettings = () => path.join(root, '.claude', 'settings.local.json');
    const hookCommand = async () => {
      const settings = JSON.parse(await fs.readFile(claudeSettings(), 'utf8'));
      return settings.hooks.PreToolUse[0].hooks[0].command as string;
    };
    const sh = (command: string, input: unknown) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile('sh', ['-c', command], { cwd: root, env: { ...process.env, CLAUDE_PROJECT_DIR: root } }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
        child.stdin?.end(JSON.stringify(input));
      });
    const claudeRow = async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'foundAgent' && n.node.agent.id === 'claude');
    /** How long a probe took to hold after `from`, in ms (fails past the 10 s of waitFor). */
    const within = async (what: string, from: number, probe: () => unknown) => {
      await waitFor(what, async () => (await probe()) as boolean, 10_000);
      return Date.now() - from;
    };

    it('re-reads protection when the hook settings file or the heartbeat changes (a file watcher), within 2 s both ways', async () => {
      await vscode.commands.executeCommand('loopGuardian.resume');
      await vscode.commands.executeCommand('loopGuardian.installHook', { agent: 'claude' });
      await waitFor('Claude Code hooked', async () => (await claudeRow())?.node.kind === 'foundAgent' && ((await claudeRow())?.node as { agent: { hooked: boolean } }).agent.hooked);
      const command = await hookCommand();
      // The first hooked call of a new session: the heartbeat changes, nothing else is done in the editor.
      // Timed from the hook's answer: the call is made once its hook has run (a hook's Node start-up is not the editor's time).
      await sh(command, { session_id: 'watch-sess', hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'README.md' }, tool_use_id: 'w1' });
      const t0 = Date.now();
      const enforced = await within('"hook enforced" after the first hooked call', t0, async () => /hook enforced/.test(String((await claudeRow())?.item.description)) && /Claude Code enforced/.test(api.statusBar().tooltip.replace(/\\(.)/g, '$1')));
      note(`      protection row "hook enforced" ${enforced} ms after the first hooked call`);
      assert.ok(enforced < 2000, `shown ${enforced} ms after the call`);
      // The settings deleted: "not protected" (or watched only), no reload, no Scan Now.
      const t1 = Date.now();
      await fs.rm(claudeSettings());
      const gone = await within('no hook after the settings are deleted', t1, async () => {
        const row = await claudeRow();
        return (row === undefined || !/hook (enforced|installed)/.test(String(row.item.description))) && !/Claude Code enforced/.test(api.statusBar().tooltip.replace(/\\(.)/g, '$1'));
      });
      note(`      protection row without the hook ${gone} ms after ${path.relative(root, claudeSettings())} was deleted`);
      assert.ok(gone < 2000, `shown ${gone} ms after the deletion`);
    });

    it('under STOP, an unhooked agent whose loop goes on is an error notification within 2 s', async () => {
      const config = JSON.parse(await fs.readFile(path.join(root, '.github', 'guardian', 'config.json'), 'utf8'));
      const home = config.agents?.claude?.home as string;
      assert.ok(home, 'Claude Code is watched with its own home (an earlier test)');
      const dir = path.join(home, 'projects', root.replace(/[^A-Za-z0-9]/g, '-'));
      const id = 'c0ffee00-0000-4000-8000-0000000000aa';
      const transcript = path.join(dir, `${id}.jsonl`);
      const step = (i: number) =>
        [
          { type: 'assistant', uuid: `sa${i}`, sessionId: id, timestamp: new Date().toISOString(), message: { role: 'assistant', content: [{ type: 'tool_use', id: `st${i}`, name: 'Bash', input: { command: 'npm run deploy' } }] } },
          { type: 'user', uuid: `su${i}`, sessionId: id, timestamp: new Date().toISOString(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `st${i}`, content: 'Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432', is_error: true }] } },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n';
      assert.ok(!/hook (enforced|installed)/.test(String((await claudeRow())?.item.description)), 'Claude Code is not hooked here (the test before)');
      await vscode.commands.executeCommand('loopGuardian.circuitBreak');
      try {
        await waitFor('STOP', () => /STOP/.test(api.statusBar().text));
        await new Promise((r) => setTimeout(r, 300));
        await fs.writeFile(transcript, step(1));
        for (const i of [2, 3]) {
          await new Promise((r) => setTimeout(r, 400));
          await fs.appendFile(transcript, step(i));
        }
        await waitFor('the loop read', () => api.folders()[0]?.incidents.some((i) => i.session === id));
        const t0 = Date.now();
        await fs.appendFile(transcript, step(4) + step(5));
        const took = await within('an error notification', t0, () => api.notifications().some((n) => n.level === 'error' && /under STOP/.test(n.text) && /deploy|ECONNREFUSED/.test(n.text)));
        note(`      error notification ${took} ms after the unhooked loop grew under STOP: ${api.notifications().find((n) => n.level === 'error' && /deploy|ECONNREFUSED/.test(n.text))?.text}`);
        assert.ok(took < 2000, `${took} ms`);
      } finally {
        await vscode.commands.executeCommand('loopGuardian.resume');
        await waitFor('CLEAR', () => !/STOP/.test(api.statusBar().text));
      }
    });

    it('shows a loop the hook refused and ended as handled: no red alarm, no Circuit Break; its Problems entry on the source file, with quick fixes', async function () {
      this.timeout(60_000);
      await vscode.commands.executeCommand('loopGuardian.resume');
      await waitFor('CLEAR', () => !/STOP/.test(api.statusBar().text));
      await vscode.commands.executeCommand('loopGuardian.installHook', { agent: 'claude' });
      const command = await hookCommand();
      await fs.mkdir(path.join(root, 'src'), { recursive: true });
      await fs.writeFile(path.join(root, 'src', 'range.ts'), 'export function inRange(x: number) {\n  return x;\n  return clamp(x, 0, 10);\n}\n');
      const before = api.view().badge;
      const pre = (id: string) => ({ session_id: 'handled-sess', hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: path.join(root, 'src', 'range.ts'), old_string: 'clamp(x)', new_string: 'clamp(x, 0, 10)' }, tool_use_id: id });
      for (const id of ['h1', 'h2']) {
        assert.equal(await sh(command, pre(id)), '');
        await sh(command, { ...pre(id), hook_event_name: 'PostToolUseFailure', error: 'String to replace not found in file.' });
      }
      // Refused; asked for again, refused and the run ended (as Claude Code does when a model retries).
      for (const id of ['h3', 'h4']) {
        const refused = JSON.parse(await sh(command, pre(id))) as { hookSpecificOutput: { permissionDecision: string } };
        assert.equal(refused.hookSpecificOutput.permissionDecision, 'deny');
      }
      const row = await waitFor('the loop shown as handled, both refusals read', async () => (await walk(api.findingsTree)).find((n) => n.node.kind === 'incident' && n.node.incident.session === 'handled-sess' && /^Handled.*refused 2, run ended/.test(String(n.item.description))));
      assert.match(label(row.item), /^Edit src\/range\.ts/, 'the workspace path, not the absolute one');
      note(`      "${label(row.item)}" · ${String(row.item.description)}`);
      const tip = (typeof row.item.tooltip === 'string' ? row.item.tooltip : (row.item.tooltip?.value ?? '')).replace(/&nbsp;/g, ' ');
      assert.match(tip, /Refused 2 calls; Claude Code's run ended/);
      assert.match(String(row.item.contextValue), /\.handled/);
      assert.doesNotMatch(JSON.stringify((row.item.iconPath as vscode.ThemeIcon).color), /error/);
      // Not counted as a loop going on: the badge and the status bar say so.
      assert.equal(api.view().badge, before, 'a handled loop is not on the badge');
      assert.match(api.statusBar().text, /handled/);
      for (const n of api.notifications().filter((x) => x.incident === (row.node as { incident: { id: string } }).incident.id)) {
        assert.ok(!n.actions.includes('Circuit Break'), `no Circuit Break for a handled loop: ${n.text}`);
        assert.match(n.text, /^Refused \d calls?; Claude Code/);
      }
      // Problems: on src/range.ts (the edit's file), with at most 3 related rows and the quick fixes.
      const uri = vscode.Uri.file(path.join(root, 'src', 'range.ts'));
      // The entry as it stands once both refusals are read (an earlier one, set before, said it was going on).
      const diags = await waitFor('a Problems entry on src/range.ts, handled', () => {
        const d = vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'Loop Guardian' && /^Handled by the hook/.test(x.message));
        return d.length > 0 && d;
      });
      assert.ok((diags[0]?.relatedInformation?.length ?? 0) <= 3);
      assert.ok(diags[0]?.relatedInformation?.some((r) => /hook-claude-handled-sess\.jsonl$/.test(r.location.uri.fsPath)), 'the log line related');
      assert.doesNotMatch(String(diags[0]?.code), /^[a-z]+-[a-z-]+$/, 'no internal id as its code');
      // The extension's own provider, asked as the light bulb asks it (vscode.executeCodeActionProvider
      // would wait for TypeScript's server to start on range.ts, a minute on this loaded machine).
      const titles = api.quickFixes(uri, diags[0]!);
      note(`      quick fixes on ${path.basename(uri.fsPath)}: ${titles.join(', ')}`);
      assert.ok(titles.includes('Show Loop') && titles.some((t) => /^Mute/.test(t)), titles.join(', '));
      assert.ok(!titles.some((t) => /Circuit Break/.test(t)), 'no Circuit Break for a loop the hook ended');
    });

    it('puts a build error\'s Problems entry on the file and line the error names, with Circuit Break while it goes on', async function () {
      this.timeout(60_000);
      const tsLog = path.join(root, '.tmp', 'current', 'logs', 'build.jsonl');
      const build = { type: 'tool', session: 'tsc-1', agent: 'coder', tool: 'run_shell', args: { command: 'npm run build' }, error: "src/range.ts(3,10): error TS2304: Cannot find name 'clamp'." };
      await append(tsLog, [build, build, build]);
      const uri = vscode.Uri.file(path.join(root, 'src', 'range.ts'));
      const d = await waitFor('the build loop on src/range.ts line 3', () => vscode.languages.getDiagnostics(uri).find((x) => x.source === 'Loop Guardian' && x.range.start.line === 2), 20_000);
      note(`      Problems on ${path.relative(root, uri.fsPath)}:${d.range.start.line + 1}:${d.range.start.character + 1} (${String(d.code)}), ${d.relatedInformation?.length ?? 0} related`);
      assert.equal(d.range.start.character, 9, 'at the column tsc names');
      await vscode.workspace.openTextDocument(uri);
      assert.ok((d.relatedInformation?.length ?? 0) <= 3);
      const titles = ((await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, d.range)) ?? []).map((a) => a.title);
      assert.ok(titles.some((t) => /Circuit Break/.test(t)), `Circuit Break offered while it goes on: ${titles.join(', ')}`);
    });
  });
});
