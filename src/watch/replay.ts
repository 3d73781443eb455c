import { agentById, sniffDocument, sniffJsonl, sniffTextLine, transcriptAdapters, TRANSCRIPT_AGENTS, type SessionDatabase } from '../agents';
import type { Adapter } from '../agents/transcript';
import type { GuardianConfig } from '../core/config';
import { Engine, LatestFindings, latestOf } from '../core/engine';
import { EVENT_TYPES } from '../core/events';
import { isObject } from '../core/guards';
import { parseJson, stripBom } from '../core/json';
import type { Finding } from '../core/finding';
import { AgentLogReader, readAgentDocument, readDocumentText } from './agentLog';
import type { LocatedEvent, SkippedLine } from '../core/events';
import { EventLogReader, type EventSink } from './eventLog';
import { databaseAgent, SessionDatabaseReader } from './sessionDatabase';
import { isSqliteHeader } from './sqliteImage';
import { checkRegularFile, openRegularFile } from '../state/regularFile';

/** The guardian's events, seed 000's history, or the id of an agent whose transcripts it reads. */
export type ReplayFormat = string;
export const REPLAY_FORMATS: readonly string[] = ['auto', 'events', 'invocations', ...TRANSCRIPT_AGENTS.map((a) => a.id)];

export interface ReplayResult {
  readonly format: ReplayFormat;
  readonly events: number;
  /** The events read, counted by their type. */
  readonly byType: Readonly<Record<string, number>>;
  readonly skipped: number;
  /** The first 1000 skipped lines, with their reasons. */
  readonly skippedLines: SkippedLine[];
  /** Every skip counted by its field and reason (`type: unknown record type "foo"`), most frequent first. */
  readonly skippedKinds: { readonly field: string; readonly reason: string; readonly count: number }[];
  /** Whether the input held anything but white space: a blank input has nothing to read. */
  readonly blank: boolean;
  /** Each finding as it was raised (with `onFinding`, none: they went to it; with `keep: 'lastly'`, the same list as `lastly`). */
  readonly findings: Finding[];
  /** The same findings, each as it stood last: the count, evidence and words of its pattern's latest event. */
  readonly lastly: Finding[];
}

/** Distinct skip reasons counted; more are counted under one "other reasons" entry. */
const KEEP_KINDS = 200;

const KEEP_SKIPPED = 1_000;
const HEAD_BYTES = 64 * 1024;

/** What a format is, in words: what a file read as it was expected to hold. */
export function formatDescription(format: ReplayFormat): string {
  if (format === 'events') return 'the guardian\'s v1 event log (one {"v":1,"type":...} object per line)';
  if (format === 'invocations') return 'an invocation history ({"invocations":[...]})';
  const agent = agentById(format);
  return agent ? `a ${agent.label} transcript` : JSON.stringify(format);
}

export class UnknownFormatError extends Error {
  constructor(readonly file: string, detail: string) {
    super(`${file}: cannot tell what wrote it (${detail}); name the format with --format (${REPLAY_FORMATS.filter((f) => f !== 'auto').join(', ')})`);
    this.name = 'UnknownFormatError';
  }
}

/** A format, and for an agent with more than one shape of log, the shape the file is in. */
interface Detected {
  readonly format: ReplayFormat;
  readonly adapter?: Adapter;
  /** The file is the agent's SQLite database of sessions. */
  readonly database?: SessionDatabase;
}

/** The format of a parsed JSON value that is a whole file. */
function documentFormat(doc: unknown): Detected | undefined {
  if (isObject(doc) && Array.isArray(doc.invocations)) return { format: 'invocations' };
  const found = sniffDocument(doc);
  return found ? { format: found.agent.id, adapter: found.adapter } : undefined;
}

/**
 * What wrote a file, from its first record: the guardian's v1 events, seed 000's history, or one
 * of the agents. A file that is one JSON document spread over lines is parsed whole to tell.
 */
export async function detectFormat(file: string): Promise<ReplayFormat> {
  return (await detect(file)).format;
}

async function detect(file: string, format: ReplayFormat = 'auto'): Promise<Detected> {
  const handle = await openRegularFile(file);
  let head: string;
  let size: number;
  let buf: Buffer;
  try {
    size = (await handle.stat()).size;
    buf = Buffer.alloc(Math.min(HEAD_BYTES, size));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    buf = buf.subarray(0, bytesRead);
    head = stripBom(buf.toString('utf8'));
  } finally {
    await handle.close();
  }
  if (isSqliteHeader(buf)) {
    const found = databaseAgent(file, format);
    if (found === undefined) throw new UnknownFormatError(file, format === 'auto' ? 'an SQLite database' : `an SQLite database, and ${format} keeps none`);
    return { format: found.id, database: found.store };
  }
  if (format !== 'auto') return { format };
  return formatOf(head, size <= HEAD_BYTES, () => readDocumentText(file), file);
}

/**
 * The format, from the text's first `HEAD_BYTES` (`complete` when that is all of it); `whole`
 * gives the whole text when the first line is not a whole value (a pretty-printed document).
 */
async function formatOf(head: string, complete: boolean, whole: () => Promise<string>, file: string): Promise<Detected> {
  const events: Detected = { format: 'events' };
  const firstLine = firstNonBlankLine(head);
  if (firstLine === undefined) return events;
  // A first line longer than the head (an evaluation's instance with its whole history): the whole text tells.
  if (!complete && !head.slice(head.indexOf(firstLine) + firstLine.length).includes('\n')) return formatOf(await whole(), true, whole, file);
  let first: unknown;
  let isWhole = false;
  // A first line nested too deep tells nothing either: the events reader will skip it.
  const parsed = parseJson(firstLine);
  if (parsed.ok) {
    first = parsed.value;
    isWhole = firstLine.length >= head.trimEnd().length && complete;
  }
  if (isObject(first)) {
    if (first.v === 1 && typeof first.type === 'string' && (EVENT_TYPES as readonly string[]).includes(first.type)) return events;
    const byDoc = isWhole ? documentFormat(first) : Array.isArray(first.invocations) ? { format: 'invocations' } : undefined;
    if (byDoc !== undefined) return byDoc;
    const jsonl = sniffJsonl(first);
    if (jsonl) return { format: jsonl.agent.id, adapter: jsonl.adapter };
    return events;
  }
  if (Array.isArray(first)) {
    const byDoc = documentFormat(first);
    if (byDoc !== undefined) return byDoc;
    throw new UnknownFormatError(file, 'a JSON array no adapter recognises');
  }
  // A plain-text transcript: its first line says whose.
  if (!parsed.ok) {
    const text = sniffTextLine(firstLine);
    if (text) return { format: text.agent.id, adapter: text.adapter };
  }
  // A pretty-printed document: its first line is not a whole value.
  const parsedDoc = parseJson(await whole(), Number.POSITIVE_INFINITY);
  if (!parsedDoc.ok) return events;
  const byDoc = documentFormat(parsedDoc.value);
  if (byDoc === undefined) throw new UnknownFormatError(file, 'a JSON document no adapter recognises');
  return byDoc;
}

function firstNonBlankLine(text: string): string | undefined {
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end < 0 ? text.length : end);
    if (line.trim() !== '') return line;
    if (end < 0) break;
    start = end + 1;
  }
  return undefined;
}

/**
 * What a replay that collects its findings keeps: each as raised and each as it stood last
 * (`both`), or only the latter (`lastly`: `replay --json` and its text, which show nothing else).
 */
export type Keep = 'both' | 'lastly';

/**
 * The findings in the order raised, each replaced where it stands by itself as it stood last when
 * its pattern ends (`LatestFindings`' rule, `latestOf`), without holding both: the raised finding
 * is let go once replaced (its pattern has ended: it is not noted again).
 */
class LatestInPlace {
  readonly list: Finding[] = [];
  /** Where each raised finding not yet replaced is in the list. */
  private readonly places = new Map<Finding, number>();

  add(f: Finding): void {
    this.places.set(f, this.list.length);
    this.list.push(f);
  }

  note(last: Finding, raised: Finding): void {
    const at = this.places.get(raised);
    if (at === undefined) return;
    this.places.delete(raised);
    this.list[at] = latestOf(raised, last);
  }
}

/** Where a replay reads from: a regular file, read as it is on disk, or the whole text of a stream. */
type ReplaySource = { readonly file: string } | { readonly text: string };

/**
 * Runs every detector over one log from its start; `name` is how evidence names the file. With
 * `onFinding`, findings are streamed to it instead of being collected (memory stays flat).
 */
export async function replayFile(file: string, name: string, format: ReplayFormat, config: GuardianConfig, onFinding?: (f: Finding) => void, keep: Keep = 'both'): Promise<ReplayResult> {
  // A FIFO (or a link to one) given as a FILE would block every read: refused before any.
  await checkRegularFile(file, name);
  // A database is told by its first bytes, whatever format was named.
  const detected = await detect(file, format);
  return replay({ file }, name, detected, config, onFinding, keep);
}

/** The same over a whole log already in memory: what came through a pipe or stdin. */
export async function replayText(text: string, name: string, format: ReplayFormat, config: GuardianConfig, onFinding?: (f: Finding) => void, keep: Keep = 'both'): Promise<ReplayResult> {
  const body = stripBom(text);
  const detected = format === 'auto' ? await formatOf(body.slice(0, HEAD_BYTES), body.length <= HEAD_BYTES, async () => body, name) : { format };
  return replay({ text: body }, name, detected, config, onFinding, keep);
}

/**
 * The shape of an agent's log that a file named with `--format <agent>` is in: its only one, or,
 * for an agent with several, the document shape that recognises the whole file, else the JSONL
 * shape that recognises its first line, else its first JSONL shape.
 */
async function adapterOf(format: ReplayFormat, source: ReplaySource, path: string): Promise<Adapter | undefined> {
  const agent = agentById(format);
  if (agent === undefined) return undefined;
  const adapters = transcriptAdapters(agent);
  const jsonl = adapters.filter((a) => a.layout === 'jsonl');
  if (adapters.length <= 1) return adapters[0];
  const text = 'text' in source ? source.text : stripBom(await readDocumentText(source.file, path));
  const parsed = parseJson(text, Number.POSITIVE_INFINITY);
  const doc = parsed.ok ? adapters.find((a) => a.layout === 'document' && a.sniff(parsed.value)) : undefined;
  if (doc !== undefined) return doc;
  const line = firstNonBlankLine(text);
  const first = line !== undefined ? parseJson(line, Number.POSITIVE_INFINITY) : undefined;
  const byFirst = first?.ok && isObject(first.value) ? jsonl.find((a) => a.sniffText === undefined && a.sniff(first.value as Record<string, unknown>)) : undefined;
  const byText = line !== undefined && first?.ok !== true ? jsonl.find((a) => a.sniffText?.(line) === true) : undefined;
  return byFirst ?? byText ?? jsonl.find((a) => a.sniffText === undefined) ?? adapters[0];
}

async function replay(source: ReplaySource, name: string, detected: Detected, config: GuardianConfig, onFinding: ((f: Finding) => void) | undefined, keep: Keep): Promise<ReplayResult> {
  const resolved = detected.format;
  // Collected findings are shown once each, as they stood last; streamed ones as they are raised.
  const inPlace = onFinding === undefined && keep === 'lastly' ? new LatestInPlace() : undefined;
  const latest = onFinding === undefined && inPlace === undefined ? new LatestFindings() : undefined;
  const onEpisodeEnd = inPlace !== undefined ? (f: Finding, raised: Finding) => inPlace.note(f, raised) : latest !== undefined ? (f: Finding, raised: Finding) => latest.note(f, raised) : undefined;
  const engine = new Engine(config, onEpisodeEnd !== undefined ? { onEpisodeEnd } : {});
  const findings: Finding[] = inPlace?.list ?? [];
  const skippedLines: SkippedLine[] = [];
  let skipped = 0;
  const kinds = new Map<string, { field: string; reason: string; count: number }>();
  const skip = (s: SkippedLine) => {
    skipped++;
    if (skippedLines.length < KEEP_SKIPPED) skippedLines.push(s);
    // Reasons that name a line's own values (JSON errors' positions) would make every kind distinct: bounded.
    // A field's indices (`messages[12].role`) are the record's place, not its kind: counted as `messages[].role`.
    const field = s.field.replace(/\[\d+\]/g, '[]');
    const key = kinds.size < KEEP_KINDS || kinds.has(`${field}\u0000${s.reason}`) ? `${field}\u0000${s.reason}` : '\u0000';
    const kind = kinds.get(key) ?? (key === '\u0000' ? { field: '(various)', reason: 'other reasons', count: 0 } : { field, reason: s.reason, count: 0 });
    kind.count++;
    kinds.set(key, kind);
  };
  let events = 0;
  const byType: Record<string, number> = {};
  const take = onFinding ?? (inPlace !== undefined ? (f: Finding) => inPlace.add(f) : (f: Finding) => findings.push(f));
  const push = (e: Parameters<Engine['push']>[0]) => {
    events++;
    byType[e.event.type] = (byType[e.event.type] ?? 0) + 1;
    for (const f of engine.push(e)) take(f);
  };
  await readSource(source, name, detected, { event: push, skipped: skip });
  for (const f of engine.flush()) take(f);
  if (onEpisodeEnd !== undefined) engine.noteActive(onEpisodeEnd);
  const lastly = latest === undefined ? findings : findings.map((f) => latest.latest(f));
  const skippedKinds = [...kinds.values()].sort((a, b) => b.count - a.count);
  const blank = 'text' in source ? source.text.trim() === '' : detected.database === undefined && (await isBlankFile(source.file));
  return { format: resolved, events, byType, skipped, skippedLines, skippedKinds, blank, findings, lastly };
}

/** Reads one log's events into `sink`, in the shape `detected` says. */
async function readSource(source: ReplaySource, name: string, detected: Detected, sink: EventSink): Promise<void> {
  const resolved = detected.format;
  const path = 'file' in source ? source.file : name;
  if (resolved === 'invocations') {
    // Loaded for a history only: its schema (zod) is nothing a replay of events needs.
    const { historyEvents, parseInvocationHistory } = await import('../state/invocationHistory');
    const read = parseInvocationHistory('text' in source ? source.text : await readDocumentText(source.file, name), name);
    read.skipped.forEach((l) => sink.skipped(l));
    for (const e of historyEvents(read, name)) sink.event(e);
  } else if (resolved === 'events') {
    const reader = new EventLogReader(path, name);
    if ('text' in source) reader.readAll(source.text, sink);
    else {
      await reader.read(sink);
      reader.finish(sink);
    }
  } else if (detected.database !== undefined) {
    // Every session in it, each decoded as the watcher decodes it.
    const reader = new SessionDatabaseReader(path, name, detected.database, { since: 0, wanted: () => true });
    await reader.read(sink);
    reader.finish(sink);
  } else {
    const adapter = detected.adapter ?? (await adapterOf(resolved, source, path));
    if (adapter === undefined) throw new UnknownFormatError(path, `no format ${JSON.stringify(resolved)}`);
    if (adapter.layout === 'document') {
      await readAgentDocument(path, name, adapter, sink, 'text' in source ? source.text : undefined);
    } else {
      const reader = new AgentLogReader(path, name, adapter);
      if ('text' in source) reader.readAll(source.text, sink);
      else {
        await reader.read(sink);
        reader.finish(sink);
      }
    }
  }
}

/**
 * Every event of one log, read as `replay` reads it (for what compares the hook's judgement, call
 * by call, with the replay's: test/unit/core/oneJudgement.test.ts).
 */
export async function readEvents(file: string, name: string, format: ReplayFormat, onEvent: (e: LocatedEvent) => void): Promise<void> {
  await checkRegularFile(file, name);
  const detected = await detect(file, format);
  await readSource({ file }, name, detected, { event: onEvent, skipped: () => undefined });
}

/** Whether a file holds nothing but white space (read in chunks: a large file is not blank at its first one). */
async function isBlankFile(file: string): Promise<boolean> {
  const handle = await openRegularFile(file);
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    for (let pos = 0; ; ) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return true;
      if (stripBom(buf.toString('utf8', 0, bytesRead)).trim() !== '') return false;
      pos += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
