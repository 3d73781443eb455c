import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { resolveConfig } from '../../src/core/config';
import { configSchema } from '../../src/core/configSchema';
import { Engine } from '../../src/core/engine';
import { parseEventLine } from '../../src/core/events';
import { SIGNAL_IDS } from '../../src/core/config';
import { parseStopAll } from '../../src/core/stopAll';
import { parseInvocationHistory } from '../../src/state/invocationHistory';
import { replayFile } from '../../src/watch/replay';
import { WorkspaceMonitor } from '../../src/watch/workspaceMonitor';
import { Workspace } from '../../src/state/workspace';
import { config, listFiles, tmpdir } from './helpers';

const tools = fc.constantFrom('read_file', 'edit', 'bash', 'grep');
const sessions = fc.constantFrom('s1', 's2');
const texts = fc.constantFrom('ok', 'TypeError: x is undefined', 'ENOENT: no such file', 'HTTP 429', '', 'same');
const args = fc.oneof(fc.constant({}), fc.record({ path: fc.constantFrom('a.ts', 'b.ts') }), fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }));

/** Valid events of every type, from a small alphabet so that loops actually happen. */
const validEvent = fc.oneof(
  fc.record({ type: fc.constant('tool'), session: sessions, tool: tools, args, ok: fc.option(fc.boolean(), { nil: undefined }), error: fc.option(texts, { nil: undefined }), output: fc.option(texts, { nil: undefined }), id: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }) }, { requiredKeys: ['type', 'tool'] }),
  fc.record({ type: fc.constant('tool_result'), session: sessions, id: fc.constantFrom('a', 'b', 'c'), ok: fc.boolean(), output: texts }),
  fc.record({ type: fc.constant('invocation'), agent: fc.constantFrom('bug-fixer', 'auditor'), config: fc.constantFrom({}, { p: 1 }), result: fc.constantFrom('failed', 'success') }),
  fc.record({ type: fc.constant('attempt'), task: fc.constantFrom('t1', 't2'), tier: fc.integer({ min: 1, max: 7 }), ok: fc.boolean(), error: texts, gate: fc.option(fc.constantFrom('lint', 'types'), { nil: undefined }) }, { requiredKeys: ['type', 'task', 'ok'] }),
  fc.record({ type: fc.constant('status'), task: fc.constantFrom('t1', 't2'), status: fc.constantFrom('A', 'B', 'C') }),
  fc.record({ type: fc.constant('usage'), task: fc.constant('t1'), used: fc.integer({ min: 0, max: 2000 }), budget: fc.constant(1000) }),
  fc.record({ type: fc.constant('output'), text: texts }),
  fc.record({ type: fc.constant('user'), session: sessions }),
).map((e) => ({ v: 1, ...e }));

/** A valid event's JSON, a mutation of it, or plain junk. */
const line = fc.oneof(
  { weight: 5, arbitrary: validEvent.map((e) => JSON.stringify(e)) },
  { weight: 2, arbitrary: fc.tuple(validEvent, fc.nat(), fc.string({ maxLength: 3 }).map((j) => j.replace(/[\r\n]/g, ' '))).map(([e, at, junk]) => {
    const s = JSON.stringify(e);
    const i = at % (s.length + 1);
    return s.slice(0, i) + junk + s.slice(i + 1);
  }) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' ')) },
);

describe('fuzz: random and mutated input never escapes as an exception', function () {
  this.timeout(120_000);

  it('every line is either an event or a skipped line with its field and reason', () => {
    fc.assert(
      fc.property(line, (text) => {
        const v = parseEventLine(text);
        if (!v.ok) {
          assert.ok(v.field.length > 0);
          assert.ok(v.reason.length > 0);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('the engine takes any stream of valid events and returns well-formed findings', () => {
    fc.assert(
      fc.property(fc.array(validEvent, { maxLength: 80 }), (events) => {
        const engine = new Engine(config());
        const all = [];
        events.forEach((raw, i) => {
          const v = parseEventLine(JSON.stringify(raw));
          assert.ok(v.ok, JSON.stringify(raw));
          if (v.ok) all.push(...engine.push({ event: v.event, ref: { file: 'f', line: i + 1, event: i + 1 } }));
        });
        all.push(...engine.flush());
        for (const f of all) {
          assert.ok((SIGNAL_IDS as readonly string[]).includes(f.signal));
          assert.ok(f.evidence.length > 0 && f.evidence.length <= 20);
          for (const r of f.evidence) assert.ok(r.line >= 1 && r.line <= events.length);
          assert.ok(f.at.line >= 1 && f.at.line <= events.length);
          assert.ok(f.recommendation.length > 0 && f.message.length > 0);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reading random files counts every line once and writes nothing', async () => {
    const root = await tmpdir();
    try {
      const ws = new Workspace(root);
      const rel = '.tmp/current/logs/fuzz.jsonl';
      await fs.mkdir(path.join(root, '.tmp/current/logs'), { recursive: true });
      await fc.assert(
        fc.asyncProperty(fc.array(line, { maxLength: 60 }), fc.boolean(), async (lines, partial) => {
          const text = lines.join('\n') + (partial ? '' : '\n');
          await fs.writeFile(path.join(root, rel), text);
          const before = await listFiles(root);
          const replay = await replayFile(path.join(root, rel), rel, 'events', config());
          const nonBlank = lines.filter((l) => l.trim() !== '').length;
          assert.equal(replay.events + replay.skipped, nonBlank);
          for (const s of replay.skippedLines) {
            assert.equal(s.file, rel);
            assert.ok(s.line >= 1 && s.line <= lines.length);
            assert.ok(s.reason.length > 0);
          }
          const monitor = new WorkspaceMonitor(ws, config());
          const update = await monitor.poll();
          // A live reader holds a trailing partial line back until it is finished.
          const held = partial && (lines.at(-1) ?? '').trim() !== '' ? 1 : 0;
          assert.equal(monitor.stats.events + update.skipped.length, nonBlank - held);
          assert.deepEqual(await listFiles(root), before, 'reading writes nothing');
        }),
        { numRuns: 150 },
      );
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('invocation histories, configs and STOP_ALL files of any shape are read without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), fc.jsonValue().map((v) => JSON.stringify({ invocations: [v, { agent_name: 'a', config: {} }] }))), (text) => {
        const r = parseInvocationHistory(text, 'h.json');
        for (const s of r.skipped) assert.ok(s.line >= 1);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue(), (noise, value) => {
        const { config: c } = resolveConfig(noise);
        assert.ok(configSchema.safeParse(c).success);
        const { config: c2 } = resolveConfig({ signals: { cycle: value, 'failing-call': { retries: value } }, volatileKeys: value });
        assert.ok(configSchema.safeParse(c2).success);
      }),
      { numRuns: 1000 },
    );
    fc.assert(fc.property(fc.string(), (text) => void parseStopAll(text)), { numRuns: 1000 });
  });
});
