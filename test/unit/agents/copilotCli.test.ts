import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { copilotCliTranscript } from '../../../src/agents/copilot-cli/transcript';
import { cli, describeShared, FIXTURES, readJsonl, tmpdir, tmpProject, write } from '../helpers';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

/** Records in the shape Copilot CLI writes to session-state/<id>/events.jsonl (our own text). */
let n = 0;
const rec = (type: string, data: Record<string, unknown>) => ({ type, data, id: `e${++n}`, timestamp: '2026-11-20T10:00:00.000Z', parentId: null });
const start = (cwd = '/home/u/proj') => rec('session.start', { sessionId: 'cp-1', version: 1, producer: 'copilot-agent', copilotVersion: '1.0.10', startTime: '2026-11-20T10:00:00.000Z', context: { cwd, gitRoot: cwd } });
const call = (id: string, toolName: string, args: Record<string, unknown>) => rec('tool.execution_start', { toolCallId: id, toolName, arguments: args });
const done = (id: string, result: Record<string, unknown>) => rec('tool.execution_complete', { toolCallId: id, ...result });

describe('Copilot CLI adapter', () => {
  it('reads calls and outcomes by toolCallId: success:false and a shell exit code N > 0 fail; narration and notices are no events', () => {
    const { events, skipped } = decode(copilotCliTranscript, [
      start(),
      rec('user.message', { content: 'fix the build', attachments: [] }),
      rec('assistant.message', { messageId: 'm1', content: 'Let me look.', toolRequests: [{ toolCallId: 'c1', name: 'powershell', arguments: { command: 'npm run build' } }] }),
      call('c1', 'powershell', { command: 'npm run build', description: 'Build' }),
      rec('hook.start', { hookInvocationId: 'h1', hookType: 'preToolUse', input: {} }),
      done('c1', { success: true, result: { content: 'error TS2304: Cannot find name x\n<exited with exit code 2>' } }),
      call('c2', 'edit', { path: '/p/a.ts', old_str: 'x', new_str: 'y' }),
      done('c2', { success: false, error: { message: 'No match found', code: 'failure' } }),
      call('c3', 'view', { path: '/p/a.ts' }),
      done('c3', { success: true, result: { content: '1. const y = 1;', detailedContent: 'diff' } }),
      rec('session.brand_new_kind', {}),
    ]);
    assert.deepEqual(
      callLevel(events).map((e) => [e.event.type, e.event.type === 'tool' ? e.event.tool : e.event.type === 'tool_result' ? e.event.ok : '']),
      [['user', ''], ['tool', 'powershell'], ['tool_result', false], ['tool', 'edit'], ['tool_result', false], ['tool', 'view'], ['tool_result', true]],
    );
    // The turn-level view: the prompt, and the narration as the answer.
    assert.deepEqual(events.filter((e) => e.event.type === 'prompt' || e.event.type === 'reply').map((e) => [e.event.type, 'text' in e.event ? e.event.text : '']), [['prompt', 'fix the build'], ['reply', 'Let me look.']]);
    assert.equal(events[0]?.event.session, 'cp-1');
    assert.equal(events[0]?.event.agent, 'copilot-cli');
    assert.deepEqual(skipped.map((s) => [s.line, s.field]), [[11, 'type']]);
    assert.match(skipped[0]?.reason ?? '', /session\.brand_new_kind/);
  });

  it('replay: the same failing edit three times halts; auto-detected', async () => {
    const records: unknown[] = [start()];
    for (const id of ['a', 'b', 'c']) records.push(call(id, 'edit', { path: '/p/a.ts', old_str: 'foo()', new_str: 'bar()' }), done(id, { success: false, error: { message: 'No match found' } }));
    const result = await replayText('events.jsonl', jsonlText(records));
    assert.equal(result.format, 'copilot-cli');
    assert.ok(halts(result).length > 0);
  });

  it('replay: a healthy session (different calls, a build that passes after a fix) raises nothing', async () => {
    const records: unknown[] = [start(), rec('user.message', { content: 'add a test' })];
    records.push(call('1', 'view', { path: '/p/a.ts' }), done('1', { success: true, result: { content: '1. export const a = 1;' } }));
    records.push(call('2', 'powershell', { command: 'npm test' }), done('2', { success: true, result: { content: 'FAIL a.test.ts\n<exited with exit code 1>' } }));
    records.push(call('3', 'edit', { path: '/p/a.ts', old_str: '1', new_str: '2' }), done('3', { success: true, result: { content: 'File updated' } }));
    records.push(call('4', 'powershell', { command: 'npm test' }), done('4', { success: true, result: { content: 'PASS a.test.ts\n<exited with exit code 0>' } }));
    const result = await replayText('events.jsonl', jsonlText(records));
    assert.deepEqual(result.findings.map((f) => `${f.action} ${f.signal}`), []);
  });
});

describeShared('Copilot CLI adapter on real session logs', 'the real transcripts', () => {
  const dir = path.join(FIXTURES, 'real', 'copilot-cli');
  for (const [file, events] of [
    // The call-level events (181, 546, 1, 5, 2) and the turn-level ones: prompts, replies, API errors, delegations.
    ['engram-07c40cd0-events.jsonl', 211],
    ['engram-8baa78ec-events.jsonl', 658],
    ['msvcc-2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl', 3],
    ['msvcc-c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl', 8],
    ['msvcc-cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl', 6],
  ] as const) {
    it(`${file}: read as copilot-cli, ${events} events, nothing skipped`, async () => {
      const r = await cli(['replay', path.join(dir, file), '--json']);
      const out = JSON.parse(r.stdout) as { events: number; skipped: number };
      assert.equal(out.events, events);
      assert.equal(out.skipped, 0);
    });
  }
});

describe('loop-guardian hook copilot-cli (a real process)', () => {
  const pre = (ws: string, toolName: string, toolArgs: unknown) => ({ sessionId: 'cp-9', timestamp: 1774039625016, cwd: ws, toolName, toolArgs });
  const hook = (ws: string, input: unknown) => cli(['hook', 'copilot-cli'], { input: JSON.stringify(input), cwd: ws });

  it('records calls and failures without ids, and refuses the third identical failing call with a top-level permissionDecision', async () => {
    const ws = await tmpProject();
    const args = { command: 'npm run build', description: 'Build the project' };
    for (let i = 0; i < 2; i++) {
      const allowed = await hook(ws, pre(ws, 'bash', args));
      assert.equal(allowed.code, 0);
      assert.equal(allowed.stdout, '');
      // A shell that ran and failed: success, with the exit code in the text.
      await hook(ws, { ...pre(ws, 'bash', JSON.stringify(args)), toolResult: { resultType: 'success', textResultForLlm: 'error TS2304\n<exited with exit code 2>' } });
    }
    const denied = await hook(ws, pre(ws, 'bash', args));
    assert.equal(denied.code, 0);
    const out = JSON.parse(denied.stdout) as { permissionDecision: string; permissionDecisionReason: string };
    assert.equal(out.permissionDecision, 'deny');
    assert.match(out.permissionDecisionReason, /Loop Guardian refused this call/);
    const lines = await readJsonl(path.join(ws, '.tmp/current/logs/hook-copilot-cli-cp-9.jsonl'));
    assert.deepEqual(lines.filter((l) => l.type === 'tool_result').map((l) => l.ok), [false, false]);
  });

  it('STOP refuses every call, PAUSE refuses its task tool, and a usage error exits 0 (it refuses a call whose hook exits non-zero)', async () => {
    const ws = await tmpProject();
    await cli(['stop', '--workspace', ws]);
    assert.match((await hook(ws, pre(ws, 'view', { path: 'a' }))).stdout, /"permissionDecision":"deny".*STOP_ALL is set to STOP/);
    await cli(['pause', '--workspace', ws]);
    assert.match((await hook(ws, pre(ws, 'task', { prompt: 'explore' }))).stdout, /PAUSE/);
    assert.equal((await hook(ws, pre(ws, 'view', { path: 'a' }))).stdout, '');
    const usage = await cli(['hook', 'copilot-cli', '--bogus'], { input: '{}', cwd: ws });
    assert.equal(usage.code, 0);
    assert.match(usage.stderr, /Usage/);
  });

  it("reads the Claude-style payload VS Code's Local harness sends to the same hook file: recorded as that harness's call, and refused under STOP in its answer", async () => {
    const ws = await tmpProject();
    const local = { timestamp: '2026-10-02T09:14:03.101Z', hook_event_name: 'PreToolUse', session_id: 'vs-1', cwd: ws, tool_name: 'run_in_terminal', tool_input: { command: 'npm test', isBackground: false }, tool_use_id: 'call_7Qm__vscode-12' };
    assert.equal((await hook(ws, local)).stdout, '');
    // The caller is Copilot in VS Code, whatever the hook was named: its log, its agent.
    const recorded = await fs.readFile(path.join(ws, '.tmp/current/logs/hook-copilot-vs-1.jsonl'), 'utf8');
    assert.match(recorded, /"agent":"copilot-vscode".*"tool":"run_in_terminal".*"id":"call_7Qm__vscode-12"/);
    assert.equal(await fs.stat(path.join(ws, '.tmp/current/logs/hook-copilot-cli-vs-1.jsonl')).catch(() => undefined), undefined);
    await cli(['stop', '--workspace', ws]);
    const denied = JSON.parse((await hook(ws, { ...local, tool_use_id: 'call_8' })).stdout) as { hookSpecificOutput?: { hookEventName: string; permissionDecision: string } };
    assert.deepEqual([denied.hookSpecificOutput?.hookEventName, denied.hookSpecificOutput?.permissionDecision], ['PreToolUse', 'deny'], 'answered in the dialect it was asked in');
  });

  it('fails open on broken state: a log folder that is a file lets the call run, said on stderr', async () => {
    const ws = await tmpdir();
    await write(ws, '.git/HEAD', 'ref: x\n');
    await write(ws, '.tmp/current/logs', 'a file');
    const r = await hook(ws, pre(ws, 'view', { path: 'a' }));
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /fail-open/);
  });

  it('init copilot-cli writes .github/hooks/loop-guardian.json in the documented shape, keeps what is there, and changes nothing the second time', async () => {
    const ws = await tmpdir();
    await write(ws, '.github/hooks/loop-guardian.json', JSON.stringify({ version: 1, hooks: { sessionStart: [{ type: 'command', bash: 'echo hi' }] } }));
    const r = await cli(['init', 'copilot-cli', '--workspace', ws, '--command', 'loop-guardian hook copilot-cli']);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(await fs.readFile(path.join(ws, '.github/hooks/loop-guardian.json'), 'utf8')) as { version: number; hooks: Record<string, unknown[]> };
    assert.equal(file.version, 1);
    assert.deepEqual(file.hooks.sessionStart, [{ type: 'command', bash: 'echo hi' }]);
    for (const event of ['preToolUse', 'postToolUse', 'postToolUseFailure']) assert.deepEqual(file.hooks[event], [{ type: 'command', bash: 'loop-guardian hook copilot-cli', timeoutSec: 10 }]);
    assert.match((await cli(['init', 'copilot-cli', '--workspace', ws, '--command', 'loop-guardian hook copilot-cli'])).stdout, /already runs the hook/);
  });
});
