import type { GuardianEvent } from '../../core/events';
import { UNEXPORTED_INPUT } from '../../core/intent';
import { attrObject, attrText, type TelemetryRecord } from '../otlpLogs';
import type { TelemetryMapping } from '../agent';
import { apiErrorEvent, promptEvent, resultEvent, toolEvent, userEvent } from '../eventBuilders';

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

function eventName(r: TelemetryRecord): string | undefined {
  const name = attrText(r.attributes['event.name']) ?? r.eventName ?? (typeof r.body === 'string' && r.body.startsWith('claude_code.') ? r.body : undefined);
  return name?.replace(/^claude_code\./, '');
}

export const claudeTelemetry: TelemetryMapping = {
  owns: (r) => r.resource['service.name'] === SERVICE,
  // On the record as Claude Code sends it; on the resource once a Collector has lifted it there to
  // route by it (groupbyattrs moves the listed record attributes to the resource: docs/fleet.md).
  session: (r) => attrText(r.attributes['session.id']) ?? attrText(r.resource['session.id']),
  sequence: (r) => (typeof r.attributes['event.sequence'] === 'number' ? r.attributes['event.sequence'] : undefined),
  events(r, scope): GuardianEvent[] {
    switch (eventName(r)) {
      case 'tool_result': {
        const tool = attrText(r.attributes.tool_name);
        const id = attrText(r.attributes.tool_use_id);
        if (tool === undefined || id === undefined) return [];
        const failed = r.attributes.success === false || r.attributes.success === 'false';
        const error = attrText(r.attributes.error) ?? attrText(r.attributes.error_type) ?? 'failed';
        // Without the input each call is its own: its id stands in for what it was.
        // Its input, a JSON string (`tool_parameters` for some tools).
        const args = attrObject(r.attributes.tool_input) ?? attrObject(r.attributes.tool_parameters) ?? { [UNEXPORTED_INPUT]: id };
        return [toolEvent(scope, tool, args, id), resultEvent(scope, id, failed ? { ok: false, error } : undefined)];
      }
      case 'user_prompt': {
        const prompt = attrText(r.attributes.prompt);
        const typed = prompt !== undefined && !/^<REDACTED>$/i.test(prompt) ? prompt : '';
        return [userEvent(scope, typed), ...(typed !== '' ? [promptEvent(scope, typed)] : [])];
      }
      case 'api_error': {
        const attempt = typeof r.attributes.attempt === 'number' ? r.attributes.attempt : undefined;
        return [apiErrorEvent(scope, { error: attrText(r.attributes.error), status: Number(r.attributes.status_code), model: attrText(r.attributes.model), ...(attempt !== undefined && attempt > 1 ? { retry: attempt - 1 } : {}) })];
      }
      default:
        return [];
    }
  },
};
