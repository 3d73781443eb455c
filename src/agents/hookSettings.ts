import { escapeRegExp, isObject } from '../core/guards';
import type { HookProtocol, HookRegistration, HookReply } from './hook';

export class SettingsShapeError extends Error {
  constructor(readonly file: string, readonly field: string, detail: string) {
    super(`${file}: ${field} ${detail}; not changed`);
    this.name = 'SettingsShapeError';
  }
}

/**
 * Where the per-user launcher is, as the shell running a hook finds it: under
 * `$LOOP_GUARDIAN_HOME` when set (tests, or a person who wants it elsewhere), else under the
 * user's home. The state layer writes it there (`src/state/launcher.ts`); the two must agree.
 */
export const LAUNCHER_IN_SHELL = '${LOOP_GUARDIAN_HOME:-$HOME/.loop-guardian}/bin/loop-guardian';

/** What an agent is told when STOP_ALL says STOP on a machine where the guardian is not installed. */
export const STOP_WITHOUT_GUARDIAN = 'STOP_ALL is set to STOP (.github/guardian/STOP_ALL): every agent halts. Loop Guardian is not installed on this machine: only STOP is honoured here.';

/** A reply as a shell prints it: stdout, stderr, then the exit code (inside the hook command's double quotes). */
function printed(reply: { stdout: string; stderr: string; exitCode: number }): string {
  const quoted = (text: string) => `"${text.trim().replace(/[\\"`]/g, '\\$&')}"`;
  return `${reply.stdout.trim() === '' ? '' : `printf "%s\\n" ${quoted(reply.stdout)}; `}${reply.stderr.trim() === '' ? '' : `printf "%s\\n" ${quoted(reply.stderr)} >&2; `}exit ${reply.exitCode};`;
}

/**
 * STOP_ALL says STOP, in shell: `stopWordOf`'s grammar (src/core/stopAll.ts) over the same bytes,
 * the file's first 4 KiB, so that a spelling means the same with the guardian and without it.
 * Only a regular file is read (`[ -f ]` follows a link: a FIFO, `/dev/zero` or a folder in its
 * place is not one, and reads as CLEAR, as the guardian reads it): never a read that blocks or
 * has no end. NUL bytes go (UTF-16), the blanks of the grammar become spaces, and the first word is
 * STOP followed by no ASCII letter. LC_ALL=C: bytes, not characters, whatever the locale.
 */
const SAYS_STOP = '[ -f .github/guardian/STOP_ALL ] && head -c 4096 < .github/guardian/STOP_ALL | tr -d "\\000" | tr "\\011\\012\\013\\014\\015\\357\\273\\277\\376\\377\\302\\240" "            " | grep -qiE "^ *stop([^A-Za-z]|\\$)"';

/**
 * Whether STOP_ALL in the working folder or any folder above it says STOP, as the guardian reads
 * it (`findProject`, `readStopAllInForceSync`): an agent started in a subfolder or in a nested
 * repository meets the project's STOP_ALL. A subshell walks up with `cd ..` (no variable), to the
 * root at most.
 */
const STOP_SET = `( LC_ALL=C; export LC_ALL; while :; do if ${SAYS_STOP}; then exit 0; fi; [ "$(pwd)" = / ] && exit 1; cd .. || exit 1; done ) 2>/dev/null`;

/**
 * The keys an agent's hook input names its event under: `hook_event_name` (Claude Code, Codex,
 * Gemini CLI, Cursor), `hookEventName` (Copilot in VS Code), `hookName` (Cline), `agent_action_name`
 * (Windsurf); each agent's `parse` reads it there (src/agents/<agent>/hook.ts). A key inside a
 * string of the input is escaped (`\"hook_event_name\"`) and does not match.
 */
const EVENT_KEYS = ['hook_event_name', 'hookEventName', 'hookName', 'agent_action_name'];

type StopAnswering = Pick<HookProtocol, 'allow' | 'deny' | 'halt'> & Partial<Pick<HookProtocol, 'events' | 'denyPrompt' | 'settleEvents' | 'registration'>>;

/**
 * What the guardian answers under STOP, per event, for the events whose answer is not the
 * refusal of a call: a call already run (post) and the end of a turn (`settleEvents`) are let be,
 * as the guardian lets them (it refuses before a call); a prompt is refused in the agent's prompt
 * form (Claude Code rejects a PreToolUse answer to UserPromptSubmit, "incorrect event name", and the
 * prompt reaches the model: issue 32), or let be where the agent cannot refuse one.
 */
function stopAnswersByEvent(hook: StopAnswering): Array<{ events: string[]; reply: HookReply }> {
  // An entry several agents share (Copilot in VS Code and Copilot CLI: one file, one entry) must be
  // one command whichever of them `init` names, and their events are not named alike: one answer.
  if ((hook.registration?.sharedWith ?? []).length > 0) return [];
  const idle = { ...hook.allow(), exitCode: 0 };
  const registered = hook.registration?.events ?? [];
  const post = registered.filter((e) => hook.events?.post.includes(e) === true || hook.settleEvents?.includes(e) === true);
  const answers: Array<{ events: string[]; reply: HookReply }> = [];
  const prompt = hook.events?.prompt;
  if (prompt !== undefined && registered.includes(prompt)) {
    const call = { phase: 'prompt' as const, event: prompt, session: '', input: {}, prompt: '' };
    answers.push({ events: [prompt], reply: hook.denyPrompt?.(STOP_WITHOUT_GUARDIAN, call) ?? idle });
  }
  if (post.length > 0) answers.push({ events: post, reply: idle });
  for (const { events } of answers) for (const e of events) if (!/^[A-Za-z_]+$/.test(e)) throw new Error(`cannot build a hook command for the event ${JSON.stringify(e)}`);
  return answers;
}

/**
 * What runs where the guardian cannot (no launcher, or a launcher whose install is gone): STOP
 * still wins. When a `.github/guardian/STOP_ALL` in the working folder or a folder above it says
 * STOP (`SAYS_STOP`), the call is refused with the agent's own answer for its event (ending its run
 * where the agent allows it; a prompt in the prompt's form; a call already run let be); otherwise
 * it exits 0 with the agent's "no decision", so the call runs as if there were no hook: fail-open
 * for every agent, including those that refuse a call whose hook fails (Copilot's pre-call hooks).
 * stdin is always read to its end: an agent writing the call to a hook that already exited would
 * get EPIPE. A POSIX shell with `head`, `tr`, `grep` and `sed`; no variable of its own (see
 * `hookCommand`).
 */
export function stopFallback(agentId: string, hook: StopAnswering): string {
  const idle = hook.allow();
  const stop = hook.halt?.(STOP_WITHOUT_GUARDIAN) ?? hook.deny(STOP_WITHOUT_GUARDIAN);
  const byEvent = stopAnswersByEvent(hook);
  // The script is single-quoted for the outer shell; the answers are double-quoted inside it.
  for (const reply of [idle, stop, ...byEvent.map((a) => a.reply)]) {
    for (const text of [reply.stdout, reply.stderr]) if (text.includes("'") || text.includes('$')) throw new Error(`cannot build a hook command for ${JSON.stringify(agentId)}`);
  }
  // The event, where the answer depends on it: the first `"<key>": "<Event>"` in the input's first
  // 64 KiB (the agents send the event before the call's input; a 50 MB input is then drained by
  // `cat`, not searched), the rest read to its end.
  const which = `"$( { head -c 65536 | LC_ALL=C grep -aoE "\\"(${EVENT_KEYS.join('|')})\\" *: *\\"[A-Za-z_]+\\""; cat >/dev/null; } | sed -n 1p)"`;
  const branches = byEvent.map(({ events, reply }) => `${events.map((e) => `*\\"${e}\\"`).join('|')}) ${printed(reply).replace(/;$/, '')};; `).join('');
  const answer = byEvent.length === 0 ? `cat >/dev/null; ${printed(stop)}` : `case ${which} in ${branches}esac; ${printed(stop)}`;
  return `{ if ${STOP_SET}; then ${answer} fi; cat >/dev/null; ${printed({ ...idle, exitCode: 0 })} }`;
}

/**
 * The command `init` registers for an agent: the per-user launcher, not this install's path, so
 * that the same line works on every machine and after every update. Run by a POSIX shell. Where
 * the launcher is missing (a teammate who never installed the guardian, a cloud agent's fresh
 * clone), `stopFallback` answers: STOP still wins.
 *
 * It names no variable of its own: some agents expand `$NAME` and `${NAME}` in a hook command from
 * their own environment before a shell sees it (Gemini CLI's `resolveEnvVarsInString`,
 * google-gemini/gemini-cli `packages/core/src/utils/envVarResolver.ts`: `\$(\w+)` or `\${…}`), so a
 * shell variable such as `l=…; "$l"` would become whatever `l` is in the agent's environment. The
 * only `$` followed by a name are `HOME` and `LOOP_GUARDIAN_HOME`, which read the same whoever
 * expands them; the others are `"$@"`, `$(` and a regular expression's `$)`, which none expands.
 */
export function hookCommand(agentId: string, hook: StopAnswering): string {
  if (!/^[a-z][a-z0-9-]*$/.test(agentId)) throw new Error(`cannot build a hook command for ${JSON.stringify(agentId)}`);
  // Arguments after the command (a hook file's `--workspace DIR`) reach the hook: "loop-guardian" is the script's $0.
  return `sh -c '[ -f "${LAUNCHER_IN_SHELL}" ] || ${stopFallback(agentId, hook)}; exec sh "${LAUNCHER_IN_SHELL}" hook ${agentId} "$@"' loop-guardian`;
}

/** Whether a hook command is the guardian's hook for one of these agents (any install path, the launcher included). */
export function isGuardianHook(command: unknown, agents: string | readonly string[]): boolean {
  if (typeof command !== 'string' || !/loop-guardian|cli\.js/.test(command)) return false;
  // The id ends where no other id could go on ("copilot" is not "copilot-cli").
  return (typeof agents === 'string' ? [agents] : agents).some((agent) => new RegExp(`\\bhook\\s+${escapeRegExp(agent)}(?![\\w-])`).test(command));
}

export interface MergeResult {
  readonly settings: Record<string, unknown>;
  /** The events whose registration was added or updated; empty when it was already there. */
  readonly added: string[];
  readonly updated: string[];
}

/**
 * The commands that are this very registration: the command, and the same command naming an agent
 * that shares the entry (`hook copilot-cli` serves Copilot in VS Code as well as `hook copilot`).
 */
export function sameCommands(command: string, agent: string, reg: HookRegistration): readonly string[] {
  const own = new RegExp(`\\bhook(\\s+)${escapeRegExp(agent)}(?![\\w-])`);
  return [command, ...(reg.sharedWith ?? []).map((other) => command.replace(own, (_m, space: string) => `hook${space}${other}`))];
}

/** The agents an entry of this registration may name: the agent, and those sharing its entries. */
function idsOf(agent: string, reg: HookRegistration): readonly string[] {
  return [agent, ...(reg.sharedWith ?? [])];
}

function commandOf(reg: HookRegistration, entry: Record<string, unknown>): unknown {
  return entry[reg.entry?.commandKey ?? 'command'] ?? entry.command ?? entry.bash;
}

function hooksOf(settings: Record<string, unknown>, file: string): Record<string, unknown> {
  const hooks = settings.hooks === undefined ? {} : settings.hooks;
  if (!isObject(hooks)) throw new SettingsShapeError(file, 'hooks', 'is not an object');
  return { ...hooks };
}

/**
 * Adds the guardian's hook to an agent's settings, keeping everything else as it is: other keys,
 * other events, other hooks on the same events. A registration of the guardian already there is
 * updated in place (a new command), never duplicated; a second one of ours on the same event (an
 * older install's, or a sharing agent's) is removed. Throws when the shape is not the documented
 * one, rather than guess and clobber.
 */
export function mergeHookSettings(existing: unknown, agent: string, reg: HookRegistration, command: string, file: string = reg.settingsFile, windows?: string): MergeResult {
  // The Windows command beside the command, under the agent's key for it, where it has one.
  const win = reg.windowsKey !== undefined && windows !== undefined ? { [reg.windowsKey]: windows } : {};
  const sameWindows = (h: Record<string, unknown>) => reg.windowsKey === undefined || windows === undefined || sameCommands(windows, agent, reg).includes(h[reg.windowsKey] as string);
  const current = sameCommands(command, agent, reg);
  if (existing !== undefined && !isObject(existing)) throw new SettingsShapeError(file, '(root)', 'is not a JSON object');
  const settings: Record<string, unknown> = { ...(existing ?? {}) };
  if (reg.version !== undefined && settings.version === undefined) settings.version = reg.version;
  const merged = hooksOf(settings, file);
  const ids = idsOf(agent, reg);
  const added: string[] = [];
  const updated: string[] = [];
  const update = (event: string) => {
    if (!updated.includes(event)) updated.push(event);
  };
  for (const event of reg.events) {
    const groups = merged[event] === undefined ? [] : merged[event];
    if (!Array.isArray(groups)) throw new SettingsShapeError(file, `hooks.${event}`, 'is not an array');
    let found = false;
    if (reg.layout === 'flat') {
      const key = reg.entry?.commandKey ?? 'command';
      const next: unknown[] = [];
      for (const h of groups as unknown[]) {
        if (!isObject(h) || !isGuardianHook(commandOf(reg, h), ids)) {
          next.push(h);
          continue;
        }
        if (found) {
          update(event);
          continue;
        }
        found = true;
        if (current.includes(h[key] as string) && sameWindows(h)) next.push(h);
        else {
          update(event);
          // The command under this agent's key; an older entry's other spelling of it goes.
          const { command: _c, bash: _b, ...rest } = h;
          next.push({ ...rest, [key]: current.includes(h[key] as string) ? h[key] : command, ...win });
        }
      }
      if (!found) {
        next.push({ ...(reg.entry?.fields ?? {}), [key]: command, ...win });
        added.push(event);
      }
      merged[event] = next;
      continue;
    }
    // Where the event decides nothing and the agent allows it, its entry runs in the background.
    const background = reg.background?.includes(event) === true;
    const asyncField = background ? { async: true } : {};
    const next: unknown[] = [];
    for (const group of groups as unknown[]) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        next.push(group);
        continue;
      }
      const inner: unknown[] = [];
      for (const h of group.hooks as unknown[]) {
        if (!isObject(h) || !isGuardianHook(h.command, ids)) {
          inner.push(h);
          continue;
        }
        if (found) {
          update(event);
          continue;
        }
        found = true;
        const same = current.includes(h.command as string) && sameWindows(h) && (h.async === true) === background;
        if (!same) update(event);
        // An entry that decides is never left to run in the background (an older one's `async` goes).
        const { async: _async, ...kept } = h;
        inner.push(same ? h : { ...kept, command: current.includes(h.command as string) ? h.command : command, ...win, ...asyncField });
      }
      // A group left empty by a removed duplicate goes with it.
      if (inner.length > 0 || group.hooks.length === 0) next.push({ ...group, hooks: inner });
    }
    if (!found) {
      const matcher = reg.matcher !== undefined && !(reg.unmatched ?? []).includes(event) ? { matcher: reg.matcher } : {};
      next.push({ ...matcher, hooks: [{ type: 'command', command, ...win, timeout: reg.timeout, ...asyncField }] });
      added.push(event);
    }
    merged[event] = next;
  }
  settings.hooks = merged;
  return { settings, added, updated };
}

interface RemoveResult {
  readonly settings: Record<string, unknown>;
  /** The events the guardian's entries were removed from. */
  readonly removed: string[];
}

/**
 * Removes the guardian's entries for an agent (and those sharing them) from settings, and nothing
 * else: a group or an event left empty by it goes too, `hooks` when nothing is left in it.
 */
export function removeHookSettings(existing: unknown, agent: string, reg: HookRegistration, file: string): RemoveResult {
  if (!isObject(existing)) throw new SettingsShapeError(file, '(root)', 'is not a JSON object');
  const settings: Record<string, unknown> = { ...existing };
  if (settings.hooks === undefined) return { settings, removed: [] };
  const hooks = hooksOf(settings, file);
  const ids = idsOf(agent, reg);
  const removed: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    let hit = false;
    const next = (groups as unknown[]).flatMap((g): unknown[] => {
      if (!isObject(g)) return [g];
      if (!Array.isArray(g.hooks)) {
        if (!isGuardianHook(commandOf(reg, g), ids)) return [g];
        hit = true;
        return [];
      }
      const inner = (g.hooks as unknown[]).filter((h) => !(isObject(h) && isGuardianHook(h.command, ids)));
      if (inner.length === g.hooks.length) return [g];
      hit = true;
      return inner.length > 0 ? [{ ...g, hooks: inner }] : [];
    });
    if (!hit) continue;
    removed.push(event);
    if (next.length > 0) hooks[event] = next;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length > 0) settings.hooks = hooks;
  else delete settings.hooks;
  return { settings, removed };
}

/** The command of the guardian's entry for an agent in settings, on the first of its events that has one. */
export function registeredCommand(existing: unknown, agent: string, reg: HookRegistration): string | undefined {
  if (!isObject(existing) || !isObject(existing.hooks)) return undefined;
  const ids = idsOf(agent, reg);
  for (const event of reg.events) {
    const groups = existing.hooks[event];
    if (!Array.isArray(groups)) continue;
    for (const g of groups as unknown[]) {
      if (!isObject(g)) continue;
      const entries = Array.isArray(g.hooks) ? (g.hooks as unknown[]) : [g];
      for (const h of entries) {
        const command = isObject(h) ? commandOf(reg, h) : undefined;
        if (typeof command === 'string' && isGuardianHook(command, ids)) return command;
      }
    }
  }
  return undefined;
}

/** What marks a hook file as the guardian's own: `init` writes it, and rewrites only such a file. */
const HOOK_SCRIPT_MARK = '# Loop Guardian hook, written by `loop-guardian init';

/**
 * The guardian's hook file for one event of an agent whose hooks are files (`script` layout): a
 * POSIX shell script that runs the command for the workspace the file lies in (the folder as many
 * levels up as `settingsFile` is deep), stdin passed through.
 */
function hookScript(agent: string, reg: HookRegistration, event: string, command: string): string {
  const up = reg.settingsFile.split('/').map(() => '..').join('/');
  return [
    '#!/bin/sh',
    `${HOOK_SCRIPT_MARK} ${agent}\`: rewritten by it, so edit a copy under another name.`,
    `# ${agent} runs it at ${event} with the call as JSON on stdin; the answer goes to stdout.`,
    `exec ${command} --workspace "$(cd "$(dirname "$0")/${up}" && pwd)"`,
    '',
  ].join('\n');
}

/**
 * The hook file to write for one event, given what is there: the guardian's file when there is
 * none (`added`), the current one in place of an older guardian file (`updated`), nothing when it is
 * already current. Another hook file of the same name is never replaced: an agent runs one file per
 * event and folder, so the guardian's cannot sit beside it (SettingsShapeError, naming the file).
 */
export function mergeHookScript(existing: string | undefined, agent: string, reg: HookRegistration, event: string, command: string, file: string): { text: string; change: 'added' | 'updated' | 'none' } {
  const text = hookScript(agent, reg, event, command);
  if (existing === undefined) return { text, change: 'added' };
  if (!existing.includes(HOOK_SCRIPT_MARK) || !isGuardianHook(existing, agent)) {
    throw new SettingsShapeError(file, '(file)', `is another hook of this name (${agent} runs one ${event} file per folder); to run both, call \`${command}\` from it`);
  }
  return { text, change: existing === text ? 'none' : 'updated' };
}
