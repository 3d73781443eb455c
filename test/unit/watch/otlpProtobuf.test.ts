import * as assert from 'node:assert/strict';
import { decodeLogsJson } from '../../../src/agents/otlpLogs';
import { boundedText } from '../../../src/core/redact';
import { decodeLogsProtobufRecords, encodeLogsProtobuf, TooManyEntries } from '../../../src/watch/otlpProtobuf';

/*
 * The receiver reads protobuf from the wire itself (no message objects), and JSON from its parsed
 * tree: one request must read the same either way. Requests are made at random (seeded) over every
 * kind of value the OTLP logs messages carry, in the JSON encoding's shape, and encoded to protobuf
 * by protobufjs from the specification's message definitions.
 */

/** A small seeded generator (mulberry32): the same requests on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BOUNDS = { maxEntries: 250_000, maxRecords: 10_000, pause: () => undefined };

function requests(seed: number, count: number): unknown[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const strings = ['', 'a', 'npm test', 'make: *** No rule to make target', 'ünïcödé ✓ 漢字 😀', 'x'.repeat(300), 'token ghp_' + 'a'.repeat(36), '__proto__', 'constructor', '0', '12'];
  const ints = ['0', '1', '-1', '42', '9007199254740993', '-9223372036854775808', '9223372036854775807', '123456789012'];
  const value = (depth: number): Record<string, unknown> => {
    const kind = rnd();
    if (depth > 10 || kind < 0.35) return { stringValue: pick(strings) };
    if (kind < 0.45) return { boolValue: rnd() < 0.5 };
    if (kind < 0.55) return { intValue: pick(ints) };
    if (kind < 0.62) return { doubleValue: pick([0, 1.5, -2.25, 1e-7, 3.141592653589793, 1e300]) };
    if (kind < 0.68) return { bytesValue: Buffer.from(pick(strings)).toString('base64') };
    if (kind < 0.72) return {};
    if (kind < 0.86) return { arrayValue: { values: Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1)) } };
    return { kvlistValue: { values: keyValues(Math.floor(rnd() * 4), depth + 1) } };
  };
  const keyValues = (n: number, depth: number) =>
    Array.from({ length: n }, () => {
      const r = rnd();
      // Now and then without a value, or without a key.
      if (r < 0.03) return { key: pick(strings) };
      if (r < 0.05) return { value: value(depth) };
      return { key: rnd() < 0.8 ? pick(['session.id', 'event.name', 'tool_name', 'a', 'b', 'k'.repeat(400)]) : pick(strings), value: value(depth) };
    });
  const time = () => pick([undefined, '0', '123', '1764392400123456789', '18446744073709551615', String(Date.UTC(2026, 10, 29) * 1e6)]);
  return Array.from({ length: count }, () => ({
    resourceLogs: Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
      ...(rnd() < 0.9 ? { resource: { attributes: keyValues(Math.floor(rnd() * 5), 0) } } : {}),
      scopeLogs: Array.from({ length: Math.floor(rnd() * 3) }, () => ({
        ...(rnd() < 0.7 ? { scope: { ...(rnd() < 0.8 ? { name: pick(['com.anthropic.claude_code.events', '', 'gemini-cli']) } : {}), attributes: keyValues(Math.floor(rnd() * 2), 0) } } : {}),
        logRecords: Array.from({ length: Math.floor(rnd() * 5) }, () => {
          const t = time();
          const o = time();
          return {
            ...(t !== undefined ? { timeUnixNano: t } : {}),
            ...(o !== undefined ? { observedTimeUnixNano: o } : {}),
            ...(rnd() < 0.3 ? { severityNumber: 9, severityText: 'INFO' } : {}),
            ...(rnd() < 0.6 ? { body: value(0) } : {}),
            attributes: keyValues(rnd() < 0.05 ? 300 : Math.floor(rnd() * 8), 0),
            ...(rnd() < 0.3 ? { eventName: pick(['', 'claude_code.tool_result', 'e'.repeat(300)]) } : {}),
            ...(rnd() < 0.2 ? { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', flags: 1 } : {}),
          };
        }),
      })),
    })),
  }));
}

/** Nested deeper than the readers go. */
function deep(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { stringValue: 'bottom' };
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { arrayValue: { values: [v, { intValue: String(i) }] } } : { kvlistValue: { values: [{ key: `k${i}`, value: v }] } };
  return v;
}

describe('OTLP protobuf read from the wire: the same records as the same request in JSON', () => {
  it('400 requests made at random over every kind of value: each reads the same in both encodings, bounds and all', async () => {
    let records = 0;
    for (const request of [...requests(20261129, 400), { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: deep(20), attributes: [{ key: 'deep', value: deep(12) }] }] }] }] }]) {
      const fromJson = decodeLogsJson(JSON.parse(JSON.stringify(request)), boundedText);
      const fromWire = await decodeLogsProtobufRecords(encodeLogsProtobuf(request), BOUNDS, boundedText);
      assert.deepStrictEqual(fromWire, fromJson, JSON.stringify(request).slice(0, 2000));
      records += fromWire.records.length;
    }
    assert.ok(records > 1000, `${records} records compared`);
  });

  it('short values read before are read as kept before: many values to a place, secrets, other alphabets, and each text bound apart', async () => {
    // 3,000 distinct short values (more than the places that keep them: each place's value replaced), each three times.
    const short = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? `pw=${i}` : i % 11 === 0 ? `ü${i}` : i % 13 === 0 ? `password=hunter${i}` : `v${i}`));
    const values = [...short, ...short.slice().reverse(), ...short, 'Bash', 'true', 'x'.repeat(20), 'x'.repeat(21), 'token=abcdefghijkl'];
    const request = {
      resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: Math.ceil(values.length / 10) }, (_, r) => ({ attributes: values.slice(10 * r, 10 * r + 10).map((v, k) => ({ key: `k${k}`, value: { stringValue: v } })) })) }] }],
    };
    const shout = (t: string) => boundedText(t).toUpperCase();
    for (const text of [boundedText, shout, boundedText]) {
      const fromWire = await decodeLogsProtobufRecords(encodeLogsProtobuf(request), BOUNDS, text);
      assert.deepStrictEqual(fromWire, decodeLogsJson(JSON.parse(JSON.stringify(request)), text));
    }
    const masked = (await decodeLogsProtobufRecords(encodeLogsProtobuf(request), BOUNDS, boundedText)).records.at(-1)?.attributes;
    assert.notEqual(masked?.k4, 'token=abcdefghijkl', 'a short secret is masked, read first or again');
  });

  it('keys and values that differ only where their place is not read from (the same length, first two, middle and last two bytes) are read apart', async () => {
    // `kk${x}${y}M${z}zz` and `ab${x}c1d${y}ef`: every one of them at one place, in turn, again and again.
    const keys = Array.from({ length: 40 }, (_, i) => `kk${i % 10}${Math.floor(i / 10)}M${i % 3}zz`);
    const values = Array.from({ length: 40 }, (_, i) => `ab${i % 10}c1d${Math.floor(i / 10)}ef`);
    const request = {
      resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 30 }, (_, r) => ({ attributes: Array.from({ length: 8 }, (_, k) => ({ key: keys[(r * 7 + k * 3) % 40], value: { stringValue: values[(r * 5 + k) % 40] } })) })) }] }],
    };
    const fromWire = await decodeLogsProtobufRecords(encodeLogsProtobuf(request), BOUNDS, boundedText);
    assert.deepStrictEqual(fromWire, decodeLogsJson(JSON.parse(JSON.stringify(request)), boundedText));
    assert.equal(new Set(fromWire.records.flatMap((r) => Object.keys(r.attributes))).size, 40);
  });

  it('bytes that are not a request are refused, each with what is wrong: truncated, a known field of another wire type; a string not UTF-8 is read as JSON reads one', async () => {
    const good = encodeLogsProtobuf({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: [{ attributes: [{ key: 'k', value: { stringValue: 'v' } }] }] }] }] });
    await assert.rejects(decodeLogsProtobufRecords(good.subarray(0, good.length - 3), BOUNDS, boundedText), /past the end|truncated/);
    // ResourceLogs (field 1 of the request) as a varint.
    await assert.rejects(decodeLogsProtobufRecords(Uint8Array.from([0x08, 0x01]), BOUNDS, boundedText), /ExportLogsServiceRequest.resource_logs: wire type 0, not 2/);
    // A string value of invalid UTF-8 (0xff between two letters): a replacement character, as in a JSON body read as UTF-8; the record kept.
    const bad = [0x61, 0xff, 0x62];
    const kv = Uint8Array.from([0x0a, 0x01, 0x6b, 0x12, bad.length + 2, 0x0a, bad.length, ...bad]);
    const record = Uint8Array.from([0x32, kv.length, ...kv]);
    const scope = Uint8Array.from([0x12, record.length, ...record]);
    const rl = Uint8Array.from([0x12, scope.length, ...scope]);
    const read = await decodeLogsProtobufRecords(Uint8Array.from([0x0a, rl.length, ...rl]), BOUNDS, boundedText);
    assert.deepEqual(read.records.map((r) => r.attributes), [{ k: Buffer.from(bad).toString('utf8') }]);
    assert.equal(read.records[0]?.attributes.k, 'a\ufffdb');
  });

  it('fields no record needs are walked a slice at a time too: a scope of a million schema URLs asks for a pause every 4,096 fields', async () => {
    const varint = (n: number) => {
      const b: number[] = [];
      for (; n >= 128; n = Math.floor(n / 128)) b.push((n & 127) | 128);
      b.push(n);
      return Buffer.from(b);
    };
    const field = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag]), varint(body.length), body]);
    // ScopeLogs.schema_url (field 3), empty, a million times, then one record.
    const junk = Buffer.alloc(2_000_000);
    for (let i = 0; i < junk.length; i += 2) junk[i] = 0x1a;
    const request = field(0x0a, field(0x12, Buffer.concat([junk, field(0x12, Buffer.alloc(0))])));
    let asked = 0;
    const read = await decodeLogsProtobufRecords(request, { ...BOUNDS, pause: () => void asked++ }, boundedText);
    assert.equal(read.records.length, 1);
    assert.ok(asked >= 1_000_000 / 4096, `asked ${asked} times`);
  });

  it('entries and records past the bounds: TooManyEntries, counted before they are read', async () => {
    const many = encodeLogsProtobuf({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 50 }, () => ({ attributes: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: { stringValue: 'v' } })) })) }] }] });
    await assert.rejects(decodeLogsProtobufRecords(many, { ...BOUNDS, maxEntries: 400 }, boundedText), (e: unknown) => e instanceof TooManyEntries && /more than 400 entries/.test((e as Error).message));
    await assert.rejects(decodeLogsProtobufRecords(many, { ...BOUNDS, maxRecords: 49 }, boundedText), (e: unknown) => e instanceof TooManyEntries && /more than 49 log records/.test((e as Error).message));
    assert.equal((await decodeLogsProtobufRecords(many, { ...BOUNDS, maxRecords: 50, maxEntries: 2000 }, boundedText)).records.length, 50);
  });
});
