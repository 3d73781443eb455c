import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { configure } from 'safe-stable-stringify';
import { z } from 'zod';
import { Canonicalizer, DEFAULT_VOLATILE_ARGS, DEFAULT_VOLATILE_KEYS, Hash53, hash53, hashFoldedAscii } from '../../../src/core/canonical';
import { outputKey } from '../../../src/core/detectors/identical-output';
import { callSignature } from '../../../src/core/calls';
import { LineProblem, parseEventLine, readEventLine, validateEvent, wellFormedEvent } from '../../../src/core/events';
import { MAX_JSON_DEPTH, parseJson } from '../../../src/core/json';
import { mayHoldKey } from '../../../src/core/engine';
import { fastAlternation, NOISE_SOURCES } from '../../../src/core/runNoise';
import { isoTime } from '../../../src/agents/transcript';
import { ranInstead } from '../../../src/agents/copilotHooks';
import { COMMAND_KEYS, shellCommandArg } from '../../../src/core/intent';

/**
 * The replay's fast paths (issue 10) against what they stand in for, on generated input: the event
 * checks against the zod schema, the one-pass canonical text against strip-then-stringify.
 */

/** A placeholder that the line text turns into a number JSON cannot write (`1e999` parses as Infinity). */
const INFINITY = '\u0000infinity';

/** A value JSON can hold, of every kind the schema tells apart. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>('', 'x', 'a b', 0, -1, 1, 1.5, 2 ** 53, 1e300, INFINITY, true, false, null, [], ['x'], {}, { a: 1 }, { id: 'x', path: 'a.ts' }),
  fc.string({ maxLength: 8 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -3, max: 10 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Timestamps the schema accepts and some it does not: leap days, offsets, fractions, near misses. */
const timestamp: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '2026-01-01T00:00:00Z',
    '2026-01-01T00:00:00.123Z',
    '2026-01-01T23:59:59+02:00',
    '2026-01-01T23:59:59-11:30',
    '2024-02-29T12:00:00Z',
    '2000-02-29T12:00:00Z',
    '1900-02-29T12:00:00Z',
    '2023-02-29T12:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:00Z',
    '2026-01-01T00:00:00',
    '2026-01-01 00:00:00Z',
    '2026-01-01T00:00:00z',
    '2026-01-01T00:00:00+0200',
    '2026-01-01T00:00:00.Z',
  ),
  fc.date({ min: new Date(-1e13), max: new Date(1e14), noInvalidDate: true }).map((d) => d.toISOString()),
  anyValue,
);

/** A record as JSON.parse makes it with an own `__proto__` key, which zod's record leaves out. */
const withProtoKey = JSON.parse('{"__proto__":{"a":1},"path":"a.ts"}') as unknown;

const fieldValue: Record<string, fc.Arbitrary<unknown>> = {
  ts: timestamp,
  args: fc.oneof(fc.constantFrom<unknown>({}, { path: 'a.ts' }, withProtoKey, [], null, 'x'), fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
  config: fc.oneof(fc.constantFrom<unknown>({}, { priority: 'high' }, withProtoKey, [], 1)),
  tier: fc.oneof(fc.constantFrom<unknown>(0, 1, 2, 6, 1.5, -1, 2 ** 53, 2 ** 53 - 1, INFINITY, '2'), anyValue),
};
const tokens = fc.constantFrom<unknown>(0, -0, 1, 0.5, -1, 1e300, INFINITY, '5', null);
for (const key of ['used', 'budget', 'session_used', 'session_budget']) fieldValue[key] = tokens;

/** The keys of each type's schema (and one it does not have). */
const COMMON = ['v', 'type', 'ts', 'session', 'task', 'agent', 'extra'];
const KEYS_OF: Record<string, readonly string[]> = {
  tool: [...COMMON, 'tool', 'args', 'id', 'ok', 'error', 'output'],
  tool_result: [...COMMON, 'id', 'ok', 'error', 'output'],
  invocation: [...COMMON, 'config', 'result', 'reason'],
  attempt: [...COMMON, 'tier', 'ok', 'error', 'gate', 'description'],
  status: [...COMMON, 'status'],
  usage: [...COMMON, 'used', 'budget', 'session_used', 'session_budget'],
  output: [...COMMON, 'text'],
  user: [...COMMON, 'text'],
};

const KEYS = ['v', 'type', 'ts', 'session', 'task', 'agent', 'tool', 'args', 'id', 'ok', 'error', 'output', 'config', 'result', 'reason', 'tier', 'gate', 'description', 'status', 'used', 'budget', 'session_used', 'session_budget', 'text', 'extra'];

/** An event-like object: a known type or not, each key present or not, each value valid or not. */
const eventLike = fc
  .record({
    type: fc.constantFrom<unknown>('tool', 'tool_result', 'invocation', 'attempt', 'status', 'usage', 'output', 'user', 'prompt', 1, undefined),
    v: fc.constantFrom<unknown>(1, 1, 1, 1, 2, '1', undefined),
    fields: fc.uniqueArray(fc.constantFrom(...KEYS.filter((k) => k !== 'v' && k !== 'type')), { maxLength: 8 }),
  })
  .chain(({ type, v, fields }) =>
    fc.tuple(...fields.map((k) => fieldValue[k] ?? anyValue)).map((vals) => {
      const e: Record<string, unknown> = {};
      if (v !== undefined) e.v = v;
      if (type !== undefined) e.type = type;
      fields.forEach((k, i) => (e[k] = vals[i]));
      return e;
    }),
  );

/** Valid events of every known type (so that the fast path is seen to take them). */
const name = fc.string({ minLength: 1, maxLength: 6 });
const valid = fc.oneof(
  fc.record({ v: fc.constant(1), type: fc.constant('tool'), tool: name, args: fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), id: name, ok: fc.boolean(), error: fc.string(), output: fc.jsonValue({ maxDepth: 2 }), ts: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()), session: name }, { requiredKeys: ['v', 'type', 'tool'] }),
  fc.record({ v: fc.constant(1), type: fc.constant('tool_result'), id: name, ok: fc.boolean(), error: fc.string(), output: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['v', 'type', 'id'] }),
  fc.record({ v: fc.constant(1), type: fc.constant('invocation'), agent: name, config: fc.dictionary(name, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), result: fc.string(), reason: fc.string() }, { requiredKeys: ['v', 'type', 'agent'] }),
  fc.record({ v: fc.constant(1), type: fc.constant('attempt'), task: name, tier: fc.integer({ min: 1, max: 9 }), ok: fc.boolean(), error: fc.string(), gate: name, description: fc.string() }, { requiredKeys: ['v', 'type', 'task', 'ok'] }),
  fc.record({ v: fc.constant(1), type: fc.constant('status'), task: name, status: name, agent: name }),
  fc.record({ v: fc.constant(1), type: fc.constant('usage'), used: fc.nat(), budget: fc.integer({ min: 1 }), task: name }),
  fc.record({ v: fc.constant(1), type: fc.constant('usage'), session_used: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), session_budget: fc.double({ min: 0.5, noNaN: true, noDefaultInfinity: true }) }),
  fc.record({ v: fc.constant(1), type: fc.constant('output'), text: fc.string() }),
  fc.record({ v: fc.constant(1), type: fc.constant('user'), text: fc.string() }, { requiredKeys: ['v', 'type'] }),
);

/** A valid event with one key changed, taken away or added: the lines next to the valid ones. */
const nearlyValid = fc
  .tuple(valid, fc.nat(), fc.constantFrom('set', 'set', 'delete'))
  .chain(([e, pick, how]) => {
    const keys = KEYS_OF[e.type] as readonly string[];
    const key = keys[pick % keys.length] as string;
    return (fieldValue[key] ?? anyValue).map((value) => {
      const out: Record<string, unknown> = { ...e };
      if (how === 'delete') delete out[key];
      else out[key] = value;
      return out;
    });
  });

function lineOf(e: unknown): string {
  return JSON.stringify(e).split(JSON.stringify(INFINITY)).join('1e999');
}

/** What the line was before the fast path: parsed, then checked by zod alone. */
function zodVerdict(text: string): ReturnType<typeof parseEventLine> {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, field: '(line)', reason: parsed.tooDeep ? parsed.error : `not JSON: ${parsed.error}` };
  return validateEvent(parsed.value);
}

describe('fast paths hold to what they replace', () => {
  it('an event line: the same verdict and the same event as the zod schema, on any line', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(eventLike, valid, nearlyValid), (e) => {
        const text = lineOf(e);
        const expected = zodVerdict(text);
        assert.deepStrictEqual(parseEventLine(text), expected, text);
        if (expected.ok) accepted++;
      }),
      { numRuns: 10000 },
    );
    assert.ok(accepted > 2500, `only ${accepted} generated lines were valid events`);
  });

  it("the reader's one parse says what zod alone says on lines that are not JSON, nest too deep or carry a BOM", () => {
    const deep = `{"v":1,"type":"tool","tool":"x","args":${'['.repeat(100)}${']'.repeat(100)}}`;
    for (const text of ['not json', '{"v":1,', '\ufeff{"v":1,"type":"user"}', '\ufeffnope', deep, '[]', '5', '{"v":1,"type":"prompt","text":"go"}', '{"v":1,"type":"tool"}']) {
      const expected = zodVerdict(text);
      const read = readEventLine(text);
      assert.deepStrictEqual(read instanceof LineProblem ? { ok: false, field: read.field, reason: read.reason } : { ok: true, event: read }, expected, text);
    }
    assert.match((readEventLine(deep) as LineProblem).reason, /nested deeper than 64 levels/);
    assert.match((readEventLine('{"v":1,') as LineProblem).reason, /^not JSON: /);
  });

  it('a well-formed line of a known type is taken by the fast path, not by zod', () => {
    fc.assert(
      fc.property(valid, (e) => {
        const text = lineOf(e);
        assert.equal(zodVerdict(text).ok, true, text);
        assert.notEqual(wellFormedEvent(JSON.parse(text)), undefined, text);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves to zod what it does not know: another kind, a key zod strips, a record zod copies without its __proto__', () => {
    for (const text of [
      '{"v":1,"type":"prompt","text":"x"}',
      '{"v":1,"type":"tool","tool":"x","cost":3}',
      '{"v":1,"type":"tool","tool":"x","args":{"__proto__":{"a":1}}}',
      '{"v":1,"type":"tool","tool":"x","__proto__":1}',
    ]) {
      assert.equal(wellFormedEvent(JSON.parse(text)), undefined, text);
      assert.deepStrictEqual(parseEventLine(text), zodVerdict(text), text);
    }
  });

  it("a timestamp: the fast path's own check agrees with zod's datetime, on every leap day and on generated near misses", () => {
    const zodTimestamp = z.iso.datetime({ offset: true, local: false });
    const fastTakes = (ts: string) => wellFormedEvent({ v: 1, type: 'user', ts }) !== undefined;
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    // 29 February of every four-digit year, and the last day of every month of a century's years.
    for (let year = 0; year <= 9999; year++) {
      const ts = `${pad(year, 4)}-02-29T12:00:00Z`;
      assert.equal(fastTakes(ts), zodTimestamp.safeParse(ts).success, ts);
    }
    for (let year = 1896; year <= 2004; year++) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 28, 29, 30, 31, 32]) {
          const ts = `${pad(year, 4)}-${pad(month)}-${pad(day)}T00:00:00Z`;
          assert.equal(fastTakes(ts), zodTimestamp.safeParse(ts).success, ts);
        }
      }
    }
    const part = (max: number, width = 2) => fc.integer({ min: 0, max }).map((n) => pad(n, width));
    const generated = fc
      .record({
        date: fc.tuple(part(9999, 4), part(13), part(32)).map(([y, m, d]) => `${y}-${m}-${d}`),
        sep: fc.constantFrom('T', 'T', 'T', 't', ' '),
        time: fc.tuple(part(25), part(61), part(61)).map(([h, m, s]) => `${h}:${m}:${s}`),
        fraction: fc.constantFrom('', '', '.1', '.123', '.123456789', '.', '.x'),
        zone: fc.oneof(fc.constantFrom('Z', 'Z', 'z', '', '+00:00', '-0000', '+2:00'), fc.tuple(fc.constantFrom('+', '-'), part(25), part(61)).map(([s, h, m]) => `${s}${h}:${m}`)),
      })
      .map(({ date, sep, time, fraction, zone }) => `${date}${sep}${time}${fraction}${zone}`);
    // The same, with one character changed, dropped or added somewhere.
    const mutated = fc.tuple(generated, fc.nat(), fc.constantFrom('set', 'drop', 'add'), fc.constantFrom('0', '9', ':', '-', 'T', 'Z', '.', '+', ' ', '\u0660')).map(([ts, at, how, c]) => {
      const i = at % (ts.length + 1);
      return how === 'set' ? ts.slice(0, i) + c + ts.slice(i + 1) : how === 'drop' ? ts.slice(0, i) + ts.slice(i + 1) : ts.slice(0, i) + c + ts.slice(i);
    });
    let agreed = 0;
    fc.assert(
      fc.property(fc.oneof(generated, mutated), (ts) => {
        const zodSays = zodTimestamp.safeParse(ts).success;
        assert.equal(fastTakes(ts), zodSays, ts);
        if (zodSays) agreed++;
      }),
      { numRuns: 20000 },
    );
    assert.ok(agreed > 1000, `only ${agreed} generated timestamps were valid`);
  });

  // The general path, as it was before the one-pass text: strip the volatile keys, then stringify.
  const stringify = configure({ deterministic: true, circularValue: '[Circular]', bigint: true, maximumDepth: MAX_JSON_DEPTH });
  const volatile = new Set(DEFAULT_VOLATILE_KEYS.map((k) => k.toLowerCase()));
  // Copies only what it changes, as the general path does (a Date stays a Date).
  const strip = (value: unknown, depth = 0): unknown => {
    if (typeof value !== 'object' || value === null || depth > MAX_JSON_DEPTH) return value;
    if (Array.isArray(value)) {
      const items = value.map((v) => strip(v, depth + 1));
      return items.every((v, i) => v === value[i]) ? value : items;
    }
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      const s = strip(v, depth + 1);
      if (volatile.has(key.toLowerCase())) delete (copy ??= { ...value })[key];
      else if (s !== v) (copy ??= { ...value })[key] = s;
    }
    return copy ?? value;
  };
  const reference = (value: unknown) => (value === undefined ? '' : (stringify(strip(value)) ?? ''));
  const nest = (value: unknown, depth: number): unknown => {
    let v = value;
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { k: v, Id: 1 } : [v, null];
    return v;
  };
  const jsonish: fc.Arbitrary<unknown> = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.dictionary(fc.constantFrom('id', 'ID', 'ts', 'Timestamp', 'path', 'b', 'a', 'é', '"q"', '\u0001', 'description'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
    // Flat objects, often with their keys in order: the one-pass writer's own fast path.
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'path', 'Path', 'line', '1', '2', '10', 'id', 'description', 'é', '\ud800'), fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.jsonValue({ maxDepth: 1 })), { maxKeys: 4 }),
    fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'line', 'path', '1', '2', '10', 'Z', 'z'), { maxLength: 4 }).chain((keys) => fc.tuple(...keys.sort().map((k) => fc.tuple(fc.constant(k), fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)))))).map((entries) => Object.fromEntries(entries)),
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.constantFrom<unknown>(-0, 1e21, 5e-7, Number.POSITIVE_INFINITY, Number.NaN, undefined, [undefined, () => 1], { f: () => 1, u: undefined, s: Symbol('s') }, new Date(0), 10n, '\ud800x', 'x'.repeat(300)),
    fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }).map((d) => nest({ a: 1 }, d)),
    fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }).map((d) => nest({ id: 1 }, d)),
  );

  it("run noise: the fast expression masks what the plain alternation masks, on texts made of noise and near misses", () => {
    // Pieces of each kind of noise, near misses and the characters around them, glued at random.
    const piece = fc.oneof(
      fc.constantFrom(
        '2026-11-27T10:00:00.123Z', '2026-11-27 10:00:00', '2026-11-27_10_00_00+01:00', '1999-1-1T1:1:1',
        '0123abcd-4567-89ab-cdef-0123456789ab', 'abcdefab-abcd-abcd-abcd-abcdefabcdef', 'deadbeef0123', 'DEADBEEF01', 'abcdefabcdef',
        '12ms', '1.5 s', '3 seconds', '10sec', '7 milliseconds', 'pid 42', 'PID: 7', 'pgid=9', 'process group PGID 12', 'Process Group PGID 3',
        'Nov 27 19:25:30', 'Dec  1 01:02:03.4', '19:25:30', '1:2:3', 'node[12345]:', 'x[1]:', '0x7ffde0a1b2c3', '0x12', '0.8234123412',
        '123456', '12345', '1700000000000', '/tmp/tmp.AbC123/x', '/private/var/tmp/a', '/var/folders/ab/cd/T/x', 'C:\\Users\\me\\AppData\\Local\\Temp\\x1',
        'tmp.ab12cd', 'tmpXYZ123', 'tmp_1', 'Jan', 'Pp', 'AppData', 'at', 'ms', 's',
      ),
      fc.string({ maxLength: 6 }),
      fc.stringMatching(/^[0-9a-fA-FPpJFMASONDtx:.\-_/[\] \n]{0,12}$/),
    );
    const text = fc.array(piece, { maxLength: 12 }).chain((pieces) => fc.array(fc.constantFrom('', ' ', '_', '-', 'a', '1', '/', '[', ':', '\n', '"', '.'), { minLength: pieces.length, maxLength: pieces.length }).map((glue) => pieces.map((p, i) => `${glue[i]}${p}`).join('')));
    for (const sources of [NOISE_SOURCES.output, NOISE_SOURCES.error]) {
      const plainRe = new RegExp(sources.join('|'), 'g');
      const fastRe = fastAlternation(sources);
      fc.assert(
        fc.property(text, (t) => {
          assert.equal(t.replace(fastRe, '\u0000'), t.replace(plainRe, '\u0000'));
        }),
        { numRuns: 5000 },
      );
    }
  });

  it("a record's time: the same as writing it again through Date, on canonical times and near misses (leap days, 24:00, a 31st, month 00)", () => {
    const slow = (v: string): string | undefined => {
      const ms = Date.parse(v);
      return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
    };
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const near = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), two(13), two(32), two(25), two(61), two(61), fc.integer({ min: 0, max: 999 }))
      .map(([y, mo, d, h, mi, s, ms]) => `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, '0')}Z`);
    const real = fc.integer({ min: -62135596800000, max: 253402300799999 }).map((ms) => new Date(ms).toISOString());
    fc.assert(
      fc.property(fc.oneof(near, real, fc.constantFrom('2024-02-29T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2100-02-29T00:00:00.000Z', '2000-02-29T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-04-31T12:00:00.000Z')), (t) => {
        assert.equal(isoTime(t), slow(t));
      }),
      { numRuns: 20000 },
    );
  });

  it("a record's time in the minute of the one before: only its seconds are looked at again, and near misses there still fail as Date would fail them", () => {
    const slow = (v: string): string | undefined => {
      const ms = Date.parse(v);
      return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
    };
    const tails = fc.tuple(fc.integer({ min: 0, max: 99 }), fc.constantFrom('.', ':', ','), fc.integer({ min: 0, max: 1200 }), fc.constantFrom('Z', 'z', '+', ' ')).map(([s, dot, ms, z]) => `${String(s).padStart(2, '0')}${dot}${String(ms).padStart(3, '0').slice(0, 3)}${z}`);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799999 }), fc.array(tails, { minLength: 1, maxLength: 6 }), (ms, rest) => {
        const minute = new Date(ms).toISOString();
        // The minute found canonical first, then times within it, canonical or not.
        assert.equal(isoTime(minute), minute);
        for (const tail of rest) {
          const t = minute.slice(0, 17) + tail;
          assert.equal(isoTime(t), slow(t), t);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it("a record's time from epoch milliseconds: the same as toISOString, in runs within a minute and across minutes, days and years, and past the four-digit years", () => {
    const ms = fc.oneof(
      fc.integer({ min: 0, max: 253402300799999 }),
      fc.integer({ min: -62135596800000, max: 8640000000000000 }),
      fc.constantFrom(0, 59_999, 60_000, 951_782_399_999, 951_782_400_000, 253402300799999, 253402300800000, -1, 1.5, 1764392400123.9),
    );
    fc.assert(
      fc.property(fc.array(ms, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 120_000 }), (starts, spread) => {
        // Each start, then times a few ms to two minutes after it: the minute's memo is used and renewed.
        for (const t of starts.flatMap((s) => [s, s + 1, s + 999, s + spread, s + 60_000])) assert.equal(isoTime(t), Number.isFinite(t) && Math.abs(t) <= 8.64e15 ? new Date(t).toISOString() : undefined, String(t));
      }),
      { numRuns: 5000 },
    );
  });

  it("VS Code's note of a command run instead, read in one pass: the same command as the expression that backtracks", () => {
    const slow = /^Note: The (?:tool simplified|user manually edited) the command to `([\s\S]*?)` \(terminal ID=[^)\n]*\)/;
    const piece = fc.oneof(fc.constantFrom('Note: The tool simplified the command to `', 'Note: The user manually edited the command to `', '` (terminal ID=', ')', '\n', '`', ' ', 'npm test', 'f673159f'), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        assert.equal(ranInstead(text), slow.exec(text)?.[1]);
      }),
      { numRuns: 20000 },
    );
  });

  it("a call's shell command, found by its own keys: the first of COMMAND_KEYS in that list that holds a command, whatever the order of the keys", () => {
    // What it stands in for: each name of the list looked up in turn.
    const inTurn = (args: Record<string, unknown>) => {
      for (const key of COMMAND_KEYS) {
        const line = shellCommandArg({ [key]: args[key] })?.line;
        if (line !== undefined) return { key, line };
      }
      return undefined;
    };
    const key = fc.constantFrom(...COMMAND_KEYS, 'path', 'description', 'commands', 'Command', 'args');
    const value = fc.oneof(fc.constantFrom<unknown>('npm test', 'make | tail -5', '', '  ', 7, ['bash', '-lc', 'make'], ['ls', '-la'], [], [1], null, {}, { command: 'x' }), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 7 }), (entries) => {
        const args = Object.fromEntries(entries) as Record<string, unknown>;
        assert.deepEqual(shellCommandArg(args), inTurn(args), JSON.stringify(args));
      }),
      { numRuns: 20000 },
    );
    assert.deepEqual(shellCommandArg({ cmd: 'b', command: 'a' }), { key: 'command', line: 'a' });
    assert.deepEqual(shellCommandArg({ script: 'b', command: ' ' }), { key: 'script', line: 'b' });
  });

  it("an output's key, its white space and case folded as it is hashed: the same number as the expressions, on ASCII texts and others", () => {
    // What it stands in for: the expressions, then the text's hash.
    const byExpressions = (text: string) =>
      hash53(
        text
          .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
          .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
          .replace(/\s+/g, ' ')
          .trim()
          .toLowerCase(),
      );
    const piece = fc.oneof(
      fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', '\v', '\f', 'Done', 'ABC', 'xyz', '@[', '`{', '42', '2026-01-01T10:00:00Z', 'c0ffee00-0000-4000-8000-00000000beef', '\u00a0', '\u2028', '\ufeff', 'İ', 'ΑΣ', 'é', '\u0000', '\u007f'),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        assert.equal(outputKey(text), byExpressions(text), JSON.stringify(text));
        const ascii = !/[^\u0000-\u007f]/.test(text);
        assert.equal(hashFoldedAscii(text), ascii ? hash53(text.replace(/\s+/g, ' ').trim().toLowerCase()) : undefined, JSON.stringify(text));
      }),
      { numRuns: 20000 },
    );
  });

  it('canonical text: the same text as stripping then stringifying, for any value', () => {
    const canon = new Canonicalizer();
    fc.assert(
      fc.property(jsonish, (value) => {
        assert.equal(canon.text(value), reference(value));
      }),
      { numRuns: 3000 },
    );
  });

  it("a call's signature hash, computed without writing the text: the hash of the signature's text, for any arguments", () => {
    const canon = new Canonicalizer();
    fc.assert(
      fc.property(fc.constantFrom('Bash', 'shell', 'read_file', ''), jsonish, (tool, value) => {
        const args = typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, description: 'why' } : value;
        assert.equal(canon.signatureHash(tool, args), hash53(callSignature(tool, canon.args(tool, args))));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(jsonish, (value) => {
        assert.equal(canon.hash(value), hash53(canon.text(value)));
      }),
      { numRuns: 2000 },
    );
    // Flat objects whose keys are in order (fed to the hash piece by piece, never stringified), with any strings.
    const flat = fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.string({ unit: 'binary' }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null))).map((d) => Object.fromEntries(Object.entries(d).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
    fc.assert(
      fc.property(flat, (value) => {
        assert.equal(canon.hash(value), hash53(canon.text(value)));
        assert.equal(canon.text(value), reference(value));
      }),
      { numRuns: 2000 },
    );
    const pieces = new Hash53();
    pieces.start();
    for (const piece of ['a', '', 'é\ud800', 'x'.repeat(300)]) pieces.add(piece);
    assert.equal(pieces.end(), hash53(`aé\ud800${'x'.repeat(300)}`));
  });

  it("a call's keys read before its text is written: when they say no key is there, the canonical text holds none", () => {
    const canon = new Canonicalizer();
    const keys = new Set(['content', 'old_string', 'a', 'id']);
    const marks = [...keys].map((k) => `"${k}":`);
    // Keys named like the ones looked for, inside other keys, with quotes, at any depth.
    const key = fc.constantFrom('content', 'old_string', 'a', 'id', 'path', 'x"content', 'content"', 'xcontent', '\\"a', 'b');
    const tree = fc.letrec<{ v: unknown }>((t) => ({
      v: fc.oneof({ depthSize: 'small' }, anyValue, fc.constantFrom<unknown>('"content":', '\\"a\\":'), fc.array(t('v'), { maxLength: 3 }), fc.dictionary(key, t('v'), { maxKeys: 3 })),
    })).v;
    let told = 0;
    fc.assert(
      fc.property(fc.constantFrom('Bash', 'edit', ''), fc.oneof(tree, jsonish), (tool, value) => {
        if (mayHoldKey(value, keys, 1)) return;
        let text: string;
        try {
          text = canon.args(tool, value);
        } catch {
          return; // a value no reader makes (a BigInt at the top): no text to hold to
        }
        told++;
        for (const mark of marks) if (text.includes(mark)) assert.fail(`${text} holds ${mark}, yet its keys said no`);
      }),
      { numRuns: 4000 },
    );
    assert.ok(told > 500, `only ${told} values told apart`);
    // What nearly every call is: told without its text.
    assert.equal(mayHoldKey({ path: 'src/a.ts', line: 3 }, keys, 1), false);
    assert.equal(mayHoldKey({ edits: [{ old_string: 'a' }] }, keys, 1), true);
    assert.equal(mayHoldKey(JSON.parse('{"x\\"content":1}'), keys, 1), true);
    assert.equal(mayHoldKey(nest({ b: 1 }, MAX_JSON_DEPTH + 2), keys, 1), true);
  });

  it("canonical arguments: the tool's volatile arguments are left out at the top only", () => {
    const canon = new Canonicalizer();
    fc.assert(
      fc.property(fc.constantFrom('Bash', 'shell', 'read_file'), jsonish, fc.option(fc.string(), { nil: undefined }), (tool, value, description) => {
        const args = typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, Description: description, justification: 'why', nested: { description: 'kept' } } : value;
        const skip = new Set((DEFAULT_VOLATILE_ARGS[tool] ?? []).map((k) => k.toLowerCase()));
        const expected =
          typeof args === 'object' && args !== null && !Array.isArray(args)
            ? reference(Object.fromEntries(Object.entries(args).filter(([k]) => !skip.has(k.toLowerCase()))))
            : reference(args);
        assert.equal(canon.args(tool, args), expected);
      }),
      { numRuns: 2000 },
    );
  });
});
