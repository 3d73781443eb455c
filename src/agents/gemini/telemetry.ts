import type { GuardianEvent } from '../../core/events';
import { attrObject, attrText } from '../otlpLogs';
import type { TelemetryMapping } from '../agent';
import { apiErrorEvent, promptEvent, resultEvent, toolEvent, userEvent } from '../eventBuilders';
import { parseArgsText } from '../transcript';

/*
 * Gemini CLI's OpenTelemetry log events (google-gemini/gemini-cli `packages/core/src/telemetry/`
 * `types.ts`, `loggers.ts`; as Gemini CLI 0.61.0 sent them here with settings `telemetry: {
 * enabled: true, target: "local", otlpEndpoint: "http://…:4318", otlpProtocol: "http" }`, JSON):
 * It also exports metrics and traces to the same endpoint, and shuts the three down with one
 * Promise.all, exiting on the first rejection (0.61.0's bundle, `shutdownTelemetry`): a receiver
 * that refused its metrics (404) lost its last logs ("Error shutting down SDK: OTLPExporterError:
 * Not Found"), which is why the receiver takes metrics and traces and drops them.
 * resource `service.name` `gemini-cli` with `session.id`; each record's attribute `event.name`
 * (`gemini_cli.…`), `session.id`, `prompt_id`, `event.timestamp`; the body a sentence.
 * - `gemini_cli.tool_call`: `function_name`, `function_args` (a JSON string, with `logPrompts`),
 *   `success`, `error` / `error_type` when the tool failed, and `metadata` (a JSON string) with the
 *   shell's `exitCode` and `isError`: a shell command that exited 1 is `success: true` with
 *   `metadata.isError`; read as a failure. No output and no call id are exported: a success has
 *   no outcome (its output is not known).
 * - `gemini_cli.user_prompt`: `prompt` (with `logPrompts`): a turn.
 * - `gemini_cli.api_error`: `error`, `status_code`, `model`.
 * Not read: the requests and responses, routing, the GenAI-convention duplicates, and Gemini's
 * own `loop_detected`.
 */

export const geminiTelemetry: TelemetryMapping = {
  owns: (r) => r.resource['service.name'] === 'gemini-cli',
  session: (r) => attrText(r.attributes['session.id']) ?? attrText(r.resource['session.id']),
  events(r, scope): GuardianEvent[] {
    switch (r.attributes['event.name']) {
      case 'gemini_cli.tool_call': {
        const tool = attrText(r.attributes.function_name);
        if (tool === undefined) return [];
        // No call id is exported: the call's time and name stand in for it.
        const id = `${scope.ts ?? ''}:${tool}`;
        const meta = attrObject(r.attributes.metadata);
        const exit = typeof meta?.exitCode === 'number' ? meta.exitCode : undefined;
        const failed = r.attributes.success === false || r.attributes.success === 'false' || meta?.isError === true || (exit !== undefined && exit !== 0);
        const error = attrText(r.attributes.error) ?? attrText(r.attributes['error.message']) ?? (exit !== undefined ? `Exit Code: ${exit}` : attrText(r.attributes.error_type) ?? 'failed');
        return [toolEvent(scope, tool, parseArgsText(r.attributes.function_args ?? {}), id), resultEvent(scope, id, failed ? { ok: false, error } : undefined)];
      }
      case 'gemini_cli.user_prompt': {
        const prompt = attrText(r.attributes.prompt) ?? '';
        return [userEvent(scope, prompt), ...(prompt !== '' ? [promptEvent(scope, prompt)] : [])];
      }
      case 'gemini_cli.api_error':
        return [apiErrorEvent(scope, { error: attrText(r.attributes.error) ?? attrText(r.attributes['error.message']), status: Number(r.attributes.status_code), model: attrText(r.attributes.model) })];
      default:
        return [];
    }
  },
};
