import { strict as assert } from 'node:assert';
import { claudeTranscript } from '../../../src/agents/claude/transcript';
import { resultOutcome } from '../../../src/agents/anthropicBlocks';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

const SESSION = '8f0c2f7e-1111-4c1e-9b2a-000000000001';
let n = 0;
function line(type: 'user' | 'assistant', content: unknown, extra: Record<string, unknown> = {}) {
  n++;
  return {
    type,
    uuid: `u-${n}`,
    parentUuid: n > 1 ? `u-${n - 1}` : null,
    sessionId: SESSION,
    timestamp: new Date(Date.UTC(2026, 10, 22, 10, 0, n)).toISOString(),
    cwd: '/work/project',
    isSidechain: false,
    message: { role: type, content, ...(type === 'assistant' ? { id: `msg_${n}` } : {}) },
    ...extra,
  };
}
const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
const result = (id: string, content: unknown, isError?: boolean) => ({ type: 'tool_result', tool_use_id: id, content, ...(isError !== undefined ? { is_error: isError } : {}) });

describe('Claude Code adapter', () => {
  beforeEach(() => {
    n = 0;
  });

  it('pairs tool_use with tool_result by id and reads failures from is_error, Exit code N and <tool_use_error>', () => {
    const { events, skipped } = decode(claudeTranscript, [
      { type: 'summary', summary: 'x', leafUuid: 'u-0' },
      line('user', 'fix the build'),
      line('assistant', [{ type: 'text', text: 'Running the tests.' }, use('t1', 'Bash', { command: 'npm test' })]),
      line('user', [result('t1', 'Exit code 1\nFAIL src/a.test.ts')]),
      line('assistant', [use('t2', 'Read', { file_path: '/a.ts' })]),
      line('user', [result('t2', [{ type: 'text', text: 'const a = 1;' }])]),
      line('assistant', [use('t3', 'Edit', { file_path: '/a.ts' })]),
      line('user', [result('t3', '<tool_use_error>File has not been read yet.</tool_use_error>', true)]),
      line('assistant', [use('t4', 'Bash', { command: 'ls' })]),
      line('user', [result('t4', 'Exit code 0\nok')]),
      line('assistant', [use('t5', 'Grep', { pattern: 'x' })]),
      line('user', [result('t5', 'permission denied', true)]),
    ]);
    assert.deepEqual(skipped, []);
    const e = callLevel(events).map((x) => x.event);
    assert.deepEqual(
      e.map((x) => (x.type === 'tool' ? `tool ${x.tool} ${x.id}` : x.type === 'tool_result' ? `result ${x.id} ${x.ok}` : x.type)),
      ['user', 'tool Bash t1', 'result t1 false', 'tool Read t2', 'result t2 true', 'tool Edit t3', 'result t3 false', 'tool Bash t4', 'result t4 true', 'tool Grep t5', 'result t5 false'],
    );
    const r3 = e[6];
    assert.ok(r3?.type === 'tool_result');
    assert.equal(r3.error, 'File has not been read yet.');
    const first = e[1];
    assert.ok(first?.type === 'tool');
    assert.equal(first.session, SESSION);
    assert.equal(first.agent, 'claude-code');
    assert.equal(first.ts, '2026-11-22T10:00:02.000Z');
    assert.deepEqual(first.args, { command: 'npm test' });
    assert.equal(callLevel(events)[1]?.line, 3);
  });

  it('de-duplicates a message split over lines and re-written tool uses', () => {
    const split1 = line('assistant', [{ type: 'thinking', thinking: '...' }]);
    const split2 = { ...line('assistant', [use('t1', 'Bash', { command: 'make' })]), message: { id: 'msg_same', role: 'assistant', content: [use('t1', 'Bash', { command: 'make' })] } };
    const again = { ...split2, uuid: 'u-again' };
    const { events } = decode(claudeTranscript, [split1, split2, again, line('user', [result('t1', 'done')]), line('user', [result('t1', 'done')])]);
    assert.deepEqual(events.map((x) => x.event.type), ['tool', 'tool_result']);
  });

  it('keeps subagent (sidechain) calls in their own session, and starts a turn at what the person typed only', () => {
    const { events } = decode(claudeTranscript, [
      line('user', 'hello'),
      line('user', 'Caveat: injected', { isMeta: true }),
      line('assistant', [use('s1', 'Grep', { pattern: 'a' })], { isSidechain: true, agentId: 'a1b2' }),
    ]);
    assert.deepEqual(callLevel(events).map((x) => `${x.event.type} ${x.event.session}`), [`user ${SESSION}`, `tool ${SESSION}/a1b2`]);
  });

  it('skips and counts unknown record types that carry a message, and malformed blocks, never throws; bookkeeping records without a message are no problem', () => {
    const { events, skipped } = decode(claudeTranscript, [
      { type: 'brand-new-kind', message: { role: 'user', content: 'x' } },
      'not an object',
      { type: 'assistant', sessionId: SESSION },
      line('assistant', [{ type: 'tool_use', id: 'x', input: {} }]),
      line('user', [{ type: 'tool_result', content: 'orphan' }]),
    ]);
    assert.equal(events.length, 0);
    assert.deepEqual(
      skipped.map((s) => `${s.line} ${s.field}`),
      ['1 type', '2 (line)', '3 message', '4 message.content[0].name', '5 message.content[0].tool_use_id'],
    );
    assert.match(skipped[0]?.reason ?? '', /unknown record type "brand-new-kind"/);
    // Claude Code 2.1.328's own bookkeeping (seen live): read past, not counted as skipped.
    const bookkeeping = ['api-request', 'api-request-shape', 'atis-latch', 'tools-used', 'cost-state', 'some-future-counter'].map((type) => ({ type, sessionId: SESSION, data: 1 }));
    const blob = { type: 'api-request-blob', sessionId: SESSION, hash: 'h', message: { role: 'user', content: [{ type: 'text', text: 'a copy of what was sent' }] } };
    const quiet = decode(claudeTranscript, [...bookkeeping, blob]);
    assert.deepEqual([quiet.events.length, quiet.skipped.length], [0, 0]);
  });

  it('an exit code of 0 is not a failure; is_error is', () => {
    assert.deepEqual(resultOutcome({ content: 'Exit code 0\nfine' }), { ok: true, output: 'Exit code 0\nfine' });
    assert.equal(resultOutcome({ content: 'Exit code 127\nnpx: not found' }).ok, false);
    assert.equal(resultOutcome({ content: 'boom', is_error: true }).ok, false);
  });

  it('replay: a transcript running the same failing command three times halts; a corrupt line is skipped with its line', async () => {
    const records: unknown[] = [line('user', 'make the tests pass')];
    for (let i = 1; i <= 3; i++) {
      records.push(line('assistant', [use(`t${i}`, 'Bash', { command: 'npm test', description: 'Run tests' })]));
      records.push(line('user', [result(`t${i}`, 'Exit code 1\nError: Cannot find module "./config"', true)]));
    }
    records.splice(3, 0, '{"type": "assistant", broken');
    const replay = await replayText(`${SESSION}.jsonl`, jsonlText(records));
    assert.equal(replay.format, 'claude');
    assert.equal(replay.skipped, 1);
    assert.equal(replay.skippedLines[0]?.line, 4);
    assert.ok(halts(replay).includes('identical-calls'), JSON.stringify(replay.findings.map((f) => f.signal)));
    const halt = replay.findings.find((f) => f.signal === 'identical-calls');
    assert.equal(halt?.session, SESSION);
  });

  it('replay: the same command with changing results is not a loop', async () => {
    const records: unknown[] = [line('user', 'wait for the deploy')];
    for (let i = 1; i <= 3; i++) {
      records.push(line('assistant', [use(`t${i}`, 'Bash', { command: 'kubectl get pods' })]));
      records.push(line('user', [result(`t${i}`, `pod-a Running ${i}/3`)]));
    }
    const replay = await replayText('s.jsonl', jsonlText(records), 'claude');
    assert.deepEqual(halts(replay), []);
  });
});
