import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cursor } from '../../../src/agents/cursor';
import { hookCommand } from '../../../src/agents/hookSettings';
import { cli, readJsonl, tmpdir, write } from '../helpers';

/*
 * Cursor's hook, end to end as Cursor runs it: a child process, the documented stdin
 * (cursor.com/docs/reference/hooks), the answer on stdout. Payloads written from the documented
 * shapes and the observed examples in src/agents/cursor/hook.ts.
 */

const common = (ws: string) => ({ conversation_id: 'cv-1', generation_id: 'g-1', model: 'default', cursor_version: '3.9.16', workspace_roots: [ws], user_email: null, transcript_path: null });
const pre = (ws: string, id: string, tool = 'Shell', input: Record<string, unknown> = { command: 'npm test', cwd: '', timeout: 30000 }) => ({ ...common(ws), hook_event_name: 'preToolUse', tool_name: tool, tool_input: input, tool_use_id: id, cwd: '' });
const post = (ws: string, id: string, output: Record<string, unknown>) => ({ ...pre(ws, id), hook_event_name: 'postToolUse', tool_output: JSON.stringify(output), duration: 728.2 });
const failure = (ws: string, id: string, type: string, message: string) => ({ ...pre(ws, id), hook_event_name: 'postToolUseFailure', error_message: message, failure_type: type, duration: 0, is_interrupt: false });

function hook(ws: string, input: unknown, env: NodeJS.ProcessEnv = {}) {
  return cli(['hook', 'cursor'], { input: JSON.stringify(input), cwd: ws, env: { CURSOR_PROJECT_DIR: ws, ...env } });
}

function log(ws: string): Promise<Record<string, unknown>[]> {
  return readJsonl(path.join(ws, '.tmp/current/logs/hook-cursor-cv-1.jsonl'));
}

type Deny = { permission: string; user_message: string; agent_message: string };

describe('loop-guardian hook cursor (a real process)', () => {
  it('records each call and how it ended (the exit code inside tool_output), and refuses the third identical failing call with {"permission":"deny"}', async () => {
    const ws = await tmpdir();
    for (const id of ['u1', 'u2']) {
      const allowed = await hook(ws, pre(ws, id));
      assert.equal(allowed.code, 0);
      assert.equal(allowed.stdout, '', 'no decision: Cursor keeps its own rules');
      assert.equal((await hook(ws, post(ws, id, { output: "Error: Cannot find module './config'\n", exitCode: 1 }))).code, 0);
    }
    const third = await hook(ws, pre(ws, 'u3'));
    assert.equal(third.code, 0);
    const out = JSON.parse(third.stdout) as Deny;
    assert.equal(out.permission, 'deny');
    // The text that reaches the model is user_message (observed); both carry the reason.
    assert.match(out.user_message, /Loop Guardian refused this call.*Cannot find module/);
    assert.equal(out.agent_message, out.user_message);
    const lines = await log(ws);
    assert.deepEqual(
      lines.map((l) => `${String(l.type)}:${String(l.id ?? '')}:${String(l.ok ?? '')}`),
      ['tool:u1:', 'tool_result:u1:false', 'tool:u2:', 'tool_result:u2:false', 'tool:u3:false'],
    );
    assert.equal(lines[0]?.agent, 'cursor');
    assert.equal(lines[0]?.tool, 'Shell');
    // Cursor reports the refused call as a permission_denied failure: it never ran, nothing is recorded.
    await hook(ws, failure(ws, 'u3', 'permission_denied', out.user_message));
    assert.equal((await log(ws)).length, 5);
  });

  it('a failure event (error, timeout) is the outcome; a successful output is progress, not a loop', async () => {
    const ws = await tmpdir();
    for (const id of ['r1', 'r2']) {
      await hook(ws, pre(ws, id, 'Read', { file_path: 'src/missing.ts' }));
      await hook(ws, { ...failure(ws, id, 'error', 'ENOENT: no such file or directory'), tool_name: 'Read', tool_input: { file_path: 'src/missing.ts' } });
    }
    assert.match((await hook(ws, pre(ws, 'r3', 'Read', { file_path: 'src/missing.ts' }))).stdout, /"permission":"deny"/);
    const results = (await log(ws)).filter((l) => l.type === 'tool_result');
    assert.deepEqual(results.map((r) => r.error), ['ENOENT: no such file or directory', 'ENOENT: no such file or directory']);
    // A build that succeeds with new output each time is polling with progress, not refused.
    const ws2 = await tmpdir();
    for (const [i, id] of ['b1', 'b2', 'b3'].entries()) {
      assert.equal((await hook(ws2, pre(ws2, id, 'Shell', { command: 'npm run build' }))).stdout, '');
      await hook(ws2, { ...post(ws2, id, { output: `built ${i} files`, exitCode: 0 }), tool_input: { command: 'npm run build' } });
    }
  });

  it('STOP refuses every call, the per-kind events too; PAUSE refuses its Task tool only', async () => {
    const ws = await tmpdir();
    await cli(['stop', '--workspace', ws, '--reason', 'runaway']);
    const stopped = JSON.parse((await hook(ws, pre(ws, 's1', 'Read', { file_path: 'a' }))).stdout) as Deny;
    assert.equal(stopped.permission, 'deny');
    assert.match(stopped.user_message, /STOP_ALL is set to STOP \(runaway/);
    const shell = await hook(ws, { ...common(ws), hook_event_name: 'beforeShellExecution', command: 'ls', cwd: ws, sandbox: false });
    assert.equal((JSON.parse(shell.stdout) as Deny).permission, 'deny');
    // STOP refuses prompts too, in the prompt event's answer: {"continue": false, "user_message"}.
    const prompt = JSON.parse((await hook(ws, { ...common(ws), hook_event_name: 'beforeSubmitPrompt', prompt: 'go on', attachments: [] })).stdout) as { continue: boolean; user_message: string };
    assert.equal(prompt.continue, false);
    assert.match(prompt.user_message, /STOP_ALL is set to STOP/);
    await cli(['pause', '--workspace', ws]);
    assert.equal((await hook(ws, { ...common(ws), hook_event_name: 'beforeSubmitPrompt', prompt: 'go on', attachments: [] })).stdout, '', 'PAUSE lets prompts through');
    assert.match((await hook(ws, pre(ws, 'p1', 'Task', { description: 'explore', prompt: 'look around' }))).stdout, /"permission":"deny".*PAUSE/);
    assert.equal((await hook(ws, pre(ws, 'p2', 'Shell', { command: 'ls' }))).stdout, '');
  });

  it('fails open on broken state: a log folder that is a file, an unreadable STOP_ALL, stdin that is not JSON', async () => {
    const ws = await tmpdir();
    await write(ws, '.tmp/current/logs', 'a file');
    const r = await hook(ws, pre(ws, 'f1'));
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /fail-open/);
    const ws2 = await tmpdir();
    await fs.mkdir(path.join(ws2, '.github/guardian/STOP_ALL'), { recursive: true });
    const folder = await hook(ws2, pre(ws2, 'f2'));
    assert.equal(folder.code, 0);
    assert.equal(folder.stdout, '');
    const garbage = await cli(['hook', 'cursor'], { input: 'not json', cwd: ws2, env: { CURSOR_PROJECT_DIR: ws2 } });
    assert.equal(garbage.code, 0);
    assert.equal(garbage.stdout, '');
  });

  it('init cursor writes the generic events to .cursor/hooks.json (version 1, failClosed false), keeps the team\'s hooks, replaces an older install\'s entry, and changes nothing the second time', async () => {
    const ws = await tmpdir();
    const theirs = { command: './.cursor/hooks/audit.sh', matcher: 'curl|wget', failClosed: true };
    const older = { command: 'node "/home/u/old-checkout/dist/cli.js" hook cursor', timeout: 10 };
    await write(ws, '.cursor/hooks.json', JSON.stringify({ version: 1, hooks: { beforeShellExecution: [theirs], preToolUse: [{ command: './fmt.sh', matcher: 'Write' }, older] } }));
    const r = await cli(['init', 'cursor', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(await fs.readFile(path.join(ws, '.cursor/hooks.json'), 'utf8')) as { version: number; hooks: Record<string, Record<string, unknown>[]> };
    const command = hookCommand('cursor', cursor.hook!);
    assert.equal(file.version, 1);
    assert.deepEqual(file.hooks.beforeShellExecution, [theirs]);
    assert.deepEqual(file.hooks.preToolUse, [{ command: './fmt.sh', matcher: 'Write' }, { timeout: 10, command }]);
    for (const event of ['postToolUse', 'postToolUseFailure']) assert.deepEqual(file.hooks[event], [{ type: 'command', timeout: 10, failClosed: false, command }]);
    assert.match((await cli(['init', 'cursor', '--workspace', ws])).stdout, /already runs the hook/);
  });
});
