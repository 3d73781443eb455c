import { callSignature, ErrorOutcome, outcomeOf, hashHigh, reduceHash, UNKNOWN, type Outcome, type SettledCall } from './calls';
import { Canonicalizer, hash53 } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import { SessionSlot, SessionState, type Detector, type DetectorContext, type EpisodeState, type FindingSink, type Scope } from './detector';
import { createDetectors } from './detectors';
import { CallSteps } from './detectors/steps';
import type { EventRef, LocatedEvent, ToolEvent } from './events';
import { keptFinding, severity, type Finding } from './finding';
import { ErrorText, sameError } from './errorMatch';
import { MAX_JSON_DEPTH } from './json';
import { filteredPipeline, intentOf, searchFoundNothing, shellCommandOf } from './intent';

/** A call that waits for its `tool_result` waits behind at most this many later calls. */
export const MAX_PENDING = 8;

/**
 * A call as the engine hands it to the detectors. Its hash is computed at once, its canonical
 * text only when something reads it: to confirm that two calls with equal hashes are the same
 * call, or to name it in a finding. Most calls never need it.
 */
/** A search's "no match": an answer, the same one each time (its output is nothing). */
const NO_MATCH: Outcome = { kind: 'ok', key: hash53('') };

/** How a call ended: a search that found nothing (exit 1, nothing said) answered, it did not fail. */
function settled(args: unknown, outcome: Outcome): Outcome {
  return outcome.kind === 'error' && searchFoundNothing(args, outcome.error) ? NO_MATCH : outcome;
}

class Call implements SettledCall {
  /** Set when the call is judged (see `Engine.dispatch`). */
  attempt = 0;
  /** Its result came (a `tool_result`, or written with it), rather than waiting having been given up. */
  answered = false;
  private text: string | undefined;
  private sig: string | undefined;
  private purpose: string | undefined;
  /** What a command piped through filters printed (see `Engine.dispatch`); kept for such calls only. */
  pipedOutput: string | undefined;
  outcome: Outcome;
  settledAt: EventRef;
  readonly signatureHash: number;
  readonly signatureHigh: number;
  readonly time?: string;
  readonly task?: string;
  readonly agent?: string;

  readonly tool: string;
  private readonly raw: unknown;

  constructor(
    private readonly canon: Canonicalizer,
    e: ToolEvent,
    readonly ref: EventRef,
    outcome: Outcome,
    readonly sessionState: SessionState,
    /** The call made just before it in its session, still waiting for its result then (it may be the same batch). */
    public batchedAfter?: Call,
  ) {
    this.tool = e.tool;
    this.raw = e.args ?? {};
    this.outcome = settled(this.raw, outcome);
    this.keepPiped(e.output);
    this.settledAt = ref;
    const hash = canon.signatureHash(this.tool, this.raw);
    this.signatureHash = reduceHash(hash);
    this.signatureHigh = hashHigh(hash);
    this.time = e.ts;
    this.task = e.task;
    this.agent = e.agent;
  }

  get session(): string {
    return this.sessionState.name;
  }

  get intent(): string {
    return (this.purpose ??= intentOf(this.tool, this.raw));
  }

  /** Its result came: how it ended. */
  settle(outcome: Outcome, output?: unknown): void {
    this.outcome = settled(this.raw, outcome);
    this.keepPiped(output);
  }

  /** A command piped through filters succeeds whatever it ran did: what it printed is kept, to be read (`Engine.dispatch`). */
  private keepPiped(output: unknown): void {
    if (this.outcome.kind !== 'ok' || output === undefined || output === null) return;
    const command = shellCommandOf(this.raw);
    if (command === undefined || !filteredPipeline(command)) return;
    const text = printedText(output);
    if (text !== undefined && text !== '') this.pipedOutput = text;
  }

  get args(): string {
    return (this.text ??= this.canon.args(this.tool, this.raw));
  }

  mayHaveArgKey(keys: ReadonlySet<string>): boolean {
    return this.text !== undefined || mayHoldKey(this.raw, keys, 1);
  }

  get signature(): string {
    return (this.sig ??= callSignature(this.tool, this.args));
  }
}

/**
 * Whether a value may hold, at any depth, a key of `keys` (see `SettledCall.mayHaveArgKey`): false
 * only for plain JSON (what the readers parse), within MAX_JSON_DEPTH, with no such key and no key
 * holding a `"`.
 */
export function mayHoldKey(value: unknown, keys: ReadonlySet<string>, level: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (level > MAX_JSON_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (mayHoldKey(item, keys, level + 1)) return true;
    return false;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  for (const key in value) {
    if (keys.has(key) || key.includes('"')) return true;
    if (mayHoldKey((value as Record<string, unknown>)[key], keys, level + 1)) return true;
  }
  return false;
}

/** The fields in which agents hand over what a command printed (a hook's `tool_response`, a result item). */
const PRINTED_FIELDS = ['stdout', 'stderr', 'output', 'result', 'llmContent', 'content', 'text'];

/**
 * What a command printed, as agents hand its result over: a text; its streams or its text as
 * fields (`{stdout, stderr, interrupted}` of a hook's `tool_response`, `{llmContent}`); a list of
 * result items, or such a value written as JSON text (`[{"query": …, "result": …}]`). Read only
 * for a command piped through a filter (rare), so the JSON is parsed only then.
 */
function printedText(output: unknown, depth = 0): string | undefined {
  if (depth > 4) return undefined;
  if (typeof output === 'string') {
    const t = output.trimStart();
    if (t.startsWith('[') || t.startsWith('{')) {
      try {
        return printedText(JSON.parse(output) as unknown, depth + 1) ?? output;
      } catch {
        return output;
      }
    }
    return output;
  }
  if (Array.isArray(output)) {
    const parts = output.map((v) => printedText(v, depth + 1)).filter((v): v is string => v !== undefined && v !== '');
    return parts.length > 0 ? parts.join('\n') : undefined;
  }
  if (typeof output !== 'object' || output === null) return undefined;
  const parts = PRINTED_FIELDS.map((k) => printedText((output as Record<string, unknown>)[k], depth + 1)).filter((v): v is string => v !== undefined && v !== '');
  return parts.length > 0 ? parts.join('\n') : undefined;
}

/** A call waiting in its session's queue: settled once its outcome is known. */
interface QueuedCall {
  readonly call: Call;
  readonly id: string | undefined;
  settled: boolean;
  /** A result with its id settles it: it is the latest call with that id still waiting. */
  waiting: boolean;
}

/**
 * A session as the engine keeps it: its detectors' state, and its calls waiting to be judged. Kept
 * on the session rather than in maps over every session: a call and its result would add an entry
 * to each map and take it out again, and a map that empties makes a new table.
 */
class EngineSession extends SessionState {
  /** Its calls in call order, each dispatched once it and those before it are settled. */
  readonly queue: QueuedCall[] = [];
  /** When its queue last started to fill: `flush` settles the sessions' queues in that order. */
  queuedSince = 0;
  /** Its latest event, when that is a call still waiting for its result: a call now may be of its batch. */
  pendingCall: Call | undefined;
}

/** The call a result with this id settles. */
function waitingFor(queue: readonly QueuedCall[], id: string): QueuedCall | undefined {
  for (const queued of queue) if (queued.waiting && queued.id === id) return queued;
  return undefined;
}

/** No result settles a call of the queue with this id any more. */
function stopWaiting(queue: readonly QueuedCall[], id: string): void {
  for (const queued of queue) if (queued.id === id) queued.waiting = false;
}

/** The outcomes a session's calls ended with lately, oldest first, and the latest call that ended in a new way. */
interface News {
  readonly seen: Set<number>;
  readonly order: number[];
  oldest: number;
  last?: SettledCall;
}

/** Outcomes remembered per session for `lastNews`. */
const NEWS_KEPT = 500;

interface ActiveEpisode {
  readonly finding: Finding;
  /** The latest report: the count and evidence go on growing while the pattern lasts. */
  state: EpisodeState;
  /** Makes the finding as of the latest report at the finding's action: its words then agree with its count. */
  make?: () => Finding;
}

export interface EngineStats {
  events: number;
  calls: number;
  /** `tool_result` events whose call was never seen or had already been settled. */
  unmatchedResults: number;
}

/**
 * Sessions kept at once: past this, the one seen first is forgotten: its detectors' state (in its
 * slots, and what each detector's `endSession` lets go of its own maps), its calls waiting for a
 * result and its active findings go with it.
 */
export const MAX_SESSIONS = 10_000;
/**
 * Findings active at once: past this, the one raised first is dropped from the active list (it was
 * reported when raised). A log whose sessions come and go, each ending in a loop nobody resolves,
 * would otherwise keep every one of them.
 */
export const MAX_ACTIVE = 2_000;
/**
 * Episodes dropped from the active list for MAX_ACTIVE, remembered (their action and stage) so that
 * a loop that goes on is not raised again as if new: one loop, one alarm, however many are going on
 * at once (a receiver with thousands of sessions). The one dropped first is forgotten past this.
 */
export const MAX_DROPPED = 10_000;

/** What is remembered of an episode dropped from the active list: enough to tell whether a report of it is news. */
type DroppedEpisode = Pick<Finding, 'session' | 'signal' | 'action' | 'stage'>;

/**
 * The active findings by episode, in the order they were raised, within MAX_ACTIVE (the one raised
 * first goes); each session's episodes indexed, so that a session's turn ending or the session
 * being forgotten looks at its own findings only.
 */
class ActiveFindings {
  private readonly byEpisode = new Map<string, ActiveEpisode>();
  /** Each session's episodes, active or dropped. */
  private readonly bySession = new Map<string, Set<string>>();
  private readonly droppedEpisodes = new Map<string, DroppedEpisode>();

  /**
   * `onEnd`: told each episode as it stood last when it leaves the list (its pattern broken, its
   * session's turn over, or the bound), with the finding raised for it that was active then.
   */
  constructor(private readonly onEnd?: (last: Finding, raised: Finding) => void) {}

  get(episode: string): ActiveEpisode | undefined {
    return this.byEpisode.get(episode);
  }

  /** The episode if it was dropped from the list for MAX_ACTIVE while going on (see MAX_DROPPED). */
  dropped(episode: string): DroppedEpisode | undefined {
    return this.droppedEpisodes.get(episode);
  }

  /** A new episode is added last; a known one keeps its place. */
  set(episode: string, a: ActiveEpisode): void {
    const known = this.byEpisode.get(episode);
    if (known !== undefined && known.finding.session !== a.finding.session) this.delete(episode);
    else if (known === undefined) this.forgetDropped(episode);
    this.byEpisode.set(episode, a);
    let episodes = this.bySession.get(a.finding.session);
    if (episodes === undefined) this.bySession.set(a.finding.session, (episodes = new Set()));
    episodes.add(episode);
    if (this.byEpisode.size > MAX_ACTIVE) this.drop(this.byEpisode.keys().next().value as string);
  }

  /** The episode's pattern ended (or its session did): it leaves the list, and is not remembered as dropped. */
  delete(episode: string): void {
    const a = this.remove(episode);
    if (a === undefined) this.forgetDropped(episode);
    else this.leaveSession(a.finding.session, episode);
  }

  /** The session's episodes (those of the signals `which` picks, by default all). */
  deleteSession(session: string, which?: (signal: SignalId) => boolean): void {
    const episodes = this.bySession.get(session);
    if (episodes === undefined) return;
    for (const episode of episodes) {
      const signal = this.byEpisode.get(episode)?.finding.signal ?? this.droppedEpisodes.get(episode)?.signal;
      if (which === undefined || (signal !== undefined && which(signal))) this.delete(episode);
    }
  }

  /** The episode raised first leaves the list for the bound, its pattern still going on: remembered as dropped. */
  private drop(episode: string): void {
    const f = (this.remove(episode) as ActiveEpisode).finding;
    this.droppedEpisodes.set(episode, f.stage !== undefined ? { session: f.session, signal: f.signal, action: f.action, stage: f.stage } : { session: f.session, signal: f.signal, action: f.action });
    if (this.droppedEpisodes.size > MAX_DROPPED) this.forgetDropped(this.droppedEpisodes.keys().next().value as string);
  }

  /** Takes the episode off the list, telling `onEnd` how it stood; undefined when it was not on it. */
  private remove(episode: string): ActiveEpisode | undefined {
    const a = this.byEpisode.get(episode);
    if (a === undefined) return undefined;
    this.byEpisode.delete(episode);
    this.onEnd?.(asNow(a), a.finding);
    return a;
  }

  private forgetDropped(episode: string): void {
    const d = this.droppedEpisodes.get(episode);
    if (d === undefined) return;
    this.droppedEpisodes.delete(episode);
    this.leaveSession(d.session, episode);
  }

  private leaveSession(session: string, episode: string): void {
    const episodes = this.bySession.get(session);
    episodes?.delete(episode);
    if (episodes?.size === 0) this.bySession.delete(session);
  }

  values(): IterableIterator<ActiveEpisode> {
    return this.byEpisode.values();
  }
}

/** An active finding as of its latest event: the count, the evidence, and the message that says that count (the action stays the one raised). */
function asNow(a: ActiveEpisode): Finding {
  const now = a.make?.();
  const words = now && now.action === a.finding.action ? { at: now.at, message: now.message, recommendation: now.recommendation, ...(now.details ? { details: now.details } : {}) } : {};
  // Object.assign, not a spread: Node 20 builds `{ ...x, more }` about 50 times slower.
  return keptFinding(Object.assign({}, a.finding, words, { count: a.state.count, evidence: [...a.state.evidence] }));
}

/** A raised finding as it stood last (`last`, when noted at the same action and stage, with a count as high); else as raised. */
export function latestOf(raised: Finding, last: Finding | undefined): Finding {
  return last !== undefined && last.action === raised.action && last.stage === raised.stage && last.count >= raised.count ? last : raised;
}

/**
 * A finding is raised once, at the count it fired at; the pattern often goes on. For what reads a
 * log whole and shows each finding once (scan, replay), the finding as it stood last: the same
 * episode and action, with the count, evidence and words of its latest event, as it stood when
 * that finding's own pattern ended (an episode that ends and starts again, a task's budget spent
 * anew, is raised again: each raised finding says its own end, not the other's).
 */
export class LatestFindings {
  /** Per raised finding, the same as it stood last. */
  private readonly last = new Map<Finding, Finding>();

  constructor(private readonly max = 10_000) {}

  /** A raised finding as it stands now (an `Engine`'s `onEpisodeEnd`, and its `noteActive` at the end). */
  note(last: Finding, raised: Finding): void {
    this.last.delete(raised);
    this.last.set(raised, last);
    if (this.last.size > this.max) this.last.delete(this.last.keys().next().value as Finding);
  }

  /** The finding as it stood last, if it was noted at the same action and stage; else as raised. */
  latest(f: Finding): Finding {
    return latestOf(f, this.last.get(f));
  }

  clear(): void {
    this.last.clear();
  }
}

/**
 * Events in, findings out. Routes each event to every enabled detector, pairs calls with their
 * results, restarts a session's counters at a `user` event (but those of the signals that span
 * turns), and keeps the active findings.
 */
export class Engine {
  readonly stats: EngineStats = { events: 0, calls: 0, unmatchedResults: 0 };
  private readonly ctx: DetectorContext;
  private readonly detectors: readonly Detector[];
  private readonly callDetectors: readonly Detector[];
  /** The length of each session's window of calls (`SessionState.steps`), 0 when no enabled signal reads one; and whether it keeps their tools. */
  private readonly window: number = 0;
  private readonly windowTools: boolean = false;
  /** Per kind of event, the detectors that read it, in the detectors' order. */
  private readonly byKind = new Map<string, Detector[]>();
  private readonly sessions = new Map<string, EngineSession>();
  /** Counts the times a session's queue started to fill (`EngineSession.queuedSince`). */
  private queueStarts = 0;
  private readonly activeFindings: ActiveFindings;
  private emitted: Finding[] = [];
  private readonly exempt: ReadonlySet<string>;
  /** The signals whose patterns span the person's turns: a `user` event does not end their findings. */
  private readonly spanning: ReadonlySet<SignalId>;
  /** Per session, for `lastNews`: kept only when asked for (the hook's gate), not in a replay. */
  private readonly news: Map<string, News> | undefined;
  private readonly sink: FindingSink = {
    report: (state, make) => this.report(state, make),
    resolve: (episode) => this.activeFindings.delete(episode),
  };

  /**
   * `trackNews`: keep what `lastNews` tells (the gate asks; a replay does not). `onEpisodeEnd`: told
   * each finding as it stood last when its pattern ends (see `LatestFindings`).
   */
  constructor(readonly config: GuardianConfig, { trackNews = false, onEpisodeEnd }: { trackNews?: boolean; onEpisodeEnd?: (last: Finding, raised: Finding) => void } = {}) {
    this.activeFindings = new ActiveFindings(onEpisodeEnd);
    if (trackNews) this.news = new Map();
    let slots = 0;
    const windows: { signal: SignalId; length: number; tools: boolean }[] = [];
    this.ctx = {
      config,
      canon: new Canonicalizer(config.volatileKeys, config.volatileArgs),
      slot: (make) => new SessionSlot(slots++, make),
      window: (signal, length, tools = false) => windows.push({ signal, length, tools }),
    };
    this.detectors = createDetectors(this.ctx).filter((d) => config.signals[d.signal].enabled);
    // One window of the session's calls, as long as the longest an enabled signal asked for.
    for (const w of windows) {
      if (!config.signals[w.signal].enabled) continue;
      this.window = Math.max(this.window, w.length);
      this.windowTools ||= w.tools;
    }
    this.spanning = new Set(this.detectors.filter((d) => d.spansTurns).map((d) => d.signal));
    // Each event goes to the detectors that read its kind only, in the detectors' order.
    this.callDetectors = this.detectors.filter((d) => d.call !== undefined);
    for (const d of this.detectors) {
      if (d.event === undefined) continue;
      for (const kind of d.events ?? []) {
        const list = this.byKind.get(kind);
        if (list) list.push(d);
        else this.byKind.set(kind, [d]);
      }
    }
    // Waiting on a running process (`waitTools`) is not repeating oneself: both are left out.
    this.exempt = new Set([...config.exemptTools, ...config.waitTools]);
  }

  /** Feeds one event; returns the findings it raised (new, or more severe than before). */
  push(located: LocatedEvent): Finding[] {
    this.stats.events++;
    const e = located.event;
    const session = e.session ?? located.ref.file;
    switch (e.type) {
      case 'tool':
        this.onTool(e, located.ref, this.sessionState(session));
        break;
      case 'tool_result': {
        const state = this.sessions.get(session);
        if (state !== undefined) state.pendingCall = undefined;
        const queued = state !== undefined ? waitingFor(state.queue, e.id) : undefined;
        if (state === undefined || queued === undefined) {
          this.stats.unmatchedResults++;
          break;
        }
        queued.waiting = false;
        queued.call.settle(outcomeOf(e, this.ctx.canon) ?? UNKNOWN, e.output);
        queued.call.answered = true;
        queued.call.settledAt = located.ref;
        queued.settled = true;
        this.release(state, false);
        break;
      }
      case 'user': {
        const state = this.sessionState(session);
        state.pendingCall = undefined;
        this.release(state, true);
        // The window holds a turn's calls; kept, empty, for the next (a forgotten session takes it with it).
        state.steps?.clear();
        for (const d of this.detectors) if (!d.spansTurns) d.endSession(state);
        this.activeFindings.deleteSession(session, (signal) => !this.spanning.has(signal));
        break;
      }
      default: {
        const readers = this.byKind.get(e.type);
        const state = readers !== undefined ? this.sessionState(session) : this.sessions.get(session);
        if (state !== undefined) state.pendingCall = undefined;
        if (readers === undefined || state === undefined) break;
        const scope: Scope = { session, state, at: located.ref, task: e.task, agent: e.agent };
        for (const d of readers) d.event?.(located, scope, this.sink);
      }
    }
    return this.take();
  }

  /** Settles every call still waiting for a result (end of a replay). */
  flush(): Finding[] {
    const queued = [...this.sessions.values()].filter((s) => s.queue.length > 0).sort((a, b) => a.queuedSince - b.queuedSince);
    for (const state of queued) this.release(state, true);
    return this.take();
  }

  /**
   * Findings whose pattern is still going on, most severe first, as of their latest event: the
   * count, the evidence, and the message that says that count (the action stays the one raised).
   */
  active(): Finding[] {
    return [...this.activeFindings.values()].map(asNow).sort((a, b) => severity(b.action) - severity(a.action));
  }

  /** Each finding still active, as `onEpisodeEnd` tells one whose pattern ended: as of its latest event, with the finding raised for it. */
  noteActive(note: (last: Finding, raised: Finding) => void): void {
    for (const a of this.activeFindings.values()) note(asNow(a), a.finding);
  }

  /** The session's state, kept within MAX_SESSIONS (the one seen first goes). */
  private sessionState(name: string): EngineSession {
    let state = this.sessions.get(name);
    if (state === undefined) {
      this.sessions.set(name, (state = new EngineSession(name)));
      if (this.sessions.size > MAX_SESSIONS) this.forget(this.sessions.keys().next().value as string);
    }
    return state;
  }

  /** Forgets a session now (a receiver keeping its sessions within a number of bytes). */
  forgetSession(session: string): void {
    this.forget(session);
  }

  /** Forgets a session: its detectors' state, its calls waiting for a result, its active findings. */
  private forget(session: string): void {
    const state = this.sessions.get(session);
    // What a detector keeps of the session outside its slots (its own maps, an order over every session's) goes too.
    if (state !== undefined) for (const d of this.detectors) d.endSession(state);
    this.sessions.delete(session);
    this.activeFindings.deleteSession(session);
  }

  private onTool(e: ToolEvent, ref: EventRef, state: EngineSession): void {
    if (this.exempt.has(e.tool)) return;
    this.stats.calls++;
    const outcome = outcomeOf(e, this.ctx.canon);
    const queue = state.queue;
    const settled = outcome !== undefined || e.id === undefined;
    const call = new Call(this.ctx.canon, e, ref, outcome ?? UNKNOWN, state, state.pendingCall);
    call.answered = outcome !== undefined;
    state.pendingCall = settled ? undefined : call;
    if (queue.length === 0 && settled) {
      // Nothing waits ahead of it: judge it now.
      this.dispatch(call);
      return;
    }
    // A result settles the latest call with its id that still waits.
    if (!settled) stopWaiting(queue, e.id as string);
    if (queue.length === 0) state.queuedSince = ++this.queueStarts;
    queue.push({ call, id: e.id, settled, waiting: !settled });
    // A call whose result never comes must not hold back detection for ever.
    this.release(state, false, queue.length > MAX_PENDING ? queue.length - MAX_PENDING : 0);
  }

  /**
   * The latest call of the session that ended in a way no call of the session had ended lately (a
   * read that returned the file, a search that found something new): the agent did something.
   * Only an engine made with `trackNews` knows.
   */
  lastNews(session: string): SettledCall | undefined {
    return this.news?.get(session)?.last;
  }

  private dispatch(call: Call): void {
    // Calls one after another, each made before the one before it had its result, whose results
    // then came (a batch of parallel calls in one message), are one attempt; any other call is a
    // new one. (Calls whose results never come are not a batch: nothing shows they were made together.)
    const state = call.sessionState;
    call.attempt = call.batchedAfter?.answered === true ? call.batchedAfter.attempt : ++state.attempts;
    // Dispatched in order, so the call before it was judged: no chain of calls is kept alive.
    call.batchedAfter = undefined;
    // A command piped through a filter (`npm run migrate 2>&1 | tail -20`) exits with the filter's
    // status: when what it printed is the error its intent last failed with, it failed again, as a
    // person reading the output sees.
    if (call.pipedOutput !== undefined) {
      const failed = state.lastFailed;
      if (failed !== undefined && failed.outcome.kind === 'error' && failed.intent === call.intent && sameError(new ErrorText(call.pipedOutput), new ErrorText(failed.outcome.error)) !== undefined) call.outcome = new ErrorOutcome(call.pipedOutput);
      call.pipedOutput = undefined;
    }
    if (call.outcome.kind === 'error') state.lastFailed = call;
    if (this.news !== undefined) this.noteNews(call);
    if (this.window > 0) (state.steps ??= new CallSteps(this.window, this.windowTools)).push(call);
    for (const d of this.callDetectors) d.call?.(call, this.sink);
  }

  private noteNews(call: SettledCall): void {
    const news = this.news as Map<string, News>;
    const key = call.outcome.key;
    if (key === undefined) return;
    let n = news.get(call.session);
    if (!n) {
      news.set(call.session, (n = { seen: new Set(), order: [], oldest: 0 }));
      if (news.size > 1000) news.delete(news.keys().next().value as string);
    }
    if (n.seen.has(key)) return;
    n.last = call;
    n.seen.add(key);
    // The oldest goes first: `order` is a ring of the keys in the order they were first seen.
    if (n.order.length < NEWS_KEPT) n.order.push(key);
    else {
      n.seen.delete(n.order[n.oldest] as number);
      n.order[n.oldest] = key;
      n.oldest = (n.oldest + 1) % n.order.length;
    }
  }

  /** Dispatches settled calls in call order; `force` settles the waiting ones as unrecorded. */
  private release(state: EngineSession, force: boolean, forceFirst = 0): void {
    const queue = state.queue;
    let forced = forceFirst;
    while (queue.length > 0) {
      const head = queue[0] as QueuedCall;
      if (!head.settled) {
        if (!force && forced <= 0) break;
        forced--;
        // Given up on: as if a result had come for its id.
        if (head.id !== undefined) stopWaiting(queue, head.id);
        head.call.outcome = UNKNOWN;
        head.call.settledAt = (queue[queue.length - 1] as QueuedCall).call.ref;
        head.settled = true;
      }
      queue.shift();
      this.dispatch(head.call);
    }
  }

  private report(state: EpisodeState, make: () => Finding): void {
    const before = this.activeFindings.get(state.episode);
    // An episode dropped from the active list for its bound while it went on was raised already: it
    // is news on the same terms as an active one.
    const raised = before?.finding ?? this.activeFindings.dropped(state.episode);
    if (raised === undefined || severity(state.action) > severity(raised.action) || (state.stage !== undefined && state.stage !== raised.stage)) {
      const made = make();
      const finding = keptFinding(state.stage === undefined ? made : Object.assign({}, made, { stage: state.stage }));
      this.activeFindings.set(state.episode, { finding, state });
      this.emitted.push(finding);
    } else if (before !== undefined) {
      before.state = state;
      if (state.action === before.finding.action) before.make = make;
    }
  }

  private take(): Finding[] {
    const out = this.emitted;
    if (out.length > 0) this.emitted = [];
    return out;
  }
}

/**
 * Where a session last made progress: its latest call that succeeded in a way none of its calls
 * had lately. A loop whose evidence ends before it is over.
 */
export function progressOf(engine: Engine, session: string): EventRef | undefined {
  const news = engine.lastNews(session);
  return news?.outcome.kind === 'ok' ? news.ref : undefined;
}

