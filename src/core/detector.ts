import type { SettledCall } from './calls';
import type { Canonicalizer } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import type { EventRef, EventType, LocatedEvent } from './events';
import type { CallSteps } from './detectors/steps';
import type { Action, Finding } from './finding';
import { LinkedOrder, type Linked } from './linkedOrder';

/**
 * A session as the engine keeps it: its name, and each detector's state for it, in the slot the
 * detector was given. An event finds every detector's state with one lookup, not one per detector.
 */
export class SessionState {
  readonly slots: unknown[] = [];
  /** The session's attempts so far: calls made before any of their results came back are one (see `SettledCall.attempt`). */
  attempts = 0;
  /** The session's latest failed call (a command piped through a filter is read against it: `Engine.dispatch`). */
  lastFailed: SettledCall | undefined;
  /**
   * The session's last calls of its turn as numbers, the latest the call being judged: made when an
   * enabled signal asks for them (`DetectorContext.window`), emptied at the session's next turn.
   */
  steps: CallSteps | undefined;

  constructor(readonly name: string) {}
}

/** A detector's own state in each session: made when first needed, gone with the session. */
export class SessionSlot<T> {
  constructor(
    private readonly index: number,
    private readonly make: () => T,
  ) {}

  of(session: SessionState): T {
    let value = session.slots[this.index] as T | undefined;
    if (value === undefined) session.slots[this.index] = value = this.make();
    return value;
  }

  /** The state if the session has any. */
  peek(session: SessionState): T | undefined {
    return session.slots[this.index] as T | undefined;
  }

  clear(session: SessionState): void {
    session.slots[this.index] = undefined;
  }
}

/**
 * State per session and per key within it (a task, an agent…), with a bound on the keys of every
 * session together: past `limit`, the key set first goes, as in `BoundedMap`. Each session's keys
 * are in its own slot, so a lookup is by the key alone (no `session\0key` text is built per event),
 * and `deleteSession` drops them; a session the engine forgets without ending it leaves its keys
 * to the bound.
 */
export class KeyedSlots<V> {
  private readonly keys: SessionSlot<Map<string, KeyedEntry<V>>>;
  /** Every session's entries, in the order their keys were first set. */
  private readonly order = new LinkedOrder<KeyedEntry<V>>();

  constructor(ctx: Pick<DetectorContext, 'slot'>, private readonly limit = 10_000) {
    this.keys = ctx.slot(() => new Map());
  }

  get(session: SessionState, key: string): V | undefined {
    return this.keys.peek(session)?.get(key)?.value;
  }

  set(session: SessionState, key: string, value: V): void {
    const keys = this.keys.of(session);
    const held = keys.get(key);
    if (held !== undefined) {
      held.value = value;
      return;
    }
    const entry: KeyedEntry<V> = { keys, key, value, older: undefined, newer: undefined };
    keys.set(key, entry);
    this.order.add(entry);
    if (this.order.size > this.limit) {
      const oldest = this.order.first() as KeyedEntry<V>;
      this.order.delete(oldest);
      oldest.keys.delete(oldest.key);
    }
  }

  delete(session: SessionState, key: string): void {
    const keys = this.keys.peek(session);
    const entry = keys?.get(key);
    if (keys === undefined || entry === undefined) return;
    keys.delete(key);
    this.order.delete(entry);
  }

  /** Every key of the session. */
  deleteSession(session: SessionState): void {
    const keys = this.keys.peek(session);
    if (keys === undefined) return;
    for (const entry of keys.values()) this.order.delete(entry);
    this.keys.clear(session);
  }
}

interface KeyedEntry<V> extends Linked<KeyedEntry<V>> {
  /** The session's keys it is in (it leaves them when the bound drops it). */
  readonly keys: Map<string, KeyedEntry<V>>;
  readonly key: string;
  value: V;
}

/** Who and where an event belongs to. */
export interface Scope {
  readonly session: string;
  readonly state: SessionState;
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
  /**
   * A named step within one episode at one action (a budget's WARNING, then RESTRICT): a new step
   * is raised as a finding of its own, while the episode (and the loop it makes) stays one.
   */
  readonly stage?: string;
}

export interface FindingSink {
  /**
   * Reports the current state of an episode. The engine calls `make` only when the episode is new,
   * more severe than before or at a new stage, so a long loop costs no allocation per repetition.
   */
  report(state: EpisodeState, make: () => Finding): void;
  /** The episode's pattern ended (the chain broke, the agent moved on). */
  resolve(episode: string): void;
}

export interface DetectorContext {
  readonly config: GuardianConfig;
  readonly canon: Canonicalizer;
  /** A slot of the detector's own in every session (the engine keeps the sessions, within its bound). */
  slot<T>(make: () => T): SessionSlot<T>;
  /**
   * Asks for the session's last `length` calls (`SessionState.steps`, with each call's tool when
   * `tools`), for a signal whose patterns end with the turn. The engine keeps one window per session,
   * as long as the longest its enabled signals ask for, and adds each call to it before any signal
   * sees the call.
   */
  window(signal: SignalId, length: number, tools?: boolean): void;
}

/** One signal. Detectors keep their own bounded state per session and never do I/O. */
export interface Detector {
  readonly signal: SignalId;
  /** A tool call whose outcome is settled. */
  call?(call: SettledCall, sink: FindingSink): void;
  /** An event of one of the kinds in `events` (the engine routes only those to it). */
  event?(located: LocatedEvent, scope: Scope, sink: FindingSink): void;
  /** The kinds of event (besides calls) it reads: `tool`, `tool_result` and `user` are the engine's own. */
  readonly events?: readonly Exclude<EventType, 'tool' | 'tool_result' | 'user'>[];
  /** A `user` event: the session starts counting again. */
  endSession(session: SessionState): void;
  /**
   * Its patterns run across the person's turns (a prompt re-sent, model requests failing while
   * the person retries): a `user` event neither ends its state nor its findings.
   */
  readonly spansTurns?: boolean;
}

/**
 * Per-key state with a bound on the number of keys: the oldest keys go first. Keys are sessions or
 * `sessionKey`s; each session's keys are indexed, so that ending a session does not look at every
 * other session's.
 */
export class BoundedMap<V> {
  private readonly map = new Map<string, V>();
  /** The keys of each session (a key's text before its first NUL). */
  private readonly bySession = new Map<string, Set<string>>();
  constructor(private readonly limit = 10_000) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    if (!this.map.has(key)) {
      const session = sessionOf(key);
      let keys = this.bySession.get(session);
      if (!keys) this.bySession.set(session, (keys = new Set()));
      keys.add(key);
    }
    this.map.set(key, value);
    if (this.map.size > this.limit) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
  }

  delete(key: string): void {
    if (!this.map.delete(key)) return;
    const session = sessionOf(key);
    const keys = this.bySession.get(session);
    keys?.delete(key);
    if (keys?.size === 0) this.bySession.delete(session);
  }

  /** Removes every key of a session (`inSession`). */
  deleteSession(session: string): void {
    if (session.includes('\u0000')) {
      // A session whose name holds a NUL (no agent writes one) is found the slow way.
      for (const k of [...this.map.keys()]) if (inSession(k, session)) this.delete(k);
      return;
    }
    const keys = this.bySession.get(session);
    if (!keys) return;
    this.bySession.delete(session);
    for (const k of keys) this.map.delete(k);
  }
}

function sessionOf(key: string): string {
  const end = key.indexOf('\u0000');
  return end < 0 ? key : key.slice(0, end);
}

/** Key of per-session state. */
export function sessionKey(session: string, a: string, b?: string): string {
  return b === undefined ? `${session}\u0000${a}` : `${session}\u0000${a}\u0000${b}`;
}

function inSession(key: string, session: string): boolean {
  return key === session || key.startsWith(`${session}\u0000`);
}
