// Symposium: Continue an Agent Session. Lists an agent's own sessions (the backend asks the agent,
// `session/list`), and opens a new chat bound to the chosen one: the chat's first exchange carries the
// session's token, and the backend resumes that session for the conversation that begins with it.

import * as vscode from 'vscode';
import { Backend } from './backend';
import { AgentSetting, readAgents, wireAgent } from './config';
import { openingExchange, sessionAge } from './opening';
import { AgentSessionInfo, METHOD_LIST_SESSIONS, SessionListing } from './wire';

export async function continueSession(backend: Backend, log: vscode.LogOutputChannel): Promise<void> {
  const { agents } = readAgents(vscode.workspace.getConfiguration('symposium').get('agents'));
  if (agents.length === 0) {
    const choice = await vscode.window.showInformationMessage('No ACP agent is configured yet.', 'Manage Agents');
    if (choice) {
      await vscode.commands.executeCommand('symposium.manageAgents');
    }
    return;
  }
  const agent = agents.length === 1 ? agents[0] : (await vscode.window.showQuickPick(
    agents.map((a) => ({ label: a.name, description: a.id, agent: a })),
    { title: 'Continue an Agent Session', placeHolder: 'Whose session?' },
  ))?.agent;
  if (!agent) {
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const cwd = folder?.scheme === 'file' ? folder.fsPath : undefined;
  let listing: SessionListing;
  try {
    listing = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Asking ${agent.name} for its sessions…` },
      () => backend.request<SessionListing>(METHOD_LIST_SESSIONS, { agent: wireAgent(agent), ...(cwd ? { cwd } : {}) }),
    );
  } catch (error) {
    log.error(`could not list the sessions of ${agent.name}: ${error instanceof Error ? error.message : error}`);
    void vscode.window.showErrorMessage(`Could not list the sessions of ${agent.name}: ${error instanceof Error ? error.message : error}`);
    return;
  }
  if (!listing.supported) {
    void vscode.window.showInformationMessage(`${listing.reason ?? `${agent.name} cannot list its sessions`}.`);
    return;
  }
  if (listing.sessions.length === 0) {
    void vscode.window.showInformationMessage(`${agent.name} has no sessions${cwd ? ' in this folder' : ''}.`);
    return;
  }
  const now = Date.now();
  const picked = await vscode.window.showQuickPick(
    listing.sessions.map((session) => ({
      label: session.title || session.sessionId,
      description: sessionAge(session.updatedAt, now),
      detail: session.cwd,
      session,
    })),
    { title: `Continue a ${agent.name} session`, placeHolder: 'The session to go on with in a new chat', matchOnDetail: true },
  );
  if (picked) {
    await openChat(agent, picked.session, log);
  }
}

/** A new chat with the agent's model picked, its first exchange naming the session. */
async function openChat(agent: AgentSetting, session: AgentSessionInfo, log: vscode.LogOutputChannel): Promise<void> {
  const opening = openingExchange(agent.name, session);
  try {
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      modelSelector: { vendor: 'symposium', id: agent.id },
      previousRequests: [opening],
      query: '',
      isPartialQuery: true,
    });
    log.info(`opened a chat continuing session ${session.sessionId} of ${agent.name}`);
  } catch (error) {
    log.error(`could not open a chat for session ${session.sessionId}: ${error instanceof Error ? error.message : error}`);
    void vscode.window.showErrorMessage(`Could not open a chat for the session: ${error instanceof Error ? error.message : error}`);
  }
}
