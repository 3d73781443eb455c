import { strict as assert } from 'node:assert';
import { codexTranscript } from '../../../src/agents/codex/transcript';
import { geminiTranscript } from '../../../src/agents/gemini/transcript';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

/** A legacy Codex rollout (before the {timestamp,type,payload} wrapper), in its shape, our own text. */
function legacyRollout(commands: readonly [string, number][]): unknown[] {
  const out: unknown[] = [
    { id: 'b7c1a0de-0000-4000-8000-00000000c0de', timestamp: '2025-09-01T10:00:00.000Z', instructions: 'Be brief.', git: { branch: 'main' } },
    { record_type: 'state' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'make the build pass' }] },
    { record_type: 'state' },
  ];
  commands.forEach(([command, exit], i) => {
    out.push({ type: 'reasoning', id: `rs_${i}`, summary: [], content: null });
    out.push({ type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', command] }), call_id: `call_${i}` });
    out.push({ type: 'function_call_output', call_id: `call_${i}`, output: JSON.stringify({ output: exit ? 'error: missing script' : 'done', metadata: { exit_code: exit, duration_seconds: 0.2 } }) });
    out.push({ record_type: 'state' });
  });
  out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] });
  return out;
}

describe('legacy Codex rollouts', () => {
  it('are recognised from their first line and read: calls, outputs with exit codes, the person\'s turns (not the injected context)', async () => {
    const records = legacyRollout([['npm run build', 1], ['ls', 0]]);
    const { events, skipped } = decode(codexTranscript, records);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      callLevel(events).map((e) => (e.event.type === 'tool_result' ? `result ${String(e.event.ok)}` : e.event.type === 'tool' ? `tool ${e.event.tool}` : e.event.type)),
      ['user', 'tool shell', 'result false', 'tool shell', 'result true'],
    );
    assert.equal(events[0]?.event.session, 'b7c1a0de-0000-4000-8000-00000000c0de');
    const replay = await replayText('rollout-2025-09-01.jsonl', jsonlText(records));
    assert.equal(replay.format, 'codex');
    // And the prompt beside the person's turn.
    assert.equal(replay.events, 5 + 1);
  });

  it('the same failing command three times halts; a healthy run does not', async () => {
    const looping = await replayText('rollout.jsonl', jsonlText(legacyRollout([['npm test', 1], ['npm test', 1], ['npm test', 1]])));
    assert.equal(looping.format, 'codex');
    assert.ok(halts(looping).length > 0);
    const healthy = await replayText('rollout.jsonl', jsonlText(legacyRollout([['ls', 0], ['npm test', 1], ['npm install', 0], ['npm test', 0]])));
    assert.deepEqual(halts(healthy), []);
  });

  it('an unknown legacy record type is counted by its type', () => {
    const { skipped } = decode(codexTranscript, [...legacyRollout([['ls', 0]]), { type: 'hologram', id: 'h1' }]);
    assert.deepEqual(skipped.map((s) => `${s.field}: ${s.reason}`), ['payload.type: unknown record payload.type "hologram"']);
  });
});

/** Gemini CLI headless stream-json, in its shape, our own text. */
function stream(calls: readonly [string, Record<string, unknown>, 'success' | 'error', string][]): unknown[] {
  const t = (i: number) => new Date(Date.UTC(2026, 0, 30, 6, 0, i)).toISOString();
  const out: unknown[] = [
    { type: 'init', timestamp: t(0), session_id: 'aaaabbbb-1111-4222-8333-ccccddddeeee', model: 'gemini-x' },
    { type: 'message', timestamp: t(0), role: 'user', content: 'Build the landing page.' },
  ];
  calls.forEach(([name, params, status, text], i) => {
    out.push({ type: 'tool_use', timestamp: t(i + 1), tool_name: name, tool_id: `${name}-${i}`, parameters: params });
    out.push({ type: 'tool_result', timestamp: t(i + 1), tool_id: `${name}-${i}`, status, output: text, ...(status === 'error' ? { error: { type: 'tool_error', message: text } } : {}) });
  });
  out.push({ type: 'message', timestamp: t(99), role: 'assistant', content: 'Done', delta: true });
  out.push({ type: 'result', timestamp: t(99), status: 'success', stats: { tool_calls: calls.length } });
  return out;
}

describe('Gemini CLI: headless stream-json and session documents', () => {
  it('stream-json: init names the session; tool_use/tool_result pair by tool_id; status error fails', () => {
    const { events, skipped } = decode(geminiTranscript, [...stream([['read_file', { file_path: 'a.md' }, 'success', '# A'], ['run_shell_command', { command: 'npm run build' }, 'error', 'exit 1']]), { type: 'telemetry', n: 1 }]);
    assert.deepEqual(
      callLevel(events).map((e) => (e.event.type === 'tool_result' ? `result ${String(e.event.ok)}` : e.event.type === 'tool' ? `tool ${e.event.tool}` : e.event.type)),
      ['user', 'tool read_file', 'result true', 'tool run_shell_command', 'result false'],
    );
    assert.equal(events[0]?.event.session, 'aaaabbbb-1111-4222-8333-ccccddddeeee');
    assert.deepEqual(skipped.map((s) => s.reason), ['unknown record type "telemetry"']);
  });

  it('stream-json is recognised (from init, or from the prompt before it); a loop halts, a healthy run does not', async () => {
    const failing: [string, Record<string, unknown>, 'error', string] = ['run_shell_command', { command: 'npm test' }, 'error', 'Command exited with code 1'];
    const looping = await replayText('transcript.jsonl', jsonlText(stream([failing, failing, failing])));
    assert.equal(looping.format, 'gemini');
    assert.ok(halts(looping).length > 0);
    const prompt = { type: 'message', role: 'user', content: 'Figma URL: ...' };
    const healthy = await replayText('transcript.jsonl', jsonlText([prompt, ...stream([['list_directory', { dir_path: '.' }, 'success', 'a b'], ['read_file', { file_path: 'a' }, 'success', 'x']])]));
    assert.equal(healthy.format, 'gemini');
    // Two calls with their results and two user messages (before and after init), each now also a prompt.
    assert.equal(healthy.events, 6 + 2);
    assert.deepEqual(halts(healthy), []);
  });

  /** A 2026 session document: the chat's records under messages. */
  function session(calls: readonly [string, Record<string, unknown>, 'success' | 'error', string][]) {
    return {
      sessionId: '7befeae5-0000-4000-8000-000000000001',
      projectHash: 'f'.repeat(64),
      startTime: '2026-01-30T06:08:50.429Z',
      lastUpdated: '2026-01-30T06:17:50.756Z',
      messages: [
        { id: 'u1', timestamp: '2026-01-30T06:08:50.429Z', type: 'user', content: 'Write the page.' },
        ...calls.map(([name, args, status, text], i) => ({
          id: `g${i}`,
          timestamp: `2026-01-30T06:09:${String(10 + i).padStart(2, '0')}.000Z`,
          type: 'gemini',
          content: '',
          toolCalls: [{ id: `${name}-${i}`, name, args, status, timestamp: `2026-01-30T06:09:${String(10 + i).padStart(2, '0')}.000Z`, result: [{ functionResponse: { id: `${name}-${i}`, name, response: status === 'error' ? { error: text } : { output: text } } }] }],
        })),
        { id: 'x', timestamp: '2026-01-30T06:10:00.000Z', type: 'hologram', content: '' },
      ],
    };
  }

  it('session-*.json documents are recognised and read; a loop halts; a healthy run does not; unknown records are counted', async () => {
    const failing: [string, Record<string, unknown>, 'error', string] = ['replace', { file_path: 'a.tsx', old_string: 'x' }, 'error', 'Failed to edit, 0 occurrences found'];
    const looping = await replayText('session-2026-01-30T06-08-7befeae5.json', JSON.stringify(session([failing, failing, failing]), null, 2));
    assert.equal(looping.format, 'gemini');
    assert.equal(looping.events, 4 + 1);
    assert.ok(halts(looping).length > 0);
    assert.equal(looping.findings[0]?.session, '7befeae5-0000-4000-8000-000000000001');
    assert.deepEqual(looping.skippedLines.map((s) => s.field), ['type']);
    const healthy = await replayText('session.json', JSON.stringify(session([['read_file', { file_path: 'a' }, 'success', 'x'], ['write_file', { file_path: 'b', content: 'y' }, 'success', 'ok']])));
    assert.equal(healthy.format, 'gemini');
    assert.deepEqual(halts(healthy), []);
  });
});
