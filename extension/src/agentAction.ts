// The `symposium-agent-action` tool: an agent's permission request, confirmed by the user through
// VS Code's own tool confirmation. Approving it is the whole job; the agent does the work.

import * as vscode from 'vscode';
import { AGENT_ACTION_APPROVED } from './wire';

/**
 * What the card says about its buttons. VS Code's "Allow in this Session" (the primary button in
 * VS Code 1.139) approves the tool, so every later call of it, not only this action.
 */
export const SESSION_NOTE = '*Allow in this Session* allows every further action of this agent in this chat, without asking.';
const SKIP_NOTE = '*Skip* tells the agent no; it carries on without doing it.';

export interface AgentActionInput {
  kind?: string;
  title?: string;
  raw_input?: unknown;
  /** An edit's change as a unified diff, made by the backend from the agent's request. */
  diff?: string;
}

export class AgentActionTool implements vscode.LanguageModelTool<AgentActionInput> {
  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<AgentActionInput>): vscode.PreparedToolInvocation {
    const { title, kind } = options.input ?? {};
    const what = title || (kind ? `${kind} something` : 'take an action');
    return {
      invocationMessage: `Agent: ${what}`,
      confirmationMessages: { title: 'Allow this agent action?', message: confirmationMessage(options.input ?? {}) },
    };
  }

  invoke(): vscode.LanguageModelToolResult {
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(AGENT_ACTION_APPROVED)]);
  }
}

/**
 * What the agent wants to do: its title and kind, then the command or description from `raw_input`
 * (an edit: its diff instead of the raw input), then what allowing it for the session means.
 */
export function confirmationMessage(input: AgentActionInput): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  const raw = input.raw_input && typeof input.raw_input === 'object' && !Array.isArray(input.raw_input) ? (input.raw_input as Record<string, unknown>) : undefined;
  const command = typeof raw?.command === 'string' ? raw.command : Array.isArray(raw?.command) ? raw.command.join(' ') : '';
  // A title that is the command itself (Claude Code's) is shown once, as the command below. One
  // of several lines goes in a block of its own, as it is: in bold, its lines would run together.
  const title = input.title && input.title !== command ? input.title : '';
  const lines = title.includes('\n');
  if (title && !lines) {
    md.appendMarkdown('**');
    md.appendText(title);
    md.appendMarkdown('**');
  }
  if (input.kind) {
    md.appendMarkdown(title && !lines ? ' ' : '').appendMarkdown('(').appendText(input.kind).appendMarkdown(')');
  }
  if (lines) {
    md.appendMarkdown('\n\n').appendCodeblock(title, 'text');
  }
  if (typeof input.diff === 'string' && input.diff) {
    md.appendMarkdown('\n\n').appendCodeblock(input.diff, 'diff');
  } else if (raw) {
    const { command: _, description, ...rest } = raw;
    if (typeof description === 'string' && description) {
      md.appendMarkdown('\n\n').appendText(description);
    }
    if (command) {
      md.appendMarkdown('\n\n').appendCodeblock(command, 'sh');
    }
    if (Object.keys(rest).length > 0 && typeof raw.command !== 'string') {
      md.appendMarkdown('\n\n').appendCodeblock(JSON.stringify(rest, null, 2).slice(0, 4000), 'json');
    }
  } else if (input.raw_input !== undefined && input.raw_input !== null) {
    md.appendMarkdown('\n\n').appendCodeblock(JSON.stringify(input.raw_input, null, 2).slice(0, 4000), 'json');
  }
  md.appendMarkdown(`\n\n${SESSION_NOTE} ${SKIP_NOTE}`);
  return md;
}
