import { hashText } from './canonical';
import type { EventRef } from './events';
import { severity, type Action, type Finding } from './finding';

/**
 * One loop as a person sees it: the findings of one session whose evidence spans overlap in one
 * file (the same run of calls reported by several signals, or a warning that grew into a halt),
 * with the most severe action and one recommendation first. The detectors stay as they are; this
 * is a layer above them. Pure: no I/O.
 */
export interface Incident {
  /** Stable while the incident grows, and short: a hash of the episode of its earliest finding. */
  readonly id: string;
  readonly session: string;
  readonly agent?: string;
  readonly task?: string;
  /** The most severe action of its findings. */
  readonly action: Action;
  /** Its reasons, in the order they were raised: each still inspectable. */
  readonly findings: readonly Finding[];
  /** The finding whose message and recommendation come first: the most severe, the latest of those. */
  readonly lead: Finding;
  /** Its evidence, oldest first, each reference once. */
  readonly evidence: readonly EventRef[];
}

interface Span {
  readonly key: string;
  readonly from: number;
  readonly to: number;
}

/** Where a finding's evidence lies: its session and file, and the first and last event of it. */
function spanOf(f: Finding): Span | undefined {
  if (f.evidence.length === 0) return undefined;
  const file = f.evidence[0]?.file ?? f.at.file;
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const r of f.evidence) {
    if (r.file !== file) continue;
    from = Math.min(from, r.event);
    to = Math.max(to, r.event);
  }
  return { key: `${f.session}\u0000${f.task ?? ''}\u0000${file}`, from, to };
}

/** Groups findings (in the order raised) into incidents, in the order their first finding was raised. */
export function groupIncidents(findings: readonly Finding[]): Incident[] {
  const groups: { span: Span | undefined; findings: Finding[] }[] = [];
  // Per session and file, the groups whose spans are still open to an overlap.
  const byKey = new Map<string, { span: Span; findings: Finding[] }[]>();
  for (const f of findings) {
    const span = spanOf(f);
    if (span === undefined) {
      groups.push({ span, findings: [f] });
      continue;
    }
    const candidates = byKey.get(span.key) ?? [];
    const hit = candidates.find((g) => g.span.from <= span.to && span.from <= g.span.to);
    if (hit) {
      hit.findings.push(f);
      hit.span = { key: span.key, from: Math.min(hit.span.from, span.from), to: Math.max(hit.span.to, span.to) };
      continue;
    }
    const group = { span, findings: [f] };
    candidates.push(group);
    byKey.set(span.key, candidates);
    groups.push(group);
  }
  return groups.map(({ findings: fs }) => incidentOf(fs));
}

function incidentOf(findings: readonly Finding[]): Incident {
  const first = findings[0] as Finding;
  let lead = first;
  for (const f of findings) if (severity(f.action) >= severity(lead.action)) lead = f;
  const seen = new Set<string>();
  const evidence: EventRef[] = [];
  for (const f of findings) {
    for (const r of f.evidence) {
      const k = `${r.file}:${r.event}`;
      if (seen.has(k)) continue;
      seen.add(k);
      evidence.push(r);
    }
  }
  evidence.sort((a, b) => (a.file === b.file ? a.event - b.event : a.file < b.file ? -1 : 1));
  return {
    id: hashText(first.episode),
    session: first.session,
    ...(first.agent !== undefined ? { agent: first.agent } : {}),
    ...(first.task !== undefined ? { task: first.task } : {}),
    action: lead.action,
    findings,
    lead,
    evidence,
  };
}
