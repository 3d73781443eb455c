import { z } from 'zod';
import { exceedsDepth, parseJson, stripBom } from './json';

/**
 * The guardian's own event log, version 1: one JSON object per line.
 * Every event may carry `ts`, `session`, `task` and `agent`.
 */
const isoTimestamp = z.iso.datetime({ offset: true, local: false });
const name = z.string().min(1);
const common = {
  v: z.literal(1),
  ts: isoTimestamp.optional(),
  session: name.optional(),
  task: name.optional(),
  agent: name.optional(),
};
const jsonObject = z.record(z.string(), z.unknown());

export const toolEventSchema = z.object({
  ...common,
  type: z.literal('tool'),
  tool: name,
  args: jsonObject.optional(),
  id: name.optional(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.unknown().optional(),
});

export const toolResultEventSchema = z.object({
  ...common,
  type: z.literal('tool_result'),
  id: name,
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.unknown().optional(),
});

export const invocationEventSchema = z.object({
  ...common,
  type: z.literal('invocation'),
  agent: name,
  config: jsonObject.optional(),
  result: z.string().optional(),
  reason: z.string().optional(),
});

export const attemptEventSchema = z.object({
  ...common,
  type: z.literal('attempt'),
  task: name,
  tier: z.number().int().min(1).optional(),
  ok: z.boolean(),
  error: z.string().optional(),
  gate: name.optional(),
  description: z.string().optional(),
});

export const statusEventSchema = z.object({
  ...common,
  type: z.literal('status'),
  task: name,
  status: name,
});

const tokens = z.number().finite().nonnegative();
const positiveTokens = z.number().finite().positive();
export const usageEventSchema = z
  .object({
    ...common,
    type: z.literal('usage'),
    used: tokens.optional(),
    budget: positiveTokens.optional(),
    session_used: tokens.optional(),
    session_budget: positiveTokens.optional(),
  })
  .superRefine((e, ctx) => {
    const task = e.used !== undefined || e.budget !== undefined;
    const session = e.session_used !== undefined || e.session_budget !== undefined;
    if (!task && !session) {
      ctx.addIssue({ code: 'custom', path: ['used'], message: 'a usage event needs used+budget or session_used+session_budget' });
    }
    if (task && (e.used === undefined || e.budget === undefined)) {
      ctx.addIssue({ code: 'custom', path: [e.used === undefined ? 'used' : 'budget'], message: 'used and budget go together' });
    }
    if (session && (e.session_used === undefined || e.session_budget === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [e.session_used === undefined ? 'session_used' : 'session_budget'],
        message: 'session_used and session_budget go together',
      });
    }
  });

export const outputEventSchema = z.object({
  ...common,
  type: z.literal('output'),
  text: z.string(),
});

export const userEventSchema = z.object({
  ...common,
  type: z.literal('user'),
  text: z.string().optional(),
});

/*
 * Turn-level events (issue 14): what happens above the tool calls. A session receives prompts,
 * answers them, fails to reach its model, and hands subtasks to other agents. Readers emit them
 * beside the events above (a prompt follows its `user` event), and the tool-call signals ignore them.
 */

/** Who sent a prompt, where the agent's format says: a person, a hook, an orchestrating program or agent. */
export const PROMPT_SENDERS = ['user', 'hook', 'orchestrator', 'unknown'] as const;
export type PromptSender = (typeof PROMPT_SENDERS)[number];

export const promptEventSchema = z.object({
  ...common,
  type: z.literal('prompt'),
  text: z.string(),
  from: z.enum(PROMPT_SENDERS).optional(),
  id: name.optional(),
});

/** What the agent answered, in text (its narration included): compared between turns, never fed to `identical-output`. */
export const replyEventSchema = z.object({
  ...common,
  type: z.literal('reply'),
  text: z.string(),
});

const httpStatus = z.number().int().min(100).max(599);
/**
 * A request to the model that failed: its HTTP `status`, the error's `class` (the provider's
 * type or code: `rate_limit_error`, `context_length_exceeded`…) and message, each when known; and
 * `retry`, the attempt number when the agent retries it by itself.
 */
export const apiErrorEventSchema = z.object({
  ...common,
  type: z.literal('api_error'),
  error: z.string().optional(),
  status: httpStatus.optional(),
  class: name.optional(),
  retry: z.number().int().min(0).optional(),
  model: name.optional(),
});

/** A subtask handed to another agent (a subagent, a new task): its `instruction`, and `to` whom when named. */
export const delegationEventSchema = z.object({
  ...common,
  type: z.literal('delegation'),
  instruction: z.string(),
  to: name.optional(),
  id: name.optional(),
});

/** A delegated subtask came back: the one with this `id` (the latest one open, without an id). */
export const delegationResultEventSchema = z.object({
  ...common,
  type: z.literal('delegation_result'),
  id: name.optional(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.string().optional(),
});

export const eventSchema = z.discriminatedUnion('type', [
  toolEventSchema,
  toolResultEventSchema,
  invocationEventSchema,
  attemptEventSchema,
  statusEventSchema,
  usageEventSchema,
  outputEventSchema,
  userEventSchema,
  promptEventSchema,
  replyEventSchema,
  apiErrorEventSchema,
  delegationEventSchema,
  delegationResultEventSchema,
]);

export type WireEvent = z.infer<typeof eventSchema>;
export type ToolEvent = z.infer<typeof toolEventSchema>;
export type ToolResultEvent = z.infer<typeof toolResultEventSchema>;
export type AttemptEvent = z.infer<typeof attemptEventSchema>;
export type StatusEvent = z.infer<typeof statusEventSchema>;
export type UsageEvent = z.infer<typeof usageEventSchema>;
export type OutputEvent = z.infer<typeof outputEventSchema>;
export type UserEvent = z.infer<typeof userEventSchema>;
export type PromptEvent = z.infer<typeof promptEventSchema>;
export type ReplyEvent = z.infer<typeof replyEventSchema>;
export type ApiErrorEvent = z.infer<typeof apiErrorEventSchema>;
export type DelegationEvent = z.infer<typeof delegationEventSchema>;
export type DelegationResultEvent = z.infer<typeof delegationResultEventSchema>;
/** Invocations may come from seed 000's history file, whose timestamps are free text: kept verbatim. */
export type InvocationEvent = z.infer<typeof invocationEventSchema> & { timestamp?: string };
export type GuardianEvent = Exclude<WireEvent, { type: 'invocation' }> | InvocationEvent;
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
  const parsed = eventSchema.safeParse(raw);
  if (parsed.success) return { ok: true, event: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(event)';
  return { ok: false, field, reason: issue ? issue.message : 'invalid event' };
}

/*
 * The fast path. zod took most of a replay's time checking every line, yet nearly every line is
 * well formed: these checks accept such a line without it, and zod runs only where they do not
 * (a line it rejects, to say why, or a shape they leave to it). They are the schemas above, field
 * by field, for what `JSON.parse` returns (plain objects, no symbols, no getters);
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
// The very pattern the schema's `isoTimestamp` is built from.
const ISO_TIMESTAMP = z.regexes.datetime({ offset: true, local: false });
const isTimestamp: FieldCheck = (v) => typeof v === 'string' && ISO_TIMESTAMP.test(v);

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
