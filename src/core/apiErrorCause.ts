import { boundedErrorText } from './errorClass';

/**
 * Why a request to the model failed, as far as its status, class and message tell: what a person
 * has to change before the same request can succeed.
 */
export type ApiErrorCause = 'context_size' | 'auth' | 'quota' | 'rate_limit' | 'model' | 'request_shape' | 'server' | 'network' | 'unknown';

/**
 * Causes that the same request meets again on every retry: nothing changes until a person changes
 * the model, the credentials, the quota, the conversation's size or the request. The others
 * (rate limits, a failing or overloaded provider, the network) pass by themselves.
 */
export const DETERMINISTIC_CAUSES: ReadonlySet<ApiErrorCause> = new Set(['context_size', 'auth', 'quota', 'model', 'request_shape']);

export interface ApiErrorFields {
  readonly status?: number;
  readonly class?: string;
  readonly error?: string;
}

// Most specific first: a 400 whose message says the prompt is too long is a context-size error.
// No pattern backtracks super-linearly (the text is a provider's, relayed by an agent).
const TEXT_RULES: ReadonlyArray<readonly [ApiErrorCause, RegExp]> = [
  ['context_size', /context[ _-]?(?:length|window|limit)|prompt is too long|too many tokens|maximum context|max_prompt_tokens|prompt_tokens_exceeded|input is too long|request (?:entity )?too large|payload too large/i],
  ['auth', /unauthori[sz]ed|authenticat|invalid (?:api[ _-]?)?key|api[ _-]?key|not logged in|\/login|oauth|token (?:has )?expired|forbidden|access denied/i],
  ['quota', /quota|insufficient (?:credits|balance|funds)|billing|spend(?:ing)? limit|usage limit|session limit|weekly limit|payment required|out of credits/i],
  ['rate_limit', /rate[ _-]?limit|too many requests|throttl|resource[ _]exhausted/i],
  ['model', /model[_ ]not[_ ]found|unknown model|no such model|unsupported model|model is not (?:supported|available)|not a valid model|does not support (?:this )?model|model (?:[\w./:-]+ )?(?:does not exist|not found|is not supported|is not available|unavailable)/i],
  ['server', /overloaded|internal server error|server[ _]error|service unavailable|bad gateway|gateway timeout|upstream/i],
  ['network', /\bECONN[A-Z]*\b|\bENOTCONN\b|\bETIMEDOUT\b|\bEAI_AGAIN\b|\bENOTFOUND\b|socket hang up|fetch failed|network|connection ?(?:reset|refused|closed|error|lost)|timed? ?out|stream (?:disconnected|stalled)/i],
  ['request_shape', /bad request|invalid[_ ]request|malformed|schema|validation/i],
];

function byStatus(status: number): ApiErrorCause {
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  if (status === 404) return 'model';
  if (status === 408) return 'network';
  if (status === 413) return 'context_size';
  if (status === 429) return 'rate_limit';
  if (status === 400 || status === 422) return 'request_shape';
  if (status >= 500) return 'server';
  return 'unknown';
}

/** The likely cause of a failed model request: its class and message first, its HTTP status else. */
export function apiErrorCause(e: ApiErrorFields): ApiErrorCause {
  const text = boundedErrorText([e.class, e.error].filter((s) => s !== undefined && s !== '').join(' '));
  if (text !== '') {
    for (const [cause, rule] of TEXT_RULES) if (rule.test(text)) return cause;
  }
  return e.status !== undefined ? byStatus(e.status) : 'unknown';
}

/** What a person reads as the likely cause, and what to do about it. */
export const CAUSE_ADVICE: Readonly<Record<ApiErrorCause, { readonly label: string; readonly advice: string }>> = {
  context_size: {
    label: 'the conversation is too large for the model (context size)',
    advice: 'compact or clear the conversation, drop large attachments and tool outputs, or switch to a model with a larger context window; the same request cannot succeed as it is',
  },
  auth: {
    label: 'the provider refuses the credentials (authentication)',
    advice: 'sign in again or fix the API key or token (expired, or without access to this model), then resume',
  },
  quota: {
    label: 'the account\'s quota or spending limit is used up',
    advice: 'wait for the quota to reset, raise the limit, or switch to another model or provider; retrying changes nothing until then',
  },
  rate_limit: {
    label: 'the provider is rate-limiting the requests',
    advice: 'let the agent back off (fewer parallel sessions, smaller requests), or switch model or provider if it persists',
  },
  model: {
    label: 'the model is not available (wrong name, retired, or not enabled for this account)',
    advice: 'pick another model in the agent\'s settings',
  },
  request_shape: {
    label: 'the provider rejects the request itself (its shape: a tool schema, an attachment, an orphaned tool result, a parameter this model does not take)',
    advice: 'switch model or start a new conversation; re-sending the same request returns the same error',
  },
  server: {
    label: 'the provider is failing or overloaded',
    advice: 'wait and retry later, or switch to another model or provider',
  },
  network: {
    label: 'the agent cannot reach the provider (network)',
    advice: 'check the network, proxy or VPN, then retry',
  },
  unknown: {
    label: 'unknown',
    advice: 'read the error and fix its cause (model, quota, credentials, request size) before retrying; the same request returns the same error',
  },
};
