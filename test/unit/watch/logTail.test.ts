import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SkippedLine } from '../../../src/core/events';
import { EventLogReader } from '../../../src/watch/eventLog';
import { LogTail } from '../../../src/watch/logTail';
import type { LocatedEvent } from '../../../src/core/events';
import { tmpdir } from '../helpers';

async function lines(tail: LogTail): Promise<[string, number][]> {
  const out: [string, number][] = [];
  await tail.read((t, n) => out.push([t, n]));
  return out;
}

describe('incremental log reading', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await tmpdir();
    file = path.join(dir, 'a.jsonl');
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('reads only what was appended, with line numbers that go on', async () => {
    await fs.writeFile(file, 'one\ntwo\n');
    const tail = new LogTail(file);
    assert.deepEqual(await lines(tail), [['one', 1], ['two', 2]]);
    assert.deepEqual(await lines(tail), []);
    await fs.appendFile(file, 'three\n');
    assert.deepEqual(await lines(tail), [['three', 3]]);
  });

  it('holds a partial last line until it is finished', async () => {
    await fs.writeFile(file, 'one\n{"half":');
    const tail = new LogTail(file);
    assert.deepEqual(await lines(tail), [['one', 1]]);
    await fs.appendFile(file, ' true}\n');
    assert.deepEqual(await lines(tail), [['{"half": true}', 2]]);
  });

  it('keeps multi-byte characters whole across chunk boundaries and strips CR', async () => {
    const text = `${'é'.repeat(10)}\r\n${'🚨'.repeat(5)}\n`;
    await fs.writeFile(file, text);
    const tail = new LogTail(file, { chunkSize: 3 });
    assert.deepEqual(await lines(tail), [['é'.repeat(10), 1], ['🚨'.repeat(5), 2]]);
  });

  it('gives every line whole whatever the chunk and decoding sizes: multi-byte characters, CRLF, blank, invalid UTF-8 and lines longer than a decoding window or a chunk', async () => {
    const parts: string[] = [];
    for (let i = 0; i < 6000; i++) parts.push(i % 7 === 0 ? `é€😀 ${i}`.repeat(1 + (i % 13)) : i % 11 === 0 ? '' : `line ${i}\r`);
    parts.splice(3000, 0, 'x'.repeat(100_000), `${'é'.repeat(70_000)}\r`);
    const bytes = Buffer.concat([Buffer.from(`${parts.join('\n')}\n`), Buffer.from([0x7b, 0xc3, 0x0a, 0xe2, 0x82, 0x0a])]);
    await fs.writeFile(file, bytes);
    const expected = bytes.toString('utf8').split('\n').slice(0, -1).map((l, i): [string, number] => [l.endsWith('\r') ? l.slice(0, -1) : l, i + 1]);
    for (const chunkSize of [1 << 20, 70_000, 4096, 61]) assert.deepEqual(await lines(new LogTail(file, { chunkSize })), expected, `chunks of ${chunkSize}`);
  });

  it('reads a replaced file again from its start', async () => {
    await fs.writeFile(file, 'old 1\nold 2\n');
    const tail = new LogTail(file);
    await lines(tail);
    const tmp = path.join(dir, 'new.tmp');
    await fs.writeFile(tmp, 'new 1\n');
    await fs.rename(tmp, file);
    const out: [string, number][] = [];
    let reset = false;
    const r = await tail.read((t, n) => out.push([t, n]), undefined, () => (reset = true));
    assert.ok(r.reset && reset);
    assert.deepEqual(out, [['new 1', 1]]);
  });

  it('reads a truncated file again from its start', async () => {
    await fs.writeFile(file, 'a long first line\n');
    const tail = new LogTail(file);
    await lines(tail);
    await fs.writeFile(file, 'b\n');
    assert.deepEqual(await lines(tail), [['b', 1]]);
  });

  it('notices a file rewritten in place to a larger size', async () => {
    await fs.writeFile(file, 'aaaa\n');
    const tail = new LogTail(file);
    await lines(tail);
    const handle = await fs.open(file, 'r+');
    await handle.write('bbbbXbbbb\n', 0);
    await handle.close();
    assert.deepEqual(await lines(tail), [['bbbbXbbbb', 1]]);
  });

  it('skips an over-long line without holding it in memory', async () => {
    await fs.writeFile(file, `ok\n${'x'.repeat(5000)}\nafter\n`);
    const over: number[] = [];
    const out: string[] = [];
    await new LogTail(file, { chunkSize: 256, maxLineBytes: 1000 }).read((t) => out.push(t), (line) => over.push(line));
    assert.deepEqual(out, ['ok', 'after']);
    assert.deepEqual(over, [2]);
  });

  it('reports a missing file without throwing', async () => {
    const r = await new LogTail(path.join(dir, 'nope.jsonl')).read(() => assert.fail('no lines'));
    assert.equal(r.missing, true);
  });

  it('turns lines into located events and reports bad ones with file, line and field', async () => {
    await fs.writeFile(file, ['{"v":1,"type":"output","text":"a"}', '', 'garbage', '{"v":1,"type":"tool"}', '{"v":1,"type":"user"}'].join('\n') + '\n');
    const events: LocatedEvent[] = [];
    const skipped: SkippedLine[] = [];
    await new EventLogReader(file, 'a.jsonl').read({ event: (e) => events.push(e), skipped: (s) => skipped.push(s) });
    assert.deepEqual(events.map((e) => e.ref), [{ file: 'a.jsonl', line: 1, event: 1 }, { file: 'a.jsonl', line: 5, event: 2 }]);
    assert.deepEqual(skipped.map((s) => [s.file, s.line, s.field]), [['a.jsonl', 3, '(line)'], ['a.jsonl', 4, 'tool']]);
  });
});
