import * as vscode from 'vscode';
import { logUri } from './treeNodes';
import type { Finding } from '../core/finding';
import type { GuardianService } from './guardianService';

const SEVERITY: Record<Finding['action'], vscode.DiagnosticSeverity> = {
  halt: vscode.DiagnosticSeverity.Error,
  escalate: vscode.DiagnosticSeverity.Warning,
  warn: vscode.DiagnosticSeverity.Warning,
  continue: vscode.DiagnosticSeverity.Information,
};

/** The Problems panel: each active finding on its log files, at its evidence lines; gone when resolved. */
export class FindingDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection('loop-guardian');
  private readonly subscription: vscode.Disposable;

  constructor(private readonly service: GuardianService) {
    this.subscription = service.onDidChange(() => this.render());
    this.render();
  }

  render(): void {
    const byUri = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    for (const g of this.service.all) {
      for (const f of g.state.findings) {
        for (const ref of f.evidence) {
          const uri = logUri(g, ref.file);
          const line = Math.max(0, ref.line - 1);
          const d = new vscode.Diagnostic(new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER), `${f.message} (${f.count}/${f.threshold})\n→ ${f.recommendation}`, SEVERITY[f.action]);
          d.source = 'Loop Guardian';
          d.code = f.signal;
          const entry = byUri.get(uri.toString()) ?? { uri, diagnostics: [] };
          entry.diagnostics.push(d);
          byUri.set(uri.toString(), entry);
        }
      }
    }
    this.collection.clear();
    for (const { uri, diagnostics } of byUri.values()) this.collection.set(uri, diagnostics);
  }

  dispose(): void {
    this.subscription.dispose();
    this.collection.dispose();
  }
}
