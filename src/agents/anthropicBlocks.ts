import type { GuardianEvent } from '../core/events';
import { boundedText } from '../core/redact';
import { resultEvent, scoped, type RecordScope } from './eventBuilders';
import { argsObject, contentText, isObject, str, type AdapterSink, type Json, type RecentSet } from './transcript';

const TOOL_USE_ERROR = /<tool_use_error>([\s\S]*?)(<\/tool_use_error>|$)/;
const EXIT_CODE = /^Exit code (\d+)/;

/**
 * A tool_result's outcome: an error when `is_error` says so, when a Bash result starts with
 * `Exit code N` (N > 0), or when a validation error comes wrapped in `<tool_use_error>`.
 */
export function resultOutcome(block: Json): { ok: true; output: string } | { ok: false; error: string } {
  const text = contentText(block.content);
  const wrapped = TOOL_USE_ERROR.exec(text);
  if (wrapped) return { ok: false, error: (wrapped[1] ?? '').trim() || text };
  const exit = EXIT_CODE.exec(text);
  if (block.is_error === true || (exit && Number(exit[1]) !== 0)) return { ok: false, error: text.trim() || 'error' };
  return { ok: true, output: text };
}

/** What an MCP server says when a tool failed, as the first words of its text. */
const MCP_ERROR_TEXT = /^(?:Error:|Error executing tool\b|MCP error\b)/;

/**
 * An MCP tool's result (Claude Code names MCP tools `mcp__<server>__<tool>`) whose text is an error
 * is a failure even where the result is not marked as one (`is_error: false`): the MCP
 * specification asks servers to report a tool's failure in its result with `isError: true`
 * (modelcontextprotocol.io, specification, server/tools, "Error Handling"), but servers answer
 * "Error: No active project …" in plain text (issue 34, a real session), and a person reads it
 * as the error it says it is.
 */
function mcpOutcome(outcome: ReturnType<typeof resultOutcome>, mcp: boolean): ReturnType<typeof resultOutcome> {
  if (!mcp || !outcome.ok || !MCP_ERROR_TEXT.test(outcome.output.trimStart())) return outcome;
  return { ok: false, error: outcome.output.trim() };
}

/**
 * Tools through which an agent hands a subtask to another agent, in Anthropic-style content, and
 * the input fields holding the instruction and whom it goes to:
 * - Claude Code's subagent tool `Task` (`{description, prompt, subagent_type}`; seen in the real
 *   transcripts of ../shared/fixtures/real/claude), named `Agent` in later versions (github/docs
 *   `content/copilot/reference/hooks-reference.md`: "`task` → `Agent` (the literal `Task` is also
 *   accepted)");
 * - Roo Code's and Cline's `new_task`: Roo `{mode, message, todos}` (RooCodeInc/Roo-Code @cb836567
 *   `src/core/prompts/tools/native-tools/new_task.ts`), Cline `{context}` (cline/cline v3.89.2
 *   `apps/vscode/src/core/prompts/system-prompt-legacy/families/next-gen-models/gpt-5.ts`). Cline's
 *   hands the work over to a new task and never comes back: no result follows it, so it never
 *   counts as re-delegated.
 */
const DELEGATION_TOOLS = new Set(['Task', 'Agent', 'new_task']);

/** The delegation a tool_use makes, when it is one with an instruction. */
export function delegationOf(name: string, input: unknown): { instruction: string; to?: string } | undefined {
  if (!DELEGATION_TOOLS.has(name) || !isObject(input)) return undefined;
  const instruction = [input.prompt, input.message, input.context].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (instruction === undefined) return undefined;
  const to = str(input.subagent_type) ?? str(input.mode);
  return { instruction: boundedText(instruction), ...(to !== undefined ? { to } : {}) };
}

/**
 * Anthropic-style message content: `tool_use` blocks become `tool` events (each id once: a split
 * message repeats none, but a re-read one would), `tool_result` blocks their `tool_result`
 * events. A subagent's tool call is also a `delegation`, and its result a `delegation_result`.
 * Returns how many blocks were of either kind.
 */
export function toolBlocks(content: unknown, line: number, scope: RecordScope, seen: RecentSet, sink: AdapterSink, field: string): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  content.forEach((block, i) => {
    if (!isObject(block)) return;
    if (block.type === 'tool_use') {
      n++;
      const name = typeof block.name === 'string' && block.name !== '' ? block.name : undefined;
      if (name === undefined) return sink.skipped(line, `${field}[${i}].name`, 'a tool_use block without a tool name');
      const id = typeof block.id === 'string' && block.id !== '' ? block.id : undefined;
      if (id !== undefined && !seen.add(`use:${scope.session}:${id}`)) return;
      if (id !== undefined && name.startsWith('mcp__')) seen.add(`mcp:${scope.session}:${id}`);
      const event: GuardianEvent = scoped(scope, { type: 'tool', tool: name, args: argsObject(block.input), ...(id !== undefined ? { id } : {}) });
      sink.event(event, line);
      const delegation = delegationOf(name, block.input);
      if (delegation !== undefined) {
        if (id !== undefined) seen.add(`delegation:${scope.session}:${id}`);
        sink.event(scoped(scope, { type: 'delegation', ...delegation, ...(id !== undefined ? { id } : {}) }), line);
      }
    } else if (block.type === 'tool_result') {
      n++;
      const id = typeof block.tool_use_id === 'string' && block.tool_use_id !== '' ? block.tool_use_id : undefined;
      if (id === undefined) return sink.skipped(line, `${field}[${i}].tool_use_id`, 'a tool_result block without the id of its call');
      if (!seen.add(`result:${scope.session}:${id}`)) return;
      const outcome = mcpOutcome(resultOutcome(block), seen.has(`mcp:${scope.session}:${id}`));
      sink.event(resultEvent(scope, id, outcome), line);
      if (seen.has(`delegation:${scope.session}:${id}`)) {
        const back = outcome.ok ? { ok: true, output: boundedText(outcome.output) } : { ok: false, error: boundedText(outcome.error) };
        sink.event(scoped(scope, { type: 'delegation_result', id, ...back }), line);
      }
    }
  });
  return n;
}

/** What a person typed: the string, or the text blocks (files, images and the like left out). */
export function userText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
}

/** What the agent wrote to the person: the text blocks of an assistant message (thinking and tool calls left out). */
export function replyText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
    .filter((t) => t.trim() !== '')
    .join('\n');
}

