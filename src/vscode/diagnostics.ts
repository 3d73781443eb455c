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

  constructor(private readonly service: GuardianService, private readonly settings: UiSettingsValue) {
    this.subscriptions = [service.onDidChange(() => this.render()), settings.onDidChange(() => this.render())];
    this.render();
  }

  render(): void {
    this.collection.clear();
    if (!this.settings.value.problems) return;
    const byUri = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    for (const g of this.service.all) {
      for (const incident of g.state.incidents) {
        const last = incident.evidence[incident.evidence.length - 1] ?? incident.lead.at;
        const uri = logUri(g, last.file);
        const at = (line: number) => new vscode.Range(Math.max(0, line - 1), 0, Math.max(0, line - 1), Number.MAX_SAFE_INTEGER);
        const d = new vscode.Diagnostic(at(last.line), `${incident.lead.message}\n→ ${incident.lead.recommendation}`, SEVERITY[incident.action]);
        d.source = 'Loop Guardian';
        d.code = incident.lead.signal;
        d.relatedInformation = incident.evidence
          .slice(0, -1)
          .slice(-MAX_RELATED)
          .map((ref) => new vscode.DiagnosticRelatedInformation(new vscode.Location(logUri(g, ref.file), at(ref.line)), `the same loop, earlier (line ${ref.line})`));
        const entry = byUri.get(uri.toString()) ?? { uri, diagnostics: [] };
        entry.diagnostics.push(d);
        byUri.set(uri.toString(), entry);
      }
    }
    for (const { uri, diagnostics } of byUri.values()) this.collection.set(uri, diagnostics);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.collection.dispose();
  }
}
