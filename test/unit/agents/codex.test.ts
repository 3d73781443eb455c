import { strict as assert } from 'node:assert';
import { codexTranscript, codexOutcome } from '../../../src/agents/codex/transcript';
import { codexHook } from '../../../src/agents/codex/hook';
import { intentOf } from '../../../src/core/intent';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

const SESSION = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const at = (i: number) => new Date(Date.UTC(2026, 10, 22, 9, 0, i)).toISOString();
const meta = { timestamp: at(0), type: 'session_meta', payload: { id: SESSION, timestamp: at(0), cwd: '/work/project', originator: 'codex_cli_rs', cli_version: '0.50.0' } };
const call = (i: number, command: string) => ({
  timestamp: at(i),
  type: 'response_item',
  payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', command], workdir: '/work/project' }), call_id: `call_${i}` },
});
const output = (i: number, text: string) => ({ timestamp: at(i), type: 'response_item', payload: { type: 'function_call_output', call_id: `call_${i}`, output: text } });

describe('Codex CLI adapter', () => {
  it('derives failure from the output text: exit codes in the old envelope and in newer lines', () => {
    assert.deepEqual(codexOutcome(JSON.stringify({ output: 'ok\n', metadata: { exit_code: 0, duration_seconds: 0.1 } })), { ok: true, text: 'ok\n' });
    assert.deepEqual(codexOutcome(JSON.stringify({ output: 'boom\n', metadata: { exit_code: 2, duration_seconds: 0.3 } })), { ok: false, text: 'boom\n' });
    assert.deepEqual(codexOutcome('Exit code: 1\nWall time: 0.5 seconds\nOutput:\nFAIL a.test.ts'), { ok: false, text: 'FAIL a.test.ts' });
    assert.deepEqual(codexOutcome('Chunk ID: 9f\nWall time: 0.0521 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nhello'), { ok: true, text: 'hello' });
    assert.deepEqual(codexOutcome({ content: 'denied', success: false }), { ok: false, text: 'denied' });
    assert.deepEqual(codexOutcome('plain text'), { ok: true, text: 'plain text' });
  });

  it('an apply_patch Codex refused to apply is a failure; one that applied is not (outputs as 0.169.0 wrote them)', () => {
    const refused = 'apply_patch verification failed: Failed to find expected lines in /w/src/app.js:\nfunction neverWritten() { return 42; }';
    assert.deepEqual(codexOutcome(refused), { ok: false, text: refused });
    assert.equal(codexOutcome('apply_patch handler received invalid patch input').ok, false);
    assert.deepEqual(codexOutcome('Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM /w/src/app.js\n'), { ok: true, text: 'Success. Updated the following files:\nM /w/src/app.js\n' });
    // The words in a command's output are not Codex's refusal.
    assert.equal(codexOutcome('Exit code: 0\nOutput:\napply_patch verification failed: quoted in a log').ok, true);
  });

  it('an apply_patch reads alike from the hook (`{command: <patch>}`) and the rollout (custom_tool_call `input`): the patch and the files it names', () => {
    const patch = '*** Begin Patch\n*** Update File: /w/src/app.js\n@@\n-a\n+b\n*** Add File: /w/src/new.js\n+x\n*** End Patch';
    const hook = codexHook.parse({ hook_event_name: 'PreToolUse', session_id: SESSION, cwd: '/w', tool_name: 'apply_patch', tool_use_id: 'call_1', tool_input: { command: patch } });
    assert.ok(!('problem' in hook));
    assert.deepEqual(hook.input, { patch, path: '/w/src/app.js, /w/src/new.js' });
    const { events } = decode(codexTranscript, [
      { timestamp: '2026-11-28T03:00:00.000Z', type: 'session_meta', payload: { id: SESSION } },
      { timestamp: '2026-11-28T03:00:01.000Z', type: 'response_item', payload: { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: patch } },
    ]);
    const call = events.map((e) => e.event).find((e) => e.type === 'tool');
    assert.deepEqual(call && 'args' in call ? call.args : undefined, hook.input);
    // Other tools' inputs are left as they are; patches to two files are two intents, not one "command".
    const shell = codexHook.parse({ hook_event_name: 'PreToolUse', session_id: SESSION, tool_name: 'Bash', tool_input: { command: 'npm test' } });
    assert.ok(!('problem' in shell) && shell.input.command === 'npm test');
    const other = '*** Begin Patch\n*** Update File: /w/src/other.js\n@@\n-a\n+b\n*** End Patch';
    assert.notEqual(intentOf('apply_patch', hook.input), intentOf('apply_patch', (codexHook.parse({ hook_event_name: 'PreToolUse', session_id: SESSION, tool_name: 'apply_patch', tool_input: { command: other } }) as { input: unknown }).input));
  });

  it('a patch given to the shell, which Codex applies itself, reads as the same patch: the hook\'s Bash call, the rollout\'s bash -lc, the argv form', () => {
    const patch = '*** Begin Patch\n*** Update File: components/chat/index.ts\n@@\n-a\n+b\n*** End Patch';
    const expected = { patch, path: 'components/chat/index.ts' };
    const hook = codexHook.parse({ hook_event_name: 'PreToolUse', session_id: SESSION, tool_name: 'Bash', tool_input: { command: `apply_patch <<'EOF'\n${patch}\nEOF` } });
    assert.ok(!('problem' in hook));
    assert.deepEqual(hook.input, expected);
    const { events } = decode(codexTranscript, [
      { timestamp: '2026-11-28T03:00:00.000Z', type: 'session_meta', payload: { id: SESSION } },
      { timestamp: '2026-11-28T03:00:01.000Z', type: 'response_item', payload: { type: 'function_call', call_id: 'c1', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', `cd /w && apply_patch <<'PATCH'\n${patch}\nPATCH`] }) } },
      { timestamp: '2026-11-28T03:00:02.000Z', type: 'response_item', payload: { type: 'function_call', call_id: 'c2', name: 'shell', arguments: JSON.stringify({ command: ['apply_patch', patch] }) } },
      { timestamp: '2026-11-28T03:00:03.000Z', type: 'response_item', payload: { type: 'function_call', call_id: 'c3', name: 'exec_command', arguments: JSON.stringify({ cmd: 'cat <<EOF > notes.txt\nhello\nEOF' }) } },
    ]);
    const args = events.map((e) => e.event).flatMap((e) => (e.type === 'tool' ? [e.args] : []));
    assert.deepEqual(args.slice(0, 2), [expected, expected]);
    // A heredoc that is not a patch stays a shell command.
    assert.deepEqual(args[2], { cmd: 'cat <<EOF > notes.txt\nhello\nEOF' });
  });

  it('the same freeform apply_patch failing three times in a rollout is a halt; three that apply are not', async () => {
    const patch = (n: number) => `*** Begin Patch\n*** Update File: src/app.js\n@@\n-const y = ${n};\n+const y = ${n + 1};\n*** End Patch`;
    const meta = { timestamp: '2026-11-28T03:00:00.000Z', type: 'session_meta', payload: { id: SESSION } };
    const rollout = (calls: { input: string; output: string }[]) =>
      jsonlText([
        meta,
        ...calls.flatMap((c, i) => [
          { timestamp: `2026-11-28T03:00:0${i + 1}.000Z`, type: 'response_item', payload: { type: 'custom_tool_call', status: 'completed', call_id: `call_${i}`, name: 'apply_patch', input: c.input } },
          { timestamp: `2026-11-28T03:00:0${i + 1}.500Z`, type: 'response_item', payload: { type: 'custom_tool_call_output', call_id: `call_${i}`, output: c.output } },
        ]),
      ]);
    const failing = rollout([1, 2, 3].map(() => ({ input: patch(41), output: 'apply_patch verification failed: Failed to find expected lines in /w/src/app.js:\nconst y = 41;' })));
    const failed = halts(await replayText('rollout.jsonl', failing));
    assert.ok(failed.includes('repeated-error'), `three identical refused patches halt as a repeated error: ${failed.join(', ')}`);
    const applying = rollout([1, 2, 3].map((n) => ({ input: patch(n), output: 'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM /w/src/app.js\n' })));
    assert.deepEqual(halts(await replayText('rollout.jsonl', applying)), [], 'patches that apply are progress');
  });

  it('pairs function_call and function_call_output by call_id; the session is session_meta id', () => {
    const { events, skipped } = decode(codexTranscript, [
      meta,
      { timestamp: at(1), type: 'turn_context', payload: { cwd: '/work/project' } },
      { timestamp: at(1), type: 'event_msg', payload: { type: 'user_message', message: 'fix it' } },
      { timestamp: at(1), type: 'response_item', payload: { type: 'reasoning', summary: [] } },
      call(2, 'npm test'),
      { timestamp: at(3), type: 'response_item', payload: { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch', call_id: 'p1' } },
      output(2, 'Exit code: 1\nWall time: 1.2 seconds\nOutput:\nFAIL'),
      { timestamp: at(4), type: 'response_item', payload: { type: 'custom_tool_call_output', call_id: 'p1', output: JSON.stringify({ output: 'Success. Updated a.ts\n', metadata: { exit_code: 0 } }) } },
      { timestamp: at(5), type: 'mystery', payload: {} },
      { timestamp: at(5), type: 'response_item', payload: { type: 'new_item_kind' } },
    ]);
    assert.deepEqual(events.map((x) => x.event.type), ['user', 'prompt', 'tool', 'tool', 'tool_result', 'tool_result']);
    const first = callLevel(events)[1]?.event;
    assert.ok(first?.type === 'tool');
    assert.equal(first.session, SESSION);
    assert.equal(first.tool, 'shell');
    assert.deepEqual(first.args, { command: ['bash', '-lc', 'npm test'], workdir: '/work/project' });
    const r = callLevel(events)[3]?.event;
    assert.ok(r?.type === 'tool_result');
    assert.equal(r.id, 'call_2');
    assert.equal(r.ok, false);
    assert.deepEqual(skipped.map((s) => `${s.line} ${s.field}`), ['9 type', '10 payload.type']);
  });

  it('replay: the same failing command three times halts although the wall times differ', async () => {
    const records: unknown[] = [meta];
    for (let i = 1; i <= 3; i++) {
      records.push(call(i * 2, 'pytest -x'));
      records.push(output(i * 2, `Exit code: 1\nWall time: ${i}.${i} seconds\nOutput:\nE   ModuleNotFoundError: No module named 'foo'`));
    }
    const replay = await replayText(`rollout-2026-11-22T09-00-00-${SESSION}.jsonl`, jsonlText(records));
    assert.equal(replay.format, 'codex');
    assert.ok(halts(replay).includes('identical-calls'));
  });

  it('replay: successful identical runs whose timings alone differ are no progress either', async () => {
    const records: unknown[] = [meta];
    for (let i = 1; i <= 3; i++) {
      records.push(call(i * 2, 'git status'));
      records.push(output(i * 2, `Exit code: 0\nWall time: 0.${i} seconds\nOutput:\nnothing to commit`));
    }
    const replay = await replayText('r.jsonl', jsonlText(records), 'codex');
    assert.ok(halts(replay).includes('identical-calls'));
  });
});
