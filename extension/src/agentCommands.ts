// Symposium: Agent Commands... Lists the slash commands the agent announced (ACP
// `available_commands_update`, kept by the backend: lm/agentCommands) and puts the one picked in the
// chat input, spelled so that it reaches the agent as typed (`//name` where VS Code has a `/name`:
// docs/usage.md, "The agent's commands").

import * as vscode from 'vscode';
import { Backend } from './backend';
import { readAgents, wireAgent } from './config';
import { AgentCommandInfo, METHOD_AGENT_COMMANDS } from './wire';

export async function agentCommands(backend: Backend, log: vscode.LogOutputChannel): Promise<void> {
  const { agents } = readAgents(vscode.workspace.getConfiguration('symposium').get('agents'));
  if (agents.length === 0) {
    void vscode.window.showInformationMessage('No ACP agent is configured yet.');
    return;
  }
  const agent = agents.length === 1 ? agents[0] : (await vscode.window.showQuickPick(
    agents.map((a) => ({ label: a.name, description: a.id, agent: a })),
    { title: 'Agent Commands', placeHolder: 'Whose commands?' },
  ))?.agent;
  if (!agent) {
    return;
  }
  let commands: AgentCommandInfo[];
  try {
    commands = (await backend.request<{ commands: AgentCommandInfo[] }>(METHOD_AGENT_COMMANDS, { agent: wireAgent(agent) })).commands;
  } catch (error) {
    log.error(`could not list the commands of ${agent.name}: ${error instanceof Error ? error.message : error}`);
    void vscode.window.showErrorMessage(`Could not list the commands of ${agent.name}: ${error instanceof Error ? error.message : error}`);
    return;
  }
  if (commands.length === 0) {
    void vscode.window.showInformationMessage(`${agent.name} has announced no commands yet: they come with its first session (send it a message).`);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    commands.map((command) => ({ label: command.typed, description: command.description, detail: command.hint || undefined, command })),
    { title: `${agent.name}'s commands`, placeHolder: 'Put one in the chat input', matchOnDescription: true },
  );
  if (picked) {
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      modelSelector: { vendor: 'symposium', id: agent.id },
      query: `${picked.command.typed} `,
      isPartialQuery: true,
    });
  }
}
