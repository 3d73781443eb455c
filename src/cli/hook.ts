import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { HOOKED_AGENTS, hookedAgent, type HookedAgent } from '../agents/hooks';
import type { DenyStyle, HookReply } from '../agents/hook';
import { answerHook, type HookIo } from '../hook/pipeline';
import { PATHS } from '../state/workspace';
import { readToEnd } from '../watch/streamText';
import { readStdinByHandle } from './stdinHandle';

/*
 * `loop-guardian hook AGENT`: the face the agents run on every call. Its arguments read here, the
 * call answered by the hook's pipeline (src/hook/pipeline.ts).
 */

export type { HookIo } from '../hook/pipeline';

/** The most of stdin the hook reads: a hook call is a few KB; anything past this is not one. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

const HOOK_USAGE = `Usage: loop-guardian hook ${HOOKED_AGENTS.map((a) => a.id).join('|')} [--workspace DIR] [--deny-with json|exit2]

The enforcing hook: reads the agent's hook JSON on stdin, records the call under
${PATHS.logsDir}/, and refuses it when STOP_ALL says STOP (every call), PAUSE (new
subagents and tasks), or when it would trip a halt signal. After a call it records the outcome.
Before a prompt (where the agent has a prompt hook) it records the prompt and refuses it under
STOP, or when the same prompt keeps getting the same answer (repeated-prompt).

  --workspace DIR   the workspace (default: the project of the folder the agent names in
                    its environment, else of the hook's cwd: the nearest folder at or above
                    it holding .github/guardian, else an agent's registration of this hook,
                    else .git)
  --deny-with       json (default): the agent's JSON decision; exit2: exit code 2, reason on stderr

It never blocks by failing: on any error of its own it lets the call run and logs the error.
Exit codes: 0 (allowed, or refused in JSON), 2 (refused, with --deny-with exit2 or for an agent
that reads only exit codes), 1 usage error (0 for agents that refuse a call whose hook fails).
`;

interface HookOptions {
  readonly values: { workspace?: string; 'deny-with'?: string; help?: boolean };
  readonly positionals: string[];
}

/**
 * The hook's arguments as `parseArgs` (strict) reads them. The forms agents run it with (the agent,
 * `--workspace DIR`, `--deny-with STYLE`) are read here, without loading Node's parser, which cost
 * the hook a millisecond; any other form goes to it, with its errors. (Exported for the test that
 * holds the two together.)
 */
export function hookOptions(argv: readonly string[]): HookOptions {
  const values: { workspace?: string; 'deny-with'?: string } = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = argv[i + 1];
    if (!arg.startsWith('-')) {
      positionals.push(arg);
    } else if ((arg === '--workspace' || arg === '--deny-with') && value !== undefined && !value.startsWith('-')) {
      values[arg === '--workspace' ? 'workspace' : 'deny-with'] = value;
      i++;
    } else return parseArgs({ args: [...argv], options: { workspace: { type: 'string' }, 'deny-with': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  }
  return { values, positionals };
}

/** Runs one hook invocation; never throws (src/hook/pipeline.ts). A usage error never blocks the agent. */
export async function runHook(argv: readonly string[], io: HookIo): Promise<HookReply> {
  let agent: HookedAgent;
  let options: { workspace?: string; 'deny-with'?: string; help?: boolean };
  // Named before the options are checked: an agent that refuses a call whose hook exits non-zero must get exit 0 even on a usage error.
  const named = argv.find((a) => !a.startsWith('-'));
  try {
    const parsed = hookOptions(argv);
    options = parsed.values;
    if (options.help) return { stdout: HOOK_USAGE, stderr: '', exitCode: 0 };
    const [name, ...extra] = parsed.positionals;
    const found = name === undefined ? undefined : hookedAgent(name);
    if (found === undefined) throw new Error(`the agent must be one of ${HOOKED_AGENTS.map((a) => a.id).join(', ')}${name === undefined ? '' : `, not ${JSON.stringify(name)}`}`);
    if (extra.length > 0) throw new Error(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (options['deny-with'] !== undefined && options['deny-with'] !== 'json' && options['deny-with'] !== 'exit2') throw new Error('--deny-with must be json or exit2');
    agent = found;
  } catch (err) {
    // Exit 1: a usage error must not block the agent (exit 2 would); 0 for agents that read any non-zero exit as a refusal.
    const failClosed = named !== undefined && hookedAgent(named)?.hook.registration.failClosed === true;
    return { stdout: '', stderr: `loop-guardian hook: ${(err as Error).message}\n\n${HOOK_USAGE}`, exitCode: failClosed ? 0 : 1 };
  }
  return answerHook({ agent, style: (options['deny-with'] ?? 'json') as DenyStyle, ...(options.workspace !== undefined ? { workspace: options.workspace } : {}), io });
}

/**
 * stdin as text, at most MAX_STDIN_BYTES. A file is read at once. A pipe, what is in it at once,
 * without waiting (through a second, non-blocking opening of it): when its writer has closed it,
 * that is all of it, and no stream is loaded (its loading was a good part of the hook's time).
 * Otherwise (a pipe still open, a socket: the stdin of agents that run on Node) the rest through
 * the event loop, never by a blocking read on a worker thread, which would keep the process from
 * exiting: a stdin that never ends cannot hold the hook past its deadline. On the event loop
 * through libuv's own handle where Node allows it (cli/stdinHandle.ts: no `net`, about 5 ms less),
 * else, or with `streamOnly`, through `process.stdin`.
 */
export function readStdin({ streamOnly = false }: { streamOnly?: boolean } = {}): Promise<string> {
  let head: Buffer | undefined;
  try {
    const st = fstatSync(0);
    if (st.isFile()) return Promise.resolve(readFileSync(0, 'utf8'));
    if (st.isFIFO()) {
      const now = readPipeNow();
      if (now.ended) return Promise.resolve(now.bytes.toString('utf8'));
      head = now.bytes;
    }
  } catch (err) {
    if (err instanceof StdinTooLargeError) return Promise.reject(err);
    // No usable stdin descriptor, or the pipe cannot be opened again (no /proc): read as a stream below.
  }
  // The handle takes fd 0 only when it is a socket or a pipe (its own check): a terminal, or no
  // usable descriptor, goes to the stream.
  const byHandle = streamOnly ? undefined : readStdinByHandle(MAX_STDIN_BYTES, () => new StdinTooLargeError(), head);
  return byHandle ?? readToEnd(process.stdin, 'stdin', MAX_STDIN_BYTES, head);
}

class StdinTooLargeError extends Error {
  constructor() {
    super(`stdin: more than ${MAX_STDIN_BYTES} bytes`);
  }
}

/**
 * What the stdin pipe holds now, read through a non-blocking opening of it of its own (Linux:
 * /proc/self/fd/0; fd 0 itself stays as it is): `ended` when its writer has closed it (a read
 * returns 0); otherwise what came before the pipe ran empty (EAGAIN) or a read failed.
 */
function readPipeNow(): { bytes: Buffer; ended: boolean } {
  const fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch {
        // EAGAIN: the writer has not written the rest yet. Any other error: the stream will say.
        return { bytes: Buffer.concat(chunks, total), ended: false };
      }
      if (n === 0) return { bytes: Buffer.concat(chunks, total), ended: true };
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > MAX_STDIN_BYTES) throw new StdinTooLargeError();
    }
  } finally {
    closeSync(fd);
  }
}
