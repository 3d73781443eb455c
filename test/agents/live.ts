import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { LiveAgent } from './drivers';
import { ensureAgent } from './install';
import { startScriptedModel, type ModelRequest, type Script, type Turn } from './model';
import { guardian, killLeftovers, makeSandbox, runAgent, type RunResult, type Sandbox } from './sandbox';

/** What a live run gives a test to assert on: the agent's own output, the model's requests, the sandbox. */
export interface LiveRun {
  readonly agent: LiveAgent;
  readonly sb: Sandbox;
  readonly result: RunResult;
  /** Every request that offered tools, in order. */
  readonly turns: readonly ModelRequest[];
  /** The turn STOP_ALL was written at (mid-run STOP), if it was. */
  readonly stopAt?: number;
}

export interface LiveOptions {
  /** Install the hook with `loop-guardian init <agent>` first (default true). */
  readonly hook?: boolean;
  /** STOP_ALL's text before the run. */
  readonly stopBefore?: string;
  /** Write `STOP` to STOP_ALL as this turn arrives (before the model answers it). */
  readonly stopAtTurn?: number;
  /** Files to write in the workspace before the run. */
  readonly files?: Readonly<Record<string, string>>;
  /** `.github/guardian/config.json`'s content, when the run needs one. */
  readonly config?: unknown;
  readonly prompt?: string;
  readonly timeoutMs?: number;
  /** The most turns the model answers with tool calls; past it, it answers "Stopping here." (a runaway guard of the harness, not the agent's). */
  readonly maxTurns?: number;
  /** Prepares the sandbox further after the agent's own set-up and the hook (a test's trust steps, a variable). */
  readonly before?: (sb: Sandbox) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** Changes the agent's arguments (a run without a flag the driver passes). */
  readonly args?: (args: string[]) => string[];
  /** A sandbox an earlier run made: the same HOME, workspace and hook (a conversation resumed); it is set up once, by the first run. */
  readonly sandbox?: Sandbox;
  /** Another agent runs in the same sandbox at the same time: what this run leaves running is ended by the caller, once both are done. */
  readonly shared?: boolean;
  /** The folder the agent is started in, relative to the workspace (created): a subfolder, a nested repository. Default the workspace. */
  readonly cwd?: string;
  /** Something done as a turn arrives, before the model answers it (a `loop-guardian stop` run elsewhere). */
  readonly atTurn?: { readonly turn: number; readonly run: (sb: Sandbox) => void };
}

export const HARNESS_LIMIT = 'Stopping here: the harness turn limit.';

/**
 * One headless run of an agent's own CLI against a scripted model, in a fresh sandbox. The
 * sandbox is kept for the test's assertions; `run.sb.cleanup()` removes it.
 */
export async function liveRun(agent: LiveAgent, script: (turn: Turn, agent: LiveAgent, sb: Sandbox) => ReturnType<Script>, opts: LiveOptions = {}): Promise<LiveRun> {
  const bin = ensureAgent(agent.pkg);
  const again = opts.sandbox !== undefined;
  const sb = opts.sandbox ?? makeSandbox(agent.pkg.id);
  const maxTurns = opts.maxTurns ?? 12;
  const model = await startScriptedModel((turn) => (turn.index > maxTurns ? { text: HARNESS_LIMIT } : script(turn, agent, sb)));
  try {
    agent.prepare(sb, model.url);
    for (const [rel, text] of Object.entries(opts.files ?? {})) write(sb.ws, rel, text);
    if (opts.config !== undefined) write(sb.ws, '.github/guardian/config.json', JSON.stringify(opts.config, null, 2));
    if (opts.hook !== false && !again) {
      const init = guardian(sb, ['init', agent.pkg.id]);
      if (init.code !== 0) throw new Error(`loop-guardian init ${agent.pkg.id} failed (${init.code}): ${init.stderr}${init.stdout}`);
    }
    const cwd = path.join(sb.ws, opts.cwd ?? '.');
    mkdirSync(cwd, { recursive: true });
    opts.before?.(sb);
    if (opts.stopBefore !== undefined) write(sb.ws, '.github/guardian/STOP_ALL', opts.stopBefore);
    let stopAt: number | undefined;
    if (opts.stopAtTurn !== undefined) {
      model.onTurn((t) => {
        if (t.turn === opts.stopAtTurn) {
          write(sb.ws, '.github/guardian/STOP_ALL', `STOP ${new Date().toISOString()}\n`);
          stopAt = t.turn;
        }
      });
    }
    const at = opts.atTurn;
    if (at !== undefined) model.onTurn((t) => t.turn === at.turn && at.run(sb));
    const { args, env } = agent.command(sb, model.url, opts.prompt ?? 'Build the project with npm run build-missing until it works.', cwd);
    const result = await runAgent(bin, opts.args ? opts.args(args) : args, { cwd, env: { ...env, ...opts.env }, timeoutMs: opts.timeoutMs ?? 120_000 });
    // What the agent left running (Cline's task hub outlives its CLI): ended, so that no later run talks to it.
    if (opts.shared !== true) killLeftovers(sb.dir);
    return { agent, sb, result, turns: model.turns(), ...(stopAt !== undefined ? { stopAt } : {}) };
  } finally {
    await model.close();
  }
}

function write(root: string, rel: string, text: string): void {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** The turns after a given one: the model requests the agent made once it should have stopped. */
export function turnsAfter(run: LiveRun, turn: number): number {
  return run.turns.filter((t) => (t.turn ?? 0) > turn).length;
}

/** The first turn whose tool result (what the agent sent the model) matches. */
export function firstTurnWhere(run: LiveRun, test: RegExp): ModelRequest | undefined {
  return run.turns.find((t) => test.test(t.lastResult));
}

export function exists(sb: Sandbox, rel: string): boolean {
  return existsSync(path.join(sb.ws, rel));
}

if (require.main === module) {
  // A look at one agent by hand: `node out/test/agents/live.js <agent>` prints what the model saw.
  void (async () => {
    const { DRIVERS } = await import('./drivers');
    const agent = DRIVERS[process.argv[2] ?? 'claude'];
    if (agent === undefined) throw new Error('unknown agent');
    const run = await liveRun(agent, (turn, a) => (turn.index <= 6 ? a.shell('npm run build-missing', turn.tools) : { text: 'Done.' }), { maxTurns: 8 });
    for (const t of run.turns) console.log(`turn ${t.turn} [${t.format}] last result: ${t.lastResult.slice(0, 300).replace(/\n/g, '\\n')}`);
    console.log('exit', run.result.code, run.result.signal, `${run.result.ms} ms`, run.result.timedOut ? 'TIMED OUT' : '');
    console.log('stdout tail:', run.result.stdout.slice(-3000));
    console.log('stderr tail:', run.result.stderr.slice(-2000));
    console.log('sandbox:', run.sb.dir);
  })();
}
