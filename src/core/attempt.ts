import { callSignature } from './calls';
import type { Canonicalizer } from './canonical';
import { shellAttempt, shellCommandArg } from './intent';

/**
 * A call's attempt as one text (intent.ts says what an attempt is): for a shell call, its
 * signature with the command replaced by the command's attempt (its other arguments, a working
 * folder or a time-out, stay as they are); for any other call, its signature. Equal texts are the
 * same attempt; equal signatures are always the same attempt.
 */
export function attemptKey(canon: Canonicalizer, tool: string, args: unknown): string {
  const command = shellCommandArg(args);
  if (command === undefined) return callSignature(tool, canon.args(tool, args));
  return callSignature(tool, canon.args(tool, { ...(args as Record<string, unknown>), [command.key]: `\u0000attempt ${shellAttempt(command.line)}` }));
}

/**
 * Whether a text (a session's log as written by `JSON.stringify`) may hold a call that is this
 * call's attempt: the tool's name, every string of its other arguments, the name of its command's argument and every word of its
 * command's attempt occur in it. When not, no call in it is that attempt (a cheap test before the
 * log is parsed: it may say yes wrongly, never no wrongly).
 */
export function attemptMayOccurIn(canon: Canonicalizer, tool: string, args: unknown, text: string): boolean {
  if (!text.includes(`"tool":${JSON.stringify(tool)}`)) return false;
  const command = shellCommandArg(args);
  if (command === undefined) return canon.stringsOccurIn(tool, args, text);
  if (!text.includes(`${JSON.stringify(command.key)}:`)) return false;
  const rest = { ...(args as Record<string, unknown>) };
  delete rest[command.key];
  if (!canon.stringsOccurIn(tool, rest, text)) return false;
  for (const word of shellAttempt(command.line).split(/\s+/)) {
    if (word === '' || word === '|' || word === '&&') continue;
    if (!text.includes(JSON.stringify(word).slice(1, -1))) return false;
  }
  return true;
}
