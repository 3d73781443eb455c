import type { SettledCall } from './calls';
import type { Canonicalizer } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import type { EventRef, LocatedEvent } from './events';
import type { Action, Finding } from './finding';

/** Who and where an event belongs to. */
export interface Scope {
  readonly session: string;
  readonly task?: string;
  readonly agent?: string;
  readonly at: EventRef;
}

/** What the engine needs to know of an episode on every report; the finding is built only when raised. */
export interface EpisodeState {
  readonly episode: string;
  readonly action: Action;
  readonly count: number;
  /** The detector's own list, read when the active findings are listed. */
  readonly evidence: readonly EventRef[];
}

export interface FindingSink {
  /**
   * Reports the current state of an episode. The engine calls `make` only when the episode is new
   * or more severe than before, so a long loop costs no allocation per repetition.
   */
  report(state: EpisodeState, make: () => Finding): void;
  /** The episode's pattern ended (the chain broke, the agent moved on). */
  resolve(episode: string): void;
}

export interface DetectorContext {
  readonly config: GuardianConfig;
  readonly canon: Canonicalizer;
}

/** One signal. Detectors keep their own bounded state per session and never do I/O. */
export interface Detector {
  readonly signal: SignalId;
  /** A tool call whose outcome is settled. */
  call?(call: SettledCall, sink: FindingSink): void;
  /** Any other event. */
  event?(located: LocatedEvent, scope: Scope, sink: FindingSink): void;
  /** A `user` event: the session starts counting again. */
  endSession(session: string): void;
  /**
   * Its patterns run across the person's turns (a prompt re-sent, model requests failing while
   * the person retries): a `user` event neither ends its state nor its findings.
   */
  readonly spansTurns?: boolean;
}

/** Per-key state with a bound on the number of keys: the oldest keys go first. */
export class BoundedMap<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly limit = 10_000) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    this.map.set(key, value);
    if (this.map.size > this.limit) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.map.delete(oldest);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  /** Removes every key for which `drop` holds. */
  deleteWhere(drop: (key: string, value: V) => boolean): void {
    for (const [k, v] of this.map) if (drop(k, v)) this.map.delete(k);
  }
}

/** Key of per-session state. */
export function sessionKey(session: string, ...rest: string[]): string {
  return [session, ...rest].join('\u0000');
}

export function inSession(key: string, session: string): boolean {
  return key === session || key.startsWith(`${session}\u0000`);
}
