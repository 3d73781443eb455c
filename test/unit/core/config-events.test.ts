import * as assert from 'node:assert/strict';
import { defaultConfig, resolveConfig, SIGNAL_IDS } from '../../../src/core/config';
import { configSchema } from '../../../src/core/configSchema';
import { parseEventLine } from '../../../src/core/events';
import { arrayElementOffsets } from '../../../src/core/jsonPositions';
import { formatStopAll, parseStopAll } from '../../../src/core/stopAll';

describe('configuration', () => {
  it('has a default for every signal, from the seeds', () => {
    const c = defaultConfig();
    assert.deepEqual(Object.keys(c.signals).sort(), [...SIGNAL_IDS].sort());
    assert.equal(c.signals['repeated-invocation'].threshold, 3);
    assert.equal(c.signals['identical-calls'].threshold, 3);
    assert.equal(c.signals['repeated-error'].warnAt, 2);
    assert.deepEqual(c.signals['failing-call'].retries, { transient: 3, deterministic: 1, unknown: 2 });
    assert.equal(c.signals['failing-call'].windowMinutes, 120);
    assert.equal(c.signals['windowed-repeat'].window, 10);
    assert.equal(c.signals.cycle.maxPeriod, 5);
    assert.equal(c.signals['identical-output'].threshold, 2);
    assert.equal(c.signals['quality-gate-loop'].threshold, 2);
    assert.deepEqual(c.tiers, { max: 7, humanReviewFrom: 6 });
    assert.deepEqual(c.sources.events, ['.tmp/**/logs/*.jsonl']);
  });

  it('the defaults written out are what the schema makes of an empty file, a fresh copy each time', () => {
    assert.deepStrictEqual(defaultConfig(), configSchema.parse({}));
    assert.deepStrictEqual(resolveConfig({}).config, defaultConfig());
    const a = defaultConfig();
    a.signals.cycle.threshold = 9;
    a.volatileKeys.push('x');
    (a.volatileArgs.Bash as string[]).push('x');
    a.hooks.deny.pop();
    a.agents.claude = { enabled: true };
    assert.deepStrictEqual(defaultConfig(), configSchema.parse({}));
  });

  it('merges a partial file with the defaults', () => {
    const { config, problems } = resolveConfig({ signals: { cycle: { threshold: 4 } } });
    assert.deepEqual(problems, []);
    assert.equal(config.signals.cycle.threshold, 4);
    assert.equal(config.signals.cycle.maxPeriod, 5);
    assert.equal(config.signals['identical-calls'].threshold, 3);
  });

  it('names an invalid key and uses its default, keeping the rest of the file', () => {
    const { config, problems } = resolveConfig({ signals: { cycle: { threshold: 'three', maxPeriod: 4 } }, exemptTools: ['todo'] });
    assert.equal(config.signals.cycle.threshold, 3);
    assert.equal(config.signals.cycle.maxPeriod, 4);
    assert.deepEqual(config.exemptTools, ['todo']);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.path, 'signals.cycle.threshold');
    assert.equal(problems[0]?.level, 'error');
  });

  it('reports unknown keys and ignores them', () => {
    const { config, problems } = resolveConfig({ signals: { 'identical-call': { threshold: 9 } }, colour: 'red' });
    assert.deepEqual(problems.map((p) => [p.level, p.path]).sort(), [['warning', 'colour'], ['warning', 'signals.identical-call']]);
    assert.equal(config.signals['identical-calls'].threshold, 3);
  });

  it('refuses a non-object and falls back to the defaults', () => {
    const { config, problems } = resolveConfig([1, 2]);
    assert.equal(problems[0]?.level, 'error');
    assert.deepEqual(config, defaultConfig());
  });

  it('keeps the human-review tier within the tiers', () => {
    const { config, problems } = resolveConfig({ tiers: { max: 4, humanReviewFrom: 6 } });
    assert.equal(config.tiers.humanReviewFrom, 4);
    assert.equal(problems[0]?.path, 'tiers.humanReviewFrom');
  });
});

describe('event log v1', () => {
  it('accepts every event type', () => {
    const lines = [
      { type: 'tool', tool: 'read', args: { p: 1 }, id: 'x', ok: true, output: { any: 'json' } },
      { type: 'tool_result', id: 'x', error: 'boom' },
      { type: 'invocation', agent: 'bug-fixer', config: {}, result: 'failed', reason: 'Type-check failed' },
      { type: 'attempt', task: 't', tier: 2, ok: false, error: 'e', gate: 'lint' },
      { type: 'status', task: 't', status: 'REVIEW' },
      { type: 'usage', task: 't', used: 10, budget: 100 },
      { type: 'usage', session_used: 1, session_budget: 2 },
      { type: 'output', text: 'hi' },
      { type: 'user', ts: '2026-01-01T10:00:00.000+02:00', session: 's', agent: 'a' },
    ];
    for (const l of lines) assert.equal(parseEventLine(JSON.stringify({ v: 1, ...l })).ok, true, JSON.stringify(l));
  });

  const bad: [string, string, RegExp][] = [
    ['{"v":1,"type":"tool"', '(line)', /not JSON/],
    ['[1,2]', '(line)', /not a JSON object/],
    ['{"v":1}', 'type', /missing event type/],
    ['{"v":1,"type":"dance"}', 'type', /unknown event type "dance"/],
    ['{"v":2,"type":"output","text":"x"}', 'v', /1/],
    ['{"v":1,"type":"tool","tool":"x","args":[1]}', 'args', /object|record/i],
    ['{"v":1,"type":"attempt","task":"t"}', 'ok', /boolean/],
    ['{"v":1,"type":"output","text":"x","ts":"yesterday"}', 'ts', /datetime|date/i],
    ['{"v":1,"type":"usage","used":5}', 'budget', /together/],
    ['{"v":1,"type":"usage"}', 'used', /needs/],
  ];
  for (const [line, field, reason] of bad) {
    it(`rejects ${line} naming ${field}`, () => {
      const v = parseEventLine(line);
      assert.equal(v.ok, false);
      if (!v.ok) {
        assert.equal(v.field, field);
        assert.match(v.reason, reason);
      }
    });
  }
});

describe('STOP_ALL format (seed 002)', () => {
  it('reads STATUS TIMESTAMP, with reason and author lines', () => {
    const r = parseStopAll('STOP 2026-11-22T10:00:00.000Z\nreason: runaway bug-fixer\nby: alice\n');
    assert.deepEqual(r, { ok: true, state: { status: 'STOP', timestamp: '2026-11-22T10:00:00.000Z', reason: 'runaway bug-fixer', by: 'alice' }, warnings: [] });
  });

  it('reads a missing or blank file as CLEAR and a lower-case status leniently', () => {
    assert.equal(parseStopAll(undefined).ok && parseStopAll(undefined).ok, true);
    const blank = parseStopAll('  \n');
    assert.ok(blank.ok && blank.state.status === 'CLEAR');
    const lower = parseStopAll('pause');
    assert.ok(lower.ok && lower.state.status === 'PAUSE' && lower.warnings.length === 1);
  });

  it('reports garbage with its line', () => {
    const r = parseStopAll('HALT NOW please');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /line 1: status "HALT"/);
  });

  it('writes what it reads', () => {
    const state = { status: 'PAUSE' as const, timestamp: '2026-11-22T10:00:00.000Z', reason: 'two\nlines', by: 'cli' };
    const back = parseStopAll(formatStopAll(state));
    assert.ok(back.ok);
    if (back.ok) assert.deepEqual(back.state, { ...state, reason: 'two lines' });
  });
});

describe('JSON element positions', () => {
  it('finds where each element of the array starts', () => {
    const text = '{\n  "other": [9, {"invocations": [0]}],\n  "invocations": [\n    {"a": "x,]"},\n    {"b": [1, 2]}, "s", 3\n  ]\n}';
    const offsets = arrayElementOffsets(text, 'invocations');
    assert.deepEqual(offsets.map((o) => text.slice(o, o + 4)), ['{"a"', '{"b"', '"s",', '3\n  ']);
  });
});
