import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { rooTranscript } from '../../../src/agents/roo/transcript';
import type { LocatedEvent, SkippedLine } from '../../../src/core/events';
import { AgentDocumentReader } from '../../../src/watch/agentDocument';
import { tmpdir } from '../helpers';

/*
 * A task history rewritten whole on every change, as Cline, Roo Code and Kilo Code write theirs
 * (temp file and rename; or, by another writer, in place, where a reader can catch it half written).
 */

const task = { role: 'user', ts: 1000, content: [{ type: 'text', text: '<task>\nfix the build\n</task>' }] };
const call = (n: number, command = 'make') => ({ role: 'assistant', ts: 1000 + n * 10, content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'execute_command', input: { command } }] });
const result = (n: number) => ({ role: 'user', ts: 1000 + n * 10 + 5, content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: 'Exit code: 2\nOutput:\nmake: *** No rule' }] });

/** Rewrites the document the way the agents do: a temp file renamed over it (a new inode each time). */
async function rewrite(file: string, doc: unknown, pretty = false): Promise<void> {
  const tmp = `${file}.tmp.${Math.random().toString(36).slice(2)}`;
  await fs.writeFile(tmp, JSON.stringify(doc, null, pretty ? 4 : undefined));
  await fs.rename(tmp, file);
}

function collector() {
  const events: LocatedEvent[] = [];
  const skipped: SkippedLine[] = [];
  return { events, skipped, sink: { event: (e: LocatedEvent) => events.push(e), skipped: (s: SkippedLine) => skipped.push(s) } };
}

const describeEvent = (e: LocatedEvent) => `${e.ref.event}@${e.ref.line} ${e.event.type}${e.event.type === 'tool' || e.event.type === 'tool_result' ? ` ${e.event.id}` : ''}`;

describe('rewritten documents, read for what is new', () => {
  it('a message appended and the whole file rewritten: only the new events are reported, numbered on from the last, and the earlier ones keep their numbers', async () => {
    const dir = await tmpdir('lg-doc-');
    const file = path.join(dir, 'api_conversation_history.json');
    const reader = new AgentDocumentReader(file, 'h.json', rooTranscript, { settleMs: 1_000 });
    await rewrite(file, [task, call(1)], true);
    const first = collector();
    await reader.read(first.sink);
    // The task is a `user` turn and its `prompt` (one record, two events).
    assert.deepEqual(first.events.map(describeEvent), ['1@2 user', '2@2 prompt', '3@12 tool toolu_1']);
    await rewrite(file, [task, call(1), result(1), call(2)], true);
    const second = collector();
    const read = await reader.read(second.sink);
    assert.equal(read.reset, false, 'never a reset: what was counted stands');
    assert.deepEqual(second.events.map((e) => `${e.ref.event} ${e.event.type}`), ['4 tool_result', '5 tool']);
    assert.ok((second.events[0]?.ref.line ?? 0) > 12, 'its line is where its record starts in the document now');
    // Unchanged: not even read.
    const third = collector();
    assert.equal((await reader.read(third.sink)).bytes, 0);
    assert.deepEqual(third.events, []);
  });

  it('a rewrite that drops or inserts records before those reported (a condensed or restored task) reports nothing twice, and what it adds once', async () => {
    const dir = await tmpdir('lg-doc-');
    const file = path.join(dir, 'api_conversation_history.json');
    const reader = new AgentDocumentReader(file, 'h.json', rooTranscript);
    await rewrite(file, [task, call(1), result(1), call(2), result(2)]);
    const a = collector();
    await reader.read(a.sink);
    assert.equal(a.events.length, 6);
    const summary = { role: 'assistant', ts: 1001, isSummary: true, content: 'So far: make fails.' };
    await rewrite(file, [task, summary, call(2), result(2), call(3)]);
    const b = collector();
    await reader.read(b.sink);
    // The summary is no answer (no `reply`); its kept calls were reported already.
    assert.deepEqual(b.events.map(describeEvent), ['7@1 tool toolu_3']);
    // Two identical events (a message without time typed twice) are two occurrences: only the second is new.
    const goOn = { role: 'user', content: 'go on' };
    await rewrite(file, [task, summary, call(2), result(2), call(3), result(3), goOn]);
    const c = collector();
    await reader.read(c.sink);
    assert.deepEqual(c.events.map((e) => e.event.type), ['tool_result', 'user', 'prompt']);
    await rewrite(file, [task, summary, call(2), result(2), call(3), result(3), goOn, goOn]);
    const d = collector();
    await reader.read(d.sink);
    assert.deepEqual(d.events.map((e) => `${e.ref.event} ${e.event.type}`), ['11 user', '12 prompt']);
  });

  it('a document caught mid-write is not counted as corrupt: nothing is reported, and the next change is read whole', async () => {
    const dir = await tmpdir('lg-doc-');
    const file = path.join(dir, 'api_conversation_history.json');
    let now = Date.now();
    const reader = new AgentDocumentReader(file, 'h.json', rooTranscript, { settleMs: 5_000, now: () => now });
    await rewrite(file, [task, call(1)]);
    await reader.read(collector().sink);
    // Written in place, and read half way through.
    const whole = JSON.stringify([task, call(1), result(1), call(2)]);
    await fs.writeFile(file, whole.slice(0, Math.floor(whole.length * 0.6)));
    const half = collector();
    await reader.read(half.sink);
    assert.deepEqual(half.events, []);
    assert.deepEqual(half.skipped, [], 'a fresh write that does not parse yet is not reported');
    now += 1_000;
    const again = collector();
    await reader.read(again.sink);
    assert.deepEqual(again.skipped, [], 'still within the settling time');
    await fs.writeFile(file, whole);
    const done = collector();
    await reader.read(done.sink);
    assert.deepEqual(done.skipped, []);
    assert.deepEqual(done.events.map((e) => `${e.ref.event} ${e.event.type}`), ['4 tool_result', '5 tool']);
  });

  it('a document that stays broken is reported once, with its line, and read again once it is mended', async () => {
    const dir = await tmpdir('lg-doc-');
    const file = path.join(dir, 'api_conversation_history.json');
    let now = Date.now();
    const reader = new AgentDocumentReader(file, 'h.json', rooTranscript, { settleMs: 5_000, now: () => now });
    await fs.writeFile(file, '[\n{"role": "user", "ts": 1, "content": "hi"},\n{"role": ');
    const fresh = collector();
    await reader.read(fresh.sink);
    assert.deepEqual(fresh.skipped, []);
    now += 6_000;
    const settled = collector();
    await reader.read(settled.sink);
    assert.equal(settled.skipped.length, 1);
    assert.equal(settled.skipped[0]?.file, 'h.json');
    assert.equal(settled.skipped[0]?.field, '(file)');
    assert.equal(settled.skipped[0]?.line, 3);
    assert.match(settled.skipped[0]?.reason ?? '', /not JSON.*unchanged for 6 s/);
    const later = collector();
    now += 60_000;
    await reader.read(later.sink);
    assert.deepEqual(later.skipped, [], 'reported once');
    await rewrite(file, [task, call(1)]);
    const mended = collector();
    await reader.read(mended.sink);
    assert.deepEqual(mended.events.map((e) => e.event.type), ['user', 'prompt', 'tool']);
  });

  it('an old broken document (a one-shot scan) is reported at the first reading; a missing one says so without throwing', async () => {
    const dir = await tmpdir('lg-doc-');
    const file = path.join(dir, 'api_conversation_history.json');
    await fs.writeFile(file, '{"oops"');
    const past = new Date(Date.now() - 60_000);
    await fs.utimes(file, past, past);
    const reader = new AgentDocumentReader(file, 'h.json', rooTranscript);
    const c = collector();
    await reader.read(c.sink);
    assert.equal(c.skipped.length, 1);
    await fs.rm(file);
    assert.equal((await reader.read(collector().sink)).missing, true);
  });
});
