import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { hookOptions } from '../../../src/cli/hook';
import { cli, hookLogLines, runHook, tmpdir, write } from '../helpers';

const claudePre = (id: string, command: string, session = 'sess-1') => ({
  session_id: session,
  transcript_path: '/home/u/.claude/projects/p/sess-1.jsonl',
  cwd: '/ignored',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command, description: 'run it' },
  tool_use_id: id,
});
const claudeFail = (id: string, command: string) => ({ ...claudePre(id, command), hook_event_name: 'PostToolUseFailure', error: 'Exit code 1\nError: Cannot find module "./config"' });

describe('loop-guardian hook (a real process, real stdin and stdout)', () => {
  it('Claude Code: records calls and failures, and refuses the third identical failing call with hookSpecificOutput', async () => {
    const ws = await tmpdir();
    for (const id of ['t1', 't2']) {
      const pre = await runHook(ws, 'claude', claudePre(id, 'npm test'));
      assert.equal(pre.code, 0);
      assert.equal(pre.stdout, '', 'an allowed call gets no decision, so Claude Code keeps its own permission rules');
      assert.equal((await runHook(ws, 'claude', claudeFail(id, 'npm test'))).code, 0);
    }
    const third = await runHook(ws, 'claude', claudePre('t3', 'npm test'));
    assert.equal(third.code, 0);
    const out = JSON.parse(third.stdout) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(out.hookSpecificOutput.hookEventName, 'PreToolUse');
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
    // The deterministic failure has used up its retry (seed 004), and the reason says what to do.
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /failing-call, 2\/2\): Retry loop on Bash: npm test: failed twice with the same not-found error, which retrying cannot fix: .*Cannot find module.*list or search for the right path first/);
    const lines = await hookLogLines(ws);
    assert.deepEqual(
      lines.map((l) => `${String(l.type)}:${String(l.id ?? '')}:${String(l.ok ?? '')}`),
      ['tool:t1:', 'tool_result:t1:false', 'tool:t2:', 'tool_result:t2:false', 'tool:t3:false'],
    );
    assert.equal(lines[0]?.agent, 'claude-code');
    assert.equal(lines[0]?.session, 'sess-1');
    // A different call goes through.
    const other = await runHook(ws, 'claude', claudePre('t4', 'cat package.json'));
    assert.equal(other.stdout, '');
    // What the hook wrote is what the extension and scan read.
    const scan = await cli(['scan', '--workspace', ws, '--json']);
    const report = JSON.parse(scan.stdout) as { findings: { signal: string; action: string }[] };
    assert.ok(report.findings.some((f) => f.signal === 'identical-calls' && f.action === 'halt'));
    const log = await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8');
    assert.match(log, /\[WARN\] hook claude: refused Bash in session sess-1/);
  });

  it('Claude Code: an Edit failed twice ("File has not been read yet"): the third retry at once is refused (seed 004), the retry after a Read goes through (recovery)', async () => {
    const ws = await tmpdir();
    const base = { session_id: 'rec', transcript_path: '/home/u/.claude/projects/p/rec.jsonl', cwd: '/ignored' };
    const editInput = { file_path: '/p/src/app/page.tsx', old_string: 'import Image from "next/image";', new_string: '' };
    const editPre = (id: string) => ({ ...base, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: editInput, tool_use_id: id });
    const editFail = (id: string) => ({ ...editPre(id), hook_event_name: 'PostToolUseFailure', error: '<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>' });
    for (const id of ['e1', 'e2']) {
      assert.equal((await runHook(ws, 'claude', editPre(id))).stdout, '');
      assert.equal((await runHook(ws, 'claude', editFail(id))).code, 0);
    }
    const atOnce = await runHook(ws, 'claude', editPre('e3'));
    assert.equal((JSON.parse(atOnce.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision, 'deny', 'failing twice in a row is the loop');
    const readPre = { ...base, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: '/p/src/app/page.tsx' }, tool_use_id: 'r1' };
    assert.equal((await runHook(ws, 'claude', readPre)).stdout, '');
    await runHook(ws, 'claude', { ...readPre, hook_event_name: 'PostToolUse', tool_response: { type: 'text', file: { filePath: '/p/src/app/page.tsx', content: 'import Image from "next/image";\n' } } });
    const retry = await runHook(ws, 'claude', editPre('e4'));
    assert.equal(retry.code, 0);
    assert.equal(retry.stdout, '', 'the agent read the file first: the same Edit is its recovery, not the loop');
  });

  it('Codex: the outcome read from its rollout (its hook gets the output text alone); the same deny shape; --deny-with exit2 refuses with exit code 2 and the reason on stderr', async () => {
    const ws = await tmpdir();
    // As Codex 0.169 sends and writes them (seen live): PostToolUse's tool_response is the output
    // text, no exit code; the rollout gets the function_call_output with it once the hook returned.
    const rollout = path.join(ws, 'rollout-2026-11-25T22-10-34-cx.jsonl');
    const line = (type: string, payload: unknown) => `${JSON.stringify({ timestamp: '2026-11-25T22:10:35.000Z', type, payload })}\n`;
    await fs.writeFile(rollout, line('session_meta', { id: 'cx', cwd: ws }));
    const pre = (id: string) => ({ session_id: 'cx', cwd: ws, transcript_path: rollout, hook_event_name: 'PreToolUse', model: 'gpt-5', tool_name: 'Bash', tool_input: { command: 'cargo build' }, tool_use_id: id });
    const post = (id: string) => ({ ...pre(id), hook_event_name: 'PostToolUse', tool_response: 'error[E0425]: cannot find value `x`\n' });
    for (const id of ['c1', 'c2']) {
      assert.equal((await runHook(ws, 'codex', pre(id))).stdout, '');
      await fs.appendFile(rollout, line('response_item', { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"cargo build"}', call_id: id }));
      await runHook(ws, 'codex', post(id));
      await fs.appendFile(rollout, line('response_item', { type: 'function_call_output', call_id: id, output: `Chunk ID: ${id}\nWall time: 0.0306 seconds\nProcess exited with code 101\nOriginal token count: 9\nOutput:\nerror[E0425]: cannot find value \`x\`\n` }));
    }
    const json = await runHook(ws, 'codex', pre('c3'));
    assert.equal((JSON.parse(json.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision, 'deny');
    const exit2 = await runHook(ws, 'codex', pre('c4'), ['--deny-with', 'exit2']);
    assert.equal(exit2.code, 2);
    assert.equal(exit2.stdout, '');
    assert.match(exit2.stderr, /Loop Guardian refused this call/);
    const results = (await hookLogLines(ws)).filter((l) => l.type === 'tool_result');
    assert.deepEqual(results.map((r) => r.ok), [false, false]);
  });

  it('Gemini CLI: calls without ids pair with AfterTool by tool and arguments; refusal is {"decision":"deny"}', async () => {
    const ws = await tmpdir();
    const before = { session_id: 'gm', cwd: ws, hook_event_name: 'BeforeTool', timestamp: '2026-11-22T10:00:00Z', tool_name: 'read_file', tool_input: { absolute_path: '/p/missing.ts' } };
    const after = { ...before, hook_event_name: 'AfterTool', tool_response: { llmContent: '', error: { message: 'File not found: /p/missing.ts', type: 'FILE_NOT_FOUND' } } };
    for (let i = 0; i < 2; i++) {
      const allowed = await runHook(ws, 'gemini', before);
      assert.equal(allowed.code, 0);
      assert.deepEqual(JSON.parse(allowed.stdout), {});
      assert.deepEqual(JSON.parse((await runHook(ws, 'gemini', after)).stdout), {});
    }
    const denied = await runHook(ws, 'gemini', before);
    const out = JSON.parse(denied.stdout) as { decision: string; reason: string };
    assert.equal(out.decision, 'deny');
    assert.match(out.reason, /read_file/);
    const lines = await hookLogLines(ws);
    const calls = lines.filter((l) => l.type === 'tool' && l.ok === undefined);
    const results = lines.filter((l) => l.type === 'tool_result');
    assert.deepEqual(results.map((r) => r.id), calls.map((c) => c.id));
    assert.equal(results[0]?.error, 'File not found: /p/missing.ts');
    assert.equal(lines[0]?.agent, 'gemini-cli');
  });

  it('STOP refuses every call with its reason; PAUSE refuses delegations only', async () => {
    const ws = await tmpdir();
    assert.equal((await cli(['stop', '--workspace', ws, '--reason', 'budget blown'])).code, 0);
    const stopped = await runHook(ws, 'claude', claudePre('s1', 'ls'));
    const reason = (JSON.parse(stopped.stdout) as { hookSpecificOutput: { permissionDecisionReason: string } }).hookSpecificOutput.permissionDecisionReason;
    assert.match(reason, /STOP_ALL is set to STOP \(budget blown/);
    const gem = await runHook(ws, 'gemini', { session_id: 'g', hook_event_name: 'BeforeTool', tool_name: 'list_directory', tool_input: { path: '.' } });
    assert.equal((JSON.parse(gem.stdout) as { decision: string }).decision, 'deny');
    await cli(['pause', '--workspace', ws]);
    const task = await runHook(ws, 'claude', { ...claudePre('p1', ''), tool_name: 'Task', tool_input: { description: 'explore', prompt: 'look around', subagent_type: 'general-purpose' } });
    assert.match(task.stdout, /"permissionDecision":"deny".*PAUSE/);
    assert.equal((await runHook(ws, 'claude', claudePre('p2', 'ls'))).stdout, '');
    await cli(['clear', '--workspace', ws]);
    assert.equal((await runHook(ws, 'claude', { ...claudePre('p3', ''), tool_name: 'Task', tool_input: { prompt: 'x' } })).stdout, '');
  });

  it('fails open: an unreadable STOP_ALL (said on stderr and logged), a non-JSON stdin and a broken log folder let the call run', async () => {
    const ws = await tmpdir();
    await fs.mkdir(path.join(ws, '.github/guardian/STOP_ALL'), { recursive: true });
    const broken = await runHook(ws, 'claude', claudePre('f1', 'ls'));
    assert.equal(broken.code, 0);
    assert.equal(broken.stdout, '');
    assert.match(broken.stderr, /STOP_ALL: unreadable: is a folder, not a regular file; read as CLEAR/);
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /\[WARN\] hook claude: \.github\/guardian\/STOP_ALL: unreadable: is a folder, not a regular file; read as CLEAR/);
    const garbage = await runHook(ws, 'gemini', 'this is not json');
    assert.equal(garbage.code, 0);
    assert.deepEqual(JSON.parse(garbage.stdout), {});
    const ws2 = await tmpdir();
    await write(ws2, '.tmp/current/logs', 'a file where the folder should be');
    const noLogs = await runHook(ws2, 'codex', { session_id: 'x', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
    assert.equal(noLogs.code, 0);
    assert.equal(noLogs.stdout, '');
    assert.match(noLogs.stderr, /fail-open/);
  });

  it('honours the configuration, and sees it change', async () => {
    const ws = await tmpdir();
    await write(ws, '.github/guardian/config.json', JSON.stringify({ signals: { 'identical-calls': { threshold: 2 } } }));
    await runHook(ws, 'claude', claudePre('a1', 'make'));
    await runHook(ws, 'claude', claudeFail('a1', 'make'));
    assert.match((await runHook(ws, 'claude', claudePre('a2', 'make'))).stdout, /deny/);
    await write(ws, '.github/guardian/config.json', JSON.stringify({ signals: { 'identical-calls': { threshold: 10 } }, hooks: { deny: [] } }));
    assert.equal((await runHook(ws, 'claude', claudePre('a3', 'make'))).stdout, '');
  });

  it("reads its arguments as Node's parseArgs does: the same options, positionals and errors for any arguments", () => {
    const parsed = (argv: string[]) => {
      try {
        const { values, positionals } = parseArgs({ args: argv, options: { workspace: { type: 'string' }, 'deny-with': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
        return { values: { ...values }, positionals };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    const ours = (argv: string[]) => {
      try {
        const { values, positionals } = hookOptions(argv);
        return { values: { ...values }, positionals };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    const words = ['claude', 'codex', '--workspace', '--deny-with', 'json', 'exit2', '/tmp/ws', '', '-', '--', '-h', '--help', '--workspace=/x', '--deny-with=json', '-x', '--other', '-dir', 'a b'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...words), { maxLength: 7 }), (argv) => {
        assert.deepEqual(ours(argv), parsed(argv));
      }),
      { numRuns: 3000 },
    );
  });

  it('a usage error exits 1, which no agent reads as a refusal', async () => {
    const ws = await tmpdir();
    const r = await runHook(ws, 'kiro', {});
    assert.equal(r.code, 1);
    assert.match(r.stderr, /must be one of claude, codex, gemini/);
  });
});
