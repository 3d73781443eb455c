import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from './install';

/** The project's CLI as a user runs it after `npm run build`. */
export const CLI = path.join(ROOT, 'dist', 'cli.js');

/**
 * One live run's world: its own HOME (every agent keeps its settings, trust and transcripts
 * there, and the guardian its launcher), and a git workspace whose `package.json` lacks the
 * script the scripted model asks for, so that `npm run build-missing` fails the same way each time.
 */
export interface Sandbox {
  readonly dir: string;
  readonly home: string;
  readonly ws: string;
  /** The environment every process of this run gets: HOME, no proxies, no colours, nothing of the caller's agents. */
  readonly env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/** Variables of the caller that would point an agent elsewhere (its own keys, config homes, a proxy). */
const DROPPED = /^(ANTHROPIC_|CLAUDE_|CODEX_|OPENAI_|GEMINI_|GOOGLE_|COPILOT_|GH_|GITHUB_|CLINE_|XDG_|LOOP_GUARDIAN_|HTTPS?_PROXY|NO_PROXY|npm_)/i;

export function makeSandbox(name: string): Sandbox {
  const dir = mkdtempSync(path.join(os.tmpdir(), `lg-live-${name}-`));
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(ws, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!DROPPED.test(k) && v !== undefined) env[k] = v;
  Object.assign(env, { HOME: home, USERPROFILE: home, NO_COLOR: '1', FORCE_COLOR: '0', TERM: 'dumb', CI: 'true', NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' });
  writeFileSync(path.join(ws, 'package.json'), `${JSON.stringify({ name: 'live-project', version: '1.0.0', private: true, scripts: { test: 'node test.js' } }, null, 2)}\n`);
  writeFileSync(path.join(ws, 'test.js'), "console.log('tests pass');\n");
  git(ws, env, ['init', '-q']);
  git(ws, env, ['-c', 'user.email=live@test', '-c', 'user.name=live', 'add', '-A']);
  git(ws, env, ['-c', 'user.email=live@test', '-c', 'user.name=live', 'commit', '-qm', 'init']);
  return {
    dir,
    home,
    ws,
    env,
    cleanup: () => {
      killLeftovers(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function git(cwd: string, env: NodeJS.ProcessEnv, args: string[]): void {
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** `loop-guardian <args>` in the workspace (or in `cwd`, a folder of it), as the user runs it. */
export function guardian(sb: Sandbox, args: readonly string[], cwd = '.'): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: path.join(sb.ws, cwd), env: sb.env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** Ended by the harness's time limit, not by the agent. */
  readonly timedOut: boolean;
}

/**
 * Runs an agent's CLI to its end (stdin from /dev/null), killed with its whole process group at
 * the time limit. Asynchronous: the scripted model answers on this process's event loop.
 */
export function runAgent(bin: string, args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // PWD follows the working folder: opencode and Kilo take their project from $PWD, not from the
    // process's working directory, and the caller's PWD would send their commands to its folder.
    const child = spawn(bin, args, { cwd: opts.cwd, env: { ...opts.env, PWD: opts.cwd }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 3000).unref();
    }, opts.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever it left behind in its group (a shell, a daemon of its own) goes with it.
      kill('SIGKILL');
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

/** Every line of a JSON Lines text that parses, in order. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l) as unknown;
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? [v as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

export function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/**
 * Ends every process still running for a sandbox: one whose command line names it (an agent's
 * daemon that outlives its CLI, as Cline's task hub does, started in a session of its own).
 */
export function killLeftovers(dir: string): number {
  let killed = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes(dir)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // Gone already.
    }
  }
  return killed;
}
