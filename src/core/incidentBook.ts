import type { EventRef } from './events';
import { severity, type Finding } from './finding';
import { groupIncidents, type Incident } from './incidents';

/** Why an incident is over. */
export type IncidentEnd =
  /** Its signals saw the pattern broken (a success, new output, a person's message): the agent moved on. */
  | 'progress'
  /** Nothing new in it for the idle time: the agent stopped, or went on elsewhere. */
  | 'idle'
  /** A person said they have seen it. */
  | 'dismissed';

/** An incident as the editor follows it over time. */
export interface TrackedIncident extends Incident {
  readonly state: 'open' | 'closed';
  readonly end?: IncidentEnd;
  /** When it was first seen, and when its evidence last grew (ms since the epoch, the book's clock). */
  readonly openedAt: number;
  readonly changedAt: number;
  readonly closedAt?: number;
  /** How many times its pattern has been seen: the largest count among its findings. */
  readonly count: number;
}

export interface IncidentChanges {
  readonly opened: readonly TrackedIncident[];
  /** Open incidents that grew or became more severe. */
  readonly changed: readonly TrackedIncident[];
  readonly closed: readonly TrackedIncident[];
}

export interface IncidentBookOptions {
  /** An open incident with no new evidence for this long is over; 0 never ends one this way. */
  readonly idleMs: number;
  /** How many closed incidents are kept to be looked at again. */
  readonly keepClosed?: number;
}

interface Entry {
  incident: TrackedIncident;
  /** What its evidence looked like last time: growth is a change. */
  fingerprint: string;
  /** Dismissed at this severity: it opens again only if it becomes more severe. */
  dismissedAt?: number;
}

const NO_CHANGES: IncidentChanges = { opened: [], changed: [], closed: [] };

/**
 * Follows incidents over time for one workspace folder: the active findings come in after every
 * read, incidents come out with a life of their own. An incident keeps its id while it grows (a
 * finding's episode maps to the incident it first joined), ends when its findings are resolved
 * (progress), when nothing new happens in it for the idle time, or when a person dismisses it;
 * closed incidents stay to be looked at again, the newest first. Pure: the clock is an argument.
 */
export class IncidentBook {
  private readonly entries = new Map<string, Entry>();
  /** Finding episode → incident id. */
  private readonly owner = new Map<string, string>();
  private closedOrder: string[] = [];
  private readonly keepClosed: number;

  constructor(private readonly options: IncidentBookOptions) {
    this.keepClosed = options.keepClosed ?? 50;
  }

  get idleMs(): number {
    return this.options.idleMs;
  }

  /** The open incidents, most severe first, then the most recently changed. */
  get open(): TrackedIncident[] {
    return [...this.entries.values()]
      .map((e) => e.incident)
      .filter((i) => i.state === 'open')
      .sort(bySeverityThenChange);
  }

  /** The closed incidents still kept, the most recently closed first. */
  get closed(): TrackedIncident[] {
    return [...this.closedOrder].reverse().flatMap((id) => {
      const e = this.entries.get(id);
      return e && e.incident.state === 'closed' ? [e.incident] : [];
    });
  }

  /**
   * Takes the findings active now (after a read) and returns what changed. `progress` tells, for
   * a session, its latest call that succeeded in a way none of its calls had lately (the agent read
   * the file, an edit went through): an incident whose evidence ends before it is over.
   */
  update(active: readonly Finding[], now: number, progress?: (session: string) => EventRef | undefined): IncidentChanges {
    const opened: TrackedIncident[] = [];
    const changed: TrackedIncident[] = [];
    const closed: TrackedIncident[] = [];
    const seen = new Set<string>();
    for (const grouped of groupIncidents(active)) {
      const id = this.idFor(grouped);
      for (const f of grouped.findings) this.owner.set(f.episode, id);
      seen.add(id);
      const count = countOf(grouped);
      const fingerprint = `${grouped.action}|${count}|${grouped.findings.length}|${grouped.evidence.length}|${lastRef(grouped)}`;
      const entry = this.entries.get(id);
      if (!entry) {
        const incident = openIncident(grouped, id, now, now, count);
        this.entries.set(id, { incident, fingerprint });
        opened.push(incident);
        continue;
      }
      if (entry.incident.state === 'closed') {
        // A closed incident opens again when its pattern grows after progress or after it went
        // idle, or (dismissed) becomes more severe than it was when a person dismissed it.
        const again =
          (entry.incident.end !== 'dismissed' && entry.fingerprint !== fingerprint && !after(progress?.(grouped.session), grouped)) ||
          (entry.incident.end === 'dismissed' && severity(grouped.action) > (entry.dismissedAt ?? Number.POSITIVE_INFINITY));
        if (again) {
          const incident = openIncident(grouped, id, entry.incident.openedAt, now, count);
          this.entries.set(id, { incident, fingerprint });
          this.forgetClosed(id);
          opened.push(incident);
        } else {
          entry.incident = { ...entry.incident, ...grouped, id, count, state: 'closed' };
          entry.fingerprint = fingerprint;
        }
        continue;
      }
      const grew = entry.fingerprint !== fingerprint;
      entry.incident = openIncident(grouped, id, entry.incident.openedAt, grew ? now : entry.incident.changedAt, count);
      entry.fingerprint = fingerprint;
      if (grew) changed.push(entry.incident);
    }
    for (const [id, entry] of this.entries) {
      if (entry.incident.state !== 'open') continue;
      if (!seen.has(id) || after(progress?.(entry.incident.session), entry.incident)) closed.push(this.close(entry, 'progress', now));
    }
    closed.push(...this.tick(now).closed);
    this.prune(active);
    return { opened, changed, closed };
  }

  /**
   * The open incidents as they would look with these findings, changing nothing: for a read still
   * under way, whose findings are partial. Incidents already known stay as they are (their evidence
   * may not have been read again yet: open stays open, dismissed stays closed), new loops show as open;
   * `update` with the whole read's findings decides what really opened, grew or ended.
   */
  preview(active: readonly Finding[], now: number): TrackedIncident[] {
    const shown = new Map<string, TrackedIncident>();
    for (const entry of this.entries.values()) if (entry.incident.state === 'open') shown.set(entry.incident.id, entry.incident);
    for (const grouped of groupIncidents(active)) {
      const id = this.idFor(grouped);
      if (this.entries.has(id)) continue;
      shown.set(id, openIncident(grouped, id, now, now, countOf(grouped)));
    }
    return [...shown.values()].sort(bySeverityThenChange);
  }

  /** Ends the incidents that stayed idle; call it now and then. */
  tick(now: number): IncidentChanges {
    if (this.options.idleMs <= 0) return NO_CHANGES;
    const closed: TrackedIncident[] = [];
    for (const entry of this.entries.values()) {
      if (entry.incident.state === 'open' && now - entry.incident.changedAt >= this.options.idleMs) closed.push(this.close(entry, 'idle', now));
    }
    return closed.length > 0 ? { opened: [], changed: [], closed } : NO_CHANGES;
  }

  /** A person has seen it: it closes, and opens again only if it becomes more severe. */
  dismiss(id: string, now: number): TrackedIncident | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.incident.state !== 'open') return undefined;
    entry.dismissedAt = severity(entry.incident.action);
    return this.close(entry, 'dismissed', now);
  }

  dismissAll(now: number): TrackedIncident[] {
    return this.open.flatMap((i) => this.dismiss(i.id, now) ?? []);
  }

  private close(entry: Entry, end: IncidentEnd, now: number): TrackedIncident {
    entry.incident = { ...entry.incident, state: 'closed', end, closedAt: now };
    this.forgetClosed(entry.incident.id);
    this.closedOrder.push(entry.incident.id);
    return entry.incident;
  }

  private forgetClosed(id: string): void {
    const at = this.closedOrder.indexOf(id);
    if (at >= 0) this.closedOrder.splice(at, 1);
  }

  /** The incident a group belongs to: the oldest one any of its findings already joined. */
  private idFor(grouped: Incident): string {
    let best: Entry | undefined;
    for (const f of grouped.findings) {
      const id = this.owner.get(f.episode);
      const entry = id === undefined ? undefined : this.entries.get(id);
      if (entry && (!best || entry.incident.openedAt < best.incident.openedAt)) best = entry;
    }
    return best?.incident.id ?? grouped.id;
  }

  /** Keeps memory bounded: closed incidents beyond the limit and episodes of forgotten incidents go. */
  private prune(active: readonly Finding[]): void {
    while (this.closedOrder.length > this.keepClosed) {
      const id = this.closedOrder.shift() as string;
      const entry = this.entries.get(id);
      // A dismissed incident whose findings are still active is remembered, or it would pop up again.
      if (entry?.incident.end === 'dismissed' && active.some((f) => this.owner.get(f.episode) === id)) continue;
      this.entries.delete(id);
    }
    if (this.owner.size > 4 * (this.entries.size + active.length) + 100) {
      for (const [episode, id] of this.owner) if (!this.entries.has(id)) this.owner.delete(episode);
    }
  }
}

/** Whether `ref` comes after the incident's latest evidence in the same log. */
function after(ref: EventRef | undefined, i: Incident): boolean {
  if (ref === undefined) return false;
  const last = i.evidence.filter((r) => r.file === ref.file).pop();
  return last !== undefined && ref.event > last.event;
}

function lastRef(i: Incident): string {
  const r = i.evidence[i.evidence.length - 1];
  return r ? `${r.file}#${r.event}` : '';
}

function bySeverityThenChange(a: TrackedIncident, b: TrackedIncident): number {
  return severity(b.action) - severity(a.action) || b.changedAt - a.changedAt;
}

/** An incident's count: the largest among its findings. */
function countOf(grouped: Incident): number {
  return Math.max(...grouped.findings.map((f) => f.count));
}

function openIncident(grouped: Incident, id: string, openedAt: number, changedAt: number, count: number): TrackedIncident {
  return { ...grouped, id, state: 'open', openedAt, changedAt, count };
}
