import * as path from 'node:path';
import type { Adapter } from '../../../src/agents/transcript';
import type { GuardianEvent } from '../../../src/core/events';
import { defaultConfig } from '../../../src/core/config';
import { replayFile, type ReplayFormat, type ReplayResult } from '../../../src/watch/replay';
import { tmpdir, write } from '../helpers';

export interface Decoded {
  events: { event: GuardianEvent; line: number }[];
  skipped: { line: number; field: string; reason: string }[];
}

/** Feeds records (line i+1 each) to a fresh decoder of the adapter, and finishes it. */
export function decode(adapter: Adapter, records: readonly unknown[], doc?: unknown): Decoded {
  const out: Decoded = { events: [], skipped: [] };
  const sink = {
    event: (event: GuardianEvent, line: number) => out.events.push({ event, line }),
    skipped: (line: number, field: string, reason: string) => out.skipped.push({ line, field, reason }),
  };
  const decoder = adapter.layout === 'jsonl' ? adapter.decoder('file-session') : adapter.decoder('file-session', doc);
  records.forEach((r, i) => decoder.record(r, i + 1, sink));
  decoder.finish(sink);
  return out;
}

export function jsonlText(records: readonly unknown[]): string {
  return records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
}

/** Writes the text to a temporary file and replays it like `loop-guardian replay`. */
export async function replayText(fileName: string, text: string, format: ReplayFormat | 'auto' = 'auto'): Promise<ReplayResult> {
  const dir = await tmpdir('lg-adapter-');
  const file = await write(dir, fileName, text);
  return replayFile(file, path.basename(file), format, defaultConfig());
}

export function halts(result: ReplayResult): string[] {
  return result.findings.filter((f) => f.action === 'halt').map((f) => f.signal);
}

/** The event kinds the readers wrote before the turn-level ones (issue 14): the tool-call view. */
const CALL_LEVEL: ReadonlySet<string> = new Set(['tool', 'tool_result', 'invocation', 'attempt', 'status', 'usage', 'output', 'user']);

/** The decoded events without the turn-level ones (prompt, reply, api_error, delegation…). */
export function callLevel<T extends { event: GuardianEvent }>(events: readonly T[]): T[] {
  return events.filter((e) => CALL_LEVEL.has(e.event.type));
}
