import * as path from 'node:path';

/** The shared corpus of real transcripts, read where it is (never copied into the project). */
export const REAL = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'real');

/** One loop a careful reader found, and the halts (`signal@evidence lines`) that report it. */
export interface JudgedLoop {
  readonly what: string;
  readonly halts: readonly string[];
}

/**
 * What a careful reader found in one real transcript, by reading it at the evidence: its loops,
 * each with the halts that report it. A halt on no judged loop is a false halt. The detailed
 * judgements, warnings included, are the tests in `test/unit/agents/judged.test.ts`.
 */
export interface Judgement {
  /** Relative to REAL. */
  readonly file: string;
  readonly loops: readonly JudgedLoop[];
  /**
   * The warnings (`signal@evidence lines`) it raises, each read and judged right: the same error
   * twice (seed 003's early warning), a repeat with progress between. None when absent.
   */
  readonly warns?: readonly string[];
}

const quiet = (file: string): Judgement => ({ file, loops: [] });

export const JUDGEMENTS: readonly Judgement[] = [
  {
    file: 'claude/ccviewer-todo-app-long.jsonl',
    loops: [
      { what: 'Edit, MultiEdit and Write each refused with "File has not been read yet"', halts: ['repeated-error@150,152,154'] },
      { what: 'the same refusal three times, after which the agent gave the file up', halts: ['repeated-error@375,377,380'] },
      { what: '`npm run build` four times with a new description and the same failure', halts: ['failing-call@402,405', 'identical-calls@402,405,408', 'repeated-error@402,405,408'] },
    ],
    // The Edit refused twice before the agent read the file (77, 80), and each loop's second failure.
    warns: ['repeated-error@77,80', 'repeated-error@150,152', 'repeated-error@171,173', 'repeated-error@375,377', 'repeated-error@402,405'],
  },
  {
    file: 'openhands/msb-ponyc-2-history.json',
    loops: [
      { what: 'str_replace without old_str, "Parameter old_str is required" three times', halts: ['windowed-repeat@2635,2900,3036', 'failing-call@2900,3036'] },
      { what: 'the same unmatched str_replace three times', halts: ['windowed-repeat@3838,4246,4382'] },
    ],
    warns: ['repeated-error@2900,3036', 'repeated-error@3437,3573', 'repeated-error@4246,4382'],
  },
  // The evaluation file holding the three histories above, one instance per line (so every event is at its instance's line).
  {
    file: 'openhands/msb-ponyc-output.jsonl',
    loops: [
      { what: 'ponyc-4593 (line 2): str_replace without old_str three times', halts: ['failing-call@2,2', 'windowed-repeat@2,2,2'] },
      { what: 'ponyc-4593 (line 2): the same unmatched str_replace three times', halts: ['windowed-repeat@2,2,2'] },
      { what: 'ponyc-4588 (line 3): make with the same "can\'t cd" three times', halts: ['repeated-error@3,3,3'] },
    ],
    // The warnings of the three histories, at their instances' lines.
    warns: ['windowed-repeat@1,1,1', 'repeated-error@1,1', 'repeated-error@2,2', 'repeated-error@2,2', 'repeated-error@2,2', 'repeated-error@3,3', 'repeated-error@3,3'],
  },
  {
    file: 'openhands/msb-ponyc-3-history.json',
    loops: [{ what: 'make varied blindly, the same "can\'t cd to build/build_release" three times', halts: ['repeated-error@4240,4379,4518'] }],
    warns: ['repeated-error@4240,4379', 'repeated-error@5471,5610'],
  },
  // parser.c read whole three times with greps finding new lines between: wasteful, progressing.
  { file: 'openhands/msb-ponyc-1-history.json', loops: [], warns: ['windowed-repeat@758,1023,1288', 'repeated-error@2351,2490'] },
  // `agent-intercom-ctl steer` failing to connect twice, then given up.
  { file: 'copilot-cli/engram-07c40cd0-events.jsonl', loops: [], warns: ['repeated-error@107,114'] },
  ...[
    'claude/ccviewer-1af7fc5e.jsonl',
    'claude/ccviewer-5c0375b4.jsonl',
    'claude/slopometry-0f112eb4.jsonl',
    'claude/sniffly-ai-music-ba79134d.jsonl',
    'claude/sniffly-ai-music-d3ad4cdc.jsonl',
    'claude/sniffly-ai-music-fed8ce56.jsonl',
    'codex/acidicsoil-chatbot-ui-lmstudio.jsonl',
    // Roo Code tasks, their XML-tag calls read with their results: no call repeats even at threshold 2.
    'roo/jsb-91e837de-api_conversation_history.json',
    'roo/jsb-ac8aa7b4-api_conversation_history.json',
    'roo/jsb-ac8aa7b4-ui_messages.json',
    'roo/jsb-bc93a6f7-api_conversation_history.json',
    'roo/jsb-bc93a6f7-ui_messages.json',
    'roo/jsb-e73ea764-api_conversation_history.json',
    'roo/jsb-e73ea764-ui_messages.json',
    'copilot-cli/engram-8baa78ec-events.jsonl',
    // VS Code Copilot chats (exports and a prompt log); fix-deploy navigates and checks the site again after each deploy step, with new results: verification, not a loop.
    'copilot-vscode/dealenx-canceled-chat.json',
    'copilot-vscode/dealenx-chat-with-error.json',
    'copilot-vscode/dealenx-chat_error_mcp.json',
    'copilot-vscode/dealenx-chat_succes_mcp.json',
    'copilot-vscode/dealenx-completed_chat.json',
    'copilot-vscode/digitarald-fix-deploy.json',
    'copilot-vscode/digitarald-plan.json',
    'copilot-vscode/digitarald-remove-tests.chatreplay.json',
    'copilot-vscode/digitarald-small.json',
    'copilot-vscode/digitarald-tdd-review.json',
    'copilot-vscode/digitarald-thinking.json',
    'copilot-cli/msvcc-2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl',
    'copilot-cli/msvcc-c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl',
    'copilot-cli/msvcc-cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl',
    'openhands/basic_gui_mode.json',
    'openhands/basic_interactions.json',
    // The same edit_file_by_replace failing "No exact match" twice (206, 219), then another approach.
    'openhands/resolver-pr-viewer-darkmode-history.json',
    'openhands/session-63b43159-events.json',
    'openhands/wrong_initial_state.json',
    'swe-agent/commit0-portalocker-madeup-cmd.traj',
    'swe-agent/commit0-simpy-madeup-cmd.traj',
    'swe-agent/commit0-simpy-madeup-test.traj',
    'swe-agent/ctf-BabyEncryption.traj',
    'swe-agent/ctf-BabyTimeCapsule.traj',
    'swe-agent/ctf-flash.traj',
    'swe-agent/ctf-i_got_id_demo.traj',
    'swe-agent/ctf-networking_1.traj',
    'swe-agent/ctf-rock.traj',
    'swe-agent/ctf-warmup.traj',
    'swe-agent/function-calling-simple.traj',
    'swe-agent/humanevalfix-python-0.traj',
    'swe-agent/marshmallow-1867-fc-replace-from-source.traj',
    'swe-agent/marshmallow-1867-xml-window100.traj',
    'swe-agent/test-repo-6e44b9.traj',
    'swe-agent/test-repo-i1.traj',
  ].map(quiet),
];

/**
 * The turn-level events of the corpus (issue 14: prompts, replies, failed model requests,
 * delegations), read in each file where they are, and what the turn-level signals
 * (`repeated-prompt`, `api-error-storm`, `re-delegation`) should raise on them at the default
 * thresholds: `findings` as `action signal@evidence lines`. None of the corpus is such a loop; the
 * entries below are the files where one could have been suspected, each read and judged.
 */
export interface TurnReading {
  readonly file: string;
  readonly what: string;
  readonly findings: readonly string[];
}

export const TURN_READINGS: readonly TurnReading[] = [
  {
    file: 'copilot-cli/engram-07c40cd0-events.jsonl',
    what:
      'the person sent "Send a broadcast message to agent-intercom…" (551), the agent answered it could not (no such tool: the MCP server had not connected), and the person sent it again (573) after the server connected: this time it was sent. A re-ask after a real change, once: no loop (at a threshold of 2 it would be one). The one session.error (160, "read ENOTCONN") was followed by work: no storm',
    findings: [],
  },
  {
    file: 'claude/slopometry-0f112eb4.jsonl',
    what: 'two automatic retries of a refused connection (379, 380: ConnectionRefused, retryAttempt 1 and 2), then the model answered: a retry that succeeds, no storm. Three Task delegations, the first refused for want of its description (8) and sent again with it (11): a retry after a first failure, not a re-delegation',
    findings: [],
  },
  {
    file: 'copilot-vscode/dealenx-chat-with-error.json',
    what: 'one request failed with HTTP 401 (a LiteLLM key rejected): one failed request, no storm',
    findings: [],
  },
  {
    file: 'copilot-vscode/digitarald-tdd-review.json',
    what: 'eight subagents; "TDD RED: Next failing test" delegated twice, each time with a new context (the tests passing so far): a corrected instruction, no re-delegation',
    findings: [],
  },
  {
    file: 'copilot-vscode/digitarald-remove-tests.chatreplay.json',
    what: 'the prompt log lists one prompt three times: the three model requests of one turn (a search, the narration, the patch), read as one prompt',
    findings: [],
  },
  {
    file: 'roo/jsb-ac8aa7b4-ui_messages.json',
    what: 'an orchestrator delegating 22 subtasks, each with its own instruction, 13 of them coming back (the others interrupted by the person): no re-delegation',
    findings: [],
  },
  {
    file: 'roo/jsb-bc93a6f7-ui_messages.json',
    what: 'six subtasks, each a different mission: no re-delegation',
    findings: [],
  },
];

/** The key a halt is judged by: its signal and its evidence lines. */
export function haltKey(f: { readonly signal: string; readonly evidence: readonly { readonly line: number }[] }): string {
  return `${f.signal}@${f.evidence.map((r) => r.line).join(',')}`;
}
