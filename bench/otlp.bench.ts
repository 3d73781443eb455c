/**
 * npm run bench (third part), issue 26: the OTLP receiver at scale, on this machine. The OTLP/HTTP
 * traffic of BENCH_OTLP_SESSIONS (10,000) concurrent Claude Code sessions, split by session over
 * BENCH_OTLP_RECEIVERS (2) receivers on loopback as the Collector's load-balancing exporter would
 * (each session always to the same receiver), each receiver the shipped CLI (`loop-guardian otlp`)
 * in a process of its own, sent as fleet.md's Collectors send it (protobuf, gzip, each session's
 * records under a resource of their own). Every session makes BENCH_OTLP_CALLS (12) tool calls, its records
 * interleaved with all the other sessions' in batches of BENCH_OTLP_BATCH (200) records (a
 * Collector's batches mix sessions); one session in ten loops (the same failing command three
 * times: a halt at its third record). Then new sessions, 10,000 at a time, four times, the ones
 * before them gone: the receiver keeps a bounded number of sessions (its engine's 10,000), so its
 * memory must not grow. Never more sessions at once than a receiver keeps: past it, each new one
 * forgets one still going, and its loop is missed (a fleet sized as fleet.md says stays within it).
 *
 * Printed, for the first sessions (each receiver just started, its code compiled as it goes) and
 * sustained (the second round after them, each receiver past its bound): records and events per second per receiver,
 * and per second of its own CPU; the time from sending a loop's third record to its finding on the
 * receiver's stdout (p50, p99). Then the receivers' resident memory before, with 10,000 sessions and
 * after the second and the fourth round (per 1,000 sessions); and what a fleet of 100,000 agents needs, by the sustained
 * throughput and by the session bound.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as zlib from 'node:zlib';
import { hash53 } from '../src/core/canonical';
import { encodeLogsProtobuf } from '../src/watch/otlpProtobuf';
import { quantile } from './stats';

const CLI = process.env.BENCH_OTLP_CLI ?? path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const SESSIONS = Number(process.env.BENCH_OTLP_SESSIONS ?? 10_000);
const RECEIVERS = Number(process.env.BENCH_OTLP_RECEIVERS ?? 2);
const CALLS = Number(process.env.BENCH_OTLP_CALLS ?? 12);
const BATCH = Number(process.env.BENCH_OTLP_BATCH ?? 200);
const JSON_ENCODING = process.env.BENCH_OTLP_ENCODING === 'json';
const IN_FLIGHT = 4;
/** What one agent sends, for the fleet estimate: a tool call every 5 s (two events: the call, its result). */
const AGENT_EVENTS_PER_S = 0.4;
const FLEET = 100_000;

interface Receiver {
  readonly child: ChildProcess;
  readonly port: number;
  readonly agent: http.Agent;
  /** When each session's halt was seen on stdout. */
  readonly halts: Map<string, number>;
}

function start(): Promise<Receiver> {
  const child = spawn(process.execPath, [...(process.env.BENCH_OTLP_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_OTLP_PROF] : []), CLI, 'otlp', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const halts = new Map<string, number>();
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.includes('"halt"')) continue;
      const f = JSON.parse(line) as { action: string; session: string };
      // A received session is named by its origin (otlp/<service>@<host>/<id>): keyed here by the id sent.
      const id = f.session.replace(/^otlp\/[^/]*\//, '');
      if (f.action === 'halt' && !halts.has(id)) halts.set(id, performance.now());
    }
  });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
      if (m) resolve({ child, port: Number(m[1]), agent: new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT }), halts });
    });
    child.once('exit', (code) => reject(new Error(`receiver ended (${code}): ${err}`)));
  });
}

/** The process's CPU time so far (user + system), in seconds (`/proc/<pid>/stat`, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const kv = (key: string, v: string | number) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });

/**
 * Record `k` of session `s`, with the attributes Claude Code gives a tool_result
 * (../shared/docs/live-agents.md, "Telemetry"): a looping session's first three fail the same way;
 * the rest are different calls that pass. Its session id as sent: the front Collector lifts it into
 * the resource (below).
 */
function record(s: string, looping: boolean, k: number, ms: number) {
  const failing = looping && k < 3;
  const command = failing ? 'make deploy' : `npm test -- --grep case-${k}`;
  return {
    timeUnixNano: `${ms}000000`,
    attributes: [
      kv('event.name', 'tool_result'),
      kv('event.timestamp', new Date(ms).toISOString()),
      kv('session.id', s),
      kv('prompt.id', `prompt-${s}`),
      kv('event.sequence', k + 1),
      kv('tool_name', 'Bash'),
      kv('tool_use_id', `toolu_${s}_${k}`),
      kv('success', failing ? 'false' : 'true'),
      kv('duration_ms', 40 + k),
      ...(failing ? [kv('error', 'Shell command failed')] : []),
      kv('tool_parameters', JSON.stringify({ bash_command: command.split(' ')[0], full_command: command, description: 'Run it' })),
      kv('tool_input', JSON.stringify({ command, description: 'Run it' })),
    ],
  };
}

/**
 * A batch as the guardian's sidecar Collector sends it (docs/fleet.md): the front Collector's
 * groupbyattrs has lifted each record's `session.id` into a resource of its own (one per session in
 * the batch), and otlphttp sends it in protobuf (its default encoding), gzipped (`compression: gzip`).
 * With BENCH_OTLP_ENCODING=json, the same records in JSON, not compressed.
 */
function body(batch: readonly { s: string; looping: boolean; k: number }[], host: string, ms: number): Buffer {
  const bySession = new Map<string, ReturnType<typeof record>[]>();
  batch.forEach((q, i) => {
    const r = record(q.s, q.looping, q.k, ms + i);
    const list = bySession.get(q.s) ?? [];
    list.push({ ...r, attributes: r.attributes.filter((a) => a.key !== 'session.id') });
    bySession.set(q.s, list);
  });
  const request = { resourceLogs: [...bySession].map(([s, logRecords]) => ({ resource: { attributes: [kv('service.name', 'claude-code'), kv('host.name', host), kv('session.id', s)] }, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords }] })) };
  return JSON_ENCODING ? Buffer.from(JSON.stringify(request)) : zlib.gzipSync(encodeLogsProtobuf(request));
}

function post(r: Receiver, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = JSON_ENCODING ? { 'Content-Type': 'application/json' } : { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' };
    const req = http.request({ host: '127.0.0.1', port: r.port, path: '/v1/logs', method: 'POST', agent: r.agent, headers: { ...headers, 'Content-Length': body.byteLength } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The receiver a session goes to: a hash of its id, as the load-balancing exporter routes by a hash
 * of its routing key. Every receiver gets its share of the looping sessions (by the index's parity,
 * one receiver got them all).
 */
function routed(session: string, receivers: number): number {
  return hash53(session) % receivers;
}

/** Sends every record of `sessions` to their receivers, interleaved; returns the seconds each receiver took and when each loop's third record went. */
async function drive(receivers: readonly Receiver[], sessions: readonly string[]): Promise<{ seconds: number[]; records: number[]; sentThird: Map<string, number> }> {
  const sentThird = new Map<string, number>();
  const seconds: number[] = [];
  const records: number[] = [];
  await Promise.all(
    receivers.map(async (r, ri) => {
      const mine = sessions.filter((s) => routed(s, receivers.length) === ri);
      const queue: { s: string; looping: boolean; k: number }[] = [];
      for (let k = 0; k < CALLS; k++) for (const s of mine) queue.push({ s, looping: Number(s.split('-')[1]) % 10 === 0, k });
      records[ri] = queue.length;
      // The requests are written before the clock starts: a client busy writing them (one process
      // for both receivers' traffic) read the receivers' findings late, and its lag was counted as
      // theirs.
      const now = Date.now();
      const bodies: { body: Buffer; thirds: string[] }[] = [];
      for (let i = 0; i < queue.length; i += BATCH) {
        const batch = queue.slice(i, i + BATCH);
        bodies.push({ body: body(batch, `host-${ri}`, now + i), thirds: batch.filter((q) => q.looping && q.k === 2).map((q) => q.s) });
      }
      const t0 = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < bodies.length) {
          const { body: sending, thirds } = bodies[next++] as (typeof bodies)[number];
          const sent = performance.now();
          for (const s of thirds) sentThird.set(s, sent);
          await post(r, sending);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      seconds[ri] = (performance.now() - t0) / 1000;
    }),
  );
  return { seconds, records, sentThird };
}

interface Measured {
  readonly perReceiver: readonly { records: number; events: number; perCpu: number; cpu: number }[];
  /** From sending each loop's third record to its halt on stdout, ms, sorted. */
  readonly latencies: number[];
  readonly missing: number;
}

/** Drives the sessions through the receivers; their rates (by the clock, and by each receiver's own CPU) and each loop's time to its halt. */
async function measured(receivers: readonly Receiver[], sessions: readonly string[]): Promise<Measured> {
  const cpu0 = receivers.map((r) => cpuSeconds(r.child.pid!));
  const run = await drive(receivers, sessions);
  // What each receiver's own work took: on a machine shared with the client and the other
  // receiver, events per second of its CPU is what it would take with a core to itself.
  const cpu = receivers.map((r, i) => cpuSeconds(r.child.pid!) - (cpu0[i] as number));
  // Halts still on their way: read within a moment.
  await new Promise((r) => setTimeout(r, 200));
  const latencies: number[] = [];
  let missing = 0;
  for (const [s, sent] of run.sentThird) {
    const seen = receivers.map((r) => r.halts.get(s)).find((t) => t !== undefined);
    if (seen === undefined) missing++;
    else latencies.push(seen - sent);
  }
  latencies.sort((a, b) => a - b);
  const perReceiver = run.seconds.map((sec, i) => {
    const records = run.records[i] as number;
    const own = cpu[i] as number;
    // Each record is two events: the call and its result.
    return { records: records / sec, events: (2 * records) / sec, perCpu: (2 * records) / own, cpu: own };
  });
  return { perReceiver, latencies, missing };
}

async function main(): Promise<void> {
  const receivers: Receiver[] = [];
  for (let i = 0; i < RECEIVERS; i++) receivers.push(await start());
  try {
    const before = receivers.map((r) => rssMb(r.child.pid!));
    const first = Array.from({ length: SESSIONS }, (_, i) => `s-${i}`);
    const run1 = await measured(receivers, first);
    await new Promise((r) => setTimeout(r, 500));
    const with10k = receivers.map((r) => rssMb(r.child.pid!));
    // Sessions coming and going, as many as the first at a time, four rounds: past its 10,000 a receiver
    // forgets the oldest (those of the rounds before). The second round is the receivers' sustained
    // rate: their code compiled, their sessions past the bound.
    const rounds: number[][] = [];
    let sustained: Measured | undefined;
    for (let round = 1; round <= 4; round++) {
      const next = Array.from({ length: SESSIONS }, (_, i) => `s-${SESSIONS * round + i}`);
      const m = await measured(receivers, next);
      if (round === 2) sustained = m;
      if (round % 2 === 1) continue;
      await new Promise((r) => setTimeout(r, 500));
      rounds.push(receivers.map((r) => rssMb(r.child.pid!)));
    }
    const warm = sustained as Measured;
    const eventsPerS = Math.min(...warm.perReceiver.map((p) => p.events));
    const mbPer1000 = Math.max(...with10k.map((m, i) => m - (before[i] as number))) / (SESSIONS / RECEIVERS / 1000);
    const byThroughput = Math.ceil((FLEET * AGENT_EVENTS_PER_S) / (eventsPerS * 0.5));
    const bySessions = Math.ceil(FLEET / 10_000);
    const said = (m: Measured) => [
      ...m.perReceiver.map((p, i) => `    receiver ${i + 1}: ${Math.round(p.records)} records/s, ${Math.round(p.events)} events/s; ${Math.round(p.perCpu)} events per second of its own CPU (${p.cpu.toFixed(2)} s)`),
      `    a loop's third record sent → its halt on the receiver's stdout: p50 ${quantile(m.latencies, 0.5).toFixed(1)} ms, p99 ${quantile(m.latencies, 0.99).toFixed(1)} ms (${m.latencies.length} loops${m.missing > 0 ? `, ${m.missing} NOT FOUND` : ''})`,
    ];
    const lines = [
      '',
      `  OTLP receivers: ${SESSIONS} concurrent sessions × ${CALLS} calls, ${RECEIVERS} receivers (split by session), batches of ${BATCH} records (${JSON_ENCODING ? 'JSON' : 'protobuf, gzip'}, a resource per session), ${IN_FLIGHT} requests in flight per receiver`,
      `  the first ${SESSIONS} sessions, each receiver just started (its code compiled as it goes):`,
      ...said(run1),
      `  sustained: the second ${SESSIONS} sessions after them, each receiver past its 10,000 (the oldest forgotten):`,
      ...said(warm),
      `  resident memory per receiver: ${before.map((m) => m.toFixed(0)).join(' / ')} MB idle, ${with10k.map((m) => m.toFixed(0)).join(' / ')} MB with its ${SESSIONS / RECEIVERS} sessions (about ${mbPer1000.toFixed(1)} MB per 1,000 sessions); after ${(2 * SESSIONS) / RECEIVERS} more sessions each (the oldest forgotten past 10,000): ${rounds[0]!.map((m) => m.toFixed(0)).join(' / ')} MB, after ${(2 * SESSIONS) / RECEIVERS} more again: ${rounds[1]!.map((m) => m.toFixed(0)).join(' / ')} MB`,
      `  a fleet of ${FLEET} agents (${AGENT_EVENTS_PER_S} events/s each, receivers at half their sustained rate): ${byThroughput} receiver(s) by throughput, ${bySessions} by the 10,000 sessions a receiver keeps: ${Math.max(byThroughput, bySessions)}`,
    ];
    console.log(lines.join('\n'));
    if (run1.missing + warm.missing > 0) process.exitCode = 1;
  } finally {
    for (const r of receivers) {
      r.agent.destroy();
      r.child.kill('SIGTERM');
    }
  }
}

void main();
