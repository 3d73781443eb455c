import { z } from 'zod';

/**
 * The schema of the guardian's own event log, version 1 (events.ts says what it is and reads it):
 * one JSON object per line; every event may carry `ts`, `session`, `task` and `agent`. Loaded only
 * when a line is not well formed, to say why (events.ts's fast path takes the others), so that a
 * replay of a good log never loads zod.
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

const toolEventSchema = z.object({
  ...common,
  type: z.literal('tool'),
  tool: name,
  args: jsonObject.optional(),
  id: name.optional(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.unknown().optional(),
});

const toolResultEventSchema = z.object({
  ...common,
  type: z.literal('tool_result'),
  id: name,
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.unknown().optional(),
});

const invocationEventSchema = z.object({
  ...common,
  type: z.literal('invocation'),
  agent: name,
  config: jsonObject.optional(),
  result: z.string().optional(),
  reason: z.string().optional(),
});

const attemptEventSchema = z.object({
  ...common,
  type: z.literal('attempt'),
  task: name,
  tier: z.number().int().min(1).optional(),
  ok: z.boolean(),
  error: z.string().optional(),
  gate: name.optional(),
  description: z.string().optional(),
});

const statusEventSchema = z.object({
  ...common,
  type: z.literal('status'),
  task: name,
  status: name,
});

const tokens = z.number().finite().nonnegative();
const positiveTokens = z.number().finite().positive();
const usageEventSchema = z
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

const outputEventSchema = z.object({
  ...common,
  type: z.literal('output'),
  text: z.string(),
});

const userEventSchema = z.object({
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
const PROMPT_SENDERS = ['user', 'hook', 'orchestrator', 'unknown'] as const;
export type PromptSender = (typeof PROMPT_SENDERS)[number];

const promptEventSchema = z.object({
  ...common,
  type: z.literal('prompt'),
  text: z.string(),
  from: z.enum(PROMPT_SENDERS).optional(),
  id: name.optional(),
});

/** What the agent answered, in text (its narration included): compared between turns, never fed to `identical-output`. */
const replyEventSchema = z.object({
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
const apiErrorEventSchema = z.object({
  ...common,
  type: z.literal('api_error'),
  error: z.string().optional(),
  status: httpStatus.optional(),
  class: name.optional(),
  retry: z.number().int().min(0).optional(),
  model: name.optional(),
});

/** A subtask handed to another agent (a subagent, a new task): its `instruction`, and `to` whom when named. */
const delegationEventSchema = z.object({
  ...common,
  type: z.literal('delegation'),
  instruction: z.string(),
  to: name.optional(),
  id: name.optional(),
});

/** A delegated subtask came back: the one with this `id` (the latest one open, without an id). */
const delegationResultEventSchema = z.object({
  ...common,
  type: z.literal('delegation_result'),
  id: name.optional(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
  output: z.string().optional(),
});

/**
 * The agent compacted its context (issue 34): the conversation so far replaced by a summary, a step
 * of the session as a prompt is. `trigger` says who asked, where the format tells (`auto`,
 * `manual`). Read by `compaction-thrash`: compactions with the same work between them are a loop.
 */
const compactionEventSchema = z.object({
  ...common,
  type: z.literal('compaction'),
  trigger: name.optional(),
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
  compactionEventSchema,
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
export type CompactionEvent = z.infer<typeof compactionEventSchema>;
/** Invocations may come from seed 000's history file, whose timestamps are free text: kept verbatim. */
export type InvocationEvent = z.infer<typeof invocationEventSchema> & { timestamp?: string };
export type GuardianEvent = Exclude<WireEvent, { type: 'invocation' }> | InvocationEvent;
