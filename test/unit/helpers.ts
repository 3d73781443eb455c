import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GuardianConfig } from '../../src/core/config';
import { configSchema } from '../../src/core/configSchema';
import { Engine } from '../../src/core/engine';
import { validateEvent, type LocatedEvent } from '../../src/core/events';
import type { Finding } from '../../src/core/finding';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');
export const SEEDS = path.resolve(ROOT, '..', 'shared', 'seeds');
/** Real agents' logs (read in place, never copied into the project). */
export const FIXTURES = path.resolve(ROOT, '..', 'shared', 'fixtures');

/** Whether `../shared` (the seed documents and the real-transcript corpus) is beside this checkout. */
export const HAS_SHARED = existsSync(SEEDS) && existsSync(FIXTURES);

/**
 * A suite that reads `../shared`. In a plain clone, where it is not there, the suite is skipped
 * with one line saying what and why; in CI (`CI=true`), which must run it, that is a failure.
 */
export function describeShared(title: string, needs: string, body: () => void): void {
  if (HAS_SHARED) {
    describe(title, body);
    return;
  }
  const why = `needs ${needs} from ../shared, which is not beside this checkout`;
  if (process.env.CI === 'true') {
    describe(title, () => it(why, () => assert.fail(`${title}: ${why}; CI must run it`)));
    return;
  }
  console.log(`  skipped: ${title} (${why})`);
  // Not `describe.skip(title, body)`: mocha would still run the body, which reads ../shared.
  describe.skip(title, () => it(why, () => undefined));
}

/** A config with overrides, validated like the config file. */
export function config(overrides: Record<string, unknown> = {}): GuardianConfig {
  return configSchema.parse(overrides);
}

/** Validated events, located as lines 1..n of `file`. */
export function located(events: readonly Record<string, unknown>[], file = 'log.jsonl'): LocatedEvent[] {
  return events.map((raw, i) => {
    const verdict = validateEvent({ v: 1, ...raw });
    if (!verdict.ok) throw new Error(`test event ${i + 1} invalid: ${verdict.field}: ${verdict.reason}`);
    return { event: verdict.event, ref: { file, line: i + 1, event: i + 1 } };
  });
}

/** Every finding raised while feeding the events (and flushing at the end). */
export function run(events: readonly Record<string, unknown>[], cfg: GuardianConfig = config()): { findings: Finding[]; engine: Engine } {
  const engine = new Engine(cfg);
  const findings: Finding[] = [];
  for (const e of located(events)) findings.push(...engine.push(e));
  findings.push(...engine.flush());
  return { findings, engine };
}

export function only(findings: readonly Finding[], signal: Finding['signal']): Finding[] {
  return findings.filter((f) => f.signal === signal);
}

/** `n` copies of an event. */
export function times<T>(n: number, make: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

export async function tmpdir(prefix = 'lg-'): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/** A temporary folder that is a project (it has `.git`): where the hooks write their records. */
export async function tmpProject(prefix = 'lg-'): Promise<string> {
  const ws = await tmpdir(prefix);
  await fs.mkdir(path.join(ws, '.git'));
  return ws;
}

/** The lines of a JSONL file, parsed. */
export async function readJsonl(file: string): Promise<Record<string, unknown>[]> {
  return (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every line the hooks wrote under the workspace's `.tmp/current/logs`, file by file in name order. */
export async function hookLogLines(ws: string): Promise<Record<string, unknown>[]> {
  const dir = path.join(ws, '.tmp', 'current', 'logs');
  const out: Record<string, unknown>[] = [];
  for (const f of (await fs.readdir(dir)).sort()) out.push(...(await readJsonl(path.join(dir, f))));
  return out;
}

export async function write(root: string, rel: string, text: string): Promise<string> {
  const file = path.join(root, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
  return file;
}

export function jsonl(events: readonly Record<string, unknown>[]): string {
  return events.map((e) => JSON.stringify({ v: 1, ...e })).join('\n') + '\n';
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** How long the process ran, in ms. */
  ms: number;
  /** Killed (SIGKILL) because it ran past `timeoutMs`. */
  timedOut: boolean;
}

/**
 * The per-user launcher folder the CLI under test writes to (`init`): a temporary one, so that
 * tests never touch the person's own `~/.loop-guardian`.
 */
export const TEST_GUARDIAN_HOME = mkdtempSync(path.join(os.tmpdir(), 'lg-home-'));
process.env.LOOP_GUARDIAN_HOME = TEST_GUARDIAN_HOME;

/** Runs the built CLI as a real child process; past `timeoutMs` (default 60 s) it is killed and reported as timed out. */
export function cli(args: readonly string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  return runProcess(process.execPath, [CLI, ...args], { ...opts, cwd: opts.cwd ?? ROOT, env: { ...process.env, NO_COLOR: '1', ...opts.env } });
}

/** Runs a real process, `input` on its stdin; past `timeoutMs` (default 60 s) it is killed and reported as timed out. */
export function runProcess(file: string, args: readonly string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(file, [...args], { cwd: opts.cwd, env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A process may end before it reads all of its input: what it answered is the result.
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - started, timedOut });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The hook as an agent runs it: `loop-guardian hook <agent> --workspace <ws> [extra]`, the payload on stdin (JSON, unless already text). */
export function runHook(ws: string, agent: string, input: unknown, extra: readonly string[] = [], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  return cli(['hook', agent, '--workspace', ws, ...extra], { input: typeof input === 'string' ? input : JSON.stringify(input), cwd: ws, ...opts });
}

/** A Claude Code hook answer refusing the call because STOP_ALL says STOP. */
export const refusedByStop = (r: CliRun): boolean => r.code === 0 && /"permissionDecision":"deny"/.test(r.stdout) && /STOP_ALL is set to STOP/.test(r.stdout);

/** Every file under a folder, relative, sorted. */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const d of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) await walk(p);
      else out.push(path.relative(root, p));
    }
  };
  await walk(root);
  return out.sort();
}
