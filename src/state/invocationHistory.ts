import { promises as fs } from 'node:fs';
import { z } from 'zod';
import type { InvocationRecord } from '../core/checkInfiniteLoop';
import type { LocatedEvent } from '../core/events';
import { exceedsDepth, MAX_JSON_DEPTH, parseJson, stripBom, tooDeepReason } from '../core/json';
import { arrayElementOffsets, lineColumn } from '../core/jsonPositions';
import { readTextIfExists, withFileLock } from './atomicFile';
import type { SkippedLine } from '../core/events';
import type { Workspace } from './workspace';

/** Seed 000: "max 50 invocations, rotate older ones". */
export const MAX_HISTORY = 50;

const recordSchema = z.looseObject({
  agent_name: z.string().min(1),
  config: z.record(z.string(), z.unknown()),
  timestamp: z.string().optional(),
  result: z.string().optional(),
  reason: z.string().optional(),
});

export interface LocatedInvocation {
  readonly record: InvocationRecord;
  readonly line: number;
}

export interface HistoryRead {
  readonly invocations: LocatedInvocation[];
  /** Entries (or the whole file) that could not be used, each with its line and field. */
  readonly skipped: SkippedLine[];
  readonly missing: boolean;
  /** The file is not JSON or not of the expected shape: seed 000's safe fallback is an empty history. */
  readonly corrupt: boolean;
}

/** Parses seed 000's history file text; `name` is how problems name the file. */
export function parseInvocationHistory(fileText: string | undefined, name: string): HistoryRead {
  if (fileText === undefined) return { invocations: [], skipped: [], missing: true, corrupt: false };
  // A BOM is not part of the JSON (and would shift the entries' offsets).
  const text = stripBom(fileText);
  if (text.trim() === '') return { invocations: [], skipped: [], missing: false, corrupt: false };
  // No depth limit on the file as a whole: an entry nested too deep is skipped alone, below.
  const parsed = parseJson(text, Number.POSITIVE_INFINITY);
  if (!parsed.ok) {
    return {
      invocations: [],
      skipped: [{ file: name, line: parsed.at?.line ?? 1, field: '(file)', reason: `not JSON (${parsed.error}); treated as an empty history` }],
      missing: false,
      corrupt: true,
    };
  }
  const raw = parsed.value;
  const list = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as { invocations?: unknown }).invocations : undefined;
  if (!Array.isArray(list)) {
    return {
      invocations: [],
      skipped: [{ file: name, line: 1, field: 'invocations', reason: 'expected an object with an "invocations" array; treated as an empty history' }],
      missing: false,
      corrupt: true,
    };
  }
  const offsets = arrayElementOffsets(text, 'invocations');
  const invocations: LocatedInvocation[] = [];
  const skipped: SkippedLine[] = [];
  list.forEach((entry, i) => {
    const offset = offsets[i];
    const line = offset === undefined ? 1 : lineColumn(text, offset).line;
    if (exceedsDepth(entry)) {
      skipped.push({ file: name, line, field: `invocations[${i}]`, reason: tooDeepReason() });
      return;
    }
    const parsed = recordSchema.safeParse(entry);
    if (parsed.success) invocations.push({ record: parsed.data as InvocationRecord, line });
    else {
      const issue = parsed.error.issues[0];
      skipped.push({ file: name, line, field: `invocations[${i}]${issue?.path.length ? `.${issue.path.join('.')}` : ''}`, reason: issue?.message ?? 'invalid entry' });
    }
  });
  return { invocations, skipped, missing: false, corrupt: false };
}

/** The history as events, in order, for the detectors. */
export function historyEvents(read: HistoryRead, name: string): LocatedEvent[] {
  return read.invocations.map(({ record, line }, i) => {
    const ts = record.timestamp !== undefined && !Number.isNaN(Date.parse(record.timestamp)) && /^\d{4}-\d\d-\d\dT/.test(record.timestamp) ? record.timestamp : undefined;
    return {
      event: {
        v: 1 as const,
        type: 'invocation' as const,
        agent: record.agent_name,
        config: record.config,
        ...(record.timestamp !== undefined ? { timestamp: record.timestamp } : {}),
        ...(ts !== undefined ? { ts } : {}),
        ...(record.result !== undefined ? { result: record.result } : {}),
        ...(record.reason !== undefined ? { reason: record.reason } : {}),
      },
      ref: { file: name, line, event: i + 1 },
    };
  });
}

export async function readInvocationHistory(ws: Workspace, rel: string): Promise<HistoryRead> {
  return parseInvocationHistory(await readTextIfExists(ws.path(rel)), rel);
}

/**
 * Appends one invocation under a lock, keeping the newest 50. A corrupt file is not overwritten
 * blindly: it is kept beside as `<name>.corrupt-<time>` and a new history starts.
 */
export async function appendInvocation(ws: Workspace, rel: string, record: InvocationRecord): Promise<{ kept: number; rotated: number; backup?: string }> {
  const file = await ws.resolveForWrite(rel);
  return withFileLock(file, async () => {
    const text = await readTextIfExists(file);
    const read = parseInvocationHistory(text, rel);
    let backup: string | undefined;
    if (read.corrupt && text !== undefined) {
      backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await fs.copyFile(file, backup);
    }
    // Entries that failed validation stay in the file untouched: they are not ours to drop.
    // Other top-level keys are kept as they are. Only what is nested too deep to be written back
    // (stringify would overflow) is left out, and then the file is kept beside first.
    const parsed = read.corrupt || text === undefined ? undefined : parseJson(text, Number.POSITIVE_INFINITY);
    const doc = parsed?.ok ? (parsed.value as { invocations: unknown[] }) : { invocations: [] };
    const writable = withoutTooDeep(doc);
    if (writable !== doc && backup === undefined) {
      backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await fs.copyFile(file, backup);
    }
    const all = [...writable.invocations, record];
    const rotated = Math.max(0, all.length - MAX_HISTORY);
    const kept = all.slice(rotated);
    await ws.writeAtomic(rel, `${JSON.stringify({ ...writable, invocations: kept }, null, 2)}\n`);
    return { kept: kept.length, rotated, ...(backup !== undefined ? { backup } : {}) };
  });
}

/** The history without the entries and keys nested too deep to be written back; the same object when there are none. */
function withoutTooDeep(doc: { invocations: unknown[] }): { invocations: unknown[] } {
  // The file's object and its array add two levels above each entry.
  if (!exceedsDepth(doc, MAX_JSON_DEPTH + 2)) return doc;
  const kept = Object.fromEntries(Object.entries(doc).filter(([key, value]) => key === 'invocations' || !exceedsDepth(value)));
  return { ...kept, invocations: doc.invocations.filter((entry) => !exceedsDepth(entry)) };
}
