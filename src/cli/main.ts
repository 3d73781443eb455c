import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AGENTS, HOOK_AGENTS } from '../agents';
import { InvalidTaskIdError, WorkspaceEscapeError } from '../state/workspace';
import { commandContext } from './context';
import { EXIT, nearest, UsageError, type Io } from './io';

// Each command's module is loaded when the command runs: a replay does not load (and keep in
// memory) the schema library that the task and history commands validate their files with.

const HOOK_IDS = HOOK_AGENTS.map((a) => a.id).join('|');

const COMMON = `Options for every command:
  --workspace DIR   the project folder (default: the project the current folder is in: the
                    nearest folder above holding .github/guardian, else .git)
  --json            machine-readable output
  -h, --help        this help`;

interface CommandSpec {
  readonly usage: string;
  readonly summary: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  readonly positionals?: number;
}

const text = { type: 'string' } as const;
/**
 * The commands about a project: outside one (no `.git` or `.github/guardian` above), they refuse
 * rather than create it (the writers) or report on a folder that is none (`scan`, `status`).
 */
const PROJECT_COMMANDS = new Set(['record', 'break', 'escalate', 'cleanup', 'stop', 'pause', 'clear', 'init', 'scan', 'status']);
/** The help's first commands, in the order a person meets them. */
const FIRST = ['init', 'status', 'scan', 'replay', 'otlp', 'stop', 'pause', 'clear', 'hook'];
/** The commands of the seeds' orchestrators, listed after the others in the help. */
const ORCHESTRATION = new Set(['check', 'record', 'analyze', 'break', 'escalate', 'cleanup']);
const COMMANDS: Record<string, CommandSpec> = {
  check: {
    usage: 'check --agent NAME --config JSON [--max-repeats N]',
    summary: 'Checks whether the same agent was just invoked with the same configuration too many times in a row (.tmp/current/logs/invocation-history.json); prints the verdict as JSON. Exit 1 on halt (the diagnostic is archived).',
    options: { agent: text, config: text, 'max-repeats': text },
  },
  record: {
    usage: 'record --agent NAME --config JSON [--result success|failed] [--reason TEXT] [--timestamp ISO]',
    summary: 'Appends an invocation result to the invocation history (the newest 50 are kept).',
    options: { agent: text, config: text, result: text, reason: text, timestamp: text },
  },
  scan: {
    usage: 'scan',
    summary: 'Reads every log of the workspace; prints all findings and the STOP_ALL state. Exit 1 while a halt finding is active.',
    options: {},
  },
  replay: {
    usage: 'replay FILE [--format auto|events|invocations] [--config FILE] [--jsonl]',
    summary: 'Runs every detector over one log from its start; --jsonl writes each finding as a JSON line as it is raised (and keeps none). Exit 1 if a halt finding was raised.',
    options: { format: text, config: text, jsonl: { type: 'boolean' } },
    positionals: 1,
  },
  otlp: {
    usage: 'otlp [--listen HOST:PORT] [--workspace DIR] [--token TOKEN] [--allow-origin ORIGIN]',
    summary: `An OTLP/HTTP logs receiver (default 127.0.0.1:4318, POST /v1/logs, JSON or protobuf): agents' OpenTelemetry events (${AGENTS.filter((a) => a.telemetry !== undefined)
      .map((a) => a.label)
      .join(', ')}) run through every signal; each finding a JSON line on stdout; with --workspace, the events written where the editor reads them. With --token (or LOOP_GUARDIAN_OTLP_TOKEN), only requests with Authorization: Bearer TOKEN are taken. Runs until interrupted.`,
    options: { listen: text, token: text, 'allow-origin': text },
  },
  analyze: { usage: 'analyze TASK', summary: "A task's loop analysis (repeated errors, a stuck tier, a quality-gate loop), as JSON. Exit 1 when a loop pattern is found.", options: {}, positionals: 1 },
  break: { usage: 'break TASK [--reason TEXT]', summary: 'Circuit break: marks the task blocked, writes its summary, registers it.', options: { reason: text }, positionals: 1 },
  escalate: {
    usage: 'escalate TASK [--reason TEXT]',
    summary: 'Force-escalates a task 2 tiers. Exit 4 with HUMAN_INTERVENTION_REQUIRED at the top tiers.',
    options: { reason: text },
    positionals: 1,
  },
  status: { usage: 'status', summary: 'STOP_ALL, whether each agent working here is protected (its hook enforced, installed but not running, watched only, or not at all, with the fix), and the blocked tasks.', options: {} },
  cleanup: { usage: 'cleanup TASK', summary: "Removes a task from the blocked registry with its summary and state.", options: {}, positionals: 1 },
  stop: { usage: 'stop [--reason TEXT]', summary: "Writes STOP to .github/guardian/STOP_ALL: every hooked agent's next call is refused (agents only watched are not stopped; `status` names them).", options: { reason: text } },
  pause: { usage: 'pause [--reason TEXT]', summary: 'Writes PAUSE to STOP_ALL: agents finish current work, start nothing new.', options: { reason: text } },
  clear: { usage: 'clear [--reason TEXT]', summary: 'Writes CLEAR to STOP_ALL: normal operation.', options: { reason: text } },
  hook: {
    usage: `hook ${HOOK_IDS} [--deny-with json|exit2]`,
    summary: "The enforcing hook an agent runs around each tool call (JSON on stdin). See 'loop-guardian hook --help'.",
    options: {},
  },
  init: {
    usage: `init ${HOOK_IDS} [--command CMD] [--shared]`,
    summary: `Registers the hook in the project's agent settings (${[...new Set(HOOK_AGENTS.map((a) => a.hook.registration.settingsFile))].join(', ')}), merged, through the per-user launcher ~/.loop-guardian/bin/loop-guardian ($LOOP_GUARDIAN_HOME), which it points at this install; --command registers CMD instead; --shared registers it in the team's settings file (to commit) where an agent's own is one person's (git-ignored).`,
    options: { command: text, shared: { type: 'boolean' } },
    positionals: 1,
  },
};

export function usage(): string {
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.split(' ')[0]?.length ?? 0));
  return [
    'loop-guardian: detects AI coding agents stuck in loops, and stops them.',
    '',
    'Usage: loop-guardian <command> [options]',
    '',
    'Commands for you and your agents:',
    ...FIRST.map((name) => `  ${name.padEnd(width)}  ${(COMMANDS[name] as CommandSpec).summary}`),
    '',
    'Commands for orchestrators (tasks run in tiers, invocation histories):',
    ...Object.entries(COMMANDS)
      .filter(([name]) => ORCHESTRATION.has(name))
      .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    COMMON,
    '',
    'Exit codes: 0 ok, 1 loop detected, 2 usage error, 3 a file could not be read or written, 4 human intervention required, 5 nothing could be read (replay).',
    "Run 'loop-guardian <command> --help' for a command's options; 'loop-guardian --version' prints the version. NO_COLOR turns colours off.",
    '',
  ].join('\n');
}

/** The command a typo most likely meant: within two edits, or one the typed word starts. */
function commandHelp(spec: CommandSpec): string {
  return `Usage: loop-guardian ${spec.usage}\n\n${spec.summary}\n\n${COMMON}\n`;
}

/** Runs the CLI; returns the exit code. Never throws. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.out(`${VERSION}\n`);
    return EXIT.ok;
  }
  if (name === 'hook') {
    // Normally dispatched by the entry point before this module loads; here for completeness.
    const { readStdin, runHook } = await import('./hook');
    const reply = await runHook(rest, { readStdin, env: process.env, cwd: io.cwd });
    if (reply.stdout) io.out(reply.stdout);
    if (reply.stderr) io.err(reply.stderr);
    return reply.exitCode;
  }
  const spec = COMMANDS[name];
  if (!spec) {
    const near = nearest(name, Object.keys(COMMANDS));
    io.err(`loop-guardian: unknown command ${JSON.stringify(name)}${near !== undefined ? `; did you mean '${near}'?` : ''}\nRun 'loop-guardian --help' for the commands.\n`);
    return EXIT.usage;
  }
  try {
    const { values, positionals } = parseArgs({
      args: [...rest],
      options: { ...spec.options, workspace: text, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      io.out(commandHelp(spec));
      return EXIT.ok;
    }
    if (positionals.length > (spec.positionals ?? 0)) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[spec.positionals ?? 0])}`);
    const v = values as OptionValues;
    const ctx = await commandContext(io, { ...(v.workspace !== undefined ? { workspace: v.workspace } : {}), json: values.json === true, writes: PROJECT_COMMANDS.has(name) }, name === 'replay' ? v.config : undefined);
    const [arg] = positionals;
    switch (name) {
      case 'check':
        return await (await import('./commands/check')).checkCommand(ctx, v);
      case 'record':
        return await (await import('./commands/check')).recordCommand(ctx, v);
      case 'scan':
        return await (await import('./commands/scan')).scanCommand(ctx);
      case 'replay':
        return await (await import('./commands/replay')).replayCommand(ctx, arg, v);
      case 'otlp':
        return await (await import('./commands/otlp')).otlpCommand(ctx, v);
      case 'analyze':
        return await (await import('./commands/tasks')).analyzeCommand(ctx, arg);
      case 'break':
        return await (await import('./commands/tasks')).breakCommand(ctx, arg, v);
      case 'escalate':
        return await (await import('./commands/tasks')).escalateCommand(ctx, arg, v);
      case 'status':
        return await (await import('./commands/status')).statusCommand(ctx);
      case 'cleanup':
        return await (await import('./commands/tasks')).cleanupCommand(ctx, arg);
      case 'stop':
        return await (await import('./commands/stopAll')).stopAllCommand(ctx, 'STOP', v);
      case 'pause':
        return await (await import('./commands/stopAll')).stopAllCommand(ctx, 'PAUSE', v);
      case 'init':
        return await (await import('./commands/init')).initCommand(ctx, arg, v);
      default:
        return await (await import('./commands/stopAll')).stopAllCommand(ctx, 'CLEAR', v);
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      // Node's own wording suggests `--` for positionals: a person meant an option.
      const option = /'(-{1,2}[^']*)'/.exec(e.message)?.[1] ?? '';
      const known = [...Object.keys(spec.options), 'workspace', 'json', 'help'].map((o) => `--${o}`);
      const near = nearest(option, known);
      io.err(`loop-guardian ${name}: unknown option ${option}${near !== undefined ? `; did you mean ${near}?` : ''}\nRun 'loop-guardian ${name} --help' for usage.\n`);
      return EXIT.usage;
    }
    // By name too: a command loaded from its own bundle (otlp) throws its own copy of the class.
    if (err instanceof UsageError || e.name === 'UsageError' || err instanceof InvalidTaskIdError || e.code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`loop-guardian ${name}: ${e.message}\nRun 'loop-guardian ${name} --help' for usage.\n`);
      return EXIT.usage;
    }
    io.err(`loop-guardian ${name}: ${err instanceof WorkspaceEscapeError ? e.message : `error: ${e.message}`}\n`);
    return EXIT.error;
  }
}

interface OptionValues {
  agent?: string;
  config?: string;
  'max-repeats'?: string;
  result?: string;
  reason?: string;
  timestamp?: string;
  format?: string;
  jsonl?: boolean;
  workspace?: string;
  command?: string;
  listen?: string;
  shared?: boolean;
}

declare const __VERSION__: string | undefined;
const VERSION = typeof __VERSION__ === 'string' ? __VERSION__ : 'dev';
