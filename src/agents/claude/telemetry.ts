import type { GuardianEvent } from '../../core/events';
import { UNEXPORTED_INPUT } from '../../core/intent';
import { parseJson } from '../../core/json';
import type { Plain, TelemetryRecord } from '../otlpLogs';
import type { TelemetryMapping } from '../agent';
import { apiErrorEvent, httpStatus, promptEvent, resultEvent, toolEvent, userEvent, type RecordScope } from '../eventBuilders';
import { isObject, isoTime } from '../transcript';

/*
 * Claude Code's OpenTelemetry log events (its docs, code.claude.com "Monitoring usage"; seen on
 * what Claude Code 2.1.328 sent a receiver here with `CLAUDE_CODE_ENABLE_TELEMETRY=1`,
 * `OTEL_LOGS_EXPORTER=otlp`, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): resource `service.name`
 * `claude-code`; each record's attribute `event.name` is the event without its `claude_code.`
 * prefix, with `session.id`, `prompt.id`, `event.sequence` (per session) and `event.timestamp`.
 * - `tool_result`: `tool_name`, `tool_use_id`, `success` ("true" | "false"), `error` (the failure's
 *   text), `error_type`; the call's input (`tool_input`, a JSON string; `tool_parameters` for some
 *   tools) only with `OTEL_LOG_TOOL_DETAILS=1`. No output is exported: a success's result is not
 *   known, so it is no outcome (a repeated success cannot be told from progress), and without the
 *   input each call is its own (nothing can be called the same call).
 * - `user_prompt`: the prompt's text only with `OTEL_LOG_USER_PROMPTS=1`; a turn either way.
 * - `api_error`: `error`, `status_code`, `model`, `attempt`.
 * Not read: `tool_decision` (a refused call has no `tool_result`, and did not run), `api_request`
 * and the hooks' own events.
 */

const SERVICE = 'claude-code';

function text(v: Plain | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

function eventName(r: TelemetryRecord): string | undefined {
  const name = text(r.attributes['event.name']) ?? r.eventName ?? (typeof r.body === 'string' && r.body.startsWith('claude_code.') ? r.body : undefined);
  return name?.replace(/^claude_code\./, '');
}

/** The call's input, as Claude Code exports it (a JSON string, or already an object). */
function input(r: TelemetryRecord): Record<string, unknown> | undefined {
  for (const key of ['tool_input', 'tool_parameters']) {
    const v = r.attributes[key];
    if (typeof v === 'string') {
      const parsed = parseJson(v);
      if (parsed.ok && isObject(parsed.value)) return parsed.value;
    } else if (isObject(v)) return v as Record<string, unknown>;
  }
  return undefined;
}

export const claudeTelemetry: TelemetryMapping = {
  owns: (r) => r.resource['service.name'] === SERVICE,
  session: (r) => text(r.attributes['session.id']),
  sequence: (r) => (typeof r.attributes['event.sequence'] === 'number' ? r.attributes['event.sequence'] : undefined),
  events(r, session): GuardianEvent[] {
    const ts = isoTime(text(r.attributes['event.timestamp']) ?? r.timeMs);
    const scope: RecordScope = { session, agent: 'claude-code', ...(ts !== undefined ? { ts } : {}) };
    switch (eventName(r)) {
      case 'tool_result': {
        const tool = text(r.attributes.tool_name);
        const id = text(r.attributes.tool_use_id);
        if (tool === undefined || id === undefined) return [];
        const failed = r.attributes.success === false || r.attributes.success === 'false';
        const error = text(r.attributes.error) ?? text(r.attributes.error_type) ?? 'failed';
        // Without the input each call is its own: its id stands in for what it was.
        const args = input(r) ?? { [UNEXPORTED_INPUT]: id };
        return [toolEvent(scope, tool, args, id), resultEvent(scope, id, failed ? { ok: false, error } : undefined)];
      }
      case 'user_prompt': {
        const prompt = text(r.attributes.prompt);
        const typed = prompt !== undefined && !/^<REDACTED>$/i.test(prompt) ? prompt : '';
        return [userEvent(scope, typed), ...(typed !== '' ? [promptEvent(scope, typed)] : [])];
      }
      case 'api_error': {
        const attempt = typeof r.attributes.attempt === 'number' ? r.attributes.attempt : undefined;
        return [apiErrorEvent(scope, { error: text(r.attributes.error), status: httpStatus(Number(r.attributes.status_code)), model: text(r.attributes.model), ...(attempt !== undefined && attempt > 1 ? { retry: attempt - 1 } : {}) })];
      }
      default:
        return [];
    }
  },
};
