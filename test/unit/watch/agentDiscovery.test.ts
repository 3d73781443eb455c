import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { claudeProjectDir } from '../../../src/agents/claude/discovery';
import { geminiProjectHash } from '../../../src/agents/gemini/discovery';
import { Workspace } from '../../../src/state/workspace';
import { globalStorageFolders } from '../../../src/watch/editorStorage';
import { WorkspaceMonitor } from '../../../src/watch/workspaceMonitor';
import { chat, failing, loopingSession } from '../agents/copilotChatShapes';
import { config, tmpdir, write } from '../helpers';

const today = new Date().toISOString();
const [y, m, d] = today.slice(0, 10).split('-') as [string, string, string];

function claudeLines(session: string, from: number, to: number): string {
  const lines: unknown[] = [];
  for (let i = from; i <= to; i++) {
    lines.push({ type: 'assistant', uuid: `a${i}`, sessionId: session, timestamp: today, message: { id: `m${i}`, role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: '/x/missing.ts' } }] } });
    lines.push({ type: 'user', uuid: `r${i}`, sessionId: session, timestamp: today, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: '<tool_use_error>File does not exist.</tool_use_error>', is_error: true }] } });
  }
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

function codexLines(session: string, cwd: string): string {
  const lines: unknown[] = [{ timestamp: today, type: 'session_meta', payload: { id: session, cwd } }];
  for (let i = 1; i <= 3; i++) {
    lines.push({ timestamp: today, type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{"command":["make"]}', call_id: `c${i}` } });
    lines.push({ timestamp: today, type: 'response_item', payload: { type: 'function_call_output', call_id: `c${i}`, output: 'Exit code: 2\nOutput:\nmake: *** No targets' } });
  }
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

function geminiLines(): string {
  const lines: unknown[] = [{ sessionId: 'g-1', projectHash: 'x', startTime: today }];
  for (let i = 1; i <= 3; i++) lines.push({ id: `m${i}`, timestamp: today, type: 'gemini', content: '', toolCalls: [{ id: `c${i}`, name: 'run_shell_command', args: { command: 'pytest' }, status: 'error', result: [{ functionResponse: { response: { error: 'exit 1' } } }] }] });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

describe('discovery of agents working in the workspace', () => {
  it('reads Claude Code, Codex and Gemini CLI transcripts of this workspace only, incrementally, when opted in', async () => {
    const home = await tmpdir('lg-home-');
    const ws = await tmpdir('lg-ws-');
    const claudeFile = await write(home, `.claude/projects/${claudeProjectDir(ws)}/sess-a.jsonl`, claudeLines('sess-a', 1, 1));
    await write(home, '.claude/projects/-somewhere-else/sess-z.jsonl', claudeLines('sess-z', 1, 3));
    await write(home, `.codex/sessions/${y}/${m}/${d}/rollout-${y}-${m}-${d}T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl`, codexLines('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', path.join(ws, 'sub')));
    await write(home, `.codex/sessions/${y}/${m}/${d}/rollout-${y}-${m}-${d}T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c.jsonl`, codexLines('other', '/elsewhere'));
    await write(home, `.gemini/tmp/${geminiProjectHash(ws)}/chats/session-${y}-${m}-${d}T10-00-g1.jsonl`, geminiLines());
    const old = await write(home, `.claude/projects/${claudeProjectDir(ws)}/old.jsonl`, claudeLines('old', 1, 3));
    await fs.utimes(old, new Date('2020-01-01'), new Date('2020-01-01'));

    const on = { enabled: true };
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { claude: on, codex: on, gemini: on } }), { HOME: home });
    const first = await monitor.poll();
    const sources = monitor.agentSources();
    assert.deepEqual(sources.map((s) => s.label).sort(), ['Claude Code', 'Codex CLI', 'Gemini CLI']);
    assert.deepEqual(sources.find((s) => s.label === 'Codex CLI')?.sessions, ['0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b']);
    assert.equal(sources.find((s) => s.label === 'Claude Code')?.events, 2);
    const halts = first.raised.filter((f) => f.action === 'halt');
    assert.ok(halts.some((f) => f.agent === 'codex'));
    assert.ok(halts.some((f) => f.agent === 'gemini-cli'));
    assert.ok(!halts.some((f) => f.agent === 'claude-code'), 'one failed call is not a loop yet');

    // The Claude session goes on: only what is appended is read, and the repeats halt.
    await fs.appendFile(claudeFile, claudeLines('sess-a', 2, 3));
    const next = await monitor.poll();
    const claudeHalt = next.raised.find((f) => f.agent === 'claude-code' && f.action === 'halt');
    assert.equal(claudeHalt?.session, 'sess-a');
    assert.equal(claudeHalt?.at.file, claudeFile);
    assert.equal(monitor.agentSources().find((s) => s.label === 'Claude Code')?.events, 6);
  });

  it("reads a compaction's copy (subagents/agent-acompact-*.jsonl) only where its session's own transcript is gone: beside it, the calls would count twice", async () => {
    const home = await tmpdir('lg-home-');
    const ws = await tmpdir('lg-ws-');
    const project = `.claude/projects/${claudeProjectDir(ws)}`;
    /** The copy: the conversation again, every line a sidechain of the compaction agent (see claude/discovery.ts). */
    const copy = (session: string, agentId: string) =>
      claudeLines(session, 1, 3)
        .trim()
        .split('\n')
        .map((l) => JSON.stringify({ ...(JSON.parse(l) as object), isSidechain: true, agentId }))
        .join('\n') + '\n';
    // Session c: its transcript (three failed reads: a halt) and its compaction's copy of them.
    await write(home, `${project}/sess-c.jsonl`, claudeLines('sess-c', 1, 3));
    await write(home, `${project}/sess-c/subagents/agent-acompact-0a1b2c3d4e5f6a7b.jsonl`, copy('sess-c', 'acompact-0a1b2c3d4e5f6a7b'));
    // Session d: only the copy is left, the only record of its calls.
    await write(home, `${project}/sess-d/subagents/agent-acompact-1a2b3c4d5e6f7a8b.jsonl`, copy('sess-d', 'acompact-1a2b3c4d5e6f7a8b'));
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { claude: { enabled: true } } }), { HOME: home });
    const first = await monitor.poll();
    const read = monitor.agentSources().map((s) => [path.relative(path.join(home, project), s.file), s.sessions, s.events]);
    assert.deepEqual(read.sort(), [
      ['sess-c.jsonl', ['sess-c'], 6],
      ['sess-d/subagents/agent-acompact-1a2b3c4d5e6f7a8b.jsonl', ['sess-d'], 6],
    ]);
    // The copy's calls are its session's, not a session of their own.
    assert.deepEqual([...new Set(first.raised.filter((f) => f.action === 'halt').map((f) => f.session))].sort(), ['sess-c', 'sess-d']);
  });

  it('reads nothing of an agent that is not opted in, and of a session the hook records only the calls its hook log lacks (Claude Code rejects some before its hook)', async () => {
    const home = await tmpdir('lg-home-');
    const ws = await tmpdir('lg-ws-');
    await write(home, `.claude/projects/${claudeProjectDir(ws)}/sess-h.jsonl`, claudeLines('sess-h', 1, 3));
    const off = new WorkspaceMonitor(new Workspace(ws), config(), { HOME: home });
    await off.poll();
    assert.deepEqual(off.agentSources(), []);
    // The hook recorded t1 and t2 (by their tool_use ids); t3 never reached it.
    const recorded = [1, 2].flatMap((i) => [
      { v: 1, ts: today, session: 'sess-h', agent: 'claude-code', type: 'tool', tool: 'Read', args: { file_path: '/x/missing.ts' }, id: `t${i}` },
      { v: 1, ts: today, session: 'sess-h', agent: 'claude-code', type: 'tool_result', id: `t${i}`, ok: false, error: 'File does not exist.' },
    ]);
    await write(ws, '.tmp/current/logs/hook-claude-sess-h.jsonl', `${recorded.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const hooked = new WorkspaceMonitor(new Workspace(ws), config({ agents: { claude: { enabled: true } } }), { HOME: home });
    await hooked.poll();
    assert.deepEqual(hooked.agentSources().map((s) => [s.label, s.events]), [['Claude Code', 2]], 'the call and the result of t3 only');
  });

  it('reads Copilot CLI sessions whose session.start names a folder in this workspace ($COPILOT_HOME), and the hook-recorded one is left to the hook', async () => {
    const ws = await tmpdir('lg-ws-');
    const home = await tmpdir('lg-copilot-');
    const session = (id: string, cwd: string, failures: number) =>
      [
        { type: 'session.start', data: { sessionId: id, version: 1, producer: 'copilot-agent', copilotVersion: '1.0.10', context: { cwd } }, id: 's', timestamp: today },
        ...Array.from({ length: failures }, (_, i) => [
          { type: 'tool.execution_start', data: { toolCallId: `${id}-${i}`, toolName: 'bash', arguments: { command: 'make' } }, id: `a${i}`, timestamp: today },
          { type: 'tool.execution_complete', data: { toolCallId: `${id}-${i}`, success: false, error: { message: 'make: *** No rule' } }, id: `b${i}`, timestamp: today },
        ]).flat(),
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
    await write(home, 'session-state/cp-here/events.jsonl', session('cp-here', path.join(ws, 'pkg'), 3));
    await write(home, 'session-state/cp-there/events.jsonl', session('cp-there', '/elsewhere', 3));
    await write(home, 'session-state/cp-flat.jsonl', session('cp-flat', ws, 1));
    await write(home, 'session-state/cp-hooked/events.jsonl', session('cp-hooked', ws, 3));
    await write(ws, '.tmp/current/logs/hook-copilot-cli-cp-hooked.jsonl', '');
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { 'copilot-cli': { enabled: true } } }), { HOME: '/nonexistent', COPILOT_HOME: home });
    const update = await monitor.poll();
    assert.deepEqual(monitor.agentSources().map((s) => [s.label, s.sessions.join()]).sort(), [['GitHub Copilot CLI', 'cp-flat'], ['GitHub Copilot CLI', 'cp-here']]);
    assert.ok(update.raised.some((f) => f.action === 'halt' && f.session === 'cp-here' && f.agent === 'copilot-cli'));
  });

  it("reads Copilot Chat's hook transcripts from VS Code's storage folder of this workspace (workspace.json names it), live", async () => {
    const ws = await tmpdir('lg-ws-');
    const storage = await tmpdir('lg-wsstorage-');
    const start = { type: 'session.start', data: { sessionId: 'vs-9', version: 1, producer: 'copilot-agent', copilotVersion: '0.33.0', vscodeVersion: '1.106.0', startTime: today }, id: 's', timestamp: today };
    const call = (i: number) => [
      { type: 'tool.execution_start', data: { toolCallId: `c${i}`, toolName: 'run_in_terminal', arguments: { command: 'npm test', explanation: `try ${i}` } }, id: `a${i}`, timestamp: today },
      { type: 'tool.execution_complete', data: { toolCallId: `c${i}`, success: false }, id: `b${i}`, timestamp: today },
    ];
    const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    await write(storage, 'ab12/workspace.json', JSON.stringify({ folder: `file://${ws}` }));
    const transcript = await write(storage, 'ab12/GitHub.copilot-chat/transcripts/vs-9.jsonl', lines([start, ...call(1)]));
    await write(storage, 'cd34/workspace.json', JSON.stringify({ folder: 'file:///elsewhere' }));
    await write(storage, 'cd34/GitHub.copilot-chat/transcripts/other.jsonl', lines([start, ...call(1), ...call(2), ...call(3)]));
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { copilot: { enabled: true, home: storage } } }), { HOME: '/nonexistent' });
    const first = await monitor.poll();
    assert.deepEqual(monitor.agentSources().map((s) => [s.label, s.sessions.join()]), [['GitHub Copilot (VS Code)', 'vs-9']]);
    assert.ok(!first.raised.some((f) => f.action === 'halt'));
    await fs.appendFile(transcript, lines([...call(2), ...call(3)]));
    const next = await monitor.poll();
    assert.ok(next.raised.some((f) => f.action === 'halt' && f.agent === 'copilot-vscode' && f.session === 'vs-9'), 'the same failing command, its explanation aside, three times');
  });

  it("reads VS Code's chat session logs (chatSessions/*.jsonl) of this workspace live, and a rewrite with a fresh snapshot counts nothing twice", async () => {
    const ws = await tmpdir('lg-ws-');
    const user = await tmpdir('lg-user-');
    const storage = path.join(user, 'workspaceStorage');
    const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const session = loopingSession();
    await write(storage, 'ab12/workspace.json', JSON.stringify({ folder: `file://${ws}` }));
    const log = await write(storage, 'ab12/chatSessions/chat-1.jsonl', lines(session.slice(0, 4)));
    await write(storage, 'cd34/workspace.json', JSON.stringify({ folder: 'file:///elsewhere' }));
    await write(storage, 'cd34/chatSessions/chat-other.jsonl', lines(session));
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { copilot: { enabled: true, home: storage } } }), { HOME: '/nonexistent' });
    const first = await monitor.poll();
    assert.deepEqual(monitor.agentSources().map((s) => [s.label, s.sessions.join(), s.events]), [['GitHub Copilot (VS Code)', 'chat-1', 2]]);
    assert.ok(!first.raised.some((f) => f.action === 'halt'));
    await fs.appendFile(log, lines(session.slice(4)));
    const next = await monitor.poll();
    assert.ok(next.raised.some((f) => f.action === 'halt' && f.agent === 'copilot-vscode' && f.session === 'chat-1'), 'the same failing npm test three times');
    const counted = monitor.active().map((f) => `${f.signal} ${f.count}`);
    // VS Code compacts the log: the same file, written over with one snapshot of the same state.
    const { snapshot, request, text, push } = chat;
    const state = snapshot([request('request_1', 'make the tests pass', [text('Let me run the tests.'), failing('call_1'), text('Still failing; again.'), failing('call_2'), text('Once more.'), failing('call_3')], 1)]);
    await fs.writeFile(log, lines([state]));
    const rewritten = await monitor.poll();
    assert.deepEqual(rewritten.raised, []);
    assert.deepEqual(monitor.active().map((f) => `${f.signal} ${f.count}`), counted, 'the loop counted as before');
    assert.deepEqual([monitor.agentSources()[0]?.events, monitor.stats.events], [4, 4]);
    // What comes next is read: a new prompt (which ends the loop) and its call.
    await fs.appendFile(log, lines([push(['requests'], [request('request_2', 'try again', [failing('call_4')])])]));
    await monitor.poll();
    assert.deepEqual([monitor.agentSources()[0]?.events, monitor.stats.events], [6, 6]);
    assert.deepEqual(monitor.active(), []);
  });

  it('finds the session logs in the profile storage of the newest VS Code, in the window folder the editor names, and reads a session from one file only', async () => {
    const ws = await tmpdir('lg-ws-');
    const user = await tmpdir('lg-user-');
    const storage = path.join(user, 'workspaceStorage', 'ab12');
    const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    await write(storage, 'workspace.json', JSON.stringify({ folder: `file://${ws}` }));
    await write(user, 'globalStorage/chatSessions/ab12/chat-new.jsonl', lines(loopingSession('chat-new')));
    await write(user, 'profiles/7f3e/globalStorage/chatSessions/ab12/chat-profile.jsonl', lines(loopingSession('chat-profile')));
    // The same session in the old place (VS Code copies, and keeps the original): read once, from the new place.
    await write(storage, 'chatSessions/chat-new.jsonl', lines(loopingSession('chat-new')));
    // A session with a hook transcript is read from it, not from its session log too.
    const start = { type: 'session.start', data: { sessionId: 'both', version: 1, producer: 'copilot-agent', copilotVersion: '0.33.0', vscodeVersion: '1.110.0', startTime: today }, id: 's', timestamp: today };
    await write(storage, 'GitHub.copilot-chat/transcripts/both.jsonl', lines([start]));
    await write(storage, 'chatSessions/both.jsonl', lines(loopingSession('both')));
    // Inside the editor: the window's own storage folder is the home.
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { copilot: { enabled: true } } }), { HOME: '/nonexistent' }, storage);
    await monitor.poll();
    const files = monitor.agentSources().map((s) => path.relative(user, s.file)).sort();
    assert.deepEqual(files, ['globalStorage/chatSessions/ab12/chat-new.jsonl', 'profiles/7f3e/globalStorage/chatSessions/ab12/chat-profile.jsonl', 'workspaceStorage/ab12/GitHub.copilot-chat/transcripts/both.jsonl']);
    const halted = new Set(monitor.active().filter((f) => f.action === 'halt').map((f) => f.session));
    assert.deepEqual([...halted].sort(), ['chat-new', 'chat-profile']);
    assert.equal(monitor.stats.events, 8, 'four events from each session log, none from the old copy or from the session the transcript has');
    await monitor.poll();
    assert.equal(monitor.agentSources().length, 3, 'nothing found twice');
  });

  it('takes the folders from the configuration or the agents\' environment variables', async () => {
    const ws = await tmpdir('lg-ws-');
    const claudeHome = await tmpdir('lg-claude-');
    await write(claudeHome, `projects/${claudeProjectDir(ws)}/s.jsonl`, claudeLines('s', 1, 1));
    const viaEnv = new WorkspaceMonitor(new Workspace(ws), config({ agents: { claude: { enabled: true } } }), { HOME: '/nonexistent', CLAUDE_CONFIG_DIR: claudeHome });
    await viaEnv.poll();
    assert.equal(viaEnv.agentSources().length, 1);
    const viaConfig = new WorkspaceMonitor(new Workspace(ws), config({ agents: { claude: { enabled: true, home: claudeHome } } }), { HOME: '/nonexistent' });
    await viaConfig.poll();
    assert.equal(viaConfig.agentSources().length, 1);
  });
});

describe("Cline, Roo Code and Kilo Code tasks in the editor's global storage", () => {
  const envDetails = (heading: string, cwd: string) => `<environment_details>\n# Current Time\n${today}\n\n# ${heading} (${cwd}) Files\nsrc/\n</environment_details>`;
  /** A task history (their shape, our text): the task, then `failures` times the same failing command, native calls. */
  const history = (heading: string, cwd: string, failures: number) => {
    const t = Date.now();
    const out: unknown[] = [{ role: 'user', ts: t, content: [{ type: 'text', text: '<task>\nbuild it\n</task>' }, { type: 'text', text: envDetails(heading, cwd) }] }];
    for (let i = 1; i <= failures; i++) {
      out.push({ role: 'assistant', ts: t + i * 10, content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'execute_command', input: { command: 'make' } }] });
      out.push({ role: 'user', ts: t + i * 10 + 5, content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'Exit code: 2\nOutput:\nmake: *** No rule to make target' }] });
    }
    return JSON.stringify(out);
  };
  const CLINE = 'Current Working Directory';
  const ROO = 'Current Workspace Directory';
  const on = { enabled: true };
  const all = { agents: { cline: on, roo: on, kilo: on } };

  it("finds each task whose folder is this workspace, by the task list, the task's item or its first request; reads them, and not the others", async () => {
    const ws = await tmpdir('lg-ws-');
    const elsewhere = await tmpdir('lg-else-');
    const storage = await tmpdir('lg-globalstorage-');
    const data = await tmpdir('lg-clinedata-');
    // Cline: the task list names the folders (one task's history names another folder: the list wins).
    await write(storage, 'saoudrizwan.claude-dev/tasks/1001/api_conversation_history.json', history(CLINE, elsewhere, 3));
    await write(storage, 'saoudrizwan.claude-dev/tasks/1002/api_conversation_history.json', history(CLINE, ws, 3));
    await write(storage, 'saoudrizwan.claude-dev/state/taskHistory.json', JSON.stringify([{ id: '1001', ts: 1, task: 'x', cwdOnTaskInitialization: ws }, { id: '1002', ts: 2, task: 'y', cwdOnTaskInitialization: elsewhere }]));
    // A Cline task not in the list: its first request says where it ran.
    await write(storage, 'saoudrizwan.claude-dev/tasks/1003/api_conversation_history.json', history(CLINE, ws, 1));
    // Roo Code: the task's own history_item.json, or its first request.
    await write(storage, 'rooveterinaryinc.roo-cline/tasks/r1/history_item.json', JSON.stringify({ id: 'r1', number: 1, ts: 1, task: 'x', tokensIn: 0, tokensOut: 0, totalCost: 0, workspace: ws }));
    await write(storage, 'rooveterinaryinc.roo-cline/tasks/r1/api_conversation_history.json', history(ROO, elsewhere, 3));
    await write(storage, 'rooveterinaryinc.roo-cline/tasks/r2/api_conversation_history.json', history(ROO, path.join(ws, 'pkg'), 1));
    await write(storage, 'rooveterinaryinc.roo-cline/tasks/r3/api_conversation_history.json', history(ROO, elsewhere, 3));
    // Kilo Code: its first request only.
    await write(storage, 'kilocode.kilo-code/tasks/k1/api_conversation_history.json', history(ROO, ws, 1));
    await write(storage, 'kilocode.kilo-code/tasks/k2/api_conversation_history.json', history(ROO, elsewhere, 3));
    // Cline's SDK sessions: the manifest names the folder.
    await write(data, 'sessions/s1/s1.json', JSON.stringify({ version: 1, session_id: 's1', cwd: ws, workspace_root: ws }));
    await write(data, 'sessions/s1/s1.messages.json', JSON.stringify({ version: 1, sessionId: 's1', messages: [{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }] }] }));
    await write(data, 'sessions/s2/s2.json', JSON.stringify({ version: 1, session_id: 's2', cwd: elsewhere, workspace_root: elsewhere }));
    await write(data, 'sessions/s2/s2.messages.json', JSON.stringify({ version: 1, sessionId: 's2', messages: [{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }] }] }));

    const monitor = new WorkspaceMonitor(new Workspace(ws), config(all), { HOME: '/nonexistent', LOOP_GUARDIAN_GLOBAL_STORAGE: storage, CLINE_DATA_DIR: data });
    const update = await monitor.poll();
    assert.deepEqual(monitor.agentSources().map((s) => `${s.label} ${s.sessions.join()}`).sort(), ['Cline 1001', 'Cline 1003', 'Cline s1', 'Kilo Code k1', 'Roo Code r1', 'Roo Code r2']);
    const halted = update.raised.filter((f) => f.action === 'halt').map((f) => `${f.agent} ${f.session}`);
    assert.deepEqual([...new Set(halted)].sort(), ['cline 1001', 'roo-code r1']);
    // The person's turn (`user` and its `prompt`), the call and its result.
    assert.equal(monitor.agentSources().find((s) => s.sessions.includes('1003'))?.events, 4);
  });

  it('reads a task as it is rewritten: only what is new counts, and the third failure halts once', async () => {
    const ws = await tmpdir('lg-ws-');
    const storage = await tmpdir('lg-globalstorage-');
    const file = await write(storage, 'rooveterinaryinc.roo-cline/tasks/r9/api_conversation_history.json', history(ROO, ws, 2));
    const monitor = new WorkspaceMonitor(new Workspace(ws), config(all), { HOME: '/nonexistent' }, undefined, storage);
    const first = await monitor.poll();
    assert.deepEqual(first.raised.filter((f) => f.action === 'halt'), []);
    assert.equal(monitor.agentSources()[0]?.events, 2 + 2 * 2);
    // Rewritten whole (temp file, rename) with one more failing call.
    const doc = JSON.parse(history(ROO, ws, 3)) as unknown[];
    const before = JSON.parse(await fs.readFile(file, 'utf8')) as unknown[];
    await fs.writeFile(`${file}.tmp`, JSON.stringify([...before, ...doc.slice(5)]));
    await fs.rename(`${file}.tmp`, file);
    const next = await monitor.poll();
    assert.equal(monitor.agentSources()[0]?.events, 2 + 3 * 2);
    assert.ok(next.raised.some((f) => f.action === 'halt' && f.agent === 'roo-code' && f.session === 'r9'));
    const quiet = await monitor.poll();
    assert.deepEqual(quiet.raised, []);
    assert.equal(monitor.agentSources()[0]?.events, 2 + 3 * 2);
  });

  it("looks in VS Code's standard global storage under the user's home from the CLI, leaves a task the hook records to the hook, and reads nothing not opted in", async () => {
    const ws = await tmpdir('lg-ws-');
    const home = await tmpdir('lg-home-');
    const storage = globalStorageFolders({}, home)[0] as string;
    await write(storage, 'saoudrizwan.claude-dev/tasks/2001/api_conversation_history.json', history(CLINE, ws, 3));
    await write(storage, 'saoudrizwan.claude-dev/tasks/2002/api_conversation_history.json', history(CLINE, ws, 3));
    await write(ws, '.tmp/current/logs/hook-cline-2002.jsonl', '');
    const monitor = new WorkspaceMonitor(new Workspace(ws), config({ agents: { cline: on } }), { HOME: home });
    await monitor.poll();
    assert.deepEqual(monitor.agentSources().map((s) => s.sessions.join()), ['2001']);
    const off = new WorkspaceMonitor(new Workspace(ws), config(), { HOME: home });
    await off.poll();
    assert.deepEqual(off.agentSources(), []);
    // A custom storage path (the folder that holds tasks/) named as the agent's home.
    const custom = await tmpdir('lg-custom-');
    await write(custom, 'tasks/r5/api_conversation_history.json', history(ROO, ws, 1));
    const viaHome = new WorkspaceMonitor(new Workspace(ws), config({ agents: { roo: { enabled: true, home: custom } } }), { HOME: home });
    await viaHome.poll();
    assert.deepEqual(viaHome.agentSources().map((s) => `${s.label} ${s.sessions.join()}`), ['Roo Code r5']);
  });
});

describe("the editor's global storage folders, from the CLI", () => {
  it("lists each edition's user data on each platform, the remote server's and code-server's; the environment variable replaces them", () => {
    const linux = globalStorageFolders({}, '/home/u', 'linux');
    assert.equal(linux[0], '/home/u/.config/Code/User/globalStorage');
    assert.ok(linux.includes('/home/u/.config/Code - Insiders/User/globalStorage'));
    assert.ok(linux.includes('/home/u/.vscode-server/data/User/globalStorage'));
    assert.ok(linux.includes('/home/u/.local/share/code-server/User/globalStorage'));
    assert.equal(globalStorageFolders({ XDG_CONFIG_HOME: '/cfg', XDG_DATA_HOME: '/data' }, '/home/u', 'linux').filter((f) => f.startsWith('/cfg/') || f.startsWith('/data/code-server/')).length, 5);
    assert.equal(globalStorageFolders({}, '/Users/u', 'darwin')[0], '/Users/u/Library/Application Support/Code/User/globalStorage');
    assert.equal(path.normalize(globalStorageFolders({ APPDATA: '/appdata' }, '/u', 'win32')[0] as string), path.normalize('/appdata/Code/User/globalStorage'));
    assert.ok(!globalStorageFolders({}, '/u', 'win32').some((f) => f.split(/[\\/]/).includes('code-server')));
    assert.ok(globalStorageFolders({ VSCODE_PORTABLE: '/opt/vsc/data' }, '/home/u', 'linux').includes('/opt/vsc/data/user-data/User/globalStorage'));
    assert.deepEqual(globalStorageFolders({ LOOP_GUARDIAN_GLOBAL_STORAGE: `/a${path.delimiter}/b` }, '/home/u', 'linux'), ['/a', '/b']);
  });
});
