import { strict as assert } from 'node:assert';
import { claudeTranscript } from '../../../src/agents/claude/transcript';
import { clineTranscript } from '../../../src/agents/cline/transcript';
import { codexTranscript } from '../../../src/agents/codex/transcript';
import { copilotCliTranscript } from '../../../src/agents/copilot-cli/transcript';
import { copilotChatTranscript, copilotPromptLog } from '../../../src/agents/copilot/transcript';
import { geminiTranscript } from '../../../src/agents/gemini/transcript';
import { rooTranscript } from '../../../src/agents/roo/transcript';
import { apiErrorFromText, statusInText } from '../../../src/agents/transcript';
import type { GuardianEvent } from '../../../src/core/events';
import { decode } from './util';

/*
 * The turn-level events each reader emits (issue 14), from records in each agent's documented or
 * observed shape (our own text; the sources are cited where each reader parses them).
 */

const TURN = new Set(['prompt', 'reply', 'api_error', 'delegation', 'delegation_result']);

/** The turn-level events, each as a short description. */
function turns(events: readonly { event: GuardianEvent }[]): string[] {
  return events
    .map((e) => e.event)
    .filter((e) => TURN.has(e.type))
    .map((e) => {
      switch (e.type) {
        case 'prompt':
          return `prompt${e.from ? `(${e.from})` : ''} ${e.text}`;
        case 'reply':
          return `reply ${e.text}`;
        case 'api_error':
          return `api_error ${[e.status, e.class, e.retry !== undefined ? `retry ${e.retry}` : undefined, e.error].filter((x) => x !== undefined).join(' | ')}`;
        case 'delegation':
          return `delegation${e.to ? `(${e.to})` : ''} ${e.id ?? ''} ${e.instruction}`;
        case 'delegation_result':
          return `back ${e.id ?? ''} ${String(e.ok)} ${e.output ?? e.error ?? ''}`.trimEnd();
        default:
          return e.type;
      }
    });
}

describe('error texts: status and fields', () => {
  it('reads a status where the text names one', () => {
    assert.equal(statusInText('429 Too Many Requests'), 429);
    assert.equal(statusInText('OAI Compatible API error: [401] {"error":…}'), 401);
    assert.equal(statusInText('[API Error: Rate limit exceeded (Status: 429)]'), 429);
    assert.equal(statusInText('API Error: 529 Overloaded'), 529);
    assert.equal(statusInText('request failed after 3 attempts'), undefined);
  });

  it("reads Cline's serialised error", () => {
    assert.deepEqual(apiErrorFromText(JSON.stringify({ message: 'prompt is too long', status: 400, code: 'invalid_request_error', modelId: 'claude-x' })), { error: 'prompt is too long', status: 400, class: 'invalid_request_error', model: 'claude-x' });
    assert.deepEqual(apiErrorFromText('400 Bad Request'), { error: '400 Bad Request', status: 400 });
  });
});

describe('Claude Code: prompts, replies, API errors, Task delegations', () => {
  const S = 'c1';
  let n = 0;
  const line = (type: string, content: unknown, extra: Record<string, unknown> = {}) => ({ type, uuid: `u${++n}`, sessionId: S, timestamp: '2026-11-22T10:00:00.000Z', message: { role: type, content }, ...extra });

  it('reads each kind from its record', () => {
    const { events, skipped } = decode(claudeTranscript, [
      line('user', 'find the config parser'),
      line('assistant', [{ type: 'text', text: 'Delegating.' }, { type: 'tool_use', id: 't1', name: 'Task', input: { description: 'Find it', prompt: 'Find where the config is parsed', subagent_type: 'Explore' } }]),
      line('user', [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'src/config.ts' }] }]),
      { type: 'system', subtype: 'api_error', level: 'error', sessionId: S, timestamp: '2026-11-22T10:00:05.000Z', retryAttempt: 2, maxRetries: 10, retryInMs: 800, error: { status: 529, message: 'overloaded' } },
      line('assistant', [{ type: 'text', text: 'Please run /login · API Error: 401 OAuth access token has expired.' }], { isApiErrorMessage: true, apiErrorStatus: 401, error: 'authentication_failed' }),
      line('user', 'Examine package.json', { isSidechain: true, agentId: 'a1' }),
    ]);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), [
      'prompt find the config parser',
      'delegation(Explore) t1 Find where the config is parsed',
      'reply Delegating.',
      'back t1 true src/config.ts',
      'api_error 529 | retry 2 | overloaded',
      'api_error 401 | authentication_failed | Please run /login · API Error: 401 OAuth access token has expired.',
      'prompt(orchestrator) Examine package.json',
    ]);
    // The failure written in the model's place is no answer.
    assert.ok(!turns(events).some((t) => t.startsWith('reply Please run')));
  });
});

describe('Cline and Roo Code ui_messages.json: prompts, replies, failed requests, subtasks', () => {
  let ts = 1770577372000;
  const say = (kind: string, text: string, extra: Record<string, unknown> = {}) => ({ ts: ts++, type: 'say', say: kind, text, ...extra });
  const ask = (kind: string, text: string, extra: Record<string, unknown> = {}) => ({ ts: ts++, type: 'ask', ask: kind, text, ...extra });

  it("Cline's retries: automatic ones numbered, the last one (failed) left to the ask that follows; the person's retry adds nothing", () => {
    const err = JSON.stringify({ message: '400 {"type":"error","error":{"type":"invalid_request_error"}}', status: 400, code: 'invalid_request_error', modelId: 'm1' });
    const records = [
      say('task', 'Deploy the app.'),
      say('api_req_started', JSON.stringify({ request: '<task>Deploy</task>' })),
      say('error_retry', JSON.stringify({ attempt: 1, maxAttempts: 3, delaySeconds: 2, errorMessage: err })),
      say('error_retry', JSON.stringify({ attempt: 3, maxAttempts: 3, delaySeconds: 0, failed: true, errorMessage: err })),
      ask('api_req_failed', err),
      say('api_req_retried', ''),
      say('api_req_started', JSON.stringify({ request: 'x', retryStatus: { attempt: 2, maxAttempts: 3, delaySec: 4, errorSnippet: '429 rate limited...' } })),
      say('user_feedback', 'try another model'),
      say('text', 'Switched.'),
      say('completion_result', 'Deployed.'),
    ];
    const { events, skipped } = decode(clineTranscript, records, records);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), [
      'prompt Deploy the app.',
      'api_error 400 | invalid_request_error | retry 1 | 400 {"type":"error","error":{"type":"invalid_request_error"}}',
      'api_error 400 | invalid_request_error | 400 {"type":"error","error":{"type":"invalid_request_error"}}',
      'api_error 429 | retry 2 | 429 rate limited...',
      'prompt(user) try another model',
      'reply Switched.',
      'reply Deployed.',
    ]);
  });

  it("Roo Code: its task said as the first text, its retries, and a subtask that comes back", () => {
    const records = [
      say('text', 'Restore the tasks.'),
      say('api_req_started', JSON.stringify({ request: '<task>Restore</task>' })),
      say('api_req_retry_delayed', '503\nService Unavailable\n<retry_timer>3</retry_timer>', { partial: true }),
      say('api_req_retry_delayed', '503\nService Unavailable\n'),
      ask('tool', JSON.stringify({ tool: 'newTask', mode: '💻 Code', content: 'Write the audit script.' })),
      say('subtask_result', 'The script is in scripts/audit.ps1.'),
    ];
    const { events } = decode(rooTranscript, records, records);
    assert.deepEqual(turns(events), [
      'prompt Restore the tasks.',
      'api_error 503 | retry 0 | 503\nService Unavailable',
      // A ui call's id is `<session>:<ts>`.
      `delegation(💻 Code) file-session:${records[4]?.ts} Write the audit script.`,
      'back  true The script is in scripts/audit.ps1.',
    ]);
  });

  it("Cline's subagents: each prompt of the final status a delegation with its outcome", () => {
    const records = [
      say('task', 'Review it.'),
      say('subagent', JSON.stringify({ status: 'running', items: [] }), { partial: true }),
      say('subagent', JSON.stringify({ status: 'completed', items: [{ index: 1, prompt: 'Review the tests', status: 'completed', result: 'Fine.' }, { index: 2, prompt: 'Review the docs', status: 'failed', error: 'timeout' }] })),
    ];
    const { events } = decode(clineTranscript, records, records);
    assert.deepEqual(turns(events), [
      'prompt Review it.',
      'delegation file-session:2:0 Review the tests',
      'back file-session:2:0 true Fine.',
      'delegation file-session:2:1 Review the docs',
      'back file-session:2:1 false timeout',
    ]);
  });

  it('the message files: the prompt without its environment details, the answer', () => {
    const records = [
      { role: 'user', content: [{ type: 'text', text: '<task>\nDeploy.\n</task>' }, { type: 'text', text: '<environment_details>\n# Time 10:00\n</environment_details>' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'On it.' }, { type: 'tool_use', id: 'n1', name: 'new_task', input: { mode: 'code', message: 'Write the script', todos: null } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'n1', content: [{ type: 'text', text: 'The script is written.' }] }] },
    ];
    const { events } = decode(clineTranscript, records, records);
    assert.deepEqual(turns(events), ['prompt <task>\nDeploy.\n</task>', 'delegation(code) n1 Write the script', 'reply On it.', 'back n1 true The script is written.']);
  });
});

describe('Copilot CLI: prompts and who sent them, errors, subagents', () => {
  let n = 0;
  const rec = (type: string, data: Record<string, unknown>) => ({ type, data, id: `e${++n}`, timestamp: '2026-11-20T10:00:00.000Z', parentId: null });

  it('reads each kind', () => {
    const { events, skipped } = decode(copilotCliTranscript, [
      rec('session.start', { sessionId: 'cp', version: 1, producer: 'copilot-agent', copilotVersion: '1.0.10' }),
      rec('user.message', { content: 'fix it' }),
      rec('user.message', { content: 'continue', isAutopilotContinuation: true }),
      rec('user.message', { content: 'do the subtask', source: 'agent-planner' }),
      rec('assistant.message', { messageId: 'm', content: 'Looking.', toolRequests: [] }),
      rec('session.error', { errorType: 'query', message: 'Execution failed: CAPIError: 400 Bad Request', statusCode: 400 }),
      rec('session.error', { errorType: 'mcp', message: 'Failed to start MCP Servers' }),
      rec('tool.execution_start', { toolCallId: 'k1', toolName: 'task', arguments: { name: 'explore-shim', prompt: 'Explore the shim', agent_type: 'explore', mode: 'background' } }),
      rec('tool.execution_complete', { toolCallId: 'k1', success: true, result: { content: 'Agent started in background' } }),
      rec('subagent.started', { toolCallId: 'k1', agentName: 'explore', agentDisplayName: 'Explore Agent', agentDescription: '' }),
      rec('subagent.completed', { toolCallId: 'k1', agentName: 'explore', agentDisplayName: 'Explore Agent' }),
      rec('tool.execution_start', { toolCallId: 'k2', toolName: 'task', arguments: { prompt: 'Review the diff', agent_type: 'code-review' } }),
      rec('subagent.completed', { toolCallId: 'k2', agentName: 'code-review', agentDisplayName: 'Code review' }),
      rec('tool.execution_complete', { toolCallId: 'k2', success: true, result: { content: 'No issues.' } }),
    ]);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), [
      'prompt fix it',
      'prompt(hook) continue',
      'prompt(orchestrator) do the subtask',
      'reply Looking.',
      'api_error 400 | query | Execution failed: CAPIError: 400 Bad Request',
      'delegation(explore) k1 Explore the shim',
      'back k1 true',
      'delegation(code-review) k2 Review the diff',
      'back k2 true No issues.',
    ]);
  });
});

describe('Copilot in VS Code chat documents: prompts, answers, failed requests, subagents', () => {
  it('reads each kind; a cancelled request is no failure', () => {
    const requests = [
      {
        requestId: 'r1',
        message: { text: 'plan it', parts: [] },
        response: [{ value: 'Here is the plan.' }],
        result: { metadata: { toolCallRounds: [{ response: '', toolCalls: [{ name: 'runSubagent', arguments: JSON.stringify({ prompt: 'Research the parser', description: 'research' }), id: 's1' }] }], toolCallResults: { s1: { node: { type: 2, text: 'It is in src/parser.' } } } } },
      },
      { requestId: 'r2', message: { text: 'asdasd', parts: [] }, response: [], result: { errorDetails: { code: 'failed', message: 'Sorry, your request failed.\n\nReason: OAI Compatible API error: [401] Authentication Error' } } },
      { requestId: 'r3', message: { text: 'stop', parts: [] }, response: [], result: { errorDetails: { code: 'canceled', message: 'Canceled' } } },
    ];
    const doc = { requesterUsername: 'u', responderUsername: 'GitHub Copilot', requests };
    const { events, skipped } = decode(copilotChatTranscript, requests, doc);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), [
      'prompt plan it',
      'delegation s1 Research the parser',
      'back s1 true It is in src/parser.',
      'reply Here is the plan.',
      'prompt asdasd',
      'api_error 401 | failed | Sorry, your request failed.\n\nReason: OAI Compatible API error: [401] Authentication Error',
      'prompt stop',
    ]);
  });

  it("the prompt log: a request's successful response is the answer", () => {
    const doc = { exportedAt: '2026-11-20T10:00:00Z', prompts: [{ prompt: 'remove the tests', logs: [{ kind: 'request', type: 'ChatMLSuccess', response: { type: 'success', message: ['Removed.'] } }] }] };
    const { events } = decode(copilotPromptLog, doc.prompts, doc);
    assert.deepEqual(turns(events), ['prompt remove the tests', 'reply Removed.']);
  });
});

describe('Codex: prompts, answers, errors and stream retries', () => {
  const at = (s: number) => `2026-11-20T10:00:0${s}.000Z`;
  it('reads each kind', () => {
    const { events, skipped } = decode(codexTranscript, [
      { timestamp: at(0), type: 'session_meta', payload: { id: 'cx', cwd: '/w' } },
      { timestamp: at(1), type: 'event_msg', payload: { type: 'user_message', message: 'fix it' } },
      { timestamp: at(2), type: 'event_msg', payload: { type: 'stream_error', message: 'Reconnecting... 2/5' } },
      { timestamp: at(3), type: 'event_msg', payload: { type: 'error', message: 'Your input exceeds the context window of this model.', codex_error_info: 'context_window_exceeded' } },
      { timestamp: at(4), type: 'event_msg', payload: { type: 'error', message: 'unexpected status 401 Unauthorized', codex_error_info: { http_connection_failed: { http_status_code: 401 } } } },
      { timestamp: at(5), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] } },
    ]);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), [
      'prompt fix it',
      'api_error retry 2 | Reconnecting... 2/5',
      'api_error context_window_exceeded | Your input exceeds the context window of this model.',
      'api_error 401 | http_connection_failed | unexpected status 401 Unauthorized',
      'reply Done.',
    ]);
  });
});

describe('Gemini CLI: prompts, answers, API errors', () => {
  it('reads each kind; an answer once per message; errors that are not an API error are left out', () => {
    const { events, skipped } = decode(geminiTranscript, [
      { sessionId: 'g', projectHash: 'h', startTime: '2026-11-22T08:00:00.000Z' },
      { id: 'u1', timestamp: '2026-11-22T08:00:01.000Z', type: 'user', content: 'read it' },
      { id: 'e1', timestamp: '2026-11-22T08:00:02.000Z', type: 'error', content: '[API Error: Quota exceeded for quota metric (Status: RESOURCE_EXHAUSTED)]' },
      { id: 'e2', timestamp: '2026-11-22T08:00:02.000Z', type: 'error', content: 'Tool "x" not found' },
      { id: 'm1', timestamp: '2026-11-22T08:00:03.000Z', type: 'gemini', content: 'Reading.', toolCalls: [] },
      { id: 'm1', timestamp: '2026-11-22T08:00:03.000Z', type: 'gemini', content: 'Reading.', toolCalls: [] },
    ]);
    assert.deepEqual(skipped, []);
    assert.deepEqual(turns(events), ['prompt read it', 'api_error RESOURCE_EXHAUSTED | [API Error: Quota exceeded for quota metric (Status: RESOURCE_EXHAUSTED)]', 'reply Reading.']);
  });
});
