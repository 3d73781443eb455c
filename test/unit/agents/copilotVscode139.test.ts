import { strict as assert } from 'node:assert';
import { copilotChatSessionLog } from '../../../src/agents/copilot/chatSessionLog';
import { copilotHookTranscript } from '../../../src/agents/copilot/transcript';
import { isGuardianRefusal } from '../../../src/core/calls';
import { chat, T } from './copilotChatShapes';
import { decode, jsonlText, replayText } from './util';

/*
 * What VS Code 1.139.1 and its Copilot Chat 0.67.0 wrote in a live run of their agent mode with the
 * guardian's hook installed (test/host/copilotVscode.js, 2026-11-27): the same failing build run
 * three times, then refused by the hook. Our own synthetic records in the shapes seen there (the
 * real files hold the run's paths and prompts, so they are not copied in).
 */
const { snapshot, request, terminal, set, push } = chat;

/** The terminal's text as VS Code 1.139.1 keeps it: CRLF line ends and the shell's bracketed-paste switch after it. */
const BUILD_OUTPUT = '\r\n> live-project@1.0.0 build\r\n> node build.js\r\n\r\nError: Cannot find module ./config/missing.json\r\n\u001b[?2004h';
const REFUSAL = 'Loop Guardian refused this call (identical-calls, 3/3): Same action repeated 3 times consecutively: run_in_terminal: npm run build, with no progress.';

/** The part VS Code writes before a call a PreToolUse hook denied. */
const hookPart = (reason: string) => ({
  kind: 'hook',
  hookType: 'PreToolUse',
  stopReason: `A hook prevented chat from continuing. Please check the GitHub Copilot Chat Hooks output channel for more details. \nError message: Tried to use run_in_terminal - ${reason}`,
});
/** A denied call: no terminal data, `isConfirmed {type: 0}`, a fresh UUID as its id. */
const denied = (id: string) => ({ kind: 'toolInvocationSerialized', invocationMessage: { value: 'Running `npm run build`' }, isConfirmed: { type: 0 }, isComplete: true, source: { type: 'internal', label: 'Built-In' }, toolCallId: id, toolId: 'run_in_terminal' });
const build = (id: string) => terminal(id, 'npm run build', { exitCode: 1, output: BUILD_OUTPUT });

function chatSessionsFile(): unknown[] {
  return [
    snapshot([], '67618e3f'),
    push(['requests'], [request('request_1', 'Build the project')]),
    set(['requests', 0, 'completionTokens'], 10),
    set(['requests', 0, 'promptTokens'], 100),
    set(['requests', 0, 'outputBuffer'], null),
    set(['requests', 0, 'promptTokenDetails'], [{ category: 'System', label: 'System Instructions', percentageOfPrompt: 40 }]),
    push(['requests', 0, 'response'], [build('call_4')]),
    push(['requests', 0, 'response'], [build('call_5'), build('call_6')]),
    push(['requests', 0, 'response'], [hookPart(REFUSAL), denied('7ba88f77-88b8-4a3d-8859-c6887eb5e02b')]),
    push(['requests', 0, 'response'], [hookPart(REFUSAL.replace('3/3', '4/3')), denied('02a5bef5-cfee-4fe1-90f1-5fbd04836fed'), hookPart(REFUSAL.replace('3/3', '5/3')), denied('d7e64b5b-715f-4434-9028-44ddfccdfb78')]),
    set(['requests', 0, 'modelState'], { value: 1, completedAt: T + 60_000 }),
    set(['requests', 0, 'elapsedMs'], 60_000),
  ];
}

describe('Copilot in VS Code 1.139.1: its session files as they were written live', () => {
  it("chatSessions: the request's usage and timing fields are known; a failing command's error is its text without the terminal's control sequences", () => {
    const { events, skipped } = decode(copilotChatSessionLog, chatSessionsFile());
    assert.deepEqual(skipped, []);
    const tools = events.flatMap((e) => (e.event.type === 'tool' ? [e.event] : []));
    assert.equal(tools.length, 6);
    for (const t of tools.slice(0, 3)) assert.equal(t.error, 'exit code 1\n\n> live-project@1.0.0 build\n> node build.js\n\nError: Cannot find module ./config/missing.json');
  });

  it("chatSessions: a call the guardian's PreToolUse hook denied carries the hook's reason, so it is the guardian's refusal, not the agent's error", () => {
    const tools = decode(copilotChatSessionLog, chatSessionsFile()).events.flatMap((e) => (e.event.type === 'tool' ? [e.event] : []));
    for (const t of tools.slice(3)) {
      assert.equal(t.ok, false);
      assert.match(String(t.error), /^denied by a PreToolUse hook: Loop Guardian refused this call/);
      assert.ok(isGuardianRefusal(String(t.error)));
    }
    // A denial without a hook part before it (the person pressed Skip/Deny) stays a denial.
    const plain = decode(copilotChatSessionLog, [snapshot([request('r1', 'go', [denied('d1')], 1)])]).events.find((e) => e.event.type === 'tool');
    assert.equal(plain?.event.type === 'tool' && plain.event.error, 'denied: the call did not run');
    assert.equal(isGuardianRefusal('denied: the call did not run'), false);
  });

  it('replay: one loop, named by the real error; the refusals are no second loop of their own', async () => {
    const result = await replayText('67618e3f.jsonl', jsonlText(chatSessionsFile()));
    assert.deepEqual(result.skippedLines, []);
    const halts = result.findings.filter((f) => f.action === 'halt');
    assert.ok(halts.length > 0, JSON.stringify(result.findings.map((f) => f.signal)));
    for (const f of result.findings) assert.doesNotMatch(f.message, /denied|Loop Guardian refused/, f.message);
    assert.ok(halts.some((f) => /Cannot find module \.\/config\/missing\.json/.test(f.message)), halts.map((f) => f.message).join('\n'));
  });

  it("transcripts: `success: true` with no result (a build that exited 1, a call the hook denied) is no success: the call has no outcome", () => {
    const start = { type: 'session.start', data: { sessionId: '67618e3f', version: 1, producer: 'copilot-agent', copilotVersion: '0.67.0', vscodeVersion: '1.139.1', startTime: '2026-11-27T23:33:57.065Z' }, id: 'e0', timestamp: '2026-11-27T23:33:57.065Z', parentId: null };
    const call = (n: number) => [
      { type: 'tool.execution_start', data: { toolCallId: `call_${n}`, toolName: 'run_in_terminal', arguments: { command: 'npm run build', explanation: 'Run it', goal: 'Build', mode: 'sync' } }, id: `s${n}`, timestamp: '2026-11-27T23:34:11.137Z', parentId: 'e0' },
      { type: 'tool.execution_complete', data: { toolCallId: `call_${n}`, success: true }, id: `c${n}`, timestamp: '2026-11-27T23:34:39.202Z', parentId: `s${n}` },
    ];
    const failed = { type: 'tool.execution_complete', data: { toolCallId: 'call_9', success: false }, id: 'c9', timestamp: '2026-11-27T23:35:39.202Z', parentId: 's9' };
    const records = [start, ...call(4), ...call(7), { ...call(9)[0] }, failed];
    const { events, skipped } = decode(copilotHookTranscript, records);
    assert.deepEqual(skipped, []);
    const results = events.flatMap((e) => (e.event.type === 'tool_result' ? [e.event] : []));
    assert.deepEqual(
      results.map((r) => [r.id, r.ok]),
      [
        ['call_4', undefined],
        ['call_7', undefined],
        ['call_9', false],
      ],
    );
  });
});
