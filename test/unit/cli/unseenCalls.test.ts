import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cli, hookLogLines, runHook, tmpdir, tmpProject } from '../helpers';

/*
 * Claude Code rejects an Edit whose `old_string` is not in the file while it checks the call's
 * input, before any hook runs (seen live from 2.1.328: no hook call for such Edits). Its transcript
 * holds them: the hook reads it for the calls it never saw, records them, and refuses the loop at
 * the first hook call after them; `scan` shows it. The transcript lines are shaped as Claude Code
 * 2.1.328 wrote them in the live suite (test/agents/live.test.ts), shortened.
 */

const SESSION = '5d221fe0-077d-4162-b826-7389dd28d60f';
const EDIT = { replace_all: false, file_path: '/p/src/app.js', old_string: 'function neverWritten() { return 42; }', new_string: 'function neverWritten() { return 43; }' };
const REJECTED = '<tool_use_error>String to replace not found in file.\nString: function neverWritten() { return 42; }</tool_use_error>';

function rejectedEdit(n: number, at: number): string[] {
  const ts = (ms: number) => new Date(at + ms).toISOString();
  return [
    { parentUuid: `p${n}`, isSidechain: false, type: 'assistant', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'scripted', content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Edit', input: EDIT }], stop_reason: 'tool_use' }, uuid: `a${n}`, timestamp: ts(0), sessionId: SESSION, version: '2.1.328' },
    { parentUuid: `a${n}`, isSidechain: false, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', content: REJECTED, is_error: true, tool_use_id: `toolu_${n}` }] }, uuid: `u${n}`, timestamp: ts(5), toolUseResult: 'Error: String to replace not found in file.', sessionId: SESSION, version: '2.1.328' },
  ].map((l) => JSON.stringify(l));
}

const hookBase = (transcript: string) => ({ session_id: SESSION, transcript_path: transcript, cwd: '/ignored' });

describe('Claude Code: calls rejected before its hook, read from its transcript', function () {
  this.timeout(60_000);

  it('are recorded at the next hook call, and their loop is refused there, whatever the call, and the run ended; a call the hook saw is not recorded twice', async () => {
    const ws = await tmpdir();
    const transcript = path.join(await tmpdir(), `${SESSION}.jsonl`);
    const prompt = 'Build the project with npm run build-missing until it works.';
    await fs.writeFile(transcript, `${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt }, uuid: 'u0', timestamp: new Date().toISOString(), sessionId: SESSION })}\n`);
    assert.equal((await runHook(ws, 'claude', { ...hookBase(transcript), hook_event_name: 'UserPromptSubmit', prompt })).stdout, '');
    // A Read the hook saw (its PreToolUse and PostToolUse), then four Edits it never saw.
    const at = Date.now() + 1000;
    const read = { ...hookBase(transcript), hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: '/p/src/app.js' }, tool_use_id: 'toolu_0' };
    assert.equal((await runHook(ws, 'claude', read)).stdout, '');
    await runHook(ws, 'claude', { ...read, hook_event_name: 'PostToolUse', tool_response: { type: 'text', file: { filePath: '/p/src/app.js', content: 'const y = 1;\n' } } });
    const readLines = [
      { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'Read', input: { file_path: '/p/src/app.js' } }] }, uuid: 'a0', timestamp: new Date(at - 500).toISOString(), sessionId: SESSION },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', content: '1\tconst y = 1;', tool_use_id: 'toolu_0' }] }, uuid: 'r0', timestamp: new Date(at - 400).toISOString(), sessionId: SESSION },
    ].map((l) => JSON.stringify(l));
    await fs.appendFile(transcript, `${[...readLines, ...[1, 2, 3, 4].flatMap((n) => rejectedEdit(n, at + n * 100))].join('\n')}\n`);

    const next = await runHook(ws, 'claude', { ...hookBase(transcript), hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_5' });
    const answer = JSON.parse(next.stdout) as { continue?: boolean; hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(answer.hookSpecificOutput.permissionDecision, 'deny');
    assert.equal(answer.continue, false, 'the run is ended: the loop already ran past its refusal');
    assert.match(answer.hookSpecificOutput.permissionDecisionReason, /Loop Guardian refused this call: a loop ran that its hook never saw \((repeated-error|failing-call|identical-calls)/);
    const log = await hookLogLines(ws);
    const calls = log.filter((e) => e.type === 'tool');
    assert.deepEqual(calls.map((e) => `${String(e.tool)} ${String(e.id)} ${String(e.ok)}`), ['Read toolu_0 undefined', 'Edit toolu_1 false', 'Edit toolu_2 false', 'Edit toolu_3 false', 'Edit toolu_4 false'], 'each unseen Edit once, the Read the hook saw not again');
    assert.match(String(calls[1]?.error), /String to replace not found/);
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /refused Bash in session .* \(a loop its hook never saw\) and ended the run/);

    // The next call, with nothing new unseen, is judged as any other.
    assert.equal((await runHook(ws, 'claude', { ...hookBase(transcript), hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: 'toolu_6' })).stdout, '');
    assert.equal((await hookLogLines(ws)).filter((e) => e.type === 'tool' && e.tool === 'Edit').length, 4);
  });

  it('`scan`, with Claude Code watched, shows the loop of a hooked session that no hook call came after: its transcript read for the calls its hook log lacks, paired by id', async () => {
    const ws = await tmpProject();
    const home = await tmpdir();
    const projects = path.join(home, '.claude', 'projects', ws.replace(/[^A-Za-z0-9]/g, '-'));
    await fs.mkdir(projects, { recursive: true });
    const transcript = path.join(projects, `${SESSION}.jsonl`);
    const prompt = 'Fix the function.';
    const start = Date.now();
    await fs.writeFile(transcript, `${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt }, uuid: 'u0', timestamp: new Date(start).toISOString(), sessionId: SESSION, cwd: ws })}\n`);
    await fs.mkdir(path.join(ws, '.github', 'guardian'), { recursive: true });
    await fs.writeFile(path.join(ws, '.github', 'guardian', 'config.json'), JSON.stringify({ agents: { claude: { enabled: true } } }));
    assert.equal((await cli(['init', 'claude', '--workspace', ws], { env: { HOME: home } })).code, 0);
    assert.equal((await runHook(ws, 'claude', { ...hookBase(transcript), hook_event_name: 'UserPromptSubmit', prompt })).stdout, '');
    // The model's calls come after the prompt the hook recorded.
    const answered = Date.now();
    await fs.appendFile(transcript, `${[1, 2, 3, 4, 5].flatMap((n) => rejectedEdit(n, answered + n * 100)).join('\n')}\n`);
    const scan = await cli(['scan', '--workspace', ws, '--json'], { env: { HOME: home } });
    const out = JSON.parse(scan.stdout) as { findings: { signal: string; action: string; message: string; count: number; file: string }[] };
    const loop = out.findings.find((f) => f.action === 'halt' && /Edit/.test(f.message));
    assert.ok(loop, `${scan.stdout}${scan.stderr}`);
    assert.equal(loop.file, transcript);
    // `status` does not say "enforced" while that loop stands unseen.
    const claudeState = async () => (JSON.parse((await cli(['status', '--workspace', ws, '--json'], { env: { HOME: home } })).stdout) as { agents: { id: string; state: string; problems: { cause: string }[] }[] }).agents.find((a) => a.id === 'claude');
    const unseen = await claudeState();
    assert.equal(unseen?.state, 'unseen', JSON.stringify(unseen));
    assert.match(unseen?.problems[0]?.cause ?? '', /ran a loop its hook never saw, in session 5d221fe0/);
    // Once the hook records them too (its next call), they are still counted once.
    await runHook(ws, 'claude', { ...hookBase(transcript), hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_9' });
    assert.equal((await hookLogLines(ws)).filter((e) => e.type === 'tool' && e.tool === 'Edit').length, 5);
    // Refused there: the hook has seen it now.
    assert.equal((await claudeState())?.state, 'enforced');
    const again = JSON.parse((await cli(['scan', '--workspace', ws, '--json'], { env: { HOME: home } })).stdout) as typeof out;
    const halts = (o: typeof out) => o.findings.filter((f) => f.action === 'halt' && /Edit/.test(f.message)).map((f) => `${f.signal} ${f.count}`);
    assert.deepEqual(halts(again), halts(out), JSON.stringify(again.findings.map((f) => [f.signal, f.count, f.file])));
    assert.ok(halts(out).includes('repeated-error 5'), JSON.stringify(halts(out)));
  });
});
