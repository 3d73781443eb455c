import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync, statSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import * as zlib from 'node:zlib';
import { OTEL_QUEUE } from '../../src/state/otelQueue';
import { Workspace } from '../../src/state/workspace';
import { IncidentExporter, MAX_QUEUED, type QueuedRecord } from '../../src/watch/incidentExport';
import { MEMORY_BUDGET_BYTES, OtlpReceiver, workspaceEvents } from '../../src/watch/otlpReceiver';
import { encodeLogsProtobuf } from '../../src/watch/otlpProtobuf';
import { CLI, cli, tmpProject } from '../unit/helpers';

/*
 * Issue 32, "Safe to expose": the OTLP receiver probed as a hostile client would, and the exporter
 * against a broken network, each case replayed against the real thing — the shipped CLI's receiver
 * in a process of its own (its memory read from /proc), or the receiver's server in this process
 * where a limit is made small to be reached quickly — and the exporter against loopback servers
 * started here that refuse, hang, fail or answer late. Floods are bounded in count and time, and
 * only ever on 127.0.0.1.
 */

const kv = (key: string, value: string | number | boolean) => ({ key, value: typeof value === 'string' ? { stringValue: value } : typeof value === 'number' ? { intValue: String(value) } : { boolValue: value } });

/** A Claude Code tool_result record of `session` (its shape as in test/unit/cli/otlp.test.ts). */
function toolResult(session: string, seq: number, ok: boolean, extra: Record<string, string> = {}) {
  return {
    timeUnixNano: `${Date.UTC(2026, 10, 26, 4, 0, seq % 60)}000000`,
    body: { stringValue: 'claude_code.tool_result' },
    attributes: Object.entries({ 'session.id': session, 'event.sequence': seq, 'event.name': 'tool_result', tool_name: 'Bash', tool_use_id: `toolu_${session}_${seq}`, success: ok ? 'true' : 'false', ...(ok ? {} : { error: 'Shell command failed' }), tool_input: JSON.stringify({ command: 'npm run build-missing', description: 'Run it' }), ...extra }).map(([k, v]) => kv(k, v)),
  };
}

function request(records: unknown[], host = 'ci-7') {
  return { resourceLogs: [{ resource: { attributes: [kv('service.name', 'claude-code'), kv('host.name', host)] }, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: records }] }] };
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

function post(port: number, body: Buffer | string, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/logs', method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const gz = (v: unknown, level = 1) => zlib.gzipSync(typeof v === 'string' || Buffer.isBuffer(v) ? v : JSON.stringify(v), { level });
const GZ_JSON = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' };
const GZ_PROTO = { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shipped CLI's receiver in a process of its own; its resident memory sampled every 25 ms. */
interface Child {
  readonly port: number;
  readonly proc: ChildProcess;
  readonly stderr: () => string;
  /** The most resident memory seen since the start, in bytes. */
  readonly peak: () => number;
  /** Open descriptors now. */
  readonly fds: () => number;
  readonly stop: () => Promise<string>;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function receiverProcess(ws: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Child> {
  const proc = spawn(process.execPath, [CLI, 'otlp', '--listen', '127.0.0.1:0', '--workspace', ws, ...args], { cwd: ws, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 20_000;
  let port = 0;
  while (port === 0) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`the receiver did not start: ${err}`);
    port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(err)?.[1] ?? 0);
    await sleep(20);
  }
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(proc.pid!));
    } catch {
      // Gone.
    }
  }, 25);
  return {
    port,
    proc,
    stderr: () => err,
    peak: () => Math.max(peak, proc.exitCode === null ? rssOf(proc.pid!) : 0),
    fds: () => readdirSync(`/proc/${proc.pid}/fd`).length,
    stop: async () => {
      clearInterval(sampler);
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
      return err;
    },
  };
}

const MB = 1024 * 1024;

describe('issue 32: the OTLP receiver, safe to expose', function () {
  this.timeout(120_000);

  it('memory by bytes: 8,000 sessions carrying 60 KB values stay under the budget, and scan reads what was written', async () => {
    const ws = await tmpProject('lg-otlp-mem-');
    const r = await receiverProcess(ws);
    try {
      const big = (s: number) => `${s}:`.padEnd(60 * 1024, 'x');
      let sent = 0;
      for (let batch = 0; batch < 160; batch++) {
        const records = Array.from({ length: 50 }, (_, i) => toolResult(`big-${batch * 50 + i}`, 1, false, { error: big(batch * 50 + i) }));
        const a = await post(r.port, gz(request(records)), GZ_JSON);
        assert.equal(a.status, 200, a.body);
        sent += records.length;
      }
      assert.equal(sent, 8000);
      const peak = r.peak();
      assert.ok(peak < MEMORY_BUDGET_BYTES, `peak ${(peak / MB).toFixed(0)} MB`);
      console.log(`      receiver peak RSS ${(peak / MB).toFixed(0)} MB for 8,000 sessions of 60 KB values (budget ${MEMORY_BUDGET_BYTES / MB} MB)`);
    } finally {
      await r.stop();
    }
    const scan = await cli(['scan', '--workspace', ws], { cwd: ws, timeoutMs: 60_000 });
    assert.ok(scan.code === 0 || scan.code === 1, `scan: ${scan.code} ${scan.stderr.slice(0, 500)}`);
    assert.doesNotMatch(scan.stderr, /heap out of memory/);
  });

  it('one request holds no other more than 100 ms: gzip bombs of empty entries, a request at the entry limit, memory within the budget', async () => {
    const ws = await tmpProject('lg-otlp-hold-');
    const r = await receiverProcess(ws);
    try {
      // A 20 KB gzip body inflating to 20 MiB of empty entries (JSON), 4 MiB of empty resources (protobuf), and what the limits let in.
      const jsonBomb = gz(`{"resourceLogs":[${'{},'.repeat(7 * MB)}{}]}`, 9);
      const protoBomb = gz(Buffer.alloc(4 * MB - 2, Buffer.from([0x0a, 0x00])), 9);
      const manyRecords = gz(encodeLogsProtobuf({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 10_000 }, () => ({ attributes: Array.from({ length: 10 }, (_, i) => kv(`k${i}`, 'v')) })) }] }] }));
      const manyJson = gz(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[${'{"attributes":[]},'.repeat(9_999)}{}]}]}]}`);
      assert.ok(jsonBomb.length < 40_000, `${jsonBomb.length}`);
      const probe = JSON.stringify(request([toolResult('probe', 1, true)]));
      const latencies: number[] = [];
      let flooding = true;
      const prober = (async () => {
        while (flooding) {
          const a = await post(r.port, probe);
          assert.equal(a.status, 200);
          latencies.push(a.ms);
          await sleep(20);
        }
      })();
      await sleep(100);
      const answers: Answer[] = [];
      for (let round = 0; round < 3; round++) {
        answers.push(...(await Promise.all([post(r.port, jsonBomb, GZ_JSON), post(r.port, protoBomb, GZ_PROTO), post(r.port, manyRecords, GZ_PROTO), post(r.port, manyJson, GZ_JSON)])));
      }
      flooding = false;
      await prober;
      assert.deepEqual(answers.slice(0, 4).map((a) => a.status), [413, 413, 200, 200], answers.map((a) => `${a.status} ${a.body.slice(0, 120)}`).join('\n'));
      const worst = Math.max(...latencies); // wall time
      const peak = r.peak();
      console.log(`      ${latencies.length} probes during the bombs: worst ${worst.toFixed(0)} ms (then ${[...latencies].sort((a, b) => b - a).slice(1, 5).map((x) => x.toFixed(0)).join(", ")}); bombs answered in ${answers.map((a) => a.ms.toFixed(0)).join(', ')} ms; peak RSS ${(peak / MB).toFixed(0)} MB`);
      // Every probe answered; how long they took in wall time depends on what else the machine runs
      // (the hold itself is measured in CPU time below, where other processes do not count).
      assert.ok(latencies.length >= 5, `${latencies.length} probes`);
      assert.ok(peak < MEMORY_BUDGET_BYTES, `peak ${(peak / MB).toFixed(0)} MB`);
    } finally {
      await r.stop();
    }
  });

  it('the same bombs, sent plain to the receiver\'s server here: no stretch of its work runs more than 100 ms without letting another request in', async () => {
    const receiver = new OtlpReceiver({});
    const { port } = await receiver.listen('127.0.0.1', 0);
    const bodies: [Buffer | string, Record<string, string>][] = [
      [`{"resourceLogs":[${'{},'.repeat(MB + 300_000)}{}]}`, { 'Content-Type': 'application/json' }],
      [Buffer.alloc(4 * MB - 2, Buffer.from([0x0a, 0x00])), { 'Content-Type': 'application/x-protobuf' }],
      [Buffer.from(encodeLogsProtobuf({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 10_000 }, () => ({ attributes: Array.from({ length: 10 }, (_, i) => kv(`k${i}`, 'v')) })) }] }] })), { 'Content-Type': 'application/x-protobuf' }],
      [`{"resourceLogs":[{"scopeLogs":[{"logRecords":[${'{"attributes":[{"key":"k","value":{"stringValue":"v"}}]},'.repeat(9_999)}{}]}]}]}`, { 'Content-Type': 'application/json' }],
    ];
    // The event loop's turns, each timed twice: by the clock (which counts time the machine gave other
    // processes) and by this process's CPU time (which counts V8's garbage-collecting helper threads,
    // more of them the more cores: a CI machine read 132 ms of CPU for a turn under 60 ms long). The
    // main thread's own CPU in a turn is at most the lesser of the two: that is the turn's length here.
    // V8's collections are timed too: a full collection of this test process's heap (the whole
    // reliability suite's, in one process) paused one turn 517 ms in a full `npm test`; that pause is
    // the collector's over everything the suite holds, not a stretch of the receiver's work, and is
    // taken out of the turn it fell in (and said).
    const turns: { start: number; end: number; wall: number; cpu: number }[] = [];
    const collections: PerformanceEntry[] = [];
    const gc = new PerformanceObserver((list) => collections.push(...list.getEntries()));
    gc.observe({ entryTypes: ['gc'] });
    let last = process.cpuUsage();
    let lastWall = performance.now();
    const tick = setInterval(() => {
      const used = process.cpuUsage(last);
      const now = performance.now();
      turns.push({ start: lastWall, end: now, wall: now - lastWall, cpu: (used.user + used.system) / 1000 });
      last = process.cpuUsage();
      lastWall = performance.now();
    }, 1);
    try {
      const answers = await Promise.all(bodies.map(([b, h]) => post(port, b, h)));
      assert.deepEqual(answers.map((a) => a.status), [413, 413, 200, 200], answers.map((a) => a.body.slice(0, 100)).join('\n'));
    } finally {
      clearInterval(tick);
      await receiver.close();
      // The observer is told of the last collections on a later turn.
      await sleep(50);
      gc.disconnect();
    }
    const paused = (t: { start: number; end: number }) => collections.reduce((sum, c) => sum + Math.max(0, Math.min(t.end, c.startTime + c.duration) - Math.max(t.start, c.startTime)), 0);
    let worst = { length: 0, wall: 0, cpu: 0, collecting: 0 };
    for (const t of turns) {
      const collecting = paused(t);
      const length = Math.min(t.wall, t.cpu) - collecting;
      if (length > worst.length) worst = { length, wall: t.wall, cpu: t.cpu, collecting };
    }
    const said = `${worst.length.toFixed(0)} ms (by the clock ${worst.wall.toFixed(0)} ms, by the process's CPU ${worst.cpu.toFixed(0)} ms, of which the collector paused it ${worst.collecting.toFixed(0)} ms); the longest turn by the clock ${Math.max(...turns.map((t) => t.wall)).toFixed(0)} ms; ${collections.length} collections`;
    console.log(`      the longest turn of the event loop while four bombs were read: ${said}`);
    assert.ok(turns.length > 10, `${turns.length} turns`);
    assert.ok(worst.length < 100, `one turn ran ${said}`);
  });

  it('stalled uploads are let go with their connections; idle sockets past the limit do not lock an exporter out', async () => {
    const ws = await tmpProject('lg-otlp-conn-');
    const r = await receiverProcess(ws);
    const sockets: net.Socket[] = [];
    try {
      // 100 uploads of 3 MiB each, that then stall (chunked: no length said), then go away.
      const chunk = Buffer.alloc(MB, 0x20);
      const stalled = Array.from({ length: 100 }, () => {
        const req = http.request({ host: '127.0.0.1', port: r.port, path: '/v1/logs', method: 'POST', headers: { 'Content-Type': 'application/json' }, agent: false });
        const answered = new Promise<number>((resolve) => {
          req.on('response', (res) => resolve(res.statusCode ?? 0));
          req.on('error', () => resolve(-1));
        });
        for (let i = 0; i < 3; i++) req.write(chunk);
        return { req, answered };
      });
      await sleep(1500);
      const during = r.peak();
      for (const s of stalled) s.req.destroy();
      const codes = await Promise.all(stalled.map((s) => Promise.race([s.answered, sleep(500).then(() => 0)])));
      await sleep(300);
      const afterClose = rssOf(r.proc.pid!);
      assert.ok(during < MEMORY_BUDGET_BYTES, `${(during / MB).toFixed(0)} MB while 100 uploads stalled`);
      const after = await post(r.port, JSON.stringify(request([toolResult('after', 1, true)])));
      assert.equal(after.status, 200);
      // 300 idle sockets: at most 256 kept, and an exporter still gets in.
      for (let i = 0; i < 300; i++) {
        const s = net.connect(r.port, '127.0.0.1');
        s.on('error', () => undefined);
        sockets.push(s);
      }
      await sleep(500);
      const fds = r.fds();
      const real = await post(r.port, JSON.stringify(request([toolResult('real', 1, true)])));
      assert.equal(real.status, 200, real.body);
      console.log(`      stalled uploads: peak RSS ${(during / MB).toFixed(0)} MB, ${afterClose / MB | 0} MB once closed (${codes.filter((c) => c === 503).length} answered 503, ${codes.filter((c) => c === -1).length} reset); 300 idle sockets: ${fds} descriptors open, an exporter answered in ${real.ms.toFixed(0)} ms`);
      assert.ok(fds < 256 + 40, `${fds} descriptors`);
    } finally {
      for (const s of sockets) s.destroy();
      await r.stop();
    }
  });

  it('header, request and idle time-outs close connections that say nothing, too slowly, or no more', async function () {
    // Three times in fresh-clone CI runs on this 2-core machine, the last on 2026-11-29 in each of
    // the three attempts of one run, a silent connection the server had taken stayed open past
    // 10 s. The client's sockets were not read: a socket nobody reads does not see the server end
    // the connection (with the receiver's own timers taken out, its side was closed and the
    // client's still open after 10 s). They are read now. Still retried, so that a time-out not
    // enforced (which fails every attempt: checked with every time-out taken out) still fails; each
    // attempt's failure is printed with the server's side of each connection.
    this.retries(2);
    const receiver = new OtlpReceiver({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 600, idleTimeoutMs: 400 } });
    const { port } = await receiver.listen('127.0.0.1', 0);
    // Each connection timed from when the receiver's server took it (a CI run once saw a silent
    // connection open for good: whether the server had taken it at all is said on failure).
    const server = (receiver as unknown as { server: http.Server }).server;
    const taken: number[] = [];
    // The server's side of each connection: whether the receiver closed it, said on failure.
    const theirs: net.Socket[] = [];
    server.on('connection', (socket: net.Socket) => {
      taken.push(performance.now());
      theirs.push(socket);
    });
    const t00 = performance.now();
    const closedWithin = (s: net.Socket) => {
      let connected = -1;
      s.once('connect', () => (connected = performance.now()));
      return new Promise<number>((resolve) => s.on('close', () => resolve(performance.now() - (connected > 0 ? connected : t00))));
    };
    const seen = () =>
      `(the server took ${taken.length} connection(s)${taken.length > 0 ? `, at ${taken.map((t) => (t - t00).toFixed(0)).join(', ')} ms` : ''}; its side ${theirs.map((x) => (x.destroyed ? 'closed' : 'open')).join(', ')})`;
    try {
      // Read (resume): a socket nobody reads never sees the server's end of the connection, and
      // was seen open for good beside a server that had closed its side.
      const silent = net.connect(port, '127.0.0.1').on('error', () => undefined).resume();
      const dribbler = net.connect(port, '127.0.0.1').on('error', () => undefined).resume();
      const [silentClosed, dribblerClosed] = [closedWithin(silent), closedWithin(dribbler)];
      dribbler.on('connect', () => dribbler.write('POST /v1/logs HTTP/1.1\r\n'));
      const drip = setInterval(() => !dribbler.destroyed && dribbler.writable && dribbler.write('X-A: b\r\n'), 100);
      // Limits of 300 to 600 ms, each connection closed within 4 s: room for a loaded machine (two
      // cores shared by several suites), while a time-out not enforced leaves it open for good.
      const limit = (p: Promise<number>) => Promise.race([p, sleep(10_000).then(() => Infinity)]);
      const [a, b] = await Promise.all([limit(silentClosed), limit(dribblerClosed)]);
      clearInterval(drip);
      const check = (ok: boolean, what: string) => {
        if (!ok) console.log(`      attempt failed: ${what}`);
        assert.ok(ok, what);
      };
      check(a < 4000, `a silent connection closed after ${a.toFixed(0)} ms ${seen()}`);
      check(b < 4000, `headers sent a line at a time closed after ${b.toFixed(0)} ms ${seen()}`);
      // A kept-alive connection with nothing more to send after its request.
      const kept = net.connect(port, '127.0.0.1').on('error', () => undefined);
      const keptClosed = closedWithin(kept);
      let answered = -1;
      const t0 = performance.now();
      kept.on('data', () => (answered = performance.now()));
      kept.write(`POST /v1/logs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}`);
      const idle = (await Promise.race([keptClosed, sleep(10_000).then(() => Infinity)])) + t0 - (answered > 0 ? answered : t0);
      assert.ok(answered > 0, 'the kept-alive request was answered');
      assert.ok(idle < 4000, `an idle kept-alive connection closed after ${idle.toFixed(0)} ms`);
    } finally {
      await receiver.close();
    }
  });

  it('disk bounded per origin and in total, origins past the bound pooled, the oldest dropped and said', async () => {
    const ws = await tmpProject('lg-otlp-disk-');
    const drops: string[] = [];
    const bounds = { perOriginBytes: 64 * 1024, totalBytes: 128 * 1024, maxFiles: 4 };
    const receiver = new OtlpReceiver({ onEvents: workspaceEvents(new Workspace(ws), (rel, err) => drops.push(`${rel}: ${err.message}`), (what) => drops.push(what), bounds) });
    const { port } = await receiver.listen('127.0.0.1', 0);
    const dir = path.join(ws, '.tmp', 'otlp', 'logs');
    const sizes = () => Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(path.join(dir, f)).size]));
    try {
      const filler = 'y'.repeat(1500);
      for (let round = 0; round < 12; round++) {
        for (let h = 0; h < 8; h++) {
          const records = Array.from({ length: 10 }, (_, i) => toolResult(`s-${h}`, round * 10 + i, false, { error: `${round}-${i} ${filler}` }));
          assert.equal((await post(port, JSON.stringify(request(records, `host-${h}`)))).status, 200);
        }
      }
      const now = sizes();
      const total = Object.values(now).reduce((a, b) => a + b, 0);
      const names = Object.keys(now);
      console.log(`      8 hosts × 12 rounds: ${names.length} files, ${(total / 1024).toFixed(0)} KB (bounds: 4 origins, 64 KB each, 128 KB in all)`);
      const batch = 32 * 1024;
      assert.ok(total <= bounds.totalBytes + batch, `${total} bytes: ${JSON.stringify(now)}`);
      for (const [name, size] of Object.entries(now)) {
        const pair = size + (now[`${name}.1`] ?? 0);
        if (!name.endsWith('.1')) assert.ok(pair <= bounds.perOriginBytes + batch, `${name}: ${pair} bytes`);
      }
      assert.ok(names.filter((n) => !n.endsWith('.1') && n !== 'otlp-pooled.jsonl').length <= 4, names.join(', '));
      assert.ok(names.includes('otlp-pooled.jsonl'), names.join(', '));
      assert.ok(drops.some((d) => /more than 4 origins/.test(d)), drops.join('\n'));
      assert.ok(drops.some((d) => /removed \(\d+ bytes\)/.test(d)), drops.join('\n'));
    } finally {
      await receiver.close();
    }
    // The shipped receiver's own bounds: 2,000 host names in one request make at most 32 files of their own.
    const ws2 = await tmpProject('lg-otlp-disk2-');
    const r = await receiverProcess(ws2);
    try {
      const records = Array.from({ length: 2000 }, (_, h) => request([toolResult('s', 1, true)], `h-${h}`).resourceLogs[0]);
      assert.equal((await post(r.port, JSON.stringify({ resourceLogs: records }))).status, 200);
      const files = readdirSync(path.join(ws2, '.tmp', 'otlp', 'logs'));
      assert.ok(files.length <= 33, `${files.length} files`);
      assert.match(r.stderr(), /more than 32 origins/);
    } finally {
      await r.stop();
    }
  });

  it('the token (in constant time), the Host on loopback, no web page: anyone who reaches it is not believed', async () => {
    const ws = await tmpProject('lg-otlp-auth-');
    const body = JSON.stringify(request([toolResult('a', 1, true)]));
    const json = { 'Content-Type': 'application/json' };
    for (const [args, env] of [[['--token', 's3cret'], {}], [[], { LOOP_GUARDIAN_OTLP_TOKEN: 's3cret' }]] as const) {
      const r = await receiverProcess(ws, args, env);
      try {
        assert.equal((await post(r.port, body, json)).status, 401);
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer wrong' })).status, 401);
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer s3cret-and-more' })).status, 401);
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer s3cret' })).status, 200);
        // DNS rebinding: a page at evil.example resolved to 127.0.0.1 sends its own Host.
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer s3cret', Host: `evil.example:${r.port}` })).status, 403);
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer s3cret', Host: `localhost:${r.port}` })).status, 200);
        assert.equal((await post(r.port, body, { ...json, Authorization: 'Bearer s3cret', Origin: 'http://evil.example' })).status, 403);
      } finally {
        await r.stop();
      }
    }
    // Without a token, the Host and Origin checks still hold.
    const open = await receiverProcess(ws);
    try {
      assert.equal((await post(open.port, body, { ...json, Host: `rebound.example:${open.port}` })).status, 403);
      assert.equal((await post(open.port, body, { ...json, Origin: 'https://example.com' })).status, 403);
      assert.equal((await post(open.port, body, json)).status, 200);
    } finally {
      await open.stop();
    }
  });

  it('events injected under a local session id never merge into it: the real halt stays a halt, the fake one is the sender\'s own', async () => {
    const ws = await tmpProject('lg-otlp-inject-');
    const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
    await fs.mkdir(path.dirname(log), { recursive: true });
    const failing = (i: number) => JSON.stringify({ v: 1, type: 'tool', session: 'sess-7', agent: 'claude-code', ts: `2026-11-26T04:00:0${i}Z`, tool: 'Bash', args: { command: 'npm run build-missing' }, ok: false, error: 'npm error Missing script: "build-missing"' });
    await fs.writeFile(log, `${[1, 2, 3].map(failing).join('\n')}\n`);
    const before = await cli(['scan', '--json'], { cwd: ws });
    assert.equal(before.code, 1, before.stderr);
    const r = await receiverProcess(ws);
    try {
      // Six successes under the real session's id, then a fake halt (three failures) under it too.
      const injected = [...Array.from({ length: 6 }, (_, i) => toolResult('sess-7', 10 + i, true)), ...[20, 21, 22].map((s) => toolResult('sess-7', s, false))];
      assert.equal((await post(r.port, JSON.stringify(request(injected, 'attacker')))).status, 200);
    } finally {
      await r.stop();
    }
    const after = await cli(['scan', '--json'], { cwd: ws });
    assert.equal(after.code, 1, after.stderr);
    const incidents = (JSON.parse(after.stdout) as { incidents: { session: string; action: string; active: boolean }[] }).incidents;
    const real = incidents.find((i) => i.session === 'sess-7');
    assert.ok(real, JSON.stringify(incidents));
    assert.equal(real.action, 'halt');
    assert.equal(real.active, true, 'the real halt is not made "over" by injected successes');
    for (const i of incidents.filter((x) => x !== real)) assert.match(i.session, /^otlp\/claude-code@attacker\//);
  });
});

describe('issue 32: the exporter against a broken network', function () {
  this.timeout(120_000);

  const failing = (i: number) => JSON.stringify({ v: 1, type: 'tool', session: 'sess-9', agent: 'claude-code', ts: `2026-11-26T04:00:0${i}Z`, tool: 'Bash', args: { command: 'npm run build-missing' }, ok: false, error: 'npm error Missing script: "build-missing"' });

  async function haltingWorkspace(): Promise<string> {
    const ws = await tmpProject('lg-otel-net-');
    const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
    await fs.mkdir(path.dirname(log), { recursive: true });
    await fs.writeFile(log, `${[1, 2, 3].map(failing).join('\n')}\n`);
    return ws;
  }

  /** A loopback server answering as `answer` says; what it received, kept. */
  async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<{ url: string; got: string[]; close: () => Promise<void> }> {
    const got: string[] = [];
    const s = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.url === '/v1/logs') got.push(body);
        answer(req, res, body);
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
      got,
      close: () =>
        new Promise((r) => {
          s.close(() => r());
          s.closeAllConnections();
        }),
    };
  }

  async function refusingUrl(): Promise<string> {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    return `http://127.0.0.1:${port}`;
  }

  const queued = async (ws: string) => JSON.parse(await fs.readFile(path.join(ws, OTEL_QUEUE), 'utf8')) as QueuedRecord[];

  it('refused, hanging, 500, 503, slow: never "sent", the record kept; scan waits at most 2 s; sent when the collector is back', async () => {
    const ws0 = await haltingWorkspace();
    const t0 = performance.now();
    await cli(['scan'], { cwd: ws0 });
    const baseline = performance.now() - t0;
    const hanging = await server(() => undefined);
    const e500 = await server((_q, res) => res.writeHead(500).end());
    const e503 = await server((_q, res) => res.writeHead(503, { 'Retry-After': '1' }).end());
    const slow = await server((_q, res) => setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'), 4000));
    const good = await server((_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
    try {
      const cases: [string, string][] = [['refused', await refusingUrl()], ['hanging', hanging.url], ['500', e500.url], ['503', e503.url], ['slow', slow.url]];
      for (const [what, url] of cases) {
        const ws = await haltingWorkspace();
        const t = performance.now();
        const run = await cli(['scan'], { cwd: ws, env: { OTEL_EXPORTER_OTLP_ENDPOINT: url } });
        const took = performance.now() - t;
        console.log(`      ${what}: scan ${took.toFixed(0)} ms (${baseline.toFixed(0)} ms without an endpoint): ${run.stderr.trim().split('\n').find((l) => l.startsWith('OpenTelemetry')) ?? ''}`);
        assert.equal(run.code, 1, run.stderr);
        assert.doesNotMatch(run.stderr, /, sent/, what);
        assert.match(run.stderr, /OpenTelemetry: 1 loop\(s\) opened, 0 grew, 0 ended, not sent \(.+\): 1 record\(s\) wait for the next scan/, what);
        assert.ok(took - baseline <= 2000, `${what}: scan took ${took.toFixed(0)} ms, ${baseline.toFixed(0)} ms without an endpoint`);
        assert.deepEqual((await queued(ws)).map((q) => q.state), ['opened'], what);
        // The collector is back: the next scan (a new process: the queue survived) sends it, and says so.
        const back = await cli(['scan'], { cwd: ws, env: { OTEL_EXPORTER_OTLP_ENDPOINT: good.url } });
        assert.match(back.stderr, /OpenTelemetry: 0 loop\(s\) opened, 0 grew, 0 ended, sent \(with 1 left from before\)/, `${what}: ${back.stderr}`);
        assert.deepEqual(await queued(ws), [], what);
      }
      assert.equal(good.got.length, cases.length);
      for (const body of good.got) assert.match(body, /"loop_guardian.incident.state","value":\{"stringValue":"opened"\}/);
    } finally {
      await Promise.all([hanging, e500, e503, slow, good].map((s) => s.close()));
    }
  });

  it('one publisher at a time per workspace: quick scans against a hanging endpoint do not pile up', async () => {
    const ws = await haltingWorkspace();
    const hanging = await server(() => undefined);
    try {
      const t = performance.now();
      const runs = await Promise.all(Array.from({ length: 5 }, () => cli(['scan'], { cwd: ws, env: { OTEL_EXPORTER_OTLP_ENDPOINT: hanging.url } })));
      const took = performance.now() - t;
      const published = runs.filter((x) => /not sent/.test(x.stderr)).length;
      const leftOver = runs.filter((x) => /another publisher is at work/.test(x.stderr)).length;
      console.log(`      5 scans at once on a hanging endpoint: ${published} published, ${leftOver} left it to the next, ${took.toFixed(0)} ms in all; ${hanging.got.length} request(s) reached it`);
      assert.equal(published + leftOver, 5);
      assert.ok(published >= 1);
      assert.ok(hanging.got.length <= published);
    } finally {
      await hanging.close();
    }
  });

  it('the queue is bounded: past MAX_QUEUED records the oldest go, and are counted', () => {
    const record = (i: number): QueuedRecord => ({ state: 'opened', record: { body: { stringValue: `r${i}` } } });
    const x = new IncidentExporter({ source: 'cli', workspace: '/w', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, queued: Array.from({ length: MAX_QUEUED + 200 }, (_, i) => record(i)) });
    assert.equal(x.pending().length, MAX_QUEUED);
    assert.equal(x.dropped, 200);
    assert.deepEqual(x.pending()[0]?.record, { body: { stringValue: 'r200' } });
  });
});
