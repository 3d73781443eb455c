import { isResultFrame } from './errorLines';

/**
 * What a call is for, as a person reading a session tells it (issue 25): its tool and its target,
 * not the whole of its arguments, and not the error it got. Two calls with one intent that fail
 * the same way are the same thing tried again; two calls with different intents that fail the same
 * way (three different probes, two different tools missing a parameter, polls of three different
 * processes) are different things that happened to end alike. Pure.
 */

/** Argument names that hold a shell command, by the agents' usual spellings (plainWords.ts says calls with them too). */
export const COMMAND_KEYS: readonly string[] = ['command', 'cmd', 'commandLine', 'command_line', 'script', 'shell_command'];
/** Argument names that hold the file or folder a call works on. */
export const PATH_KEYS: readonly string[] = ['file_path', 'filePath', 'path', 'file', 'filename', 'target_file', 'targetFile', 'notebook_path', 'absolute_path', 'uri', 'dir', 'directory', 'folder'];
/**
 * Argument names that hold what a call acts on, by role: a file or folder, a URL, a running process
 * or terminal (a polled session's `session_id`, a shell's `shellId`), what a search looks for.
 */
const TARGET_ROLES: readonly (readonly [string, readonly string[]])[] = [
  ['path', PATH_KEYS],
  ['url', ['url']],
  ['process', ['session_id', 'sessionId', 'shellId', 'shell_id', 'terminal_id', 'terminalId', 'pid', 'process_id']],
  ['query', ['pattern', 'query', 'regex', 'q']],
];
/** Programs that only say where a command runs, or how: the command they start is the intent. */
const WRAPPERS = new Set(['sudo', 'env', 'time', 'timeout', 'nice', 'nohup', 'exec', 'command', 'xargs']);
/** Search programs: exit status 1 with nothing printed is "no match", an answer (grep(1): "exit status is 0 if a line is selected, 1 if no lines were selected"; rg(1) the same). */
const SEARCHERS = new Set(['grep', 'egrep', 'fgrep', 'zgrep', 'rg', 'ag', 'ack', 'findstr', 'select-string']);
/** Whether a command line names one of them anywhere (the cheap test before it is taken apart). */
const SEARCH_WORD = new RegExp(`(?:${[...SEARCHERS].join('|')})\\b`, 'i');

function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) {
    // An argument vector through a shell, `["bash", "-lc", "make"]`, runs its last word.
    const words = v as string[];
    if (words.length >= 3 && /(^|\/)(ba|z|da)?sh$|powershell|pwsh|cmd(\.exe)?$/i.test(words[0] as string) && /^-\w*c$|^\/c$|^-Command$/i.test(words[1] as string)) return words.slice(2).join(' ');
    return words.join(' ');
  }
  return undefined;
}

/** The shell command a call runs, when it is one. */
export function shellCommandOf(args: unknown): string | undefined {
  return shellCommandArg(args)?.line;
}

/** The argument of a call that holds its shell command, and the command's text, when it has one. */
export function shellCommandArg(args: unknown): { readonly key: string; readonly line: string } | undefined {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  // The call's own keys looked up among COMMAND_KEYS, the first of those in that list winning: a
  // call's arguments are a few keys, and most hold no command (a look for each of the six names
  // missed six times on every call).
  const o = args as Record<string, unknown>;
  let best = -1;
  let line: string | undefined;
  for (const key in o) {
    const rank = COMMAND_RANK.get(key);
    if (rank === undefined || (best >= 0 && rank > best)) continue;
    const text = asText(o[key]);
    if (text === undefined) continue;
    best = rank;
    line = text;
  }
  return line !== undefined ? { key: COMMAND_KEYS[best] as string, line } : undefined;
}

const COMMAND_RANK: ReadonlyMap<string, number> = new Map(COMMAND_KEYS.map((k, i) => [k, i]));

/**
 * Splits a command line at the operators outside quotes: `&&`, `||`, `;`, newlines (`sep`), or
 * `|` alone (`pipe`).
 */
function split(line: string, pipe: boolean): string[] {
  const out: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote !== undefined) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '\\') i++;
    else if (pipe) {
      if (ch === '|' && line[i + 1] !== '|' && line[i - 1] !== '|') {
        out.push(line.slice(start, i));
        start = i + 1;
      }
    } else if ((ch === '&' && line[i + 1] === '&') || (ch === '|' && line[i + 1] === '|')) {
      out.push(line.slice(start, i));
      start = i + 2;
      i++;
    } else if (ch === ';' || ch === '\n') {
      out.push(line.slice(start, i));
      start = i + 1;
    }
  }
  out.push(line.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** A command's words, quotes removed (enough to name a program and its first operands). */
function words(command: string): string[] {
  return (command.match(/"(?:[^"\\]|\\.)*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ''));
}

/** The program a command stage runs and its words after it, wrappers and variable assignments aside. */
function program(stage: string): string[] {
  const w = words(stage);
  let i = 0;
  while (i < w.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w[i] as string) || WRAPPERS.has(w[i] as string) || (i > 0 && WRAPPERS.has(w[i - 1] as string) && /^-|^\d+[smh]?$/.test(w[i] as string)))) i++;
  const rest = w.slice(i);
  if (rest.length === 0) return [];
  const name = (rest[0] as string).replace(/^.*[\\/]/, '').toLowerCase();
  return [name, ...rest.slice(1)];
}

/**
 * The part of a command line the agent runs it for: the last command of an `&&` / `;` chain (what
 * comes before it, `cd` and clean-ups, prepares it), and of a pipeline its first stage (the data;
 * later stages filter it).
 */
function mainCommand(line: string): string[] {
  const chain = split(line, false).filter((c) => program(c)[0] !== 'cd');
  const last = chain[chain.length - 1];
  if (last === undefined) return [];
  return program(split(last, true)[0] ?? last);
}

/**
 * A shell command's intent: its main command's program and first two operands (flags aside):
 * `make`, `make clean && make` and `rm -rf build && cd x && make` are one intent (make), run
 * blindly three ways; `git branch | rg X` and `ls specs | rg X` are two.
 */
export function shellIntent(line: string): string {
  const [name = '', ...rest] = mainCommand(line);
  return [name, ...rest.filter((w) => !w.startsWith('-')).slice(0, 2)].join(' ');
}

/**
 * A call's intent: for a shell command, its main command (whichever shell tool runs it); for a call
 * with a target (a path, a URL, a process, a query), that target, whichever tool acts on it (Edit,
 * MultiEdit and Write refused alike on one file are one thing tried three ways); otherwise its tool.
 */
/**
 * The argument a reader gives a call whose input its source does not carry (an agent's telemetry
 * without its tool details), with the call's id: two such calls are never the same call, and their
 * like failures are never one intent's (they warn; they cannot halt).
 */
export const UNEXPORTED_INPUT = '(input not exported)';

export function intentOf(tool: string, args: unknown): string {
  // A call whose source did not say what it was (its input not exported): its own intent.
  if (args !== null && typeof args === 'object' && UNEXPORTED_INPUT in args) return `unknown\u0000${String((args as Record<string, unknown>)[UNEXPORTED_INPUT])}`;
  const command = shellCommandOf(args);
  if (command !== undefined) return `shell\u0000${shellIntent(command)}`;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return `tool\u0000${tool}`;
  const o = args as Record<string, unknown>;
  const target: string[] = [];
  for (const [role, keys] of TARGET_ROLES) {
    for (const k of keys) {
      const t = asText(o[k]);
      if (t === undefined) continue;
      target.push(`${role}=${t}`);
      break;
    }
  }
  return target.length === 0 ? `tool\u0000${tool}` : target.join('\u0000');
}

/**
 * Whether a failed search found nothing: the command's last pipeline stage is a search program
 * (grep, rg, …) and the failure says nothing but exit status 1. That is the search's answer
 * ("no match"), not an error: a person reads it as the agent learning something is not there.
 */
export function searchFoundNothing(args: unknown, error: string): boolean {
  const command = shellCommandOf(args);
  // Most failed commands name no search program: told before the command is taken apart.
  if (command === undefined || !SEARCH_WORD.test(command)) return false;
  const chain = split(command, false);
  const last = chain[chain.length - 1];
  if (last === undefined) return false;
  const stages = split(last, true);
  const searcher = program(stages[stages.length - 1] as string);
  const name = searcher[0] === 'git' && searcher[1] === 'grep' ? 'grep' : searcher[0];
  if (name === undefined || !SEARCHERS.has(name)) return false;
  // Some agents say only "Error"; an exit status other than 1 is no such line, so a real error.
  if (error.length > 4096) return false;
  return error.split(/\r?\n/).every((l) => l.trim() === '' || isResultFrame(l.trim(), 1));
}

/*
 * The attempt a call makes (issue 36): narrower than its intent. Two calls are the same attempt
 * when a person reading them sees one thing tried again, its trivial variations aside: a shell
 * command retried with its output redirected (`2>&1`, `> /dev/null`), piped through a filter of
 * what it prints (`| tail -20`), made louder or quieter (`--verbose`, `--quiet`), paced
 * (`sleep 1 && …`) or run from the project named in full (`cd /abs/project && …`). Anything else
 * that changes is a new attempt: another preparatory step (`npm install && …`), another folder
 * named relatively (`cd backend && …`), an environment variable, another operand or flag, another
 * argument of the call (its working folder, its time-out). The hook refuses a call that is the
 * same attempt as the calls of a loop it halted: never a new attempt, which may be the fix.
 */

/** Commands that only pace, show or mark a chain: the attempt is the rest of it. */
const PACING = new Set(['sleep', 'true', ':', 'echo', 'printf', 'clear', 'wait', 'pwd', 'date']);
/** Programs that only filter or page what the command before them prints. */
const FILTERS = new Set(['tail', 'head', 'grep', 'egrep', 'fgrep', 'rg', 'cat', 'tee', 'less', 'more', 'sort', 'uniq', 'wc', 'cut', 'column', 'nl', 'fold', 'ts']);
/** Flags that change only how much a command says (long forms: a short `-v` means other things to other programs). */
const LOUDNESS = /^--(?:verbose|debug|quiet|silent|no-colou?r|colou?r(?:=\S*)?|ansi|no-ansi|progress|no-progress|stacktrace|info|loglevel=\S*|log-level=\S*)$|^-vv+$/i;
/** Loudness flags that take their level as the next word. */
const LOUDNESS_WITH_VALUE = new Set(['--loglevel', '--log-level']);
/** A redirection of a stream (`2>&1`, `>/dev/null`, `&>> log`, `2>` followed by its target). */
const REDIRECT = /^(?:\d*|&)>>?(?:&\d+|\S*)$/;

/** A chain's command as it would run, its output's redirections and loudness flags left out. */
function attemptWords(stage: string): string {
  const w = words(stage);
  const kept: string[] = [];
  for (let i = 0; i < w.length; i++) {
    const word = w[i] as string;
    if (REDIRECT.test(word)) {
      // `2> file`: the target is the next word.
      if (/>$/.test(word)) i++;
      continue;
    }
    if (LOUDNESS_WITH_VALUE.has(word)) {
      i++;
      continue;
    }
    if (LOUDNESS.test(word) || (word === 'time' && kept.length === 0)) continue;
    kept.push(word);
  }
  return kept.join(' ');
}

/** Whether a chain's command only changes to a folder named in full (`cd /abs/project`, `cd ~/p`, `cd "$PROJECT"`). */
function namesFolderInFull(stage: string): boolean {
  const [name, target, ...rest] = words(stage);
  return name === 'cd' && rest.length === 0 && target !== undefined && /^(?:\/|~|\$|[A-Za-z]:[\\/])/.test(target);
}

/** A shell command line's attempt: its chain without pacing and full-path `cd`s, each command's filters, redirections and loudness left out. */
export function shellAttempt(line: string): string {
  const parts: string[] = [];
  for (const command of split(line, false)) {
    if (namesFolderInFull(command)) continue;
    const name = program(command)[0];
    // `echo … > file` writes a file: a step of its own, not pacing.
    if (name === undefined || (PACING.has(name) && !words(command).some((w) => REDIRECT.test(w)))) continue;
    const stages = split(command, true);
    // Later stages that only filter what the first prints: the attempt is the first.
    const kept = stages.length > 1 && stages.slice(1).every((s) => FILTERS.has(program(s)[0] ?? '')) ? stages.slice(0, 1) : stages;
    parts.push(kept.map(attemptWords).join(' | '));
  }
  return parts.join(' && ');
}

/** Whether a shell command line's last command pipes the command it runs through filters only: its exit status is the last filter's. */
export function filteredPipeline(line: string): boolean {
  if (!line.includes('|')) return false;
  const chain = split(line, false);
  const stages = split(chain[chain.length - 1] ?? '', true);
  return stages.length > 1 && stages.slice(1).every((s) => FILTERS.has(program(s)[0] ?? ''));
}
