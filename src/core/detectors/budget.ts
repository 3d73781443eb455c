import { KeyedSlots, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope, type SessionSlot, type SessionState } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import type { Action } from '../finding';
import { whoOf } from './common';

interface Level {
  readonly name: string;
  /** Reached when the percentage used is at or above this (strictly above, for `over`). */
  readonly percent: number;
  readonly over?: boolean;
  readonly action: Action;
  readonly advice: string;
}

interface Reached {
  readonly level: number;
  readonly episode: string;
}

/**
 * Seed 002's token budgets. Per task: WARNING 70%, RESTRICT 80%, URGENT 90% warn; HARD STOP 95%
 * and VIOLATION (over 100%) halt. Per session: 70% notify, 80% no new delegations, 95% wrap up.
 * `used` is the cumulative number of tokens used so far. Each level crossed is reported once.
 */
export class BudgetDetector implements Detector {
  readonly signal = 'budget' as const;
  readonly events = ['usage'] as const;
  /** The level each task of a session reached, and the session's own. */
  private readonly tasks: KeyedSlots<Reached>;
  private readonly sessions: SessionSlot<{ reached?: Reached }>;
  private readonly taskLevels: readonly Level[];
  private readonly sessionLevels: readonly Level[];

  constructor(ctx: DetectorContext) {
    this.tasks = new KeyedSlots(ctx);
    this.sessions = ctx.slot(() => ({}));
    const { task: t, session: s } = ctx.config.signals[this.signal];
    this.taskLevels = [
      { name: 'WARNING', percent: t.warning, action: 'warn', advice: 'Prioritize completion.' },
      { name: 'RESTRICT', percent: t.restrict, action: 'warn', advice: 'Essential operations only: no exploration.' },
      { name: 'URGENT', percent: t.urgent, action: 'warn', advice: 'Wrap up; deliver partial results if needed.' },
      { name: 'HARD STOP', percent: t.hardStop, action: 'halt', advice: 'Force completion now and return partial output.' },
      { name: 'VIOLATION', percent: t.violation, over: true, action: 'halt', advice: 'Kill the task and escalate: it overran its budget.' },
    ];
    this.sessionLevels = [
      { name: 'SESSION NOTIFY', percent: s.notify, action: 'warn', advice: 'Tell the user how fast the session budget burns.' },
      { name: 'NO NEW DELEGATIONS', percent: s.noDelegation, action: 'warn', advice: 'Start no new delegations to subagents.' },
      { name: 'WRAP UP', percent: s.wrapUp, action: 'halt', advice: 'All agents must wrap up their current tasks.' },
    ];
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'usage') return;
    if (e.used !== undefined && e.budget !== undefined) {
      const task = scope.task ?? '(no task)';
      const before = this.tasks.get(scope.state, task);
      const now = this.check(before, task, e.used, e.budget, located.ref, scope, sink);
      if (now !== undefined && now !== before) this.tasks.set(scope.state, task, now);
    }
    if (e.session_used !== undefined && e.session_budget !== undefined) {
      const held = this.sessions.of(scope.state);
      held.reached = this.check(held.reached, undefined, e.session_used, e.session_budget, located.ref, scope, sink);
    }
  }

  endSession(session: SessionState): void {
    this.tasks.deleteSession(session);
    this.sessions.clear(session);
  }

  /**
   * The level reached now: `before`, or the higher one crossed (reported). `task`: the task whose
   * budget it is, or undefined for the session's.
   */
  private check(
    before: Reached | undefined,
    task: string | undefined,
    used: number,
    budget: number,
    at: EventRef,
    scope: Scope,
    sink: FindingSink,
  ): Reached | undefined {
    const levels = task === undefined ? this.sessionLevels : this.taskLevels;
    const percent = (used / budget) * 100;
    let index = -1;
    for (let i = 0; i < levels.length; i++) {
      const l = levels[i] as Level;
      if (l.over ? percent > l.percent : percent >= l.percent) index = i;
    }
    if (index < 0 || (before && before.level >= index)) return before;
    // One budget is one episode, whatever level it reaches: a level crossed is raised (seed 002's
    // table, level by level), the loop it makes grows more severe rather than ending.
    const level = levels[index] as Level;
    const key = task === undefined ? sessionKey(scope.session, 'session') : sessionKey(scope.session, 'task', task);
    const episode = `${this.signal}|${key}`;
    const what = task === undefined ? `session ${scope.session}` : `task ${task}`;
    sink.report({ episode, action: level.action, count: used, evidence: [at], stage: level.name }, () => ({
      signal: this.signal,
      action: level.action,
      count: used,
      threshold: budget,
      at,
      ...whoOf(scope),
      // Seed 002's level names stay in `details.level`; what a person reads is in plain words.
      subject: `${what}: ${Math.round(percent)}% of its token budget`,
      message: `${what} has used ${Math.round(percent)}% of its token budget (${used} of ${budget} tokens): ${level.name.toLowerCase()}`,
      recommendation: level.advice,
      evidence: [at],
      episode,
      details: { level: level.name, percent: Math.round(percent * 10) / 10 },
    }));
    return { level: index, episode };
  }
}
