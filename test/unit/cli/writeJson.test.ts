import { strict as assert } from 'node:assert';
import { json, JsonList, writeJson } from '../../../src/cli/io';

/** writeJson (replay --json's writer) against json() of the same document with its lists mapped. */
describe('replay --json is written as it is made, the same text as one JSON.stringify', () => {
  const written = (doc: Record<string, unknown>, block: number) => {
    const pieces: string[] = [];
    writeJson((t) => pieces.push(t), doc, block);
    return pieces;
  };
  const mapped = (doc: Record<string, unknown>) => Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, v instanceof JsonList ? v.items.map((i) => v.toJson(i)) : v]));

  it('lists (of more items than are made into text at once), empty lists, nested values, strings with newlines and non-ASCII, and undefined keys left out: byte for byte', () => {
    const findings = Array.from({ length: 150 }, (_, i) => ({ n: i, text: `line ${i}\nnext "quoted" \u2028 é`, evidence: i % 3 === 0 ? [] : [{ file: 'a.jsonl', line: i }], agent: null }));
    const doc = {
      format: 'events',
      events: 300,
      skipped_kinds: [],
      nested: { a: [1, { b: [] }], c: {} },
      findings: new JsonList(findings, (f) => ({ ...f, doubled: f.n * 2 })),
      none: new JsonList([], (x) => x),
      error: undefined,
    };
    for (const block of [1, 64, 1 << 16]) {
      const pieces = written(doc, block);
      assert.equal(pieces.join(''), json(mapped(doc)));
      // Written a group of items at a time at most (three groups here), not at once.
      if (block === 64) assert.ok(pieces.length > 3, 'written in blocks, not at once');
    }
  });

  it('an empty document', () => {
    assert.equal(written({}, 10).join(''), json({}));
    assert.equal(written({ a: undefined }, 10).join(''), json({ a: undefined }));
  });
});
