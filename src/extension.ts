import type * as vscode from 'vscode';

/** The extension's face is composed here; see the next milestone in the CHANGELOG. */
export function activate(_context: vscode.ExtensionContext): void {}

export function deactivate(): void {}
