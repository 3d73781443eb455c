import { clip, hashText, proseKey } from '../canonical';
import { BoundedMap, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

/** One subtask (its target and instruction, canonical) as a session hands it out. */
interface Subtask {
  readonly instruction: string;
  readonly to?: string;
  /** Delegations of it whose results, where known, did not change. */
  count: number;
  refs: EventRef[];
  episode: string;
  /** The latest delegation of it is still out. */
  open: boolean;
  /** How the latest one came back: `ok:<hash>` or `err:<hash>`; undefined while unknown. */
  result?: string;
  /** Whether one of the counted delegations came back without a result to compare. */
  unknown: boolean;
  /** How many times in a row it came back with this same failure. */
  failures: number;
}

/**
 * The same subtask — the same instruction to the same agent (`proseKey`: white space, case,
 * timestamps and ids aside) — delegated again after it came back. Only a delegation that came
 * back counts: one still out is parallel work. A result that differs from the one before is
 * progress (a test suite re-run after a fix) and starts the count again; a corrected instruction is
 * another subtask; delegating again after a first failure is a retry, a loop only once the same
 * failure came back twice.
 *
 * Severity: warn at `warnAt` (2), the first re-delegation; halt at `threshold` (3) only when every
 * delegation counted came back with a known, unchanged result (the same output, or the same
 * failure): the orchestrator is then asking again for what it already has. Where a result is not
 * in the log, whether it changed is unknown, and the finding stays a warning.
 */
export class ReDelegationDetector implements Detector {
  readonly signal = 're-delegation' as const;
  readonly events = ['delegation', 'delegation_result'] as const;
  private readonly subtasks = new BoundedMap<Subtask>();
  /** Delegations still out, by session and id: the subtask's key. */
  private readonly out = new BoundedMap<string>();
  /** Each session's latest delegation still out, for results that name none. */
  private readonly latest = new BoundedMap<string>();

  constructor(private readonly ctx: DetectorContext) {}

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type === 'delegation') {
      const instruction = proseKey(e.instruction);
      if (instruction === '') return;
      const key = sessionKey(scope.session, hashText(`${proseKey(e.to ?? '')}\u0000${instruction}`));
      let task = this.subtasks.get(key);
      if (task && !task.open) {
        task.count++;
        pushEvidence(task.refs, located.ref);
      } else if (!task) {
        task = { instruction: e.instruction, ...(e.to !== undefined ? { to: e.to } : {}), count: 1, refs: [located.ref], episode: episodeId(this.signal, key, located.ref), open: true, unknown: false, failures: 0 };
        this.subtasks.set(key, task);
      }
      task.open = true;
      if (e.id !== undefined) this.out.set(sessionKey(scope.session, e.id), key);
      this.latest.set(scope.session, key);
      this.check(task, located.ref, scope, sink);
      return;
    }
    if (e.type !== 'delegation_result') return;
    const key = e.id !== undefined ? this.out.get(sessionKey(scope.session, e.id)) : this.latest.get(scope.session);
    const task = key === undefined ? undefined : this.subtasks.get(key);
    if (key === undefined || task === undefined) return;
    if (e.id !== undefined) this.out.delete(sessionKey(scope.session, e.id));
    if (this.latest.get(scope.session) === key) this.latest.delete(scope.session);
    task.open = false;
    const failed = e.ok === false || (e.error !== undefined && e.error !== '');
    const result = failed ? `err:${hashText(proseKey(e.error ?? 'failed'))}` : e.output !== undefined ? `ok:${hashText(proseKey(e.output))}` : undefined;
    if (result !== undefined && task.result !== undefined && result !== task.result) {
      // It came back with something new: progress. The next delegation of it counts from here.
      sink.resolve(task.episode);
      task.count = 1;
      task.refs = [task.refs[task.refs.length - 1] ?? located.ref];
      task.episode = episodeId(this.signal, key, located.ref);
      task.unknown = false;
    }
    task.failures = failed ? (result === task.result ? task.failures + 1 : 1) : 0;
    if (result === undefined) task.unknown = true;
    else task.result = result;
  }

  endSession(session: SessionState): void {
    this.subtasks.deleteSession(session.name);
    this.out.deleteSession(session.name);
    this.latest.delete(session.name);
  }

  private check(task: Subtask, at: EventRef, scope: Scope, sink: FindingSink): void {
    const { threshold, warnAt } = this.ctx.config.signals[this.signal];
    // Delegating again after a failure is a retry (a Task refused for a missing parameter, sent again
    // with it): it counts once the same failure has come back twice.
    if (task.count < Math.min(warnAt, threshold) || (task.failures === 1 && task.result?.startsWith('err:'))) return;
    const halt = task.count >= threshold && !task.unknown;
    const action = halt ? ('halt' as const) : ('warn' as const);
    const to = task.to !== undefined ? ` to ${task.to}` : '';
    sink.report({ episode: task.episode, action, count: task.count, evidence: task.refs }, () => ({
      signal: this.signal,
      action,
      count: task.count,
      threshold,
      at,
      ...whoOf(scope),
      subject: `${task.to !== undefined ? `${task.to}: ` : ''}${clip(task.instruction, 100)}`,
      message: `The same subtask was delegated${to} ${task.count} times, each time after it came back${task.unknown ? '' : ' with the same result'}: "${clip(task.instruction, 120)}"`,
      recommendation:
        'Delegating the same instruction again will bring back the same answer. Read what the subtask returned; correct the instruction (what is missing, what went wrong) or do the step yourself, and stop delegating it as it is.',
      evidence: [...task.refs],
      ...(halt ? { status: 'STALLED' as const } : {}),
      episode: task.episode,
    }));
  }
}
