import { strict as assert } from 'node:assert';
import { geminiTranscript, geminiResultText } from '../../../src/agents/gemini/transcript';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

const meta = { sessionId: 'a1b2c3d4-0000-4000-8000-000000000000', projectHash: 'f'.repeat(64), startTime: '2026-11-22T08:00:00.000Z', lastUpdated: '2026-11-22T08:00:00.000Z' };
const response = (name: string, key: 'output' | 'error', text: string) => [{ functionResponse: { id: 'x', name, response: { [key]: text } } }];
function message(id: string, calls: Record<string, unknown>[]) {
  return { id, timestamp: '2026-11-22T08:00:05.000Z', type: 'gemini', content: '', toolCalls: calls };
}
const toolCall = (id: string, status: string, result?: unknown) => ({ id, name: 'read_file', args: { absolute_path: '/p/missing.ts' }, status, timestamp: '2026-11-22T08:00:06.000Z', ...(result !== undefined ? { result } : {}) });

describe('Gemini CLI adapter', () => {
  it('the last copy of a record wins: a call becomes one event when it finishes', () => {
    const { events, skipped } = decode(geminiTranscript, [
      meta,
      { id: 'u1', timestamp: '2026-11-22T08:00:01.000Z', type: 'user', content: 'read it' },
      message('m1', [toolCall('c1', 'scheduled')]),
      message('m1', [toolCall('c1', 'executing')]),
      message('m1', [toolCall('c1', 'error', response('read_file', 'error', 'File not found: /p/missing.ts'))]),
      message('m1', [toolCall('c1', 'error', response('read_file', 'error', 'File not found: /p/missing.ts'))]),
      { id: 'i1', type: 'info', content: 'note' },
      { id: 'z', type: 'hologram' },
    ]);
    assert.deepEqual(events.map((x) => `${x.event.type}@${x.line}`), ['user@2', 'prompt@2', 'tool@5']);
    const call = callLevel(events)[1]?.event;
    assert.ok(call?.type === 'tool');
    assert.equal(call.ok, false);
    assert.equal(call.error, 'File not found: /p/missing.ts');
    assert.equal(call.session, meta.sessionId);
    assert.deepEqual(skipped.map((s) => `${s.line} ${s.field}`), ['8 type']);
  });

  it('a call that never finished is settled as unrecorded at the end; a cancelled one has no outcome', () => {
    const { events } = decode(geminiTranscript, [meta, message('m1', [toolCall('c1', 'executing'), toolCall('c2', 'cancelled')])]);
    assert.deepEqual(events.map((x) => (x.event.type === 'tool' ? `${x.event.tool}:${String(x.event.ok)}` : x.event.type)), ['read_file:undefined', 'read_file:undefined']);
  });

  it('reads function responses as text', () => {
    assert.equal(geminiResultText(response('ls', 'output', 'a\nb')), 'a\nb');
    assert.equal(geminiResultText('plain'), 'plain');
  });

  it('replay: reading a missing file three times in a row halts', async () => {
    const records: unknown[] = [meta];
    for (let i = 1; i <= 3; i++) {
      records.push(message(`m${i}`, [toolCall(`c${i}`, 'executing')]));
      records.push(message(`m${i}`, [toolCall(`c${i}`, 'error', response('read_file', 'error', 'File not found: /p/missing.ts'))]));
    }
    const replay = await replayText('session-2026-11-22T08-00-a1b2c3d4.jsonl', jsonlText(records));
    assert.equal(replay.format, 'gemini');
    assert.ok(halts(replay).includes('identical-calls'));
    assert.equal(replay.events, 3);
  });
});
