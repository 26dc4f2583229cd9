// Symposium: Add Agent: pick an agent from the catalogue, install it pinned, add it to
// `symposium.agents`, start it once, and say whether it needs a sign-in. Symposium: Update Agent:
// the same for an installed agent whose catalogue version is newer. Both write `symposium.agents`
// with `ConfigurationTarget.Global`, which for this machine-scoped setting is the User settings in a
// local window and the Remote settings in a remote one: where VS Code reads it (settingsPlace.ts).

import * as path from 'node:path';
import * as vscode from 'vscode';
import { Catalogue, loadCatalogue, REGISTRY_URL } from './catalogue';
import { installedVersion } from './installedVersion';
import { CatalogueAgent, compareVersions, installMethod, Method, sameVersion, updateFor } from './registry';
import { agentId, AgentSetting, readAgents, wireAgent } from '../config';
import { InstallOptions, InstallRecord, installAgent, readRecords, recordOf, saveRecord, settingFor } from './install';
import { VersionMissing, withNpmVersion } from './installers/npm';
import { pypiRequiresPython } from './installers/pypi';
import { Python, SetupError } from '../setup';
import { SignIn } from '../signIn';
import { buttons } from '../signInMethods';
import { Warmup } from '../warmup';

export interface AgentsContext {
  extensionPath: string;
  storage: string; // the extension's global storage folder
  log: vscode.LogOutputChannel;
  warmup: Warmup;
  python: () => Promise<Python>;
  /** What the vsix carries for installs: VS Code's Node with its npm, uv and the Pythons it provisions (`runtimes.ts`). */
  runtimes: Pick<InstallOptions, 'node' | 'uv' | 'provision'>;
  /** The manual entry of a command line (Manage Agents' editor). */
  addByHand: () => Promise<void>;
  signIn: SignIn;
}

export const agentsRoot = (storage: string) => path.join(storage, 'agents');

const METHOD_LABEL: Record<Method, string> = { npx: 'npm package', uvx: 'PyPI package', binary: 'download' };

type Item = vscode.QuickPickItem & { agent?: CatalogueAgent; byHand?: boolean };

function readCatalogue(ctx: AgentsContext, refresh = false): Thenable<Catalogue> {
  const config = vscode.workspace.getConfiguration('symposium');
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Symposium: reading the agent catalogue' },
    () => loadCatalogue({
      url: config.get<string>('catalogue.url', REGISTRY_URL).trim(),
      shipped: path.join(ctx.extensionPath, 'catalogue', 'registry.json'),
      overrides: path.join(ctx.extensionPath, 'catalogue', 'overrides.json'),
      saved: path.join(ctx.storage, 'catalogue.json'),
      refresh,
      log: ctx.log,
    }),
  );
}

export async function addAgent(ctx: AgentsContext): Promise<void> {
  const catalogue = await readCatalogue(ctx);
  const records = readRecords(agentsRoot(ctx.storage));
  const items: Item[] = catalogue.agents.map((agent) => {
    const method = installMethod(agent);
    const installed = records.find((r) => r.id === agent.id && r.version === agent.version);
    const older = !installed && records.find((r) => r.id === agent.id && compareVersions(r.version, agent.version) < 0);
    return {
      label: agent.name,
      description: `${agent.version} · ${method ? METHOD_LABEL[method] : 'not for this platform'}${installed ? ' · installed' : older ? ` · ${older.version} installed: an update` : ''}`,
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

/** Symposium: Update Agent: the installed agents whose catalogue version is newer; the one picked is installed in its place. */
export async function updateAgent(ctx: AgentsContext): Promise<void> {
  const catalogue = await readCatalogue(ctx, true);
  const records = readRecords(agentsRoot(ctx.storage));
  const newest = new Map<string, InstallRecord>();
  for (const record of records) {
    const seen = newest.get(record.id);
    if (!seen || compareVersions(record.version, seen.version) > 0) {
      newest.set(record.id, record);
    }
  }
  const updates = [...newest.values()].flatMap((record) => {
    const agent = updateFor(record, catalogue.agents);
    return agent ? [{ label: agent.name, description: `${record.version} → ${agent.version}`, detail: agent.description, agent }] : [];
  });
  if (!updates.length) {
    const from = catalogue.source === 'registry' ? 'the ACP registry' : `the ${catalogue.source} catalogue${catalogue.note ? ` (${catalogue.note})` : ''}`;
    void vscode.window.showInformationMessage(records.length ? `Symposium: every installed agent is at the newest version ${from} lists.` : 'Symposium: no agent installed from the catalogue yet; add one with Symposium: Add Agent.');
    return;
  }
  const picked = await vscode.window.showQuickPick(updates, { title: 'Symposium: Update Agent', placeHolder: 'Pick an agent to update: the new version is installed, pinned, beside the old one' });
  if (picked) {
    await install(picked.agent, ctx);
  }
}

async function install(agent: CatalogueAgent, ctx: AgentsContext): Promise<void> {
  let record: InstallRecord;
  try {
    record = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Symposium: installing ${agent.name} ${agent.version}` },
      () => installAgent(agent, { root: agentsRoot(ctx.storage), python: ctx.python, requiresPython: pypiRequiresPython, log: ctx.log, ...ctx.runtimes }),
    );
  } catch (error) {
    if (error instanceof VersionMissing && error.newest) {
      // The registry lacks this version (npm's ETARGET): offer the newest it has.
      const instead = `Install ${error.newest}`;
      ctx.log.error(`Could not install ${agent.name}: ${error.message}\n${error.detail}`);
      const choice = await vscode.window.showErrorMessage(`Could not install ${agent.name}: ${error.message}.`, instead, 'Show Log');
      if (choice === instead) {
        return install(withNpmVersion(agent, error.newest), ctx);
      }
      if (choice === 'Show Log') {
        ctx.log.show();
      }
      return;
    }
    showFailure(`Could not install ${agent.name}`, error, ctx.log);
    return;
  }
  // What is recorded is what was installed, whatever the catalogue said.
  const actual = installedVersion(record);
  if (actual && !sameVersion(actual, record.version)) {
    ctx.log.warn(`${agent.name}: the catalogue says ${record.version}, but ${actual} was installed: ${actual} is recorded`);
    record.version = actual;
    saveRecord(record);
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
    showFailure(`${agent.name} ${record.version} is installed, but does not start`, error, ctx.log);
    return;
  }
  record.auth = { ready: started?.ready ?? false, methods: started?.authMethods ?? [], ...(started?.error ? { error: started.error } : {}) };
  saveRecord(record);
  const pinned = `${agent.name} ${record.version} is installed (${record.method !== 'binary' ? 'pinned'
    : record.verified === 'unverified' ? `unverified: the catalogue gives no sha256 for this download; it hashed to ${record.sha256?.slice(0, 12)}…`
    : `sha256 ${record.sha256?.slice(0, 12)}… checked`})`;
  const auth = authNote(record);
  if (!auth) {
    void vscode.window.showInformationMessage(`${pinned} and running: pick "${agent.name} (ACP)" in the chat's model picker.`);
    return;
  }
  // The agent's own sign-in methods, as the backend offers them (docs/DESIGN.md, "Sign-in").
  const methods = buttons(started?.signIn?.methods ?? []);
  const actions = [...methods.map((m) => m.name), 'Manage Agents'];
  // Not awaited: the command is done; the message waits for the user as long as it likes.
  void vscode.window.showWarningMessage(`${pinned}. ${auth}`, ...actions).then(async (choice) => {
    const method = methods.find((m) => m.name === choice);
    if (method) {
      await ctx.signIn.run(agent.name, method, wireAgent(setting), folder?.scheme === 'file' ? folder.fsPath : undefined, id);
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
    ? `It may need a sign-in or an API key (Manage Agents: Sign In).${how}`
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
