// Agent management: the catalogue (`catalogue.ts`), installing an agent pinned under the extension's
// storage (`install.ts`), and the two commands that use them, Add Agent (`addAgent.ts`) and Manage
// Agents (`manage.ts`, also the model provider's management command). What they share with the rest
// of the extension is passed in here: the backend, the warm-up, the log, where to install.

import * as vscode from 'vscode';
import { Backend } from '../backend';
import { Keychain } from '../keys';
import { SignIn } from '../signIn';
import { findPython, PYTHON_REQUEST, SetupError } from '../setup';
import { bundledRuntimes, hostNode, provisionPython, unpackNpm } from '../runtimes';
import { Warmup } from '../warmup';
import { addAgent, agentsRoot, updateAgent } from './addAgent';
import { addByHand, manageAgents, openChatWith, signInToAgent } from './manage';

export interface AgentManagement {
  extensionPath: string;
  storage: string; // the extension's global storage folder
  backend: Backend;
  warmup: Warmup;
  log: vscode.LogOutputChannel;
  signIn: SignIn;
  keychain: Keychain;
}

export function registerAgentCommands({ extensionPath, storage, backend, warmup, log, signIn, keychain }: AgentManagement): vscode.Disposable[] {
  const { uv, npmTarball } = bundledRuntimes(extensionPath);
  const provision = uv ? (request: string) => provisionPython(uv, storage, request, process.env, log) : undefined;
  const context = {
    extensionPath,
    storage,
    log,
    warmup,
    // The Python Symposium uses (`symposium.python`, else PATH's), else one uv provisions (as the backend's setup does).
    python: async () => {
      const setting = vscode.workspace.getConfiguration('symposium').get('python', '');
      return findPython(setting).catch((error: unknown) => {
        if (!provision || setting.trim() || !(error instanceof SetupError)) {
          throw error;
        }
        return provision(PYTHON_REQUEST);
      });
    },
    runtimes: { node: hostNode(npmTarball ? () => unpackNpm(npmTarball, storage) : undefined), uv, provision },
    addByHand,
    signIn,
  };
  return [
    vscode.commands.registerCommand('symposium.manageAgents', () => manageAgents(agentsRoot(storage), backend, warmup, signIn, keychain)),
    vscode.commands.registerCommand('symposium.addAgent', () => addAgent(context)),
    vscode.commands.registerCommand('symposium.signIn', () => signInToAgent(warmup, signIn)),
    vscode.commands.registerCommand('symposium.openChat', () => openChatWith()),
    vscode.commands.registerCommand('symposium.updateAgent', () => updateAgent(context)),
  ];
}
