import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { defaultConfig } from '../../../src/core/config';
import type { Finding } from '../../../src/core/finding';
import { decodeLogsJson } from '../../../src/agents/otlpLogs';
import { OtlpReceiver } from '../../../src/watch/otlpReceiver';
import { jsonLength } from '../../../src/core/json';
import type { GuardianEvent } from '../../../src/core/events';
import { encodeLogsProtobuf } from '../../../src/watch/otlpProtobuf';
import { Batched, parseListen } from '../../../src/cli/commands/otlp';
import { CLI } from '../helpers';

/*
 * The OTLP/HTTP logs receiver, on loopback: Claude Code's records (their shape as Claude Code
 * 2.1.328 sent them to it in the live suite) become findings; every malformed request is answered
 * with the specification's error and none stops it.
 */

const kv = (key: string, value: string | number | boolean) => ({ key, value: typeof value === 'string' ? { stringValue: value } : typeof value === 'number' ? { intValue: String(value) } : { boolValue: value } });

function claudeRecord(seq: number, attrs: Record<string, string | number | boolean>) {
  return { timeUnixNano: `${Date.UTC(2026, 10, 26, 4, 0, seq)}000000`, body: { stringValue: `claude_code.${String(attrs['event.name'])}` }, attributes: Object.entries({ 'session.id': 's-1', 'event.sequence': seq, ...attrs }).map(([k, v]) => kv(k, v)) };
}

function request(records: unknown[], service = 'claude-code') {
  return { resourceLogs: [{ resource: { attributes: [kv('service.name', service), kv('host.name', 'ci-7')] }, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: records }] }] };
}

const failing = (seq: number) => claudeRecord(seq, { 'event.name': 'tool_result', tool_name: 'Bash', tool_use_id: `toolu_${seq}`, success: 'false', error: 'Shell command failed', tool_input: JSON.stringify({ command: 'npm run build-missing', description: 'Run it' }) });

async function withReceiver(fn: (post: (body: Buffer | string, headers?: Record<string, string>, path?: string, method?: string) => Promise<{ status: number; body: string }>, findings: Finding[], receiver: OtlpReceiver) => Promise<void>, maxBodyBytes?: number): Promise<void> {
  const findings: Finding[] = [];
  const receiver = new OtlpReceiver({ judge: { config: defaultConfig(), onFinding: (f) => findings.push(f) }, ...(maxBodyBytes !== undefined ? { limits: { maxBodyBytes, maxInflatedBytes: 2 * maxBodyBytes } } : {}) });
  const { port } = await receiver.listen('127.0.0.1', 0);
  const post = (body: Buffer | string, headers: Record<string, string> = { 'Content-Type': 'application/json' }, path = '/v1/logs', method = 'POST') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    await fn(post, findings, receiver);
  } finally {
    await receiver.close();
  }
}

describe('loop-guardian otlp: the OTLP/HTTP logs receiver', () => {
  it('Claude Code\'s tool_result records of one failing command, three times: a halt, its evidence at the receiver\'s origin; gzip taken', async () => {
    await withReceiver(async (post, findings) => {
      const first = await post(JSON.stringify(request([claudeRecord(1, { 'event.name': 'user_prompt', prompt_length: 20 }), failing(2)])));
      assert.deepEqual([first.status, JSON.parse(first.body)], [200, {}]);
      // Out of order within a batch: put back in order by event.sequence.
      const second = await post(zlib.gzipSync(JSON.stringify(request([failing(4), failing(3)]))), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
      assert.equal(second.status, 200, second.body);
      const halt = findings.find((f) => f.action === 'halt');
      assert.ok(halt, JSON.stringify(findings.map((f) => [f.signal, f.action])));
      // Named by its origin: a client's session id can never be one of this machine's sessions.
      assert.equal(halt.session, 'otlp/claude-code@ci-7/s-1');
      assert.equal(halt.evidence[0]?.file, 'otlp:claude-code@ci-7');
      assert.deepEqual(halt.evidence.map((e) => e.line), [2, 3, 4]);
    });
  });

  it('the binary protobuf encoding: the same records, the same halt; the answer in protobuf (an empty response)', async () => {
    await withReceiver(async (post, findings) => {
      const bytes = encodeLogsProtobuf(request([failing(1), failing(2), failing(3)]));
      const r = await post(zlib.gzipSync(bytes), { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' });
      assert.deepEqual([r.status, r.body], [200, '']);
      const halt = findings.find((f) => f.action === 'halt');
      assert.ok(halt, JSON.stringify(findings.map((f) => [f.signal, f.action])));
      assert.equal(halt.evidence[0]?.file, 'otlp:claude-code@ci-7');
    });
  });

  it('as the fleet\'s Collectors send it (docs/fleet.md): each session\'s id lifted into a resource of its own (groupbyattrs), in protobuf and gzip (otlphttp\'s defaults): Claude Code\'s and Codex\'s loops found, a session each', async () => {
    await withReceiver(async (post, findings) => {
      // groupbyattrs moves the keys it groups by from each record to the resource, one resource per value.
      const lifted = (service: string, key: string, session: string, records: { attributes: { key: string }[] }[]) => ({
        resource: { attributes: [kv('service.name', service), kv('host.name', 'ci-7'), kv(key, session)] },
        scopeLogs: [{ logRecords: records.map((r) => ({ ...r, attributes: r.attributes.filter((a) => a.key !== key) })) }],
      });
      const codex = (seq: number) => ({
        timeUnixNano: `${Date.UTC(2026, 10, 26, 4, 0, seq)}000000`,
        attributes: [kv('event.name', 'codex.tool_result'), kv('conversation.id', 'c-1'), kv('tool_name', 'shell'), kv('call_id', `call_${seq}`), kv('arguments', JSON.stringify({ command: ['bash', '-lc', 'make deploy'] })), kv('output', 'Process exited with code 2\nmake: *** No rule to make target deploy.'), kv('success', 'true')],
      });
      const other = (seq: number) => ({ ...failing(seq), attributes: [...failing(seq).attributes.filter((a) => a.key !== 'session.id'), kv('session.id', 's-2')] });
      // The same failing command twice in each of two Claude Code sessions: no loop yet (each is its own).
      const first = { resourceLogs: [lifted('claude-code', 'session.id', 's-1', [failing(1), failing(2)]), lifted('claude-code', 'session.id', 's-2', [other(1), other(2)]), lifted('codex_exec', 'conversation.id', 'c-1', [codex(1), codex(2)])] };
      const headers = { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' };
      assert.equal((await post(zlib.gzipSync(encodeLogsProtobuf(first)), headers)).status, 200);
      assert.deepEqual(findings.filter((f) => f.action === 'halt'), []);
      const second = { resourceLogs: [lifted('claude-code', 'session.id', 's-1', [failing(3)]), lifted('codex_exec', 'conversation.id', 'c-1', [codex(3)])] };
      assert.equal((await post(zlib.gzipSync(encodeLogsProtobuf(second)), headers)).status, 200);
      const halted = [...new Set(findings.filter((f) => f.action === 'halt').map((f) => f.session))].sort();
      assert.deepEqual(halted, ['otlp/claude-code@ci-7/s-1', 'otlp/codex_exec@ci-7/c-1']);
    });
  });

  it('successes are no outcome (Claude Code exports no output) and calls without their input are each their own: four of them are no loop', async () => {
    await withReceiver(async (post, findings) => {
      const ok = (seq: number) => claudeRecord(seq, { 'event.name': 'tool_result', tool_name: 'Read', tool_use_id: `toolu_${seq}`, success: 'true', tool_input: JSON.stringify({ file_path: '/w/a.ts' }) });
      const blind = (seq: number) => claudeRecord(seq, { 'event.name': 'tool_result', tool_name: 'Bash', tool_use_id: `toolu_${seq}`, success: 'false', error: 'Shell command failed' });
      assert.equal((await post(JSON.stringify(request([ok(1), ok(2), ok(3), ok(4), blind(5), blind(6), blind(7)])))).status, 200);
      assert.deepEqual(findings.filter((f) => f.action === 'halt').map((f) => f.signal), []);
    });
  });

  it('malformed input: each request answered with the specification\'s error, none stops the receiver, a good one still works after', async () => {
    await withReceiver(async (post, findings, receiver) => {
      const cases: [string, Promise<{ status: number; body: string }>, number, RegExp][] = [
        ['not JSON', post('{"resourceLogs": [', undefined), 400, /not JSON/],
        ['not an object', post('[1,2,3]'), 400, /not a logs export request/],
        ['resourceLogs not a list', post('{"resourceLogs": 7}'), 400, /resourceLogs is not a list/],
        ['not gzip', post('plain', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }), 400, /not gzip/],
        ['text/plain', post('x', { 'Content-Type': 'text/plain' }), 415, /text\/plain: not read/],
        ['brotli', post('x', { 'Content-Type': 'application/json', 'Content-Encoding': 'br' }), 415, /content encoding br/],
        ['another path', post('{}', undefined, '/v1/profiles'), 404, /not found/],
        ['GET', post('', {}, '/v1/logs', 'GET'), 405, /only POST/],
        ['too large', post('x'.repeat(5000)), 413, /more than the 4096 bytes/],
        ['a gzip bomb', post(zlib.gzipSync(Buffer.alloc(1_000_000, 32)), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }), 413, /inflated, more than/],
      ];
      // Not protobuf: a google.rpc.Status in protobuf back.
      const badProto = await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), { 'Content-Type': 'application/x-protobuf' });
      assert.equal(badProto.status, 400);
      assert.match(badProto.body, /not an export request in protobuf/);
      for (const [what, pending, code, message] of cases) {
        const r = await pending;
        assert.equal(r.status, code, `${what}: ${r.status} ${r.body}`);
        const status = JSON.parse(r.body) as { code: number; message: string };
        assert.match(status.message, message, what);
        assert.equal(typeof status.code, 'number', what);
      }
      // Records that are not records: rejected and counted, the rest taken (partial success).
      const partial = await post(JSON.stringify(request([7, { attributes: 'nope' }, failing(1)])));
      assert.equal(partial.status, 200);
      assert.deepEqual(JSON.parse(partial.body), { partialSuccess: { rejectedLogRecords: '2', errorMessage: 'a log record is not an object' } });
      // Unknown agents and unknown events: accepted, passed over.
      assert.equal((await post(JSON.stringify(request([claudeRecord(2, { 'event.name': 'api_request' })], 'some-other-service')))).status, 200);
      assert.equal((await post(JSON.stringify(request([failing(2), failing(3)])))).status, 200);
      assert.ok(findings.some((f) => f.action === 'halt'), 'still reading after all that');
      // Metrics and traces sent to the same endpoint: accepted and dropped (an exporter of every
      // signal shuts down cleanly), in the request's encoding; not a refusal.
      const metrics = await post('{"resourceMetrics": []}', undefined, '/v1/metrics');
      const traces = await post(Buffer.from([0x0a, 0x00]), { 'Content-Type': 'application/x-protobuf' }, '/v1/traces');
      assert.deepEqual([metrics.status, metrics.body, traces.status, traces.body], [200, '{}', 200, '']);
      assert.equal((await post('', {}, '/v1/metrics', 'GET')).status, 405);
      assert.equal(receiver.stats.dropped, 2);
      assert.equal(receiver.stats.refused, cases.length + 2);
    }, 4096);
  });

  it('decodes the JSON encoding\'s values: ints as strings, nested lists and maps, depth bounded; --listen parsed', () => {
    const deep = (n: number): unknown => (n === 0 ? { stringValue: 'x' } : { arrayValue: { values: [deep(n - 1)] } });
    const d = decodeLogsJson({ resourceLogs: [{ resource: { attributes: [kv('service.name', 'x')] }, scopeLogs: [{ logRecords: [{ timeUnixNano: '1795665600123456789', attributes: [kv('n', 42), { key: 'm', value: { kvlistValue: { values: [kv('a', true)] } } }, { key: 'd', value: deep(20) }, { key: 'bad' }] }] }] }] });
    assert.equal(d.records.length, 1);
    const r = d.records[0]!;
    assert.equal(r.timeMs, 1795665600123);
    assert.equal(r.attributes.n, 42);
    assert.deepEqual(r.attributes.m, { a: true });
    assert.match(JSON.stringify(r.attributes.d), /"…"/);
    assert.equal('bad' in r.attributes, false);
    assert.deepEqual(parseListen('0.0.0.0:4318'), { host: '0.0.0.0', port: 4318 });
    assert.deepEqual(parseListen('[::1]:9000'), { host: '::1', port: 9000 });
    assert.deepEqual(parseListen('4319'), { host: '127.0.0.1', port: 4319 });
    assert.throws(() => parseListen('localhost'), /HOST:PORT/);
  });

  it('JSON values are bounded as they are read: a long error is cut to its head and tail around its fingerprint, a token in it masked, a long key cut', async () => {
    const events: GuardianEvent[] = [];
    const receiver = new OtlpReceiver({ onEvents: (_origin, batch) => events.push(...batch) });
    const { port } = await receiver.listen('127.0.0.1', 0);
    try {
      const token = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
      const error = `npm ERR! auth ${token}\n${'x'.repeat(20_000)}`;
      const record = claudeRecord(1, { 'event.name': 'tool_result', tool_name: 'Bash', tool_use_id: 'toolu_1', success: 'false', error, tool_input: JSON.stringify({ command: 'npm publish' }) });
      record.attributes.push(kv('k'.repeat(300), 'v'));
      const body = JSON.stringify(request([record]));
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.equal(status, 200);
      const result = events.find((e) => e.type === 'tool_result') as { error?: string } | undefined;
      assert.ok(result?.error !== undefined, JSON.stringify(events).slice(0, 300));
      assert.ok(result.error.length < 4096, `${result.error.length}`);
      assert.match(result.error, /\[20\d{3} characters, fingerprint /);
      assert.doesNotMatch(result.error, new RegExp(token));
    } finally {
      await receiver.close();
    }
    const decoded = decodeLogsJson(request([{ attributes: [kv('k'.repeat(300), 'v')], eventName: 'e'.repeat(300) }]));
    assert.deepEqual(Object.keys(decoded.records[0]!.attributes).map((k) => k.length), [256]);
    assert.equal(decoded.records[0]!.eventName?.length, 256);
  });

  it('sessions forgotten for the bytes they may hold: the first said, the rest counted, not a line each', async () => {
    const said: string[] = [];
    const findings: Finding[] = [];
    const receiver = new OtlpReceiver({ judge: { config: defaultConfig(), onFinding: (f) => findings.push(f) }, onDrop: (what) => said.push(what), limits: { maxSessionBytes: 4000 } });
    const { port } = await receiver.listen('127.0.0.1', 0);
    try {
      const one = (session: string, seq: number) => ({ ...failing(seq), attributes: [...failing(seq).attributes.filter((a) => a.key !== 'session.id'), kv('session.id', session)] });
      for (let i = 0; i < 40; i++) {
        const body = JSON.stringify(request([one(`s-${i}`, 1)]));
        await new Promise<void>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          });
          req.on('error', reject);
          req.end(body);
        });
      }
      assert.ok(receiver.stats.droppedSessions > 20, `${receiver.stats.droppedSessions}`);
      assert.equal(said.length, 1, said.join('\n'));
      assert.match(said[0]!, /^session otlp\/claude-code@ci-7\/s-0 forgotten \(\d+ bytes of events\): the sessions received keep at most 4000 bytes/);
    } finally {
      await receiver.close();
    }
  });

  it('large requests queued behind one another each begin on a turn of the event loop of their own, not in the microtasks of the one before', async () => {
    // The event loop's turns, counted here (the receiver runs in this process).
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const halts = new Map<string, number>();
    const receiver = new OtlpReceiver({ judge: { config: defaultConfig(), onFinding: (f) => void (f.action === 'halt' && !halts.has(f.session) && halts.set(f.session, turn)) } });
    const { port } = await receiver.listen('127.0.0.1', 0);
    const post = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' }, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    const of = (session: string, r: ReturnType<typeof failing>, extra: ReturnType<typeof kv>[] = []) => ({ ...r, attributes: [...r.attributes.filter((a) => a.key !== 'session.id'), kv('session.id', session), ...extra] });
    try {
      const loops = ['a', 'b', 'c'];
      // Each loop's first two failures, then its third in a large request of its own (past 64 KiB by
      // an attribute no agent reads): little work each, far less than a slice.
      assert.equal(await post(JSON.stringify(request(loops.flatMap((s) => [of(s, failing(1)), of(s, failing(2))])))), 200);
      const third = (s: string) => JSON.stringify(request([of(s, failing(3), [kv('padding', 'x'.repeat(70_000))])]));
      // A request before them long enough (3,000 sessions' records, many slices) for them to be read and queued meanwhile.
      const long = JSON.stringify(request(Array.from({ length: 3000 }, (_, i) => of(`busy-${i}`, claudeRecord(1, { 'event.name': 'tool_result', tool_name: 'Read', tool_use_id: `toolu_${i}`, success: 'true', tool_input: JSON.stringify({ file_path: `/w/${i}.ts` }) })))));
      const answers = await Promise.all([post(long), ...loops.map((s) => post(third(s)))]);
      assert.deepEqual(answers, [200, 200, 200, 200]);
      const turns = loops.map((s) => halts.get(`otlp/claude-code@ci-7/${s}`));
      assert.ok(turns.every((t) => t !== undefined), `halts: ${JSON.stringify([...halts])}`);
      assert.equal(new Set(turns).size, loops.length, `the three loops' halts were told in turns ${turns.join(', ')}`);
    } finally {
      ticking = false;
      await receiver.close();
    }
  });

  it('loop-guardian otlp says a finding on stdout before it answers the request that raised it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lg-otlp-out-'));
    const out = path.join(dir, 'stdout');
    const fd = openSync(out, 'w');
    const proc = spawn(process.execPath, [CLI, 'otlp', '--listen', '127.0.0.1:0'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    try {
      let err = '';
      const port = await new Promise<number>((resolve, reject) => {
        proc.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
          if (m) resolve(Number(m[1]));
        });
        proc.once('exit', (code) => reject(new Error(`the receiver ended (${code}): ${err}`)));
      });
      const post = (records: unknown[]) =>
        new Promise<void>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
            res.resume();
            // Read the moment the answer is in: what the receiver wrote before answering is in the file.
            res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
          });
          req.on('error', reject);
          req.end(JSON.stringify(request(records)));
        });
      await post([failing(1), failing(2)]);
      assert.doesNotMatch(readFileSync(out, 'utf8'), /"action":"halt"/);
      await post([failing(3)]);
      const said = readFileSync(out, 'utf8');
      assert.match(said, /"signal":"identical-calls","action":"halt".*"session":"otlp\/claude-code@ci-7\/s-1"/);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(undefined) : proc.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('its findings are written at once when the code that raised them is done: before what runs after it (an answer), not on a later turn', async () => {
    const written: string[] = [];
    const said = new Batched((text) => written.push(text));
    said.add('one\n');
    said.add('two\n');
    assert.deepEqual(written, [], 'gathered while the code runs');
    // A continuation queued after them (the request's answer is such a one).
    await Promise.resolve();
    assert.deepEqual(written, ['one\ntwo\n'], 'one write, before the continuation');
    said.add('three\n');
    said.flush();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(written, ['one\ntwo\n', 'three\n']);
  });

  it('a session\'s events are counted as their JSON text, without writing it', () => {
    const values: unknown[] = [
      { type: 'tool', session: 's', agent: 'claude', ts: '2026-11-29T05:00:00.000Z', tool: 'Bash', args: { command: 'npm test -- --grep "x"', n: 3, ok: true, none: null, list: [1, 'two', [3.5, -4e-7], {}, []], skip: undefined }, id: 'toolu_1' },
      [undefined, 1, 'a'],
      { a: { b: { c: [{ d: 'deep' }] } } },
      'plain',
      12345.678,
      -0,
      false,
      null,
      {},
      [],
    ];
    for (const v of values) assert.equal(jsonLength(v), JSON.stringify(v).replace(/\\"/g, '"').length, JSON.stringify(v));
    // Nested past 64 levels, written out.
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    assert.equal(jsonLength(deep), JSON.stringify(deep).length);
  });
});
