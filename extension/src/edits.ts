// The files agents changed on disk, by conversation (the backend's `edit` parts), so the user can see what an
// agent changed in VS Code's diff view and put it back. Agents that write files themselves (Codex; Claude Code
// with its own Edit tool) bypass VS Code's chat editing session, so VS Code has no Keep/Undo for them.

import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import { EditPart } from './wire';

export const BEFORE_SCHEME = 'symposium-before';
const MAX_CONVERSATIONS = 20; // the least recently edited are forgotten first
const MAX_TEXT = 32 * 1024 * 1024; // of old and new texts kept, over all conversations

/**
 * A file's text before a run of edits, from its text now: each edit undone, the last first (an edit's
 * `newText` is the whole file or a region of it, replaced by its `oldText`). `text` undefined: the file did
 * not exist. `lost`: edits whose new text is no longer in the file (changed since), which were not undone.
 */
export function textBefore(now: string | undefined, edits: readonly EditPart[]): { text: string | undefined; lost: number } {
  let text = now;
  let lost = 0;
  for (const edit of [...edits].reverse()) {
    if (text === undefined) {
      lost += 1;
    } else if (edit.oldText === undefined) {
      // Created by the agent: it did not exist before, if it still holds what the agent wrote.
      text === edit.newText ? (text = undefined) : (lost += 1);
    } else if (edit.newText === '' ? text === '' : text.includes(edit.newText)) {
      const at = text.lastIndexOf(edit.newText);
      text = text.slice(0, at) + edit.oldText + text.slice(at + edit.newText.length);
    } else {
      lost += 1;
    }
  }
  return { text, lost };
}

interface Conversation {
  id: string;
  model: string;
  edits: EditPart[];
  at: Date;
}

/** The edits of the last few conversations, in memory (a window's). */
export class AgentEdits {
  private readonly conversations = new Map<string, Conversation>(); // least recently edited first
  private size = 0; // the characters of every edit held

  record(model: string, edit: EditPart): void {
    const id = edit.conversation || model;
    const conversation = this.conversations.get(id) ?? { id, model, edits: [], at: new Date() };
    this.conversations.delete(id);
    conversation.edits.push(edit);
    conversation.at = new Date();
    this.conversations.set(id, conversation);
    this.size += weight([edit]);
    for (const [oldest] of this.conversations) {
      if (this.conversations.size <= MAX_CONVERSATIONS && this.size <= MAX_TEXT) {
        break;
      }
      this.forget(oldest);
    }
  }

  /** Most recently edited first. */
  list(): Conversation[] {
    return [...this.conversations.values()].reverse();
  }

  get(id: string): Conversation | undefined {
    return this.conversations.get(id);
  }

  forget(id: string): void {
    this.size -= weight(this.conversations.get(id)?.edits ?? []);
    this.conversations.delete(id);
  }
}

function weight(edits: EditPart[]): number {
  return edits.reduce((sum, e) => sum + e.newText.length + (e.oldText?.length ?? 0), 0);
}

/** Whether two paths name the same file: on Windows case-insensitively, `/` and `\\` alike (VS Code
 * writes `c:\\` where an agent may write `C:\\`). */
export function samePath(a: string, b: string, platform: NodeJS.Platform = process.platform): boolean {
  return pathKey(a, platform) === pathKey(b, platform);
}

function pathKey(file: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? nodePath.win32.normalize(file).toLowerCase() : file;
}

/** The files of a conversation's edits, each with its edits in order (by the path first written). */
export function byFile(conversation: Pick<Conversation, 'edits'>, platform: NodeJS.Platform = process.platform): Map<string, EditPart[]> {
  const files = new Map<string, EditPart[]>();
  const named = new Map<string, string>(); // key → the path as first written
  for (const edit of conversation.edits) {
    const key = pathKey(edit.path, platform);
    const name = named.get(key) ?? edit.path;
    named.set(key, name);
    files.set(name, [...(files.get(name) ?? []), edit]);
  }
  return files;
}

/** The edits of one file of a conversation. */
function editsOf(conversation: Conversation, file: string): EditPart[] {
  return [...byFile(conversation)].find(([name]) => samePath(name, file))?.[1] ?? [];
}

async function readNow(path: string): Promise<string | undefined> {
  try {
    return Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.file(path))).toString('utf8');
  } catch {
    return undefined;
  }
}

async function pick(edits: AgentEdits, verb: string): Promise<Conversation | undefined> {
  const conversations = edits.list();
  if (conversations.length === 0) {
    void vscode.window.showInformationMessage('Symposium: no agent has changed a file on disk in this window yet.');
    return undefined;
  }
  if (conversations.length === 1) {
    return conversations[0];
  }
  const chosen = await vscode.window.showQuickPick(
    conversations.map((c) => ({
      label: `${c.model}: ${byFile(c).size} file(s)`,
      description: `last edit ${c.at.toLocaleTimeString()}`,
      detail: [...byFile(c).keys()].map((p) => vscode.workspace.asRelativePath(p)).join(', '),
      conversation: c,
    })),
    { placeHolder: `The agent conversation whose edits to ${verb}` },
  );
  return chosen?.conversation;
}

/** `symposium-before:` documents: a file as it was before a conversation's edits. */
export function beforeProvider(edits: AgentEdits): vscode.TextDocumentContentProvider {
  return {
    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
      const conversation = edits.get(uri.query);
      const fileEdits = conversation ? editsOf(conversation, uri.path) : [];
      return textBefore(await readNow(uri.path), fileEdits).text ?? '';
    },
  };
}

/** Symposium: Review Agent Edits: a conversation's changed files in VS Code's multi-file diff view. */
export async function reviewEdits(edits: AgentEdits): Promise<void> {
  const conversation = await pick(edits, 'review');
  if (!conversation) {
    return;
  }
  const resources = [...byFile(conversation).keys()].map((path) => {
    const file = vscode.Uri.file(path);
    return [file, vscode.Uri.from({ scheme: BEFORE_SCHEME, path, query: conversation.id }), file];
  });
  await vscode.commands.executeCommand('vscode.changes', `Edits of ${conversation.model}`, resources);
}

/** Symposium: Revert Agent Edits: a conversation's changed files put back as they were, as one undoable edit. */
export async function revertEdits(edits: AgentEdits): Promise<void> {
  const conversation = await pick(edits, 'revert');
  if (!conversation) {
    return;
  }
  const files = byFile(conversation);
  const answer = await vscode.window.showWarningMessage(
    `Put ${files.size} file(s) back as they were before ${conversation.model} changed them?`,
    { modal: true, detail: [...files.keys()].map((p) => vscode.workspace.asRelativePath(p)).join('\n') },
    'Revert',
  );
  if (answer !== 'Revert') {
    return;
  }
  const change = new vscode.WorkspaceEdit();
  const skipped: string[] = [];
  for (const [path, fileEdits] of files) {
    const now = await readNow(path);
    const { text, lost } = textBefore(now, fileEdits);
    const uri = vscode.Uri.file(path);
    if (lost > 0) {
      skipped.push(vscode.workspace.asRelativePath(path)); // changed since: undoing part of it would mangle it
    } else if (text === undefined) {
      change.deleteFile(uri, { ignoreIfNotExists: true });
    } else if (now === undefined) {
      change.createFile(uri, { contents: Buffer.from(text, 'utf8') });
    } else {
      const document = await vscode.workspace.openTextDocument(uri);
      change.replace(uri, new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), text);
    }
  }
  if (!(await vscode.workspace.applyEdit(change))) {
    void vscode.window.showErrorMessage('Symposium: VS Code could not apply the revert.');
    return;
  }
  for (const path of files.keys()) {
    await vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && samePath(d.uri.fsPath, path))?.save(); // on disk, as the agent's edit was
  }
  edits.forget(conversation.id);
  if (skipped.length) {
    void vscode.window.showWarningMessage(`Symposium: not reverted, changed since the agent's edit: ${skipped.join(', ')}`);
  }
}
