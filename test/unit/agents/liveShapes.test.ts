import * as assert from 'node:assert/strict';
import { clineTranscript } from '../../../src/agents/cline/transcript';
import { geminiTranscript } from '../../../src/agents/gemini/transcript';
import { decode, halts, jsonlText, replayText } from './util';

/*
 * Shapes the agents' own CLIs wrote in this project's live runs (test/agents), which the readers
 * had missed: built here after them, so that the readers are held to them without the agents.
 */
describe('Copilot CLI\'s oldest sessions (history-session-state/session_<id>_<ms>.json, shapes from readers of real files)', () => {
  it('chatMessages are the calls, the timeline tells failures; auto-detected; three identical failing runs halt, evidence at their messages', async () => {
    const messages: unknown[] = [{ role: 'user', content: 'why does `make test` fail?' }];
    const timeline: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const id = `toolu_01Hk3vQ9ZtR2m8pLwX4yNc7${i}`;
      const args = { command: 'make test', description: 'Run tests', sessionId: 'main', async: false };
      messages.push({ role: 'assistant', content: i === 0 ? 'Let me run it.' : null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify(args) } }] });
      messages.push({ role: 'tool', tool_call_id: id, content: '--- FAIL: TestParse (0.00s)\nFAIL\nmake: *** [test] Error 1' });
      timeline.push({ type: 'tool_call_completed', id: `t${i}`, timestamp: '2025-10-02T14:03:21.377Z', callId: id, name: 'bash', toolTitle: 'bash', intentionSummary: 'Run tests', arguments: args, result: { type: 'failure', log: '--- FAIL: TestParse (0.00s)\nFAIL\nmake: *** [test] Error 1' } });
    }
    const doc = { sessionId: 'c43ae549-74ba-4443-80a7-2088a9d033b1', startTime: '2025-10-02T14:03:11.402Z', chatMessages: messages, timeline };
    const r = await replayText('session_c43ae549-74ba-4443-80a7-2088a9d033b1_1759413791402.json', JSON.stringify(doc, null, 2));
    assert.equal(r.format, 'copilot-cli');
    assert.equal(r.skipped, 0);
    assert.ok(halts(r).includes('failing-call'), JSON.stringify(r.findings.map((f) => f.signal)));
  });
});

describe('shapes seen in the agents\' own transcripts (live runs)', () => {
  it('Cline CLI 3.0.65 sessions: a tool_result of {query, result, error, success} items is a failure when one failed; three of them halt', async () => {
    const failing = (i: number) => [
      { id: `a${i}`, role: 'assistant', content: [{ type: 'tool_use', id: `call_${i}`, name: 'run_commands', input: { command: 'npm run build-missing', requires_approval: false } }], ts: 1795657858278 + i },
      { id: `u${i}`, role: 'user', content: [{ type: 'tool_result', tool_use_id: `call_${i}`, name: 'run_commands', content: [{ query: 'npm run build-missing', result: `[Command exited with code 1]\n\n[stderr]\nnpm error Missing script: "build-missing"\nnpm error A complete log of this run can be found in: /h/.npm/_logs/2026-11-26T01_50_5${i}_521Z-debug-0.log\n`, error: 'Command exited with code 1', success: false }] }], ts: 1795657858808 + i },
    ];
    const doc = { version: 1, updated_at: '2026-11-26T01:51:00.960Z', agent: 'lead', sessionId: '1795657857509_6p7s1', origin: { source: 'cli', mode: 'user', sessionId: '1795657857509_6p7s1', version: '3.0.65' }, messages: [{ id: 'p', role: 'user', content: [{ type: 'text', text: '<user_input mode="act">Build it</user_input>' }], ts: 1 }, ...failing(1), ...failing(2), ...failing(3)] };
    const r = await replayText('1795657857509_6p7s1.messages.json', JSON.stringify(doc, null, 1));
    assert.equal(r.format, 'cline');
    assert.ok(halts(r).includes('failing-call'), JSON.stringify(r.findings.map((f) => f.signal)));
    const d = decode(clineTranscript, [], doc);
    assert.deepEqual(d.skipped, []);
  });

  it('Gemini CLI 0.61 chats: `$set` patches are no problem, tool results sent back as `user` records begin no turn, and "Exit Code: 1" in a success is a failure', async () => {
    const call = (i: number) => ({
      id: `g${i}`,
      timestamp: '2026-11-26T01:52:24.970Z',
      type: 'gemini',
      content: '',
      toolCalls: [{ id: `run_${i}`, name: 'run_shell_command', args: { command: 'npm run build-missing', description: 'Run it' }, result: [{ functionResponse: { id: `run_${i}`, name: 'run_shell_command', response: { output: `<untrusted_context>\nOutput: npm error Missing script: "build-missing"\nExit Code: 1\nProcess Group PGID: 1600${i}\n</untrusted_context>` } } }], status: 'success', timestamp: '2026-11-26T01:52:25.316Z' }],
    });
    const back = (i: number) => ({ id: `u${i}`, timestamp: '2026-11-26T01:52:25.318Z', type: 'user', content: [{ functionResponse: { id: `run_${i}`, name: 'run_shell_command', response: { output: 'Exit Code: 1' } } }] });
    const lines = [
      { sessionId: 's-1', projectHash: 'ab', startTime: '2026-11-26T01:52:24.700Z', lastUpdated: '2026-11-26T01:52:24.700Z', kind: 'main' },
      { $set: { messages: [{ id: 'ctx', timestamp: '2026-11-26T01:52:24.701Z', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.\n</session_context>' }] }], lastUpdated: '2026-11-26T01:52:24.701Z' } },
      { id: 'p', timestamp: '2026-11-26T01:52:24.717Z', type: 'user', content: [{ text: 'Build the project' }] },
      { $set: { lastUpdated: '2026-11-26T01:52:24.717Z' } },
      ...[1, 2, 3].flatMap((i) => [call(i), back(i), { $set: { lastUpdated: '2026-11-26T01:52:26.000Z' } }]),
    ];
    const d = decode(geminiTranscript, lines);
    assert.deepEqual(d.skipped, []);
    assert.equal(d.events.filter((e) => e.event.type === 'user').length, 2, 'the injected context and the prompt; no turn per tool result');
    const r = await replayText('session-2026-11-26T01-52-215a9151.jsonl', jsonlText(lines));
    assert.ok(halts(r).includes('failing-call'), JSON.stringify(r.findings.map((f) => `${f.signal} ${f.action}`)));
  });

  it('Copilot CLI 1.0.102 `--output-format json` saved to a file: auto-detected without session.start, ephemeral notices and the final result no problem, "(exit code 1)" of a search that found nothing an answer', async () => {
    let n = 0;
    const ev = (type: string, data: Record<string, unknown>, ephemeral = false) => ({ type, data, ...(ephemeral ? { ephemeral: true } : {}), id: `e${n++}`, timestamp: '2026-11-26T01:51:05.080Z', parentId: 'p0' });
    const run = (i: number, command: string, content: string) => [
      ev('assistant.tool_call_delta', { toolCallId: `call_${i}` }, true),
      ev('tool.execution_start', { toolCallId: `call_${i}`, toolName: 'bash', arguments: { command, description: 'Run it', mode: 'sync', initial_wait: 30 } }),
      ev('tool.shell_output', { toolCallId: `call_${i}` }, true),
      ev('tool.execution_complete', { toolCallId: `call_${i}`, success: true, shellExecution: { exitCode: 1 }, result: { content, detailedContent: content } }),
      ev('session.background_tasks_changed', {}, true),
    ];
    const lines = [
      ev('session.skills_loaded', { skills: [] }, true),
      ev('user.message', { content: 'Build it', messageId: 'm1' }),
      ...run(1, 'ls | grep nothing-here', '\n<shellId: 1 completed with exit code 1>'),
      ...run(2, 'git branch -a | grep nothing-here', '\n<shellId: 2 completed with exit code 1>'),
      ...run(3, 'ls specs | grep nothing-here', '\n<shellId: 3 completed with exit code 1>'),
      { type: 'result', timestamp: '2026-11-26T01:51:06.209Z', sessionId: 's-1', exitCode: 0, usage: { premiumRequests: 0 } },
    ];
    const r = await replayText('copilot-output.jsonl', jsonlText(lines));
    assert.equal(r.format, 'copilot-cli');
    assert.equal(r.skipped, 0);
    assert.deepEqual(r.findings.map((f) => f.signal), [], 'three searches that found nothing: answers');
  });

  it('Qwen Code 0.24.4 chat recordings: auto-detected; calls, results by status (a search exiting 1 is a success), prompts; system records no problem', async () => {
    const common = (i: number, type: string) => ({ uuid: `u${i}`, parentUuid: i === 0 ? null : `u${i - 1}`, sessionId: 'd2e891a8-a671-4b98-b763-6be1e98a0af5', timestamp: `2026-11-26T02:30:0${i % 10}.000Z`, type, provenance: 'x', cwd: '/p', version: '0.24.4', gitBranch: 'master' });
    const lines: unknown[] = [{ ...common(0, 'user'), message: { role: 'user', parts: [{ text: 'Build it' }] } }, { ...common(1, 'system'), subtype: 'ui_telemetry', systemPayload: { uiEvent: {} } }];
    for (let k = 0; k < 3; k++) {
      lines.push({ ...common(2 + 2 * k, 'assistant'), model: 'scripted', message: { role: 'model', parts: [{ functionCall: { id: `call_${k}`, name: 'run_shell_command', args: { command: 'npm run build-missing', description: 'Run it' } } }] } });
      lines.push({ ...common(3 + 2 * k, 'tool_result'), message: { role: 'user', parts: [{ functionResponse: { id: `call_${k}`, name: 'run_shell_command', response: { error: `Command: npm run build-missing\nDirectory: (root)\nOutput: npm error Missing script: "build-missing"\nError: (none)\nExit Code: 1\nSignal: (none)\nProcess Group PGID: (none)` } } }] }, toolCallResult: { callId: `call_${k}`, status: 'error', resultDisplay: { type: 'shell_result', version: 1, exitCode: 1, outcome: 'failed' } } });
    }
    const r = await replayText('d2e891a8-a671-4b98-b763-6be1e98a0af5.jsonl', jsonlText(lines));
    assert.equal(r.format, 'qwen');
    assert.equal(r.skipped, 0);
    assert.ok(halts(r).includes('failing-call'), JSON.stringify(r.findings.map((f) => f.signal)));
  });
});
