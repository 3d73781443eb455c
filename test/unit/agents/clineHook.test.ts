import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { clineHook } from '../../../src/agents/cline/hook';
import { CLI, cli, readJsonl, tmpdir, write } from '../helpers';

/*
 * Cline's hooks as Cline runs them: the executable files `init cline` writes in
 * `.clinerules/hooks/`, each a real child process started from elsewhere (Cline's cwd is its own
 * business), the call as JSON on stdin (cline/cline `proto/cline/hooks.proto`, `.clinerules/hooks/README.md`),
 * the answer `{"cancel": …}` on stdout.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an executable file with stdin, as Cline's HookProcess does. */
function run(file: string, input: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [], { cwd: '/', env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const base = (ws: string, task = '1759396400000') => ({ clineVersion: '3.89.2', timestamp: '1759396443101', taskId: task, workspaceRoots: [ws], userId: 'u-1', model: { provider: 'anthropic', slug: 'claude-sonnet-4-6' } });
const pre = (ws: string, toolName: string, parameters: Record<string, string>, task?: string) => JSON.stringify({ ...base(ws, task), hookName: 'PreToolUse', preToolUse: { toolName, parameters } });
const post = (ws: string, toolName: string, parameters: Record<string, string>, result: string, success = true) =>
  JSON.stringify({ ...base(ws), hookName: 'PostToolUse', postToolUse: { toolName, parameters, result, success, executionTimeMs: 900 } });

const NPM_TEST = { command: 'npm test', requires_approval: 'false' };
const FAILED = "Command failed with exit code 1.\nOutput:\nError: Cannot find module './config'";

async function initialised(): Promise<{ ws: string; preHook: string; postHook: string }> {
  const ws = await tmpdir();
  const r = await cli(['init', 'cline', '--workspace', ws]);
  assert.equal(r.code, 0, r.stderr);
  return { ws, preHook: path.join(ws, '.clinerules/hooks/PreToolUse'), postHook: path.join(ws, '.clinerules/hooks/PostToolUse') };
}

const answer = (r: Run) => JSON.parse(r.stdout) as { cancel: boolean; errorMessage?: string };

describe('Cline hooks: the files init writes, run as Cline runs them', function () {
  this.timeout(60_000);

  it('records calls and outcomes under the task, and cancels at the third identical failing call; another call goes on', async () => {
    const { ws, preHook, postHook } = await initialised();
    for (let i = 0; i < 2; i++) {
      const p = await run(preHook, pre(ws, 'execute_command', NPM_TEST));
      assert.equal(p.code, 0);
      assert.deepEqual(answer(p), { cancel: false });
      assert.deepEqual(answer(await run(postHook, post(ws, 'execute_command', NPM_TEST, FAILED))), { cancel: false });
    }
    const third = await run(preHook, pre(ws, 'execute_command', NPM_TEST));
    assert.equal(third.code, 0);
    const refused = answer(third);
    assert.equal(refused.cancel, true);
    assert.match(refused.errorMessage ?? '', /failing-call.*execute_command: npm test.*Cannot find module/);
    assert.deepEqual(answer(await run(preHook, pre(ws, 'read_file', { path: 'package.json' }))), { cancel: false });
    const log = await readJsonl(path.join(ws, '.tmp/current/logs/hook-cline-1759396400000.jsonl'));
    assert.deepEqual(log.map((l) => `${String(l.type)} ${String(l.tool ?? '')} ${String(l.ok ?? '')}`), [
      'tool execute_command ',
      'tool_result  false',
      'tool execute_command ',
      'tool_result  false',
      'tool execute_command false',
      'tool read_file ',
    ]);
    assert.equal(log[0]?.agent, 'cline');
    // What the hook wrote is what scan reads.
    const scan = JSON.parse((await cli(['scan', '--workspace', ws, '--json'])).stdout) as { findings: { action: string }[] };
    assert.ok(scan.findings.some((f) => f.action === 'halt'));
  });

  it('STOP cancels every call, whatever arrives on stdin; PAUSE cancels delegations only (new_task, use_subagents); CLEAR lets them run', async () => {
    const { ws, preHook } = await initialised();
    await cli(['stop', '--workspace', ws, '--reason', 'budget blown']);
    const stopped = answer(await run(preHook, pre(ws, 'list_files', { path: '.' })));
    assert.equal(stopped.cancel, true);
    assert.match(stopped.errorMessage ?? '', /STOP_ALL is set to STOP \(budget blown/);
    // Its cancel ends the task: said so, and the model is not asked to end a turn that is over.
    assert.doesNotMatch(stopped.errorMessage ?? '', /cannot end this run/);
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /refused list_files in session 1759396400000 and ended the run/);
    assert.equal(answer(await run(preHook, 'not json at all')).cancel, true);
    assert.equal(answer(await run(preHook, JSON.stringify({ hookName: 'PreToolUse' }))).cancel, true);
    await cli(['pause', '--workspace', ws]);
    const delegation = answer(await run(preHook, pre(ws, 'new_task', { context: 'do the rest' })));
    assert.equal(delegation.cancel, true);
    assert.match(delegation.errorMessage ?? '', /PAUSE/);
    assert.equal(answer(await run(preHook, pre(ws, 'use_subagents', { prompt: 'look around' }))).cancel, true);
    assert.deepEqual(answer(await run(preHook, pre(ws, 'execute_command', { command: 'ls' }))), { cancel: false });
    await cli(['clear', '--workspace', ws]);
    assert.deepEqual(answer(await run(preHook, pre(ws, 'new_task', { context: 'x' }))), { cancel: false });
  });

  it('fails open on broken state: a log folder that is a file, an unreadable STOP_ALL, a stdin that is no call: the call runs, and stderr says why', async () => {
    const { ws, preHook } = await initialised();
    await write(ws, '.tmp/current/logs', 'a file where the folder should be');
    const noLogs = await run(preHook, pre(ws, 'execute_command', NPM_TEST));
    assert.equal(noLogs.code, 0);
    assert.deepEqual(answer(noLogs), { cancel: false });
    assert.match(noLogs.stderr, /fail-open/);
    await fs.mkdir(path.join(ws, '.github/guardian/STOP_ALL'), { recursive: true });
    const unreadable = await run(preHook, pre(ws, 'execute_command', NPM_TEST));
    assert.deepEqual(answer(unreadable), { cancel: false });
    assert.match(unreadable.stderr, /STOP_ALL: unreadable.*read as CLEAR/);
    const garbage = await run(preHook, '{"hookName":');
    assert.equal(garbage.code, 0);
    assert.deepEqual(answer(garbage), { cancel: false });
  });

  it("reads Cline's payloads: the SDK bundle's string parameters, a failed call (success false), and events that are no calls", () => {
    const sdk = clineHook.parse(JSON.parse(pre('/p', 'run_commands', { commands: '["npm test"]' })));
    assert.ok(!('problem' in sdk));
    assert.deepEqual([sdk.phase, sdk.tool, sdk.session, sdk.cwd, sdk.input], ['pre', 'run_commands', '1759396400000', '/p', { commands: '["npm test"]' }]);
    const thrown = clineHook.parse(JSON.parse(post('/p', 'read_file', { path: 'x' }, 'Tool execution failed: ENOENT', false)));
    assert.ok(!('problem' in thrown) && thrown.error === 'Tool execution failed: ENOENT');
    const ok = clineHook.parse(JSON.parse(post('/p', 'execute_command', NPM_TEST, 'Command executed.\nOutput:\nok')));
    assert.ok(!('problem' in ok) && ok.error === undefined && ok.response === 'Command executed.\nOutput:\nok');
    const start = clineHook.parse({ ...base('/p'), hookName: 'TaskStart', taskStart: { taskMetadata: { taskId: '1' } } });
    assert.ok(!('problem' in start) && start.phase === 'other');
    assert.ok('problem' in clineHook.parse({ session_id: 'x', tool_name: 'Bash' }));
    assert.deepEqual(JSON.parse(clineHook.deny('why').stdout), { cancel: true, errorMessage: 'why' });
  });
});

describe('init cline: the hook files in .clinerules/hooks', function () {
  this.timeout(60_000);

  it('writes one executable file per event that runs the hook for its own workspace; a second run changes nothing', async () => {
    const ws = await tmpdir();
    await write(ws, '.clinerules/coding.md', '# my rules\n');
    const r = await cli(['init', 'cline', '--workspace', ws, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { file: string; files: string[]; added: string[]; created: boolean };
    assert.deepEqual([out.file, out.files, out.added, out.created], ['.clinerules/hooks', ['.clinerules/hooks/PreToolUse', '.clinerules/hooks/PostToolUse'], ['PreToolUse', 'PostToolUse'], true]);
    const script = await fs.readFile(path.join(ws, '.clinerules/hooks/PreToolUse'), 'utf8');
    assert.match(script, /^#!\/bin\/sh\n/);
    // It runs the per-user launcher (never this checkout's path), passing its own workspace on.
    assert.ok(script.includes(`hook cline "$@"' loop-guardian --workspace "$(cd "$(dirname "$0")/../.." && pwd)"`), script);
    assert.ok(!script.includes(CLI), script);
    for (const f of out.files) assert.equal((await fs.stat(path.join(ws, f))).mode & 0o100, 0o100, `${f} is executable`);
    assert.equal(await fs.readFile(path.join(ws, '.clinerules/coding.md'), 'utf8'), '# my rules\n');
    const again = await cli(['init', 'cline', '--workspace', ws]);
    assert.match(again.stdout, /already runs the hook: nothing to change/);
    assert.equal(await fs.readFile(path.join(ws, '.clinerules/hooks/PreToolUse'), 'utf8'), script);
  });

  it("updates its own older files in place (a new command, a lost executable bit), and never replaces another hook of the same name: nothing is written then, and the file is named", async () => {
    const ws = await tmpdir();
    assert.equal((await cli(['init', 'cline', '--workspace', ws, '--command', 'node "/old/dist/cli.js" hook cline'])).code, 0);
    await fs.chmod(path.join(ws, '.clinerules/hooks/PostToolUse'), 0o644);
    const r = await cli(['init', 'cline', '--workspace', ws]);
    assert.match(r.stdout, /Updated \.clinerules\/hooks: the hook runs on PreToolUse, PostToolUse/);
    assert.doesNotMatch(await fs.readFile(path.join(ws, '.clinerules/hooks/PreToolUse'), 'utf8'), /\/old\/dist/);
    assert.equal((await fs.stat(path.join(ws, '.clinerules/hooks/PostToolUse'))).mode & 0o100, 0o100);

    const other = await tmpdir();
    const theirs = '#!/usr/bin/env bash\ninput=$(cat)\necho \'{"cancel": false}\'\n';
    await write(other, '.clinerules/hooks/PreToolUse', theirs);
    const refused = await cli(['init', 'cline', '--workspace', other]);
    assert.equal(refused.code, 3);
    assert.match(refused.stderr, /\.clinerules\/hooks\/PreToolUse: \(file\) is another hook of this name.*not changed/);
    assert.equal(await fs.readFile(path.join(other, '.clinerules/hooks/PreToolUse'), 'utf8'), theirs);
    await assert.rejects(fs.stat(path.join(other, '.clinerules/hooks/PostToolUse')), 'registered whole or not at all');
  });
});
