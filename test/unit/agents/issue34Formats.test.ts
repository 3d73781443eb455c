import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { claudeTranscript } from '../../../src/agents/claude/transcript';
import { codexTranscript } from '../../../src/agents/codex/transcript';
import { copilotCliTranscript } from '../../../src/agents/copilot-cli/transcript';
import { openHandsTranscript } from '../../../src/agents/openhands/transcript';
import { describeShared, FIXTURES } from '../helpers';
import { callLevel, decode, halts, jsonlText, replayText } from './util';

/*
 * Issue 34's format notes, each checked against the reader on a small file of our own that has
 * the real shape (the sources are cited where the readers parse them).
 */

describe('issue 34: format notes', () => {
  describe('Copilot CLI', () => {
    let n = 0;
    const rec = (type: string, data: Record<string, unknown>) => ({ type, data, id: `e${++n}`, timestamp: '2026-11-20T10:00:00.000Z', parentId: null });
    const start = rec('session.start', { sessionId: 'cp-34', version: 1, producer: 'copilot-agent', copilotVersion: '1.0.60', startTime: '2026-11-20T10:00:00.000Z', context: { cwd: '/p' } });
    const args = { command: 'rm -rf build', description: 'Clean' };

    it('1.0.60 echoes every call and its result in hook.start: each call is counted once', () => {
      const { events, skipped } = decode(copilotCliTranscript, [
        start,
        rec('tool.execution_start', { toolCallId: 'c1', toolName: 'powershell', arguments: args }),
        rec('hook.start', { hookInvocationId: 'h1', hookType: 'preToolUse', input: { sessionId: 'cp-34', timestamp: 1774036364216, cwd: '/p', toolName: 'powershell', toolArgs: JSON.stringify(args) } }),
        rec('tool.execution_complete', { toolCallId: 'c1', success: true, result: { content: 'done\n<exited with exit code 0>' } }),
        rec('hook.start', { hookInvocationId: 'h2', hookType: 'postToolUse', input: { sessionId: 'cp-34', timestamp: 1774036364300, cwd: '/p', toolName: 'powershell', toolArgs: JSON.stringify(args), toolResult: { resultType: 'success', textResultForLlm: 'done' } } }),
        rec('hook.end', { hookInvocationId: 'h2', success: true }),
      ]);
      assert.deepEqual(callLevel(events).map((e) => e.event.type), ['tool', 'tool_result']);
      assert.deepEqual(skipped, []);
    });

    it('a permission denied is the call failing with the refusal (once, whatever follows); an approved one says nothing; neither is an unknown record', () => {
      const { events, skipped } = decode(copilotCliTranscript, [
        start,
        rec('tool.execution_start', { toolCallId: 'c1', toolName: 'powershell', arguments: args }),
        rec('permission.requested', { requestId: 'r1', toolCallId: 'c1', permissionRequest: { kind: 'shell', fullCommandText: 'rm -rf build' } }),
        rec('permission.completed', { requestId: 'r1', toolCallId: 'c1', result: { kind: 'denied-interactively-by-user', feedback: 'not the build folder' } }),
        rec('tool.execution_complete', { toolCallId: 'c1', success: false, error: { message: 'The user rejected this tool call.', code: 'rejected' } }),
        rec('tool.execution_start', { toolCallId: 'c2', toolName: 'view', arguments: { path: '/p/a.ts' } }),
        rec('permission.requested', { requestId: 'r2', toolCallId: 'c2', permissionRequest: { kind: 'read', path: '/p/a.ts' } }),
        rec('permission.completed', { requestId: 'r2', toolCallId: 'c2', result: { kind: 'approved' } }),
        rec('tool.execution_complete', { toolCallId: 'c2', success: true, result: { content: '1. x' } }),
      ]);
      const results = callLevel(events).filter((e) => e.event.type === 'tool_result').map((e) => e.event);
      assert.equal(results.length, 2);
      assert.deepEqual(results[0], { ...results[0], ok: false, error: 'Permission denied (denied-interactively-by-user): not the build folder' });
      assert.equal(results[1]?.type === 'tool_result' && results[1].ok, true);
      assert.deepEqual(skipped, []);
    });
  });

  describe('Claude Code', () => {
    const base = { isSidechain: false, userType: 'external', cwd: '/p', sessionId: 'cc-34', version: '2.1.20', entrypoint: 'claude-desktop' };
    const use = (id: string, name: string, input: Record<string, unknown>) => ({ ...base, type: 'assistant', uuid: `a-${id}`, timestamp: '2026-04-01T10:00:00.000Z', message: { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] } });
    const result = (id: string, content: unknown, extra: Record<string, unknown> = {}, toolUseResult?: unknown) => ({
      ...base,
      type: 'user',
      uuid: `u-${id}`,
      timestamp: '2026-04-01T10:00:01.000Z',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, ...extra }] },
      ...(toolUseResult !== undefined ? { toolUseResult } : {}),
    });

    it('toolUseResult.tokenSaverOutput: what the model saw (the short string in the message) is the outcome, not the full stdout kept beside it', () => {
      const full = Array.from({ length: 400 }, (_, i) => `ok ${i} test passes`).join('\n');
      const { events } = decode(claudeTranscript, [
        use('t1', 'Bash', { command: 'npm test' }),
        result('t1', '400 tests passed (output shortened)', {}, { stdout: full, stderr: '', interrupted: false, isImage: false, tokenSaverOutput: '400 tests passed (output shortened)' }),
      ]);
      const r = callLevel(events).find((e) => e.event.type === 'tool_result')?.event;
      assert.deepEqual(r && r.type === 'tool_result' ? [r.ok, r.output] : [], [true, '400 tests passed (output shortened)']);
    });

    it('an MCP error inside a result not marked as an error (is_error: false) is a failure; another tool\'s text starting "Error:" and an MCP answer that is not an error are not', () => {
      const answer = [{ type: 'text', text: 'Error: No active project. Ask the user to provide the project path.' }];
      const { events } = decode(claudeTranscript, [
        use('m1', 'mcp__serena__find_symbol', { name_path: 'Cart' }),
        result('m1', answer, { is_error: false }),
        use('r1', 'Read', { file_path: '/p/errors.md' }),
        result('r1', 'Error: messages are listed below.'),
        use('m2', 'mcp__serena__find_symbol', { name_path: 'Cart' }),
        result('m2', [{ type: 'text', text: '[{"name_path": "Cart", "kind": "Class"}]' }], { is_error: false }),
      ]);
      const outcomes = callLevel(events)
        .filter((e) => e.event.type === 'tool_result')
        .map((e) => (e.event.type === 'tool_result' ? [e.event.ok, e.event.ok ? e.event.output : e.event.error] : []));
      assert.deepEqual(outcomes, [
        [false, 'Error: No active project. Ask the user to provide the project path.'],
        [true, 'Error: messages are listed below.'],
        [true, '[{"name_path": "Cart", "kind": "Class"}]'],
      ]);
    });
  });

  describe("Claude Code's agent-acompact-* compaction copies", () => {
    it("a copy read alone (the only record of its session) is that session's: its calls the parent's, its prompts the person's", () => {
      const copy = (rec: Record<string, unknown>) => ({ ...rec, isSidechain: true, agentId: 'acompact-3d346a6bf6f19caa', sessionId: '2eb8e351-15b9-4f06-b8f3-cf610843600a', userType: 'external', version: '2.1.90', timestamp: '2026-04-07T21:03:47.116Z' });
      const { events } = decode(claudeTranscript, [
        copy({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'Fix the cart total.' } }),
        copy({ type: 'assistant', uuid: 'a1', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/p/cart.ts' } }] } }),
        copy({ type: 'user', uuid: 'u2', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '1→export {}' }] } }),
        copy({ type: 'user', uuid: 'u3', message: { role: 'user', content: 'Your task is to create a detailed summary of the conversation so far…' } }),
        copy({ type: 'assistant', uuid: 'a2', message: { role: 'assistant', content: [{ type: 'text', text: '<summary>1. Primary Request and Intent: …</summary>' }] } }),
      ]);
      assert.deepEqual([...new Set(events.map((e) => e.event.session))], ['2eb8e351-15b9-4f06-b8f3-cf610843600a']);
      const prompts = events.filter((e) => e.event.type === 'prompt').map((e) => (e.event.type === 'prompt' ? e.event.from ?? 'person' : ''));
      assert.deepEqual(prompts, ['person', 'person']);
      // A subagent of its own (agentId a…, no acompact-) stays its own session, its prompt the delegating agent's.
      const sub = decode(claudeTranscript, [{ type: 'user', uuid: 'u9', isSidechain: true, agentId: 'ab0bf67f9ea3d0c25', sessionId: 's', message: { role: 'user', content: 'Look for Cart.' } }]);
      assert.deepEqual(sub.events.map((e) => [e.event.session, e.event.type === 'prompt' ? e.event.from : e.event.type]), [['s/ab0bf67f9ea3d0c25', 'user'], ['s/ab0bf67f9ea3d0c25', 'orchestrator']]);
    });
  });

  describe('Codex Desktop', () => {
    it("a subagent's rollout opening with two session_meta lines (the child's, then its parent's) is the child's session", () => {
      const child = '019a0c11-0000-7000-8000-00000000c41d';
      const parent = '019a0c10-0000-7000-8000-0000000a5e47';
      const at = '2026-04-10T08:00:00.001Z';
      const meta = (id: string) => ({ timestamp: at, type: 'session_meta', payload: { id, timestamp: at, cwd: '/work/project', originator: 'Codex Desktop', cli_version: '0.119.0' } });
      const { events } = decode(codexTranscript, [
        meta(child),
        meta(parent),
        { timestamp: '2026-04-10T08:00:02.000Z', type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'npm test'] }), call_id: 'call_1' } },
        { timestamp: '2026-04-10T08:00:03.000Z', type: 'response_item', payload: { type: 'function_call_output', call_id: 'call_1', output: 'Exit code: 0\nOutput:\nok' } },
      ]);
      assert.deepEqual([...new Set(callLevel(events).map((e) => e.event.session))], [child]);
    });

    /**
     * A child's rollout as Codex writes it (see codex/transcript.ts): its own session_meta, then the
     * parent's history copied as it is, from the parent's session_meta on, every line stamped with
     * the one millisecond of the copy; then the child's own records.
     */
    function forked(own: unknown[]): unknown[] {
      const child = '019a0c11-0000-7000-8000-00000000c41d';
      const parent = '019a0c10-0000-7000-8000-0000000a5e47';
      const copiedAt = '2026-04-10T08:00:00.417Z';
      const meta = (id: string, extra: Record<string, unknown> = {}) => ({ timestamp: copiedAt, type: 'session_meta', payload: { id, timestamp: copiedAt, cwd: '/work/project', originator: 'Codex Desktop', cli_version: '0.119.0', ...extra } });
      const replayed: unknown[] = [{ timestamp: copiedAt, type: 'event_msg', payload: { type: 'user_message', message: 'Fix the build.' } }];
      // The parent's own loop: the same failing build four times (it halts in the parent's rollout).
      for (let i = 1; i <= 4; i++) {
        replayed.push({ timestamp: copiedAt, type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'npm run build'] }), call_id: `call_p${i}` } });
        replayed.push({ timestamp: copiedAt, type: 'response_item', payload: { type: 'function_call_output', call_id: `call_p${i}`, output: 'Exit code: 1\nOutput:\nerror TS2304: Cannot find name \'Cart\'.' } });
      }
      return [meta(child, { forked_from_id: parent }), meta(parent), ...replayed, ...own];
    }
    const own = [
      { timestamp: '2026-04-10T08:00:03.120Z', type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', 'rg -n "class Cart" src'] }), call_id: 'call_c1' } },
      { timestamp: '2026-04-10T08:00:03.410Z', type: 'response_item', payload: { type: 'function_call_output', call_id: 'call_c1', output: 'Exit code: 0\nOutput:\nsrc/cart.ts:3:export class Cart {' } },
    ];

    it("a subagent's rollout replaying its parent's messages, stamped with one millisecond: the parent's calls are not the child's (no halt); the child's own are read", async () => {
      const r = await replayText('rollout-2026-04-10T08-00-00-019a0c11-0000-7000-8000-00000000c41d.jsonl', jsonlText(forked(own)));
      assert.equal(r.format, 'codex');
      assert.deepEqual(halts(r), []);
      assert.equal(r.byType.tool, 1);
      assert.equal(r.byType.prompt ?? 0, 0, "the parent's prompt is not the child's");
      // The same parent records, not a copy (the parent's own rollout): its loop halts.
      const parentsOwn = forked([]).slice(1).map((rec, i) => ({ ...(rec as object), timestamp: `2026-04-10T07:5${Math.floor(i / 6)}:${String(10 + (i % 6) * 5)}.000Z` }));
      const p = await replayText('rollout-2026-04-10T07-50-00-019a0c10-0000-7000-8000-0000000a5e47.jsonl', jsonlText(parentsOwn));
      assert.ok(halts(p).length > 0);
    });
  });

  describe('Cline', () => {
    const FAILED = 'Command executed.\nOutput:\nerror[E0425]: cannot find value `x` in this scope\nerror: could not compile `parser`';
    /** A ui_messages.json of our own (Cline's shape: see cline.test.ts), a command failing three times. */
    function ui(): Record<string, unknown>[] {
      let ts = 1745312345000;
      const out: Record<string, unknown>[] = [{ ts: ts++, type: 'say', say: 'task', text: 'Fix the parser build.' }];
      for (let i = 0; i < 3; i++) {
        out.push({ ts: ts++, type: 'say', say: 'text', text: 'Checking the build.', partial: false });
        out.push({ ts: ts++, type: 'ask', ask: 'command', text: 'cargo check', partial: true });
        out.push({ ts: ts++, type: 'ask', ask: 'command', text: 'cargo check', commandCompleted: true });
        out.push({ ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: `[execute_command for 'cargo check'] Result:\n${FAILED}`, tokensIn: 1200, cost: 0.01 }) });
      }
      return out;
    }
    /** The same export with every value turned into a string, as an export tool wrote it. */
    const asStrings = (records: Record<string, unknown>[]) => records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])));

    it('an export with every value a string (ts, partial, commandCompleted) reads as the export it was made from', async () => {
      const typed = await replayText('ui_messages.json', JSON.stringify(ui()));
      const strings = await replayText('ui_messages.json', JSON.stringify(asStrings(ui())));
      assert.equal(strings.format, 'cline');
      assert.equal(strings.events, typed.events);
      assert.deepEqual(halts(strings), halts(typed));
      assert.ok(halts(typed).length > 0);
      assert.deepEqual(strings.skippedKinds, typed.skippedKinds);
    });
  });

  describe('Cursor', () => {
    it('the older agent-transcripts/<uuid>.json, whose tool entries have no output, is read: its calls with their outcomes unknown', async () => {
      const doc: unknown[] = [{ role: 'user', text: '<user_query>\nmake the tests pass\n</user_query>' }];
      for (let i = 0; i < 6; i++) {
        doc.push({ role: 'assistant', text: i === 0 ? 'Running the tests.' : '', toolCalls: [{ toolName: 'Shell', args: { command: 'npm test', working_directory: '/home/u/shop' } }] });
        doc.push({ role: 'tool' });
      }
      const r = await replayText('4f1d2c3b-5a6e-4f70-8a91-b2c3d4e5f601.json', JSON.stringify(doc));
      assert.equal(r.format, 'cursor');
      assert.equal(r.byType.tool, 6);
      assert.equal(r.byType.tool_result ?? 0, 0);
      // The same call six times, nothing known of how each ended: the repetition alone, so it takes twice the run to halt.
      assert.deepEqual(r.findings.filter((f) => f.signal === 'identical-calls').map((f) => `${f.action} ${f.count}`), ['warn 3', 'halt 6']);
    });
  });
});

describeShared('issue 34: format notes on real files', 'the real transcripts', () => {
  const REAL = path.join(FIXTURES, 'real');

  it("Copilot CLI: hook.start's echo of each call and its result (engram-07c40cd0, 86 of them) is never counted: one call per tool.execution_start", () => {
    const records = readFileSync(path.join(REAL, 'copilot-cli/engram-07c40cd0-events.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; data: { toolCallId?: string } });
    const starts = new Set(records.filter((r) => r.type === 'tool.execution_start').map((r) => r.data.toolCallId));
    assert.equal(records.filter((r) => r.type === 'hook.start').length, 86);
    const { events } = decode(copilotCliTranscript, records);
    const calls = events.filter((e) => e.event.type === 'tool');
    assert.equal(calls.length, starts.size);
    assert.equal(new Set(calls.map((e) => (e.event.type === 'tool' ? e.event.id : ''))).size, starts.size);
  });

  it('OpenHands V0: exit_code -1 for a command still running (basic_gui_mode.json: `python3 -m http.server 8000`, "no new output after 30 seconds", success: false) is no failure', () => {
    const doc = JSON.parse(readFileSync(path.join(REAL, 'openhands/basic_gui_mode.json'), 'utf8')) as unknown[];
    const { events } = decode(openHandsTranscript, doc, doc);
    const server = events.find((e) => e.event.type === 'tool' && JSON.stringify(e.event.args).includes('http.server 8000'));
    assert.ok(server, 'the server command is read');
    const id = server.event.type === 'tool' ? server.event.id : undefined;
    const result = events.find((e) => e.event.type === 'tool_result' && e.event.id === id);
    const outcome = result?.event.type === 'tool_result' ? result.event.ok : server.event.type === 'tool' ? server.event.ok : undefined;
    assert.equal(outcome, true);
  });
});
