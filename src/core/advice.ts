import type { Outcome } from './calls';

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
      case 'network':
        return `${tool} keeps failing on the network or timing out: check the service and retry later with backoff instead of immediately.`;
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
