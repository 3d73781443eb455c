import type { Outcome } from './calls';
import { REFUSED_CONNECTION } from './errorClass';

/** Seed 001's actionable messages: what to do instead of repeating a call. */
export function adviceForCall(tool: string, outcome: Outcome | undefined): string {
  if (outcome?.kind === 'error') {
    const err = outcome.error;
    if (/search (string|text)|old_string|not found in (the )?file|no match/i.test(err)) {
      return `The file has likely changed since it was last read: re-read it and build the edit from its current content before calling ${tool} again.`;
    }
    switch (outcome.errorKind) {
      case 'rate_limit':
        return `${tool} is rate-limited: wait before retrying, with backoff, or reduce the request rate.`;
      case 'timeout':
        return `${tool} keeps timing out: check the service and retry later with backoff instead of immediately.`;
      case 'network':
        return refusedAdvice(tool, err) ?? `${tool} keeps failing on the network: check the connection and the service, and retry later with backoff instead of immediately.`;
      case 'missing_parameter':
        return `${tool} is missing a required parameter: fix the arguments; the same call will fail the same way.`;
      case 'validation':
        return `${tool} rejects these arguments: read the error, correct the arguments or the code, then call again.`;
      case 'file_not_found':
        return `${tool} is pointing at something that does not exist: list or search for the right path first.`;
      case 'permission_denied':
        return `${tool} is not permitted here: ask the user or use a path and command the agent may use.`;
      default:
        return `Read the error of ${tool} and change the approach; repeating the same call will not fix it.`;
    }
  }
  return `Stop repeating ${tool} with the same arguments: the result will not change. Check the current state and try a different step, or ask the user.`;
}

/*
 * Where a refused connection went, as clients say it: Node's `connect ECONNREFUSED 127.0.0.1:5432`,
 * psql's `connection to server at "localhost" (::1), port 5432`, curl's `Failed to connect to
 * localhost port 3000`, Python's `host='localhost', port=8000`.
 */
const ADDRESS = /\bECONN(?:REFUSED|RESET) (\[[0-9a-fA-F:]+\]|[\w.-]+):(\d{1,5})\b|\b(?:to|at) (?:server at )?"?([\w.-]+)"?(?: \([^()\s]*\))?,? port (\d{1,5})\b|\bhost='([\w.-]+)', port=(\d{1,5})\b/;

/** Services a port usually belongs to: said beside the address, the first thing to check. */
const USUAL_SERVICE: Readonly<Record<string, string>> = { '5432': 'PostgreSQL', '3306': 'MySQL', '6379': 'Redis', '27017': 'MongoDB' };

/**
 * A refused (or reset) connection's advice: the service is not running, or not where the call
 * looks for it, and retrying will not start it. Undefined for other network failures.
 */
function refusedAdvice(tool: string, err: string): string | undefined {
  if (!REFUSED_CONNECTION.test(err)) return undefined;
  const m = ADDRESS.exec(err);
  const host = m?.[1] ?? m?.[3] ?? m?.[5];
  const port = m?.[2] ?? m?.[4] ?? m?.[6];
  const where = host !== undefined && port !== undefined ? `${host}:${port}` : undefined;
  const usual = port !== undefined ? USUAL_SERVICE[port] : undefined;
  const service = where === undefined ? 'the service it connects to' : `the service on ${where}${usual !== undefined ? ` (${usual}'s port)` : ''}`;
  if (/\bECONNRESET\b|connection (?:was )?reset/i.test(err)) {
    return `${tool} cannot connect: the connection was reset. Is ${service} still running (it may have crashed or restarted)? Check it before trying again.`;
  }
  return `${tool} cannot connect: the connection is refused. Is ${service} running? Start it, or point the call at the right host and port; retrying will not start it.`;
}
