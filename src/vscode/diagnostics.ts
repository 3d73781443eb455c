import * as vscode from 'vscode';
import { logUri } from './treeNodes';
import type { Finding } from '../core/finding';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';

const SEVERITY: Record<Finding['action'], vscode.DiagnosticSeverity> = {
  halt: vscode.DiagnosticSeverity.Error,
  escalate: vscode.DiagnosticSeverity.Warning,
  warn: vscode.DiagnosticSeverity.Warning,
  continue: vscode.DiagnosticSeverity.Information,
};

/** One Problems entry: where (a log's URI and 1-based line), what, and the loop's earlier lines. */
interface Entry {
  readonly uri: vscode.Uri;
  readonly line: number;
  readonly message: string;
  readonly severity: vscode.DiagnosticSeverity;
  readonly signal: string;
  readonly related: readonly (readonly [vscode.Uri, number])[];
}

/** A 1-based line, whole. */
function lineRange(line: number): vscode.Range {
  return new vscode.Range(Math.max(0, line - 1), 0, Math.max(0, line - 1), Number.MAX_SAFE_INTEGER);
}

/** How many of an incident's other evidence lines go along as related information. */
const MAX_RELATED = 20;

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
    const fingerprint = JSON.stringify(entries.map((e) => [e.uri.toString(), e.line, e.message, e.severity, e.signal, e.related.map(([uri, line]) => [uri.toString(), line])]));
    if (fingerprint === this.shown) return;
    this.shown = fingerprint;
    this.collection.clear();
    const byUri = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    for (const e of entries) {
      const d = new vscode.Diagnostic(lineRange(e.line), e.message, e.severity);
      d.source = 'Loop Guardian';
      d.code = e.signal;
      d.relatedInformation = e.related.map(([uri, line]) => new vscode.DiagnosticRelatedInformation(new vscode.Location(uri, lineRange(line)), `the same loop, earlier (line ${line})`));
      const key = e.uri.toString();
      const entry = byUri.get(key) ?? { uri: e.uri, diagnostics: [] };
      entry.diagnostics.push(d);
      byUri.set(key, entry);
    }
    for (const { uri, diagnostics } of byUri.values()) this.collection.set(uri, diagnostics);
  }

  /** What the panel is to show: one entry per loop going on, at its latest evidence line, with the earlier ones related. */
  private entries(): Entry[] {
    const entries: Entry[] = [];
    for (const g of this.service.all) {
      for (const incident of g.state.incidents) {
        const last = incident.evidence[incident.evidence.length - 1] ?? incident.lead.at;
        entries.push({
          uri: logUri(g, last.file),
          line: last.line,
          message: `${incident.lead.message}\n→ ${incident.lead.recommendation}`,
          severity: SEVERITY[incident.action],
          signal: incident.lead.signal,
          related: incident.evidence
            .slice(0, -1)
            .slice(-MAX_RELATED)
            .map((ref) => [logUri(g, ref.file), ref.line] as const),
        });
      }
    }
    return entries;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.collection.dispose();
  }
}
