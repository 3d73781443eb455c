import type * as EventSchema from './eventSchema';
import type { GuardianEvent } from './eventSchema';
import { exceedsDepth, parseJson, stripBom } from './json';

/**
 * The guardian's own event log, version 1: one JSON object per line.
 * Every event may carry `ts`, `session`, `task` and `agent`. The schema (zod) is in eventSchema.ts,
 * loaded only to judge a line the fast path below does not take.
 */
export type {
  ApiErrorEvent,
  AttemptEvent,
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

/**
 * Parses one line of the v1 event log. Blank lines are the caller's business. A leading BOM (the
 * first line of a file some editor saved) is dropped; a value nested too deep is a skipped line.
 */
export function parseEventLine(text: string): LineVerdict {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, field: '(line)', reason: parsed.tooDeep ? parsed.error : `not JSON: ${parsed.error}` };
  const fast = wellFormedEvent(parsed.value);
  return fast !== undefined ? { ok: true, event: fast } : validateEvent(parsed.value);
}

/**
 * A line's event when it is a well-formed one, by the fast path alone (no verdict built: the
 * readers' hot path); undefined otherwise, and `parseEventLine` says why.
 */
export function wellFormedLine(text: string): GuardianEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(stripBom(text));
  } catch {
    return undefined;
  }
  return exceedsDepth(value) ? undefined : wellFormedEvent(value);
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
const isAnything: FieldCheck = () => true;
/** A record zod copies as it is: an object without an own `__proto__` key (which it would drop). */
const isRecord: FieldCheck = (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && !Object.prototype.hasOwnProperty.call(v, '__proto__');
const isTier: FieldCheck = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
const isTokens: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isPositiveTokens: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * The schema's `z.iso.datetime({ offset: true, local: false })`, without zod (RFC 3339 as zod
 * reads it): a date that exists (29 February in leap years only), a time with seconds and any
 * fraction of them, and `Z` or an offset of hours and minutes. The digits are read off the text,
 * not captured: no allocation per event.
 */
const TIMESTAMP = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;
/** Days of each month in a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isTimestamp: FieldCheck = (v) => {
  if (typeof v !== 'string' || !TIMESTAMP.test(v)) return false;
  const digit = (i: number) => v.charCodeAt(i) - 48;
  const year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3);
  const month = digit(5) * 10 + digit(6);
  const day = digit(8) * 10 + digit(9);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] as number));
};

interface FastShape {
  /** Every key the schema knows, with its check (`v` and `type` are checked before). */
  readonly fields: ReadonlyMap<string, FieldCheck>;
  readonly required: readonly string[];
  /** The schema's refinement, where it has one. */
  readonly refine?: (e: Record<string, unknown>) => boolean;
}

function shape(fields: Record<string, FieldCheck>, required: readonly string[] = [], refine?: FastShape['refine']): FastShape {
  const all: Record<string, FieldCheck> = { v: isAnything, type: isAnything, ts: isTimestamp, session: isName, task: isName, agent: isName, ...fields };
  return { fields: new Map(Object.entries(all)), required, ...(refine ? { refine } : {}) };
}

const FAST_SHAPES: ReadonlyMap<unknown, FastShape> = new Map<unknown, FastShape>([
  ['tool', shape({ tool: isName, args: isRecord, id: isName, ok: isBoolean, error: isString, output: isAnything }, ['tool'])],
  ['tool_result', shape({ id: isName, ok: isBoolean, error: isString, output: isAnything }, ['id'])],
  ['invocation', shape({ config: isRecord, result: isString, reason: isString }, ['agent'])],
  ['attempt', shape({ tier: isTier, ok: isBoolean, error: isString, gate: isName, description: isString }, ['task', 'ok'])],
  ['status', shape({ status: isName }, ['task', 'status'])],
  [
    'usage',
    shape({ used: isTokens, budget: isPositiveTokens, session_used: isTokens, session_budget: isPositiveTokens }, [], (e) => {
      const task = e.used !== undefined || e.budget !== undefined;
      const session = e.session_used !== undefined || e.session_budget !== undefined;
      return (task || session) && (!task || (e.used !== undefined && e.budget !== undefined)) && (!session || (e.session_used !== undefined && e.session_budget !== undefined));
    }),
  ],
  ['output', shape({ text: isString }, ['text'])],
  ['user', shape({ text: isString })],
]);

/**
 * A parsed line as the event the schema makes of it, when the checks above can tell that the
 * schema accepts it as it is; undefined when they cannot (zod decides then).
 */
export function wellFormedEvent(value: unknown): GuardianEvent | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (raw.v !== 1) return undefined;
  const s = FAST_SHAPES.get(raw.type);
  if (s === undefined) return undefined;
  for (const key in raw) {
    const check = s.fields.get(key);
    if (check === undefined || !check(raw[key])) return undefined;
  }
  for (const key of s.required) if (!(key in raw)) return undefined;
  if (s.refine !== undefined && !s.refine(raw)) return undefined;
  return raw as unknown as GuardianEvent;
}

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
