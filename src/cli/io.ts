import { severity, type Finding } from '../core/finding';
import type { Incident } from '../core/incidents';

/** Exit codes, documented in the README. */
export const EXIT = {
  ok: 0,
  /** A loop was detected: halt (check, scan, replay), or a loop pattern (analyze). */
  loop: 1,
  usage: 2,
  error: 3,
  humanRequired: 4,
  /** replay: the input was not empty, yet not one event could be read from it (wrong format, or a shape the guardian does not know). */
  nothingRead: 5,
} as const;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly cwd: string;
  readonly color: boolean;
}

const CODES = { red: 31, yellow: 33, green: 32, cyan: 36, dim: 2, bold: 1 } as const;
export type Color = keyof typeof CODES;

export function paint(io: Io, color: Color, text: string): string {
  return io.color ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
}

/**
 * Text from a log, made safe for a terminal: control characters (an escape sequence could set the
 * window's title or rewrite the screen) are shown as escapes, never sent as they are.
 */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A list written item by item in `writeJson`: each item made into its JSON value only when written. */
export class JsonList<T> {
  constructor(
    readonly items: readonly T[],
    readonly toJson: (item: T) => unknown,
  ) {}
}

/** A list's items made into text this many at a time (one JSON.stringify each group). */
const LIST_GROUP = 64;
/** What JSON.stringify({ l: items }, null, 2) writes before the items, and after them. */
const GROUP_HEAD = '{\n  "l": [\n';
const GROUP_TAIL = '\n  ]\n}';

/**
 * `json(value)` of an object, written to `out` in blocks of about `block` characters: the text of
 * a large document (replay --json of a long log) is never held whole, and the values of its
 * `JsonList`s are made LIST_GROUP at a time. The same text as `json` of the object with each list mapped.
 */
export function writeJson(out: (text: string) => void, value: Readonly<Record<string, unknown>>, block = 64 << 10): void {
  let pending = '';
  const put = (text: string) => {
    pending += text;
    if (pending.length >= block) {
      out(pending);
      pending = '';
    }
  };
  // A value's text at a depth: JSON.stringify's, its lines after the first indented (no string holds a raw newline).
  const at = (v: unknown, pad: string) => (JSON.stringify(v, null, 2) as string).replace(/\n/g, `\n${pad}`);
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    put(`${first ? '{\n' : ',\n'}  ${JSON.stringify(key)}: `);
    first = false;
    if (!(v instanceof JsonList) || v.items.length === 0) {
      put(at(v instanceof JsonList ? [] : v, '  '));
      continue;
    }
    for (let i = 0; i < v.items.length; i += LIST_GROUP) {
      // A group's text as a list under a key of the document, less the text around its items: each
      // item indented as it is in the document by the one JSON.stringify, with no pass to indent it.
      const text = JSON.stringify({ l: v.items.slice(i, i + LIST_GROUP).map((item) => v.toJson(item)) }, null, 2);
      put(`${i === 0 ? '[\n' : ',\n'}${text.slice(GROUP_HEAD.length, text.length - GROUP_TAIL.length)}`);
    }
    put('\n  ]');
  }
  put(first ? '{}\n' : '\n}\n');
  if (pending !== '') out(pending);
}

/** The finding as the CLI prints it in JSON (the shape `replay --json` documents). */
export function findingJson(f: Finding) {
  return {
    signal: f.signal,
    action: f.action,
    count: f.count,
    threshold: f.threshold,
    event: f.at.event,
    line: f.at.line,
    session: f.session,
    task: f.task ?? null,
    agent: f.agent ?? null,
    evidence: f.evidence.map((r) => ({ file: r.file, line: r.line, event: r.event })),
    recommendation: f.recommendation,
  };
}

/** The richer shape `scan --json` prints. */
export function findingDetailJson(f: Finding, active: boolean) {
  return {
    ...findingJson(f),
    file: f.at.file,
    subject: f.subject,
    message: f.message,
    status: f.status ?? null,
    active,
    ...(f.details !== undefined ? { details: f.details } : {}),
  };
}

const ACTION_COLOR: Record<Finding['action'], Color> = { halt: 'red', escalate: 'yellow', warn: 'yellow', continue: 'green' };

/** A finding as the terminal shows it; everything that came from a log goes through `plain`. */
export function formatFinding(io: Io, f: Finding): string {
  const who = plain([f.session && `session ${f.session}`, f.task && `task ${f.task}`, f.agent && `agent ${f.agent}`].filter(Boolean).join(', '));
  return [
    `${paint(io, ACTION_COLOR[f.action], f.action.toUpperCase().padEnd(8))} ${paint(io, 'bold', f.signal)} (${f.count}/${f.threshold}) ${paint(io, 'dim', who)}`,
    `         ${plain(f.message)}`,
    `         at ${plain(f.at.file)}:${f.at.line}; evidence ${plain(f.evidence.map((r) => `${r.file === f.at.file ? '' : `${r.file}:`}${r.line}`).join(', '))}`,
    `         → ${plain(f.recommendation)}`,
  ].join('\n');
}

/** An incident as the terminal shows it: its lead finding, then the other signals that saw the same loop. */
export function formatIncident(io: Io, incident: Incident): string {
  // Each other signal once, as it stands last (a warning that became a halt is the halt; two
  // firings of one signal are one line).
  const bySignal = new Map<string, Finding>();
  for (const f of incident.findings) {
    if (f === incident.lead || f.signal === incident.lead.signal) continue;
    const seen = bySignal.get(f.signal);
    if (seen === undefined || severity(f.action) > severity(seen.action) || (severity(f.action) === severity(seen.action) && f.count >= seen.count)) bySignal.set(f.signal, f);
  }
  const others = [...bySignal.values()];
  const also = others.length > 0 ? `\n         ${paint(io, 'dim', `the same loop also tripped: ${others.map((f) => `${f.signal} (${f.action}, ${f.count}/${f.threshold})`).join(', ')}`)}` : '';
  return `${formatFinding(io, incident.lead)}${also}`;
}

/** An incident as `--json` carries it: its findings by their index in the output's `findings`. */
export function incidentJson(incident: Incident, indexOf: (f: Finding) => number) {
  return {
    id: incident.id,
    action: incident.action,
    session: incident.session,
    task: incident.task ?? null,
    agent: incident.agent ?? null,
    signals: incident.findings.map((f) => f.signal),
    findings: incident.findings.map(indexOf),
    lead: indexOf(incident.lead),
    evidence: incident.evidence.map((r) => ({ file: r.file, line: r.line, event: r.event })),
    recommendation: incident.lead.recommendation,
  };
}

/** The name among `names` a mistyped word most likely meant (a prefix, or within two edits), for a "did you mean". */
export function nearest(word: string, names: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) row.push(Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)));
      prev = row;
    }
    return prev[b.length] as number;
  };
  const scored = names.map((n) => ({ n, d: n.startsWith(word) && word.length >= 2 ? 0 : distance(word.toLowerCase(), n) })).sort((x, y) => x.d - y.d);
  return scored[0] !== undefined && scored[0].d <= 2 ? scored[0].n : undefined;
}
