/**
 * npm run bench: the pipeline's throughput against bare JSON.parse, its peak memory, and the cost of
 * one appended line at the end of a 100 MB log. Each phase runs in its own process so that its
 * peak memory (maxRSS) is its own.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultConfig } from '../src/core/config';
import { LogTail } from '../src/watch/logTail';
import { replayFile } from '../src/watch/replay';
import { Workspace } from '../src/state/workspace';
import { WorkspaceMonitor } from '../src/watch/workspaceMonitor';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const APPEND_MB = Number(process.env.BENCH_APPEND_MB ?? 100);

/** A deterministic, varied stream: 40 sessions, mostly distinct calls, some loops, every event type. */
export function* generate(n: number): Generator<string> {
  // mulberry32: small, deterministic, and without the correlated low bits of a plain LCG.
  let seed = 42;
  const rand = (k: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * k);
  };
  const tools = ['read_file', 'edit_file', 'bash', 'grep', 'list_dir', 'write_file', 'search', 'run_tests'];
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const session = `s${rand(40)}`;
    const ts = new Date(t0 + i * 250).toISOString();
    const r = rand(100);
    let e: Record<string, unknown>;
    if (r < 70) {
      const tool = tools[rand(tools.length)] as string;
      const loop = rand(50) === 0;
      const args = loop ? { path: 'src/stuck.ts' } : { path: `src/m${rand(2000)}/f${rand(50)}.ts`, line: rand(500) };
      e = rand(8) === 0 ? { type: 'tool', tool, args, error: `ENOENT: no such file ${args.path}` } : { type: 'tool', tool, args, ok: true, output: `result ${rand(1_000_000)}` };
    } else if (r < 78) e = { type: 'output', text: `step ${rand(100000)} done` };
    else if (r < 86) e = { type: 'attempt', task: `t${rand(300)}`, tier: 1 + rand(6), ok: rand(3) === 0, error: 'TypeError: x is undefined' };
    else if (r < 92) e = { type: 'status', task: `t${rand(300)}`, status: ['IN_PROGRESS', 'REVIEW', 'DONE'][rand(3)] };
    else if (r < 97) e = { type: 'usage', task: `t${rand(300)}`, used: rand(1200), budget: 1000 };
    else if (r < 99) e = { type: 'invocation', agent: 'bug-fixer', config: { priority: ['critical', 'high'][rand(2)] }, result: 'failed' };
    else e = { type: 'user', text: 'go on' };
    yield JSON.stringify({ v: 1, ts, session, ...e });
  }
}

export async function writeLines(file: string, lines: Iterable<string>, maxBytes = Infinity): Promise<{ lines: number; bytes: number }> {
  const out = createWriteStream(file);
  let count = 0;
  let bytes = 0;
  for (const l of lines) {
    if (bytes >= maxBytes) break;
    const s = `${l}\n`;
    bytes += Buffer.byteLength(s);
    count++;
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return { lines: count, bytes };
}

async function phaseFloor(file: string): Promise<object> {
  const start = process.hrtime.bigint();
  let n = 0;
  await new LogTail(file).read((text) => {
    JSON.parse(text);
    n++;
  });
  return { events: n, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

async function phasePipeline(file: string): Promise<object> {
  const start = process.hrtime.bigint();
  let findings = 0;
  const r = await replayFile(file, 'bench.jsonl', 'events', defaultConfig(), () => findings++);
  return { events: r.events, skipped: r.skipped, findings, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

async function phaseAppend(dir: string): Promise<object> {
  const rel = '.tmp/current/logs/big.jsonl';
  const file = path.join(dir, rel);
  const monitor = new WorkspaceMonitor(new Workspace(dir), defaultConfig());
  await monitor.poll();
  const samples: number[] = [];
  const line = `${JSON.stringify({ v: 1, session: 'live', type: 'tool', tool: 'bash', args: { cmd: 'npm test' }, ok: true, output: 'x' })}\n`;
  for (let i = 0; i < 300; i++) {
    await fs.appendFile(file, line);
    const t = process.hrtime.bigint();
    await monitor.pollFiles([rel]);
    samples.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  samples.sort((a, b) => a - b);
  const stat = await fs.stat(file);
  return { fileMB: Math.round(stat.size / 1e6), median_us: samples[samples.length >> 1], p99_us: samples[Math.floor(samples.length * 0.99)] };
}

async function child(phase: string, arg: string): Promise<void> {
  const result = phase === 'floor' ? await phaseFloor(arg) : phase === 'pipeline' ? await phasePipeline(arg) : await phaseAppend(arg);
  process.stdout.write(JSON.stringify({ ...result, maxRSS_MB: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

function runPhase(phase: string, arg: string): Record<string, number> {
  const out = execFileSync(process.execPath, [__filename, '--phase', phase, arg], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out) as Record<string, number>;
}

async function mainBench(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lg-bench-'));
  try {
    const file = path.join(dir, 'bench.jsonl');
    const gen = await writeLines(file, generate(EVENTS));
    console.log(`generated ${gen.lines} events, ${(gen.bytes / 1e6).toFixed(1)} MB`);
    const floor = runPhase('floor', file);
    const pipe = runPhase('pipeline', file);
    const floorRate = (floor.events as number) / (floor.seconds as number);
    const pipeRate = (pipe.events as number) / (pipe.seconds as number);
    const big = path.join(dir, 'ws', '.tmp/current/logs/big.jsonl');
    await fs.mkdir(path.dirname(big), { recursive: true });
    await writeLines(big, (function* () {
      for (;;) yield* generate(100_000);
    })(), APPEND_MB * 1e6);
    const append = runPhase('append', path.join(dir, 'ws'));
    const rows: [string, string][] = [
      ['floor: read + JSON.parse per line', `${Math.round(floorRate).toLocaleString('en')} events/s, peak RSS ${floor.maxRSS_MB} MB`],
      ['pipeline: read + parse + validate + all detectors', `${Math.round(pipeRate).toLocaleString('en')} events/s, peak RSS ${pipe.maxRSS_MB} MB (${pipe.findings} findings)`],
      ['pipeline / floor', `${(pipeRate / floorRate).toFixed(2)}`],
      [`one appended line at the end of a ${append.fileMB} MB log`, `median ${Math.round(append.median_us as number)} µs, p99 ${Math.round(append.p99_us as number)} µs (peak RSS ${append.maxRSS_MB} MB)`],
    ];
    const width = Math.max(...rows.map((r) => r[0].length));
    for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const phaseAt = process.argv.indexOf('--phase');
  if (phaseAt > 0) void child(process.argv[phaseAt + 1] as string, process.argv[phaseAt + 2] as string);
  else void mainBench();
}
