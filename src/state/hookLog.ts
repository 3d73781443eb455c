import { join } from 'node:path';
import type { GuardianConfig } from '../core/config';
import { SIGNAL_IDS } from '../core/defaults';
import type { GuardianEvent, LocatedEvent } from '../core/events';
import { parseJson } from '../core/json';
import { withFileLock } from './atomicFile';
import { openRegularFileSync, readRegularBoundedSync, readTailTextSync, statOrUndefined, tailLines } from './regularFile';
import { PATHS, type Workspace } from './workspace';

/** The hook's log of one agent session: `.tmp/current/logs/hook-<agent>-<session>.jsonl`. */
export function hookLogPath(agent: string, session: string): string {
  let safe = session.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  if (safe.length > 80 || safe !== session) {
    // Loaded only here: most session ids are safe as they are, and crypto is slow to load.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createHash } = require('node:crypto') as typeof import('node:crypto');
    safe = `${safe.slice(0, 64)}-${createHash('sha256').update(session).digest('hex').slice(0, 12)}`;
  }
  return `${PATHS.logsDir}/hook-${agent}-${safe}.jsonl`;
}

/** The recent past of a session is enough to judge its next call: the signals look at most 50 calls back. */
const TAIL_BYTES = 256 * 1024;
const TAIL_EVENTS = 300;

const TYPES = new Set(['tool', 'tool_result', 'user', 'prompt', 'reply', 'api_error', 'delegation', 'delegation_result', 'compaction']);
const optional = (v: unknown, type: 'string' | 'number' | 'boolean') => v === undefined || typeof v === type;

/**
 * An event the hook itself wrote, checked for the fields the engine relies on. (The hook keeps
 * zod out of its start-up path; these lines are its own.)
 */
function looseEvent(raw: unknown): GuardianEvent | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const e = raw as Record<string, unknown>;
  if (e.v !== 1 || typeof e.type !== 'string' || !TYPES.has(e.type)) return undefined;
  if (e.session !== undefined && typeof e.session !== 'string') return undefined;
  if (e.ts !== undefined && typeof e.ts !== 'string') return undefined;
  if (e.type === 'tool' && (typeof e.tool !== 'string' || (e.args !== undefined && (typeof e.args !== 'object' || e.args === null || Array.isArray(e.args))))) return undefined;
  if (e.type === 'tool_result' && typeof e.id !== 'string') return undefined;
  if ((e.type === 'prompt' || e.type === 'reply') && typeof e.text !== 'string') return undefined;
  if (e.type === 'prompt' && e.from !== undefined && typeof e.from !== 'string') return undefined;
  if (e.type === 'api_error' && !(optional(e.status, 'number') && optional(e.class, 'string') && optional(e.retry, 'number'))) return undefined;
  if (e.type === 'delegation' && (typeof e.instruction !== 'string' || !optional(e.to, 'string') || !optional(e.id, 'string'))) return undefined;
  if (e.type === 'delegation_result' && !(optional(e.id, 'string') && optional(e.output, 'string'))) return undefined;
  if ((e.ok !== undefined && typeof e.ok !== 'boolean') || (e.error !== undefined && typeof e.error !== 'string')) return undefined;
  return e as unknown as GuardianEvent;
}

/**
 * The last TAIL_EVENTS events of a hook log, within its last TAIL_BYTES; unreadable lines are left
 * out. Read from the end: the lines before the events kept are never parsed. Lines are numbered
 * from the start of what was read, events from the first kept. The hook's own reads and writes
 * are synchronous: a few small files, read and written in well under a millisecond, where each
 * asynchronous step would wait for a worker thread. `needed`: given the text read, whether its
 * events are needed at all; when not, none is parsed and none is given.
 */
export function readHookTail(file: string, name: string, needed?: (text: string) => boolean): LocatedEvent[] {
  let fd: number;
  try {
    // Non-blocking: a FIFO in the log's place must not hold the hook past its deadline.
    fd = openRegularFileSync(file, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const tail = readTailTextSync(fd, TAIL_BYTES);
  // Asked of the text as read (a piece of a first line too: more to find, never less), before any split.
  if (needed !== undefined && !needed(tail.text)) return [];
  const lines = tailLines(tail.text, tail.start);
  const kept: { event: GuardianEvent; line: number }[] = [];
  for (let i = lines.length - 1; i >= 0 && kept.length < TAIL_EVENTS; i--) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    // Not JSON or nested too deep (the call's input is the agent's): left out like any bad line.
    const parsed = parseJson(line);
    if (!parsed.ok) continue;
    const event = looseEvent(parsed.value);
    if (event) kept.push({ event, line: i + 1 });
  }
  return kept.reverse().map(({ event, line }, i) => ({ event, ref: { file: name, line, event: i + 1 } }));
}

/** Runs `fn` holding the lock of one session's hook log: one decision at a time per session. */
export async function withSessionLock<T>(ws: Workspace, rel: string, fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  return withFileLock(ws.resolveForWriteSync(rel), fn, { timeoutMs });
}

/** A hook log past this size is rotated: it becomes `<log>.1` (the one before is dropped) and a new log starts. */
export const HOOK_LOG_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Appends one event as one line (O_APPEND: concurrent hooks' lines stay whole), rotating the log
 * first when it has grown past HOOK_LOG_MAX_BYTES. The caller holds the session's lock. The
 * rotated file does not end in `.jsonl`, so the workspace monitor does not read it again.
 */
export function appendEvent(ws: Workspace, rel: string, event: GuardianEvent): void {
  ws.appendSync(rel, `${JSON.stringify(event)}\n`, { rotateOver: HOOK_LOG_MAX_BYTES });
}

declare const __BUNDLED__: boolean | undefined;
const CACHE = `${PATHS.guardianDir}/hook-config.json`;

interface CachedConfig {
  readonly v: 1;
  readonly source: string;
  readonly config: GuardianConfig;
}

/** What the cache is valid for: this very file (its path, identity, size and times), or its absence. */
function signature(file: string): string {
  const st = statOrUndefined(file);
  return `${file}|${st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : 'absent'}`;
}

// Empty lists are a person's choice (`hooks.deny: []` only records); the shape is what is checked.
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** A cached configuration the hook may trust: the current source, and the shape the gate reads. */
function validCache(cached: Partial<CachedConfig>, source: string): cached is CachedConfig {
  const c = cached.config;
  return (
    cached.v === 1 &&
    cached.source === source &&
    typeof c === 'object' &&
    c !== null &&
    typeof c.signals === 'object' &&
    c.signals !== null &&
    // A cache written before a signal existed lacks its settings: rebuilt, or the engine would fail.
    SIGNAL_IDS.every((id) => typeof (c.signals as Record<string, unknown>)[id] === 'object') &&
    isStringList(c.hooks?.deny) &&
    isStringList(c.hooks?.delegationTools) &&
    Array.isArray(c.volatileKeys) &&
    typeof c.volatileArgs === 'object' &&
    c.volatileArgs !== null &&
    Array.isArray(c.exemptTools) &&
    Array.isArray(c.waitTools)
  );
}

/**
 * The workspace's configuration as the hook needs it. Validating it takes the schema library,
 * which costs more to load than everything else the hook does, so the resolved configuration is
 * kept in `.tmp/guardian/hook-config.json` until `.github/guardian/config.json` changes.
 */
export async function hookConfig(ws: Workspace, onProblem: (message: string) => void): Promise<GuardianConfig> {
  const source = signature(ws.path(PATHS.config));
  const read = readRegularBoundedSync(ws.path(CACHE), 1024 * 1024);
  if (read.kind === 'text') {
    try {
      const cached = JSON.parse(read.text) as Partial<CachedConfig>;
      if (validCache(cached, source)) return cached.config;
    } catch {
      // Rebuilt below.
    }
  }
  // Loaded here only, from a bundle of its own (dist/cli-config.js): the hook's fast path never loads zod.
  const bundled = typeof __BUNDLED__ === 'boolean' && __BUNDLED__;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadConfig, formatProblem } = require(join(__dirname, bundled ? 'cli-config.js' : 'configFile')) as typeof import('./configFile');
  const loaded = await loadConfig(ws);
  for (const p of loaded.problems) onProblem(formatProblem(loaded.file, p));
  const entry: CachedConfig = { v: 1, source, config: loaded.config };
  await ws.writeAtomic(CACHE, `${JSON.stringify(entry)}\n`);
  return loaded.config;
}
