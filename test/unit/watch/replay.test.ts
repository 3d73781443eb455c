import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/core/config';
import type { Finding } from '../../../src/core/finding';
import { replayFile, replayText } from '../../../src/watch/replay';
import { tmpdir } from '../helpers';

/** What a replay keeps of its own, besides the signals' state: bounded, whatever the log. */
describe('replay: its own state stays bounded', () => {
  it('keeps the first 1,000 skipped lines and 200 kinds of skip, however many distinct ones come', async () => {
    const bad = Array.from({ length: 5_000 }, (_, i) => JSON.stringify({ v: 1, type: `kind${i}` }));
    const good = JSON.stringify({ v: 1, type: 'output', text: 'x' });
    const r = await replayText([good, ...bad, good].join('\n'), 'log.jsonl', 'events', defaultConfig());
    assert.equal(r.events, 2);
    assert.equal(r.skipped, 5_000);
    assert.equal(r.skippedLines.length, 1_000);
    assert.deepEqual([r.skippedLines.at(-1)?.line, r.skippedLines.at(-1)?.field], [1_001, 'type']);
    assert.equal(r.skippedKinds.length, 201);
    assert.deepEqual(r.skippedKinds[0], { field: '(various)', reason: 'other reasons', count: 4_800 });
    assert.equal(r.skippedKinds.reduce((n, k) => n + k.count, 0), 5_000);
    assert.deepEqual(r.byType, { output: 2 });
  });

  it('gives its findings to the caller, keeping none', async () => {
    const dir = await tmpdir();
    try {
      const call = JSON.stringify({ v: 1, session: 's', type: 'tool', tool: 'read_file', args: { path: 'a.ts' }, error: 'ENOENT' });
      const file = path.join(dir, 'loop.jsonl');
      // Two loops, a prompt apart.
      await fs.writeFile(file, `${[call, call, call, JSON.stringify({ v: 1, session: 's', type: 'user', text: 'again' }), call, call, call].join('\n')}\n`);
      const streamed: Finding[] = [];
      const kept = await replayFile(file, 'loop.jsonl', 'events', defaultConfig());
      const r = await replayFile(file, 'loop.jsonl', 'events', defaultConfig(), (finding) => streamed.push(finding));
      assert.deepEqual(r.findings, []);
      assert.equal(streamed.length, kept.findings.length);
      assert.deepEqual(streamed, kept.findings);
      assert.ok(streamed.some((f) => f.at.line <= 3) && streamed.some((f) => f.at.line >= 5), 'both loops');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('replay: each finding as it stood last', () => {
  // One task's budget crossed, its turn over, crossed again in the next turn: the same episode,
  // raised twice. Each raised finding says how its own pattern stood when it ended: the first is
  // not shown as the second (it was, when the latest of an episode stood for all its findings).
  const usage = (used: number) => JSON.stringify({ v: 1, session: 's', type: 'usage', task: 'T', used, budget: 1000 });
  const text = [usage(1001), JSON.stringify({ v: 1, session: 's', type: 'user', text: 'go on' }), usage(1050)].join('\n');

  it('says each its own end, not the latest of its episode, whether the raised findings are kept or not', async () => {
    const both = await replayText(text, 'log.jsonl', 'events', defaultConfig());
    const budget = (fs: readonly Finding[]) => fs.filter((f) => f.signal === 'budget').map((f) => [f.action, f.count, f.at.line]);
    assert.deepEqual(budget(both.findings), [['halt', 1001, 1], ['halt', 1050, 3]]);
    assert.deepEqual(budget(both.lastly), [['halt', 1001, 1], ['halt', 1050, 3]]);
    const lastly = await replayText(text, 'log.jsonl', 'events', defaultConfig(), undefined, 'lastly');
    assert.deepEqual(budget(lastly.lastly), budget(both.lastly));
    assert.equal(lastly.findings, lastly.lastly, 'only the findings as they stood last are held');
  });
});
