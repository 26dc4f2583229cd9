// Symposium: Manage Agents (the provider's managementCommand): add (from the catalogue, or by hand),
// edit and remove the entries of `symposium.agents` through quick picks and input boxes, and set an
// agent's own options (mode, effort, ...) from those its sessions offered. Agents installed from the
// catalogue show their pinned version and whether they need a sign-in. The keys kept for each agent
// in VS Code's secret storage are listed by name, replaced and forgotten here, and keys found in an
// agent's `env` setting can be moved there (docs/usage.md, "Keys").

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { authNote } from './addAgent';
import { Backend } from '../backend';
import {
  agentId, AgentSetting, formatEnv, joinCommandLine, optionValueItems, parseEnv, readAgents, settingKey, splitCommandLine, wireAgent, withOption,
} from '../config';
import { readRecords, recordOf } from './install';
import { checkKey, Keychain, secretsIn } from '../keys';
import { SignIn } from '../signIn';
import { buttons } from '../signInMethods';
import { Warmup } from '../warmup';
import { AgentOption, METHOD_AGENT_OPTIONS } from '../wire';

type Item = vscode.QuickPickItem & { run?: () => Promise<void> };

function settingsTarget() {
  const config = vscode.workspace.getConfiguration('symposium');
  const { agents } = readAgents(config.get('agents'));
  // `symposium.agents` is machine-scoped (it names programs to run): Global is the User settings in a
  // local window and the Remote settings in a remote one, where VS Code reads it (settingsPlace.ts).
  const save = (list: AgentSetting[]) => config.update('agents', list, vscode.ConfigurationTarget.Global);
  return { agents, save };
}

/** Adds an agent from a name, a command line and an environment the user types. */
export async function addByHand(): Promise<void> {
  const { agents, save } = settingsTarget();
  const agent = await editAgent(undefined, agents.map((a) => a.id));
  if (agent) {
    await save([...agents, agent]);
  }
}

export async function manageAgents(agentsRoot: string, backend: Backend, warmup: Warmup, signIn: SignIn, keychain: Keychain): Promise<void> {
  const { agents, save } = settingsTarget();
  const records = readRecords(agentsRoot);
  await keychain.ready;
  const inSettings = agents.map((agent) => ({ agent, names: secretsIn(agent.env ?? {}) })).filter((a) => a.names.length);

  const items: Item[] = [
    { label: '$(add) Add an agent…', detail: 'From the ACP registry\'s catalogue, or a command line', run: async () => {
      await vscode.commands.executeCommand('symposium.addAgent');
    } },
    ...(inSettings.length ? [{
      label: '$(lock) Move keys from settings into the keychain…',
      detail: `$(warning) In settings.json as plain text: ${inSettings.map((a) => `${a.agent.name} (${a.names.join(', ')})`).join('; ')}`,
      run: () => moveKeys(inSettings, agents, save, keychain),
    }] : []),
    { label: 'Agents', kind: vscode.QuickPickItemKind.Separator },
    { label: 'Eliza', description: 'built in', detail: 'Always available; try "run ls" or "count slowly to 5"' },
    ...agents.map((agent, index): Item => {
      const record = recordOf(agent, records);
      const auth = record ? authNote(record) : '';
      const kept = keychain.names(agent.id);
      return {
        label: agent.name,
        description: record ? `${agent.id} · ${record.version}, pinned${record.verified === 'unverified' ? ', unverified download' : ''}` : agent.id,
        detail: [auth ? `$(key) ${auth}` : joinCommandLine([agent.command, ...(agent.args ?? [])]), ...(kept.length ? [`$(lock) keychain: ${kept.join(', ')}`] : [])].join(' · '),
        run: async () => {
          const actions = ['$(edit) Edit', '$(settings) Options (mode, effort, …)', '$(key) Sign In or Log Out…', `$(lock) Keys in the keychain${kept.length ? ` (${kept.join(', ')})` : ''}…`, '$(trash) Remove'];
          const action = await vscode.window.showQuickPick(actions, { title: agent.name });
          if (action === actions[2]) {
            await manageSignIn(agent, warmup, signIn);
          } else if (action === actions[3]) {
            await manageKeys(agent, keychain);
          } else if (action?.endsWith('Edit')) {
            const edited = await editAgent(agent, []);
            if (edited) {
              await save(agents.map((a, i) => (i === index ? edited : a)));
            }
          } else if (action === actions[1]) {
            const edited = await editOptions(backend, agent);
            if (edited) {
              await save(agents.map((a, i) => (i === index ? edited : a)));
            }
          } else if (action?.endsWith('Remove')) {
            const rest = agents.filter((_, i) => i !== index);
            await save(rest);
            await keychain.forget(agent.id); // its keys go with it
            if (record && !rest.some((a) => recordOf(a, records) === record)) {
              fs.rmSync(record.folder, { recursive: true, force: true }); // what Add Agent installed for it
            }
          }
        },
      };
    }),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(settings-gear) Open the settings', run: async () => {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'symposium');
    } },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'Symposium: Manage Agents', placeHolder: 'Pick an agent to edit or remove' });
  await picked?.run?.();
}

/** Picks one of the configured agents (the only one, without asking); undefined when there is none or the user gives up. */
async function pickAgent(title: string): Promise<AgentSetting | undefined> {
  const { agents } = settingsTarget();
  if (!agents.length) {
    const add = 'Add Agent';
    if ((await vscode.window.showInformationMessage('No agent is configured yet: add one first.', add)) === add) {
      await vscode.commands.executeCommand('symposium.addAgent');
    }
    return undefined;
  }
  if (agents.length === 1) {
    return agents[0];
  }
  return (await vscode.window.showQuickPick(agents.map((agent) => ({ label: agent.name, description: agent.id, agent })), { title }))?.agent;
}

/** Symposium: Sign In to an Agent (the walkthrough's second step): the agent's sign-in choices, the key box among them. */
export async function signInToAgent(warmup: Warmup, signIn: SignIn): Promise<void> {
  const agent = await pickAgent('Symposium: sign in to which agent?');
  if (agent) {
    await manageSignIn(agent, warmup, signIn);
  }
}

/** Symposium: Open Chat with an Agent: the Chat view, in Agent mode, with the agent picked in its model picker. */
export async function openChatWith(): Promise<void> {
  const agent = await pickAgent('Symposium: chat with which agent?');
  if (agent) {
    await vscode.commands.executeCommand('workbench.action.chat.open', { mode: 'agent', modelSelector: { vendor: 'symposium', id: agent.id } });
  }
}

/**
 * The agent's sign-in, as it declares it: a button per method it offers (a terminal or its own), the
 * variables it reads a key from, and Log Out where it takes one. It is started to ask.
 */
async function manageSignIn(agent: AgentSetting, warmup: Warmup, signIn: SignIn): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const cwd = folder?.scheme === 'file' ? folder.fsPath : undefined;
  let started;
  try {
    started = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Symposium: starting ${agent.name}` },
      () => warmup.request({ modelId: agent.id, agent: wireAgent(agent), ...(cwd ? { cwd } : {}) }),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(`${agent.name} does not start: ${error instanceof Error ? error.message : error}`);
    return;
  }
  const state = started?.signIn;
  const methods = state ? buttons(state.methods) : [];
  type Choice = vscode.QuickPickItem & { run: () => Promise<unknown> };
  const choices: Choice[] = [
    ...methods.map((m): Choice => ({
      label: `$(key) ${m.name}`,
      description: m.askFor?.length ? 'enter a key' : m.kind === 'terminal' ? 'in a terminal' : 'by the agent',
      detail: m.description || undefined,
      run: () => signIn.run(agent.name, m, wireAgent(agent), cwd, agent.id),
    })),
    ...(state?.canLogOut ? [{ label: '$(sign-out) Log Out', run: () => signIn.logOut(agent.name, wireAgent(agent)) }] : []),
  ];
  const said = state?.status ? `: ${state.status}` : state?.authenticated ? ` (signed in with ${state.authenticated})` : '';
  const status = started?.ready ? `${agent.name} is ready${said}` : `${agent.name} needs a sign-in${said}`;
  if (!choices.length) {
    void vscode.window.showInformationMessage(`${status}. It offers no sign-in Symposium can run.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(choices, { title: `${agent.name}: sign-in`, placeHolder: status });
  await picked?.run();
}

/** The keys kept for an agent, by name: replace one (the key box again) or forget it, or all. */
async function manageKeys(agent: AgentSetting, keychain: Keychain): Promise<void> {
  const names = keychain.names(agent.id);
  if (!names.length) {
    void vscode.window.showInformationMessage(`No key is kept for ${agent.name}. Sign In (Manage Agents) asks for one where the agent takes a key.`);
    return;
  }
  type Choice = vscode.QuickPickItem & { name?: string };
  const picked = await vscode.window.showQuickPick<Choice>(
    [...names.map((name) => ({ label: `$(key) ${name}`, name })), { label: '$(trash) Forget all of them' }],
    { title: `${agent.name}: keys in VS Code's secret storage`, placeHolder: 'A key to replace or forget (its value is never shown)' },
  );
  if (!picked) {
    return;
  }
  if (!picked.name) {
    await keychain.forget(agent.id);
    void vscode.window.showInformationMessage(`Forgot ${names.join(', ')} for ${agent.name}.`);
    return;
  }
  const name = picked.name;
  const action = await vscode.window.showQuickPick(['$(edit) Replace…', '$(trash) Forget'], { title: `${agent.name}: ${name}` });
  if (action?.endsWith('Forget')) {
    await keychain.forget(agent.id, name);
    void vscode.window.showInformationMessage(`Forgot ${name} for ${agent.name}.`);
  } else if (action) {
    const value = await vscode.window.showInputBox({
      title: `${agent.name}: ${name}`,
      prompt: `The new ${name} for ${agent.name}: kept in VS Code's secret storage, never in settings`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => checkKey(v),
    });
    if (value !== undefined) {
      await keychain.set(agent.id, { [name]: value.trim() });
      void vscode.window.showInformationMessage(`Replaced ${name} for ${agent.name}: it starts with the new key.`);
    }
  }
}

/** Moves the keys found in agents' `env` settings into the keychain, then takes them out of the settings. */
async function moveKeys(
  found: { agent: AgentSetting; names: string[] }[],
  agents: AgentSetting[],
  save: (list: AgentSetting[]) => Thenable<void>,
  keychain: Keychain,
): Promise<void> {
  const all = found.flatMap(({ agent, names }) => names.map((name) => `${agent.name}: ${name}`));
  const move = 'Move them';
  const answer = await vscode.window.showWarningMessage(
    `Move ${all.join(', ')} from settings.json into VS Code's secret storage? They are then given to the agents in their environment as before, and no longer written in settings.`,
    { modal: true },
    move,
  );
  if (answer !== move) {
    return;
  }
  for (const { agent, names } of found) {
    await keychain.set(agent.id, Object.fromEntries(names.map((name) => [name, agent.env![name]])));
  }
  // Only once every key is kept: then each leaves the settings.
  await save(agents.map((agent) => {
    const moved = found.find((f) => f.agent.id === agent.id)?.names ?? [];
    return moved.length ? { ...agent, env: Object.fromEntries(Object.entries(agent.env ?? {}).filter(([name]) => !moved.includes(name))) } : agent;
  }));
  void vscode.window.showInformationMessage(`Moved ${all.join(', ')} into VS Code's secret storage.`);
}

/**
 * One of the agent's options, set to a value its sessions offered (the model is the model picker's).
 * Undefined when the user gives up, or when the agent's options are not known yet.
 */
async function editOptions(backend: Backend, agent: AgentSetting): Promise<AgentSetting | undefined> {
  let offered: { known: boolean; options: AgentOption[] };
  try {
    offered = await backend.request(METHOD_AGENT_OPTIONS, { agent: wireAgent(agent) });
  } catch (error) {
    void vscode.window.showErrorMessage(`Could not ask for the options of ${agent.name}: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
  const options = offered.options.filter((o) => o.category !== 'model');
  if (!offered.known || options.length === 0) {
    const why = offered.known ? `${agent.name} offers no options besides its models (pick those in the model picker)` : `${agent.name}'s options are known once it has answered in a chat: use it once, then come back`;
    void vscode.window.showInformationMessage(`${why}.`);
    return undefined;
  }
  const current = agent.options ?? {};
  const option = (await vscode.window.showQuickPick(
    options.map((o) => ({
      label: o.name,
      description: settingKey(o) in current ? `set: ${String(current[settingKey(o)])}` : "the agent's default",
      detail: o.description || undefined,
      option: o,
    })),
    { title: `${agent.name}: options for every conversation`, placeHolder: 'The option to set' },
  ))?.option;
  if (!option) {
    return undefined;
  }
  const key = settingKey(option);
  const picked = await vscode.window.showQuickPick(optionValueItems(option, current[key]), { title: `${agent.name}: ${option.name}` });
  if (!picked) {
    return undefined;
  }
  const updated = withOption(current, key, picked.value);
  const { options: _previous, ...rest } = agent;
  return Object.keys(updated).length ? { ...rest, options: updated } : rest;
}

/** Asks for a name, a command line and an environment; undefined when the user gives up. */
async function editAgent(agent: AgentSetting | undefined, takenIds: string[]): Promise<AgentSetting | undefined> {
  const title = agent ? `Edit ${agent.name}` : 'Add an agent';
  const name = await vscode.window.showInputBox({
    title,
    prompt: 'The name shown in the model picker',
    value: agent?.name ?? '',
    placeHolder: 'Claude Code',
    validateInput: (v) => (v.trim() ? undefined : 'A name is needed'),
  });
  if (name === undefined) {
    return undefined;
  }
  const commandLine = await vscode.window.showInputBox({
    title,
    prompt: 'The command that serves the agent over ACP on stdio, with its arguments',
    value: agent ? joinCommandLine([agent.command, ...(agent.args ?? [])]) : '',
    placeHolder: 'npx -y @agentclientprotocol/claude-agent-acp',
    validateInput: (v) => (splitCommandLine(v).length ? undefined : 'A command is needed'),
  });
  if (commandLine === undefined) {
    return undefined;
  }
  const envLine = await vscode.window.showInputBox({
    title,
    prompt: 'Environment variables, as NAME=VALUE separated by spaces (optional)',
    value: formatEnv(agent?.env ?? {}),
    validateInput: (v) => {
      const env = parseEnv(v);
      return typeof env === 'string' ? env : undefined;
    },
  });
  if (envLine === undefined) {
    return undefined;
  }
  const [command, ...args] = splitCommandLine(commandLine);
  return {
    id: agent?.id ?? agentId(name, takenIds),
    name: name.trim(),
    command,
    args,
    env: parseEnv(envLine) as Record<string, string>,
    ...(agent?.options ? { options: agent.options } : {}),
  };
}
