// Symposium: Add Agent: pick an agent from the catalogue, install it pinned, add it to
// `symposium.agents`, start it once, and say whether it needs a sign-in.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { CatalogueAgent, installMethod, loadCatalogue, Method, REGISTRY_URL } from './catalogue';
import { agentId, AgentSetting, readAgents, wireAgent } from '../config';
import { InstallRecord, installAgent, readRecords, recordOf, saveRecord, settingFor } from './install';
import { Python, SetupError } from '../setup';
import { Warmup } from '../warmup';
import { AuthMethod } from '../wire';

export interface AgentsContext {
  extensionPath: string;
  storage: string; // the extension's global storage folder
  log: vscode.LogOutputChannel;
  warmup: Warmup;
  python: () => Promise<Python>;
  /** The manual entry of a command line (Manage Agents' editor). */
  addByHand: () => Promise<void>;
}

export const agentsRoot = (storage: string) => path.join(storage, 'agents');

const METHOD_LABEL: Record<Method, string> = { npx: 'npm package', uvx: 'PyPI package', binary: 'download' };

type Item = vscode.QuickPickItem & { agent?: CatalogueAgent; byHand?: boolean };

export async function addAgent(ctx: AgentsContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('symposium');
  const catalogue = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Symposium: reading the agent catalogue' },
    () => loadCatalogue({
      url: config.get<string>('catalogue.url', REGISTRY_URL).trim(),
      shipped: path.join(ctx.extensionPath, 'catalogue', 'registry.json'),
      saved: path.join(ctx.storage, 'catalogue.json'),
      log: ctx.log,
    }),
  );
  const records = readRecords(agentsRoot(ctx.storage));
  const items: Item[] = catalogue.agents.map((agent) => {
    const method = installMethod(agent);
    const installed = records.find((r) => r.id === agent.id && r.version === agent.version);
    return {
      label: agent.name,
      description: `${agent.version} · ${method ? METHOD_LABEL[method] : 'not for this platform'}${installed ? ' · installed' : ''}`,
      detail: agent.description,
      agent,
    };
  });
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator }, { label: '$(terminal) Enter a command line…', detail: 'Any ACP agent you have installed yourself', byHand: true });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Symposium: Add Agent',
    placeHolder: catalogue.source === 'registry'
      ? 'Pick an agent from the ACP registry: it is installed, pinned to this version'
      : `Pick an agent (the ${catalogue.source === 'saved' ? 'catalogue saved when the registry last answered' : 'catalogue shipped with Symposium'}: ${catalogue.note})`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked?.byHand) {
    return ctx.addByHand();
  }
  if (picked?.agent) {
    await install(picked.agent, ctx);
  }
}

async function install(agent: CatalogueAgent, ctx: AgentsContext): Promise<void> {
  let record: InstallRecord;
  try {
    record = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Symposium: installing ${agent.name} ${agent.version}` },
      () => installAgent(agent, { root: agentsRoot(ctx.storage), python: ctx.python, log: ctx.log }),
    );
  } catch (error) {
    showFailure(`Could not install ${agent.name}`, error, ctx.log);
    return;
  }
  // The catalogue's id, unless an entry of another origin has it.
  const config = vscode.workspace.getConfiguration('symposium');
  const { agents } = readAgents(config.get('agents'));
  const records = readRecords(agentsRoot(ctx.storage));
  const ours = (a: AgentSetting) => recordOf(a, records)?.id === agent.id;
  const id = agents.some((a) => a.id === agent.id && !ours(a)) ? agentId(agent.name, agents.map((a) => a.id)) : agent.id;
  const setting = settingFor(record, id);
  const replaced = agents.some((a) => a.id === id);
  await config.update('agents', replaced ? agents.map((a) => (a.id === id ? setting : a)) : [...agents, setting], vscode.ConfigurationTarget.Global);

  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  let started;
  try {
    started = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Symposium: starting ${agent.name}` },
      () => ctx.warmup.request({ modelId: id, agent: wireAgent(setting), ...(folder?.scheme === 'file' ? { cwd: folder.fsPath } : {}) }),
    );
  } catch (error) {
    showFailure(`${agent.name} ${agent.version} is installed, but does not start`, error, ctx.log);
    return;
  }
  record.auth = { ready: started?.ready ?? false, methods: started?.authMethods ?? [], ...(started?.error ? { error: started.error } : {}) };
  saveRecord(record);
  const pinned = `${agent.name} ${agent.version} is installed (${record.method === 'binary' ? `sha256 ${record.sha256?.slice(0, 12)}…` : 'pinned'})`;
  const auth = authNote(record);
  if (!auth) {
    void vscode.window.showInformationMessage(`${pinned} and running: pick "${agent.name} (ACP)" in the chat's model picker.`);
    return;
  }
  const terminal = record.auth.methods.find((m: AuthMethod) => m.type === 'terminal');
  const actions = [...(terminal ? ['Sign In in a Terminal'] : []), 'Manage Agents'];
  // Not awaited: the command is done; the message waits for the user as long as it likes.
  void vscode.window.showWarningMessage(`${pinned}. ${auth}`, ...actions).then(async (choice) => {
    if (choice === 'Sign In in a Terminal' && terminal) {
      const shellArgs = [...record.args.slice(0, record.method === 'npx' ? 1 : 0), ...(terminal.args ?? [])];
      vscode.window.createTerminal({ name: `${agent.name}: sign in`, shellPath: record.command, shellArgs, env: { ...record.env, ...terminal.env } }).show();
    } else if (choice === 'Manage Agents') {
      await vscode.commands.executeCommand('symposium.manageAgents');
    }
  });
}

/** What a user must do before the agent answers, from what it said when it started; empty when nothing. */
export function authNote(record: InstallRecord): string {
  const auth = record.auth;
  if (!auth) {
    return '';
  }
  const methods = auth.methods
    .map((m) => [m.name ?? m.id, m.description].filter(Boolean).join(': '))
    .filter(Boolean);
  if (auth.ready && !methods.length) {
    return '';
  }
  const how = methods.length ? ` It offers: ${methods.join('; ')}.` : '';
  return auth.ready
    ? `It may need a sign-in or an API key (in its env, with Manage Agents).${how}`
    : `It needs a sign-in first: ${auth.error ?? 'it would not open a session'}.${how}`;
}

function showFailure(what: string, error: unknown, log: vscode.LogOutputChannel): void {
  const message = error instanceof Error ? error.message : String(error);
  const fix = error instanceof SetupError ? ` ${error.fix}` : '';
  log.error(`${what}: ${message}${error instanceof SetupError && error.detail ? `\n${error.detail}` : ''}`);
  void vscode.window.showErrorMessage(`${what}: ${message}.${fix}`, 'Show Log').then((choice) => {
    if (choice === 'Show Log') {
      log.show();
    }
  });
}
