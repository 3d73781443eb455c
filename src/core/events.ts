import type * as EventSchema from './eventSchema';
import type { GuardianEvent } from './eventSchema';
import { exceedsDepth, MAX_JSON_DEPTH, stripBom, tooDeepReason } from './json';

/**
 * The guardian's own event log, version 1: one JSON object per line.
 * Every event may carry `ts`, `session`, `task` and `agent`. The schema (zod) is in eventSchema.ts,
 * loaded only to judge a line the fast path below does not take.
 */
export type {
  ApiErrorEvent,
  AttemptEvent,
  CompactionEvent,
  DelegationEvent,
  DelegationResultEvent,
  GuardianEvent,
  InvocationEvent,
  OutputEvent,
  PromptEvent,
  PromptSender,
  ReplyEvent,
  StatusEvent,
  ToolEvent,
  ToolResultEvent,
  UsageEvent,
  UserEvent,
  WireEvent,
} from './eventSchema';

export type EventType = GuardianEvent['type'];
export const EVENT_TYPES: readonly EventType[] = [
  'tool',
  'tool_result',
  'invocation',
  'attempt',
  'status',
  'usage',
  'output',
  'user',
  'prompt',
  'reply',
  'api_error',
  'delegation',
  'delegation_result',
  'compaction',
];

/** Where an event came from: its file, its 1-based line, and its 1-based index among that file's events. */
export interface EventRef {
  readonly file: string;
  readonly line: number;
  readonly event: number;
}

export interface LocatedEvent {
  readonly event: GuardianEvent;
  readonly ref: EventRef;
}

export type LineVerdict = { ok: true; event: GuardianEvent } | { ok: false; field: string; reason: string };

/** Why a line is not an event: the field it names, and the reason. */
export class LineProblem {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {}
}

/**
 * One line of the v1 event log, parsed once: its event, or the problem with it. Blank lines are
 * the caller's business. A leading BOM (the first line of a file some editor saved) is dropped; a
 * value nested too deep is a problem. A well-formed line is taken by the fast path with nothing
 * else built (the readers' hot path); any other goes on to zod, which says why.
 */
export function readEventLine(text: string): GuardianEvent | LineProblem {
  let value: unknown;
  try {
    value = JSON.parse(stripBom(text));
  } catch (err) {
    return new LineProblem('(line)', `not JSON: ${(err as Error).message}`);
  }
  const fast = wellFormedEvent(value);
  if (fast !== undefined) return fast;
  if (exceedsDepth(value)) return new LineProblem('(line)', tooDeepReason());
  const verdict = validateEvent(value);
  return verdict.ok ? verdict.event : new LineProblem(verdict.field, verdict.reason);
}

/** `readEventLine` as a verdict. */
export function parseEventLine(text: string): LineVerdict {
  const read = readEventLine(text);
  return read instanceof LineProblem ? { ok: false, field: read.field, reason: read.reason } : { ok: true, event: read };
}

let loadedSchema: typeof EventSchema | undefined;

/** The zod schema, loaded the first time a line needs it (a log of well-formed lines never does). */
function schema(): typeof EventSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loadedSchema ??= require('./eventSchema') as typeof EventSchema);
}

export function validateEvent(raw: unknown): LineVerdict {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, field: '(line)', reason: 'not a JSON object' };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(type)) {
    return {
      ok: false,
      field: 'type',
      reason: type === undefined ? 'missing event type' : `unknown event type ${JSON.stringify(type)} (expected one of ${EVENT_TYPES.join(', ')})`,
    };
  }
  const parsed = schema().eventSchema.safeParse(raw);
  if (parsed.success) return { ok: true, event: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(event)';
  return { ok: false, field, reason: issue ? issue.message : 'invalid event' };
}

/*
 * The fast path. zod took most of a replay's time checking every line, yet nearly every line is
 * well formed: these checks accept such a line without it, and zod runs only where they do not
 * (a line it rejects, to say why, or a shape they leave to it). They are eventSchema.ts's schemas,
 * field by field, for what `JSON.parse` returns (plain objects, no symbols, no getters);
 * test/unit/core/fastPaths.test.ts holds them to zod's verdict and output on generated lines.
 * Whatever they do not know goes to zod: a kind of event not listed here, a key the schema would
 * strip, a `__proto__` key a record would drop.
 */
type FieldCheck = (value: unknown) => boolean;

const isName: FieldCheck = (v) => typeof v === 'string' && v.length > 0;
const isString: FieldCheck = (v) => typeof v === 'string';
const isBoolean: FieldCheck = (v) => typeof v === 'boolean';
/** A record zod copies as it is: an object without an own `__proto__` key (which it would drop). */
const isRecord: FieldCheck = (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && !Object.prototype.hasOwnProperty.call(v, '__proto__');
const isTier: FieldCheck = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
const isTokens: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isPositiveTokens: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * The schema's `z.iso.datetime({ offset: true, local: false })`, without zod (RFC 3339 as zod
 * reads it): `YYYY-MM-DDTHH:MM:SS`, any fraction of a second, then `Z` or an offset of hours and
 * minutes, on a date that exists (29 February in leap years only). Read character by character,
 * as a regular expression would but without one: it runs on every event.
 */
const isTimestamp: FieldCheck = (v) => {
  if (typeof v !== 'string' || v.length < 20) return false;
  const year = digit(v, 0) * 1000 + digit(v, 1) * 100 + digit(v, 2) * 10 + digit(v, 3);
  const month = twoDigits(v, 5);
  const day = twoDigits(v, 8);
  if (year < 0 || v[4] !== '-' || v[7] !== '-' || v[10] !== 'T' || v[13] !== ':' || v[16] !== ':') return false;
  if (month < 1 || month > 12 || day < 1 || !inRange(v, 11, 23) || !inRange(v, 14, 59) || !inRange(v, 17, 59)) return false;
  let i = 19;
  if (v[i] === '.') {
    const from = ++i;
    while (i < v.length && digit(v, i) >= 0) i++;
    if (i === from) return false;
  }
  if (v[i] === 'Z') {
    if (i + 1 !== v.length) return false;
  } else if (v[i] === '+' || v[i] === '-') {
    if (i + 6 !== v.length || v[i + 3] !== ':' || !inRange(v, i + 1, 23) || !inRange(v, i + 4, 59)) return false;
  } else return false;
  return day <= daysInMonth(year, month);
};

/** The days of a month (1 to 12) of the Gregorian calendar: 29 February in leap years only. */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] as number);
}

/** The digit at `i`, or a number so negative that any sum it is part of is negative. */
function digit(v: string, i: number): number {
  const c = v.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -100_000;
}

function twoDigits(v: string, i: number): number {
  return digit(v, i) * 10 + digit(v, i + 1);
}

/** Two digits at `i`, from 00 to `max`. */
function inRange(v: string, i: number, max: number): boolean {
  const n = twoDigits(v, i);
  return n >= 0 && n <= max;
}

/** Days of each month in a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A parsed line as the event the schema makes of it, when the checks above can tell that the
 * schema accepts it as it is and it nests no deeper than MAX_JSON_DEPTH; undefined when they
 * cannot (zod decides then, once what nests too deep is refused). Each field the
 * kind of event knows is read by name and checked; then the keys are counted: one more than those
 * checked is a key the schema would strip, or a `__proto__` it would drop, and zod decides.
 */
export function wellFormedEvent(value: unknown): GuardianEvent | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (raw.v !== 1) return undefined;
  // `v` and `type`, then every field present that passes its check; -1 at the first that fails.
  let known = fields(2, raw.ts, isTimestamp);
  known = fields(known, raw.session, isName);
  known = fields(known, raw.task, isName);
  known = fields(known, raw.agent, isName);
  switch (raw.type) {
    case 'tool':
      if (raw.tool === undefined) return undefined;
      known = fields(known, raw.tool, isName);
      known = fields(known, raw.args, isShallowRecord);
      known = outcomeFields(raw, fields(known, raw.id, isName));
      break;
    case 'tool_result':
      if (raw.id === undefined) return undefined;
      known = outcomeFields(raw, fields(known, raw.id, isName));
      break;
    case 'invocation':
      if (raw.agent === undefined) return undefined;
      known = fields(known, raw.config, isShallowRecord);
      known = fields(known, raw.result, isString);
      known = fields(known, raw.reason, isString);
      break;
    case 'attempt':
      if (raw.task === undefined || raw.ok === undefined) return undefined;
      known = fields(known, raw.tier, isTier);
      known = fields(known, raw.ok, isBoolean);
      known = fields(known, raw.error, isString);
      known = fields(known, raw.gate, isName);
      known = fields(known, raw.description, isString);
      break;
    case 'status':
      if (raw.task === undefined || raw.status === undefined) return undefined;
      known = fields(known, raw.status, isName);
      break;
    case 'usage': {
      known = fields(known, raw.used, isTokens);
      known = fields(known, raw.budget, isPositiveTokens);
      known = fields(known, raw.session_used, isTokens);
      known = fields(known, raw.session_budget, isPositiveTokens);
      // The schema's refinement: a task's figures, a session's, or both, each pair complete.
      const task = raw.used !== undefined || raw.budget !== undefined;
      const session = raw.session_used !== undefined || raw.session_budget !== undefined;
      if (!(task || session) || (task && (raw.used === undefined || raw.budget === undefined)) || (session && (raw.session_used === undefined || raw.session_budget === undefined))) return undefined;
      break;
    }
    case 'output':
      if (raw.text === undefined) return undefined;
      known = fields(known, raw.text, isString);
      break;
    case 'user':
      known = fields(known, raw.text, isString);
      break;
    default:
      // Another kind (prompt, reply, api_error, delegation…): zod's.
      return undefined;
  }
  if (known < 0) return undefined;
  let keys = 0;
  for (const _key in raw) keys++;
  return keys === known ? (raw as unknown as GuardianEvent) : undefined;
}

/** `known` plus one when the field is present and passes `check`; -1 when it fails (or failed before). */
function fields(known: number, field: unknown, check: FieldCheck): number {
  if (known < 0 || field === undefined) return known;
  return check(field) ? known + 1 : -1;
}

/** How a call ended, on a `tool` or `tool_result` event. */
function outcomeFields(raw: Record<string, unknown>, known: number): number {
  const checked = fields(fields(known, raw.ok, isBoolean), raw.error, isString);
  return fields(checked, raw.output, isShallow);
}

/** A value that nests no deeper than what a field may (the event itself is level 1). */
const isShallow: FieldCheck = (v) => typeof v !== 'object' || v === null || !exceedsDepth(v, MAX_JSON_DEPTH - 1);
const isShallowRecord: FieldCheck = (v) => isRecord(v) && isShallow(v);

/** A line that was not a valid event: where it is and what is wrong with it. */
export interface SkippedLine {
  readonly file: string;
  readonly line: number;
  readonly field: string;
  readonly reason: string;
}

export function formatSkipped(s: SkippedLine): string {
  return `${s.file}:${s.line}: ${s.field}: ${s.reason}`;
}
