// The commands that are not agent management (`agents/`), and what a settings change does. Each is
// given the pieces it acts on.

import * as vscode from 'vscode';
import { Backend } from './backend';
import { PrivateBackend } from './backendHost';
import { agentCommands } from './agentCommands';
import { continueSession } from './continue';
import { AgentEdits, reviewEdits, revertEdits } from './edits';
import { SymposiumProvider } from './provider';

export interface CommandOwners {
  backend: Backend;
  privateBackend: PrivateBackend;
  provider: SymposiumProvider;
  edits: AgentEdits;
  log: vscode.LogOutputChannel;
}

/** The settings the backend's process is started with: a change restarts it (with the next request). */
const BACKEND_SETTINGS = ['symposium.backend.command', 'symposium.python', 'symposium.traceDir', 'symposium.logLevel'];

export function registerCommands({ backend, privateBackend, provider, edits, log }: CommandOwners): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('symposium.continueSession', () => continueSession(backend, log)),
    vscode.commands.registerCommand('symposium.agentCommands', () => agentCommands(backend, log)),
    vscode.commands.registerCommand('symposium.showLog', () => log.show()),
    vscode.commands.registerCommand('symposium.reviewEdits', () => reviewEdits(edits)),
    vscode.commands.registerCommand('symposium.revertEdits', () => revertEdits(edits)),
    vscode.commands.registerCommand('symposium.restartBackend', async () => {
      await backend.stop('The Symposium backend was restarted');
      provider.refresh();
      log.info('backend restarted by the user; it starts again with the next request');
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('symposium.python')) {
        privateBackend.forget();
      }
      if (BACKEND_SETTINGS.some((s) => event.affectsConfiguration(s))) {
        await backend.stop('The Symposium backend was restarted because its settings changed');
        provider.refresh();
      } else if (event.affectsConfiguration('symposium.agents')) {
        provider.refresh();
      }
    }),
  ];
}
