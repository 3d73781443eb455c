import type { GuardianEvent } from '../../core/events';
import { attrText } from '../otlpLogs';
import type { TelemetryMapping } from '../agent';
import { apiErrorEvent, httpStatus, promptEvent, resultEvent, toolEvent, userEvent } from '../eventBuilders';
import { parseArgsText } from '../transcript';
import { codexOutcome } from './transcript';

/*
 * Codex's OpenTelemetry log events (openai/codex `codex-rs/otel/src/events/session_telemetry.rs`,
 * `otel/src/tool_result.rs`; as Codex 0.169.0 sent them here with `[otel] exporter = { otlp-http =
 * { endpoint = "…/v1/logs", protocol = "json" } }` in config.toml): resource `service.name`
 * `codex_exec` (headless) or `codex_cli_rs` and other originators; each record's attribute
 * `event.name` (`codex.…`), every value a string (the tracing bridge's Display), the conversation
 * in `conversation.id`, the time in `event.timestamp`.
 * - `codex.tool_result`: `tool_name`, `call_id`, `arguments` (the call's JSON string), `output`
 *   (what the model was given: the rollout's text, `Process exited with code N` and its timing
 *   header lines included: read as the rollout's, ./transcript.ts `codexOutcome`), `success`
 *   ("true" even for a command that exited 1), `tool_result_seq`;
 * - `codex.user_prompt`: `prompt` (`[REDACTED]` unless `log_user_prompt = true`): a turn;
 * - `codex.api_request` with an `error.message` or an HTTP status of 400 and above: a failed
 *   model request (`attempt` its retry).
 * Not read: `codex.tool_decision`, `codex.sse_event`, `codex.conversation_starts` and the rest.
 */

export const codexTelemetry: TelemetryMapping = {
  owns: (r) => typeof r.resource['service.name'] === 'string' && /^codex/.test(r.resource['service.name']) && typeof r.attributes['event.name'] === 'string' && r.attributes['event.name'].startsWith('codex.'),
  // On the record as Codex sends it, or on the resource if a Collector lifted it there (groupbyattrs: docs/fleet.md).
  session: (r) => attrText(r.attributes['conversation.id']) ?? attrText(r.resource['conversation.id']),
  events(r, scope): GuardianEvent[] {
    switch (r.attributes['event.name']) {
      case 'codex.tool_result': {
        const tool = attrText(r.attributes.tool_name);
        const id = attrText(r.attributes.call_id);
        if (tool === undefined || id === undefined) return [];
        const outcome = codexOutcome(r.attributes.output ?? '');
        const failed = !outcome.ok || r.attributes.success === 'false' || r.attributes.success === false;
        return [toolEvent(scope, tool, parseArgsText(r.attributes.arguments ?? {}), id), resultEvent(scope, id, failed ? { ok: false, error: outcome.text.trim() || 'failed' } : { ok: true, output: outcome.text })];
      }
      case 'codex.user_prompt': {
        const prompt = attrText(r.attributes.prompt);
        const typed = prompt !== undefined && prompt !== '[REDACTED]' ? prompt : '';
        return [userEvent(scope, typed), ...(typed !== '' ? [promptEvent(scope, typed)] : [])];
      }
      case 'codex.api_request': {
        const status = httpStatus(Number(r.attributes['http.response.status_code']));
        const error = attrText(r.attributes['error.message']);
        if (error === undefined && (status === undefined || status < 400)) return [];
        const attempt = Number(r.attributes.attempt);
        return [apiErrorEvent(scope, { error: error ?? `HTTP ${status}`, status, ...(Number.isInteger(attempt) && attempt > 0 ? { retry: attempt } : {}) })];
      }
      default:
        return [];
    }
  },
};
