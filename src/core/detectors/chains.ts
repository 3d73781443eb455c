import { KeyedSlots, sessionKey, type DetectorContext, type FindingSink, type SessionSlot, type SessionState } from '../detector';
import type { EventRef } from '../events';
import { pushEvidence } from '../finding';
import { clear, episodeId } from './common';

/** A run of consecutive events that are "the same" by a detector's measure. */
export class Chain<K> {
  count = 1;
  /** The attempt (`SettledCall.attempt`) of its latest event, when its events are calls: calls of one attempt count once. */
  attempt: number | undefined;
  /** Made with the run's first event in it: a run that ends there holds a list of one. */
  readonly refs: EventRef[];
  private id: string | undefined;

  /**
   * `key`: what the run repeats (the latest one, where sameness is fuzzy). `session` and `slot`
   * are named in the episode id (by `name`) only when it is first asked for.
   */
  constructor(
    public key: K,
    private readonly signal: string,
    private readonly name: SlotName,
    private readonly session: string,
    private readonly slot: string,
    private start: EventRef,
  ) {
    this.refs = [start];
  }

  /** The event the run started at: a new run starts at another. */
  get started(): EventRef {
    return this.start;
  }

  /** Named when first asked for: most runs end at their first event, unreported. */
  get episode(): string {
    return (this.id ??= episodeId(this.signal, this.name(this.session, this.slot), this.start));
  }

  /** Whether the episode was ever named: one that was not was never reported, so there is nothing to resolve. */
  get named(): boolean {
    return this.id !== undefined;
  }

  /** Starts a new run at `start` in this object: only for a run never named (nothing but its slot holds it). */
  restart(key: K, start: EventRef, attempt?: number): void {
    this.key = key;
    this.count = 1;
    this.attempt = attempt;
    clear(this.refs);
    this.refs.push(start);
    this.start = start;
  }
}

/**
 * What a run's slot is called in its episode ids: its session, and the key within the session
 * (a task, an agent; empty for the session's one run).
 */
type SlotName = (session: string, key: string) => string;

/** How runs grow, whichever way their slots are kept. */
abstract class Runs<K> {
  /** `name` is called only when a run's episode is first named, not on every event. */
  constructor(
    protected readonly signal: string,
    protected readonly same: (a: K, b: K) => boolean = (a, b) => a === b,
    protected readonly name: SlotName,
  ) {}

  /**
   * `chain`, the slot's run so far, with `ref` added when `key` is the same; else the new run `ref`
   * starts. `attempt`: the call's attempt; a call of the attempt the run's latest call was part of
   * (a batch of parallel calls) is evidence, not one more repeat.
   */
  protected grow(chain: Chain<K> | undefined, session: string, slot: string, key: K, ref: EventRef, sink: FindingSink, attempt?: number): Chain<K> {
    if (chain && this.same(chain.key, key)) {
      chain.key = key;
      if (attempt === undefined || attempt !== chain.attempt) chain.count++;
      chain.attempt = attempt;
      pushEvidence(chain.refs, ref);
      return chain;
    }
    if (chain && !chain.named) {
      // Most runs end unreported at their first event: the next one reuses the object.
      chain.restart(key, ref, attempt);
      return chain;
    }
    if (chain) sink.resolve(chain.episode);
    const made = new Chain(key, this.signal, this.name, session, slot, ref);
    made.attempt = attempt;
    return made;
  }
}

/**
 * Consecutive runs per slot of a session (its tasks, its agents…): the mechanism behind every
 * "N times in a row" signal. A different key or a success ends the run and its episode. Slots are
 * kept in the session (`KeyedSlots`: at most 10,000 of every session's together).
 */
export class Chains<K> extends Runs<K> {
  private readonly runs: KeyedSlots<Chain<K>>;

  /** `name`: the slot's name in episode ids; by default `session\0slot`. */
  constructor(ctx: Pick<DetectorContext, 'slot'>, signal: string, same?: (a: K, b: K) => boolean, name: SlotName = sessionKey) {
    super(signal, same, name);
    this.runs = new KeyedSlots(ctx);
  }

  /** Adds `ref` to the slot's run when `key` is the same as the run's, else starts a new run. */
  extend(session: SessionState, slot: string, key: K, ref: EventRef, sink: FindingSink, attempt?: number): Chain<K> {
    const before = this.runs.get(session, slot);
    const chain = this.grow(before, session.name, slot, key, ref, sink, attempt);
    if (chain !== before) this.runs.set(session, slot, chain);
    return chain;
  }

  /** Ends the slot's run (a success, a user message). */
  end(session: SessionState, slot: string, sink: FindingSink): void {
    const chain = this.runs.get(session, slot);
    if (!chain) return;
    if (chain.named) sink.resolve(chain.episode);
    this.runs.delete(session, slot);
  }

  /** Forgets every run of a session, without resolving (the engine ends the session's findings). */
  endSession(session: SessionState): void {
    this.runs.deleteSession(session);
  }
}

/** The same with one run per session, kept in the session's own slot: no lookup of its own per event. */
export class SessionChains<K> extends Runs<K> {
  private readonly runs: SessionSlot<{ run?: Chain<K> }>;

  /** `name`: the session's name in episode ids; by default the session's own. */
  constructor(ctx: DetectorContext, signal: string, same?: (a: K, b: K) => boolean, name: (session: string) => string = (session) => session) {
    super(signal, same, name);
    this.runs = ctx.slot(() => ({}));
  }

  extend(session: SessionState, key: K, ref: EventRef, sink: FindingSink, attempt?: number): Chain<K> {
    const held = this.runs.of(session);
    return (held.run = this.grow(held.run, session.name, '', key, ref, sink, attempt));
  }

  end(session: SessionState, sink: FindingSink): void {
    const held = this.runs.peek(session);
    const chain = held?.run;
    if (!held || !chain) return;
    if (chain.named) sink.resolve(chain.episode);
    held.run = undefined;
  }

  endSession(session: SessionState): void {
    this.runs.clear(session);
  }
}
