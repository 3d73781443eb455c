import { promises as fs } from 'node:fs';
import type { GuardianConfig } from '../core/config';
import { Engine } from '../core/engine';
import type { Finding } from '../core/finding';
import { EventLogReader, type SkippedLine } from './eventLog';
import { historyEvents, parseInvocationHistory } from './invocationHistory';

export type ReplayFormat = 'events' | 'invocations';
export const REPLAY_FORMATS: readonly (ReplayFormat | 'auto')[] = ['auto', 'events', 'invocations'];

export interface ReplayResult {
  readonly format: ReplayFormat;
  readonly events: number;
  readonly skipped: number;
  /** The first 1000 skipped lines, with their reasons. */
  readonly skippedLines: SkippedLine[];
  readonly findings: Finding[];
}

const KEEP_SKIPPED = 1_000;

/** Seed 000's history is one JSON document with an `invocations` array; anything else is read as the event log. */
export async function detectFormat(file: string): Promise<ReplayFormat> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const text = head.toString('utf8', 0, bytesRead);
    // A JSONL line is a whole object per line; the history file opens an object that spans lines.
    if (/^\s*\{\s*("invocations"\s*:|$)/.test(text.split('\n', 2).join('\n')) && /"invocations"\s*:/.test(text)) return 'invocations';
    return 'events';
  } finally {
    await handle.close();
  }
}

/**
 * Runs every detector over one log from its start; `name` is how evidence names the file. With
 * `onFinding`, findings are streamed to it instead of being collected (memory stays flat).
 */
export async function replayFile(
  file: string,
  name: string,
  format: ReplayFormat | 'auto',
  config: GuardianConfig,
  onFinding?: (f: Finding) => void,
): Promise<ReplayResult> {
  const resolved = format === 'auto' ? await detectFormat(file) : format;
  const engine = new Engine(config);
  const findings: Finding[] = [];
  const skippedLines: SkippedLine[] = [];
  let skipped = 0;
  const skip = (s: SkippedLine) => {
    skipped++;
    if (skippedLines.length < KEEP_SKIPPED) skippedLines.push(s);
  };
  let events = 0;
  const take = onFinding ?? ((f: Finding) => findings.push(f));
  const push = (e: Parameters<Engine['push']>[0]) => {
    events++;
    for (const f of engine.push(e)) take(f);
  };
  if (resolved === 'invocations') {
    const read = parseInvocationHistory(await fs.readFile(file, 'utf8'), name);
    read.skipped.forEach(skip);
    for (const e of historyEvents(read, name)) push(e);
  } else {
    const reader = new EventLogReader(file, name);
    const sink = { event: push, skipped: skip };
    await reader.read(sink);
    reader.finish(sink);
  }
  for (const f of engine.flush()) take(f);
  return { format: resolved, events, skipped, skippedLines, findings };
}
