// Symposium: Manage Agents (the provider's managementCommand): add (from the catalogue, or by hand),
// edit and remove the entries of `symposium.agents` through quick picks and input boxes, and set an
// agent's own options (mode, effort, ...) from those its sessions offered. Agents installed from the
// catalogue show their pinned version and whether they need a sign-in.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { authNote } from './addAgent';
import { Backend } from '../backend';
import {
  agentId, AgentSetting, formatEnv, joinCommandLine, optionValueItems, parseEnv, readAgents, settingKey, splitCommandLine, wireAgent, withOption,
} from '../config';
import { readRecords, recordOf } from './install';
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

export async function manageAgents(agentsRoot: string, backend: Backend): Promise<void> {
  const { agents, save } = settingsTarget();
  const records = readRecords(agentsRoot);

  const items: Item[] = [
    { label: '$(add) Add an agent…', detail: 'From the ACP registry\'s catalogue, or a command line', run: async () => {
      await vscode.commands.executeCommand('symposium.addAgent');
    } },
    { label: 'Agents', kind: vscode.QuickPickItemKind.Separator },
    { label: 'Eliza', description: 'built in', detail: 'Always available; try "run ls" or "count slowly to 5"' },
    ...agents.map((agent, index): Item => {
      const record = recordOf(agent, records);
      const auth = record ? authNote(record) : '';
      return {
        label: agent.name,
        description: record ? `${agent.id} · ${record.version}, pinned${record.verified === 'unverified' ? ', unverified download' : ''}` : agent.id,
        detail: auth ? `$(key) ${auth}` : joinCommandLine([agent.command, ...(agent.args ?? [])]),
        run: async () => {
          const actions = ['$(edit) Edit', '$(settings) Options (mode, effort, …)', '$(trash) Remove'];
          const action = await vscode.window.showQuickPick(actions, { title: agent.name });
          if (action?.endsWith('Edit')) {
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
