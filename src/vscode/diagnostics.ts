import * as vscode from 'vscode';
import { logUri, signalWords } from './treeNodes';
import type { EventRef } from '../core/events';
import type { Finding } from '../core/finding';
import { loopSource, type LoopSource } from '../watch/loopSource';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';
import type { IncidentRef } from './notifier';
import type { UiSettingsValue } from './uiSettings';

const SEVERITY: Record<Finding['action'], vscode.DiagnosticSeverity> = {
  halt: vscode.DiagnosticSeverity.Error,
  escalate: vscode.DiagnosticSeverity.Warning,
  warn: vscode.DiagnosticSeverity.Warning,
  continue: vscode.DiagnosticSeverity.Information,
};

/** One Problems entry: where (the file the loop is about, else its log; 1-based line), what, and where else to look. */
interface Entry {
  readonly uri: vscode.Uri;
  readonly line: number;
  readonly column?: number;
  readonly message: string;
  readonly severity: vscode.DiagnosticSeverity;
  readonly signal: string;
  readonly related: readonly (readonly [vscode.Uri, number, string])[];
  readonly ref: IncidentRef;
  /** Still going (not handled by the hook, STOP not set): Circuit Break is offered. */
  readonly going: boolean;
}

/** A 1-based line, whole. */
function lineRange(line: number): vscode.Range {
  return new vscode.Range(Math.max(0, line - 1), 0, Math.max(0, line - 1), Number.MAX_SAFE_INTEGER);
}

/** At most this many related rows: where in the log, and the loop's latest earlier calls. */
const MAX_RELATED = 3;

/**
 * The Problems panel: one entry per loop going on, at its latest evidence line, with the rest of
 * its evidence as related information; gone when the loop is over. `loopGuardian.problems.enabled`
 * turns it off.
 */
export class FindingDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection('loop-guardian');
  private readonly subscriptions: vscode.Disposable[];
  /** The entries last set, as text: the same entries again are not set again. */
  private shown: string | undefined;
  /** Each log line's workspace file, as looked up (undefined: none, or not yet). */
  private readonly sources = new Map<string, LoopSource | undefined>();
  /** The incident of each entry set, by its place and message. */
  private readonly refs = new Map<string, { ref: IncidentRef; going: boolean }>();

  constructor(private readonly service: GuardianService, private readonly settings: UiSettingsValue) {
    this.subscriptions = [service.onDidChange(() => this.render()), settings.onDidChange(() => this.render())];
    this.render();
  }

  /**
   * Sets the entries again, only when they changed: the guardians' state changes with every line an
   * agent's log gets, and most lines leave every loop as it was; clearing and setting the same
   * entries then made the Problems panel redraw for nothing.
   */
  render(): void {
    const entries = this.settings.value.problems ? this.entries() : [];
    const fingerprint = JSON.stringify(entries.map((e) => [e.uri.toString(), e.line, e.column, e.message, e.severity, e.signal, e.going, e.related.map(([uri, line, what]) => [uri.toString(), line, what])]));
    if (fingerprint === this.shown) return;
    this.shown = fingerprint;
    this.collection.clear();
    this.refs.clear();
    const byUri = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    for (const e of entries) {
      const range = e.column !== undefined ? new vscode.Range(Math.max(0, e.line - 1), Math.max(0, e.column - 1), Math.max(0, e.line - 1), Number.MAX_SAFE_INTEGER) : lineRange(e.line);
      const d = new vscode.Diagnostic(range, e.message, e.severity);
      d.source = 'Loop Guardian';
      d.code = signalWords(e.signal);
      d.relatedInformation = e.related.map(([uri, line, what]) => new vscode.DiagnosticRelatedInformation(new vscode.Location(uri, lineRange(line)), what));
      this.refs.set(entryKey(e.uri, range, e.message), { ref: e.ref, going: e.going });
      const key = e.uri.toString();
      const entry = byUri.get(key) ?? { uri: e.uri, diagnostics: [] };
      entry.diagnostics.push(d);
      byUri.set(key, entry);
    }
    for (const { uri, diagnostics } of byUri.values()) this.collection.set(uri, diagnostics);
  }

  /**
   * What the panel is to show: one entry per loop going on, on the workspace file its latest call
   * names (the error's file and line, or the edit's target) with the log's line related, else on
   * the log; at most MAX_RELATED related rows. A loop the hook handled is a warning, not an error.
   */
  private entries(): Entry[] {
    const entries: Entry[] = [];
    for (const g of this.service.all) {
      const stopped = g.state.stop.state.status === 'STOP';
      for (const incident of g.state.incidents) {
        const last = incident.evidence[incident.evidence.length - 1] ?? incident.lead.at;
        const source = this.source(g, last);
        const handled = g.handledBy(incident) !== undefined;
        const earlier = incident.evidence
          .slice(0, -1)
          .reverse()
          .map((ref) => [logUri(g, ref.file), ref.line, `the same loop, earlier: line ${ref.line} of the log`] as const);
        const here = [logUri(g, last.file), last.line, `the loop's latest call: line ${last.line} of the log`] as const;
        entries.push({
          uri: source ? vscode.Uri.file(source.file) : logUri(g, last.file),
          line: source?.line ?? (source ? 1 : last.line),
          ...(source?.column !== undefined ? { column: source.column } : {}),
          message: `${handled ? 'Handled by the hook: ' : ''}${incident.lead.message}\n→ ${incident.lead.recommendation}`,
          severity: handled && incident.action === 'halt' ? vscode.DiagnosticSeverity.Warning : SEVERITY[incident.action],
          signal: incident.lead.signal,
          related: (source ? [here, ...earlier] : earlier).slice(0, MAX_RELATED),
          ref: { folder: g.folder.index, incident: incident.id },
          going: !handled && !stopped && incident.state === 'open',
        });
      }
    }
    return entries;
  }

  /** Where a loop's latest call points in the workspace, once looked up (looked up in the background, then drawn again). */
  private source(g: FolderGuardian, ref: EventRef): LoopSource | undefined {
    const key = `${g.folder.uri.toString()}|${ref.file}:${ref.line}`;
    if (this.sources.has(key)) return this.sources.get(key);
    this.sources.set(key, undefined);
    if (this.sources.size > 500) this.sources.delete(this.sources.keys().next().value as string);
    void loopSource(g.ws.root, ref).then((found) => {
      if (found === undefined) return;
      this.sources.set(key, found);
      this.render();
    });
    return undefined;
  }

  /** The incident a Problems entry of this collection is about, and whether it is still going. */
  incidentAt(uri: vscode.Uri, diagnostic: vscode.Diagnostic): { ref: IncidentRef; going: boolean } | undefined {
    return this.refs.get(entryKey(uri, diagnostic.range, diagnostic.message));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.collection.dispose();
  }
}

function entryKey(uri: vscode.Uri, range: vscode.Range, message: string): string {
  return `${uri.toString()}|${range.start.line}|${message}`;
}

/**
 * Quick fixes on a loop's Problems entry (the light bulb, Ctrl+.): Show Loop, Circuit Break (only
 * while the loop is still going: not handled by the hook, STOP not set), Mute.
 */
export class LoopCodeActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(private readonly diagnostics: FindingDiagnostics) {}

  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range | vscode.Selection, context: vscode.CodeActionContext): vscode.CodeAction[] {
    return this.actionsFor(document.uri, context.diagnostics);
  }

  /** The quick fixes for these Problems entries of a file. */
  actionsFor(uri: vscode.Uri, diagnostics: readonly vscode.Diagnostic[]): vscode.CodeAction[] {
    const out: vscode.CodeAction[] = [];
    for (const d of diagnostics) {
      if (d.source !== 'Loop Guardian') continue;
      const found = this.diagnostics.incidentAt(uri, d);
      if (!found) continue;
      const action = (title: string, command: string, args: unknown[], preferred = false) => {
        const a = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
        a.diagnostics = [d];
        a.command = { title, command, arguments: args };
        a.isPreferred = preferred;
        out.push(a);
      };
      action('Show Loop', 'loopGuardian.showIncident', [found.ref], true);
      if (found.going && vscode.workspace.isTrusted) action('Circuit Break: stop hooked agents', 'loopGuardian.circuitBreak', [{ folder: found.ref.folder }]);
      action('Mute this loop\'s notifications', 'loopGuardian.muteIncident', [found.ref]);
    }
    return out;
  }
}
