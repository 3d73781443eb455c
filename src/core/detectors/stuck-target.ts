import type { SettledCall } from '../calls';
import { clip } from '../canonical';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import { telltaleLine } from '../errorLines';
import type { EventRef } from '../events';
import { pushEvidence } from '../finding';
import { PATH_KEYS } from '../intent';
import { times } from '../plainWords';
import { episodeId, whoOf } from './common';

/**
 * Argument names that carry what a call writes into a file, by the agents' spellings (each
 * agent's room under src/agents/ cites its tools): an edit's `old_string`/`new_string` or
 * `old_str`/`new_str`, a list of `edits`, a whole file's `content`/`contents`/`file_text`, a
 * `code_edit`, a `diff` or `patch`. A call on a path with one of them changes that file.
 */
const WRITE_KEYS: readonly string[] = ['old_string', 'new_string', 'edits', 'content', 'contents', 'file_text', 'old_str', 'new_str', 'code_edit', 'diff', 'patch', 'new_content', 'newText', 'oldText'];
/** The same names as they appear in a call's canonical JSON text (a cheap test before it is parsed). */
const WRITE_MARKS = WRITE_KEYS.map((k) => `"${k}":`);
/** The same names, to tell first from the call's arguments as they came whether its text can hold one (most calls' cannot). */
const WRITE_KEY_SET: ReadonlySet<string> = new Set(WRITE_KEYS);
/** Distinct errors a run of failures may have: the same one, or two alternating. A third is something new. */
const MAX_ERRORS = 2;
/** Files with a run open at once in a session. */
const MAX_RUNS = 20;

/** Changes to one file that keep failing: the errors seen, the tools that failed, the evidence. */
interface Run {
  readonly path: string;
  readonly errors: number[];
  readonly tools: Set<string>;
  readonly start: EventRef;
  failures: number;
  /** Whether the file was read (a call on it succeeded) since its latest failure: the next failure is a new cycle. */
  reread: boolean;
  firstError: string;
  readonly refs: EventRef[];
  episode?: string;
}

/** A path as one file, however it is spelled: separators, `./`, doubled and trailing slashes aside. */
export function normalPath(p: string): string {
  let s = p.trim().replace(/\\/g, '/').replace(/\/{2,}/g, '/');
  while (s.includes('/./')) s = s.replace('/./', '/');
  while (s.startsWith('./')) s = s.slice(2);
  if (s.length > 1 && s.endsWith('/')) s = s.slice(0, -1);
  return s;
}

/** Whether two normalised paths name one file: equal, or a relative one that ends the other. */
export function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return !/^(?:\/|~|[A-Za-z]:\/)/.test(short) && short !== '' && long.endsWith(`/${short}`);
}

/** The file a call acts on, from its canonical arguments' text, when it names one. */
function pathOf(argsText: string): string | undefined {
  let args: unknown;
  try {
    args = JSON.parse(argsText);
  } catch {
    return undefined;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  for (const key of PATH_KEYS) {
    const v = (args as Record<string, unknown>)[key];
    if (typeof v === 'string' && v.trim() !== '') return normalPath(v);
  }
  return undefined;
}

function writes(argsText: string): boolean {
  for (const mark of WRITE_MARKS) if (argsText.includes(mark)) return true;
  return false;
}

/**
 * Issue 34: a change to one file that never goes through. The agent reads the file, changes it,
 * and the change fails; it reads again and changes it another way (a smaller `old_string`, Write
 * instead of Edit, the path spelled otherwise), and it fails again with the same error, or with
 * the other of two that alternate ("File has been unexpectedly modified. Read it again" / "File
 * has not been read yet"). Each variation is a new call, so the repetition signals see progress;
 * a person sees one attempt that keeps failing.
 *
 * The rule, as a person reads it: a cycle is the file read again (a call on it that succeeds) and
 * a change to it (a call with its path and something to write) that fails; `threshold` cycles (3)
 * with no more than two distinct errors between them, and no change succeeding, are one attempt
 * that keeps failing. Changes retried at once, nothing read in between, are one cycle: failures in
 * a row are `repeated-error`'s. It ends when a change of the kind that failed succeeds (on this file: the
 * change went through; on another file: the work moved on), when a third kind of error comes (the
 * failures are changing: something new was tried), or at the person's turn. Reads of the file in
 * between are part of the cycle (they are its evidence: reading it again is the loop's next step),
 * never its end (they are what makes the next failure a new cycle). Failures of reads, commands and polls never count: a file that does not exist
 * yet, polled until it does, is waiting, not this loop.
 */
export class StuckTargetDetector implements Detector {
  readonly signal = 'stuck-target' as const;
  private readonly runs: SessionSlot<Run[]>;

  constructor(private readonly ctx: DetectorContext) {
    this.runs = ctx.slot(() => []);
  }

  call(c: SettledCall, sink: FindingSink): void {
    if (c.outcome.kind === 'unknown') return;
    const open = this.runs.peek(c.sessionState);
    const write = c.mayHaveArgKey(WRITE_KEY_SET) && writes(c.args);
    if (!write && (open === undefined || open.length === 0)) return;
    const path = pathOf(c.args);
    if (c.outcome.kind === 'ok') {
      if (open === undefined) return;
      for (let i = open.length - 1; i >= 0; i--) {
        const run = open[i] as Run;
        const here = path !== undefined && sameFile(run.path, path);
        if (write && (here || run.tools.has(c.tool))) {
          // The change went through, here or on another file: the run is over.
          if (run.episode !== undefined) sink.resolve(run.episode);
          open.splice(i, 1);
        } else if (here) {
          run.reread = true;
          pushEvidence(run.refs, c.ref);
        }
      }
      return;
    }
    if (!write || path === undefined) return;
    const runs = this.runs.of(c.sessionState);
    const key = c.outcome.key;
    let run = runs.find((r) => sameFile(r.path, path));
    if (run !== undefined && !run.errors.includes(key) && run.errors.length >= MAX_ERRORS) {
      // A new kind of failure: what was tried changed something. Counted afresh from this one.
      if (run.episode !== undefined) sink.resolve(run.episode);
      runs.splice(runs.indexOf(run), 1);
      run = undefined;
    }
    if (run === undefined) {
      run = { path, errors: [], tools: new Set(), start: c.ref, failures: 0, reread: true, firstError: c.outcome.error, refs: [] };
      runs.push(run);
      if (runs.length > MAX_RUNS) {
        const oldest = runs.shift() as Run;
        if (oldest.episode !== undefined) sink.resolve(oldest.episode);
      }
    }
    if (!run.errors.includes(key)) run.errors.push(key);
    run.tools.add(c.tool);
    // A cycle is a failed change after the file was read again; changes retried at once, with
    // nothing read in between, are the same cycle (a run of failures in a row is `repeated-error`'s).
    if (run.reread) run.failures++;
    run.reread = false;
    pushEvidence(run.refs, c.ref);
    const threshold = this.ctx.config.signals[this.signal].threshold;
    if (run.failures < threshold) return;
    const r = run;
    const episode = (r.episode ??= episodeId(this.signal, `${c.session}|${r.path}`, r.start));
    const error = c.outcome.error;
    sink.report({ episode, action: 'halt', count: r.failures, evidence: r.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: r.failures,
      threshold,
      at: c.settledAt,
      ...whoOf(c),
      subject: clip(r.path, 160),
      message: `Changes to ${clip(r.path, 120)} failed ${times(r.failures)}, each tried another way (${[...r.tools].join(', ')}), with ${r.errors.length === 1 ? 'the same error' : 'the same two errors in turn'}: ${clip(telltaleLine(error), 160)}`,
      recommendation:
        'The file is not changing, however the change is written: reading it again and rewriting the edit goes round the same circle. Find what keeps the change from applying (another process or hook rewriting the file, a path the tool does not accept, a stale read), or write the file another way once, and stop retrying the same edit.',
      evidence: [...r.refs],
      status: 'STALLED',
      episode,
      details: { path: r.path, errors: r.errors.length, first_error: clip(r.firstError, 300), tools: [...r.tools] },
    }));
  }

  endSession(session: SessionState): void {
    this.runs.clear(session);
  }
}
