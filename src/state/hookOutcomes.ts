import { openRegularFile, readTailLines } from './regularFile';
import { PATHS, type Workspace } from './workspace';

/*
 * What the hooks did, per session, as they said it in the guardian's log (`.tmp/guardian/guardian.log`,
 * one `[TIMESTAMP] [LEVEL] message` line per entry, state/guardianLog.ts). The hook (src/hook/answer.ts,
 * `refuse`) writes one line per refusal, in these words:
 *   hook <agent>: refused <what> in session <session>[ (a loop its hook never saw)][ and ended the run| (the run goes on: …)]: <reason>
 *   hook <agent>: <what> in session <session>: to be refused, and the run ended, at the agent's permission request: <reason>
 *   hook <agent>: would refuse <what> in session <session>, but this agent cannot refuse a prompt: <reason>
 * where <what> is a tool's name (no blank in it), "a call" or "a prompt". A test runs the real hook and reads its lines back
 * (test/unit/state/hookOutcomes.test.ts): a change of words there fails it.
 */

/** What the hooks did in one session of one agent. */
export interface HookOutcome {
  readonly agent: string;
  readonly session: string;
  /** Calls (and prompts) refused. */
  readonly refused: number;
  /** The latest refusal ended the agent's run (the agent ends it on that reply). */
  readonly ended: boolean;
  /** A refusal that could not be given (a prompt this agent cannot refuse), or that left the run going on. */
  readonly couldNot?: string;
  /** When the latest refusal was written (ISO). */
  readonly lastTs: string;
  /** What the latest refusal refused (a tool's name, or "a prompt"). */
  readonly lastWhat: string;
}

const LINE = /^\[([^\]]+)\] \[(?:WARN|ERROR|INFO)\] hook ([\w-]+): (.*)$/;
const REFUSED = /^refused (a prompt|a call|\S+) in session (\S+?)(?: \(a loop its hook never saw\))?( and ended the run| \(the run goes on: [^)]*\))?: /;
const HANDED = /^(a prompt|a call|\S+) in session (\S+?)(?: \(a loop its hook never saw\))?: to be refused, and the run ended, at the agent's permission request: /;
const CANNOT = /^would refuse (a prompt|a call|\S+) in session (\S+?)(?: \(a loop its hook never saw\))?, but this agent cannot refuse a prompt: /;

/** The guardian log's tail read: the latest refusals are what the editor shows. */
const TAIL_BYTES = 512 * 1024;

/** Each session's outcome, from the log's lines (oldest first); lines of other kinds are left out. */
export function hookOutcomes(lines: readonly string[]): Map<string, HookOutcome> {
  const out = new Map<string, HookOutcome>();
  for (const line of lines) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, ts, agent, rest] = m as unknown as [string, string, string, string];
    let what: string | undefined;
    let session: string | undefined;
    let ended = false;
    let couldNot: string | undefined;
    let counts = 1;
    let r: RegExpExecArray | null;
    if ((r = REFUSED.exec(rest))) {
      [, what, session] = r as unknown as [string, string, string];
      ended = r[3] === ' and ended the run';
      if (r[3]?.startsWith(' (the run goes on')) couldNot = `the run went on: ${agent} does not end it from that hook`;
    } else if ((r = HANDED.exec(rest))) {
      [, what, session] = r as unknown as [string, string, string];
      ended = true;
    } else if ((r = CANNOT.exec(rest))) {
      [, what, session] = r as unknown as [string, string, string];
      couldNot = `${agent} cannot refuse a prompt`;
      counts = 0;
    } else continue;
    const key = `${agent}:${session}`;
    const before = out.get(key);
    const refused = (before?.refused ?? 0) + counts;
    out.set(key, { agent, session, refused, ended, ...(couldNot !== undefined ? { couldNot } : {}), lastTs: ts, lastWhat: what });
  }
  return out;
}

/** The outcomes of the guardian log's tail, by `<agent>:<session>`; none when it is missing. */
export async function readHookOutcomes(ws: Workspace): Promise<Map<string, HookOutcome>> {
  let lines: string[];
  try {
    lines = await readTailLines(await openRegularFile(ws.path(PATHS.guardianLog)), TAIL_BYTES);
  } catch {
    return new Map();
  }
  return hookOutcomes(lines);
}

/** The outcome of a session, whatever agent's hook it was (sessions' ids are the agents' own, unique across them). */
export function outcomeOf(outcomes: ReadonlyMap<string, HookOutcome>, session: string): HookOutcome | undefined {
  let found: HookOutcome | undefined;
  for (const o of outcomes.values()) if (o.session === session && (found === undefined || o.lastTs > found.lastTs)) found = o;
  return found;
}

/** "Refused 2 calls; <agent>'s run ended", as the editor leads with it. */
export function outcomeWords(o: HookOutcome, agentLabel: string): string {
  const calls = o.lastWhat === 'a prompt' && o.refused === 1 ? 'a prompt' : `${o.refused} call${o.refused === 1 ? '' : 's'}`;
  if (o.refused === 0) return `Could not refuse: ${o.couldNot ?? 'the hook could not'}`;
  return `Refused ${calls}; ${o.ended ? `${agentLabel}'s run ended` : o.couldNot !== undefined ? `${agentLabel}'s run went on (it does not end it from that hook)` : `${agentLabel} was told why`}`;
}
