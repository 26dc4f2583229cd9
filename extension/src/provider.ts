// The LanguageModelChatProvider: one model per agent, and one per model an agent offers once it has
// been used. Everything it knows comes from the backend.

import * as vscode from 'vscode';
import { Backend } from './backend';
import { AgentSetting, modelRequest, readAgents, wireAgentEntries } from './config';
import { countedText, modelConfigurationOf, ResponseStream, ThinkingMode, TokenEstimate, toWireMessages, toWireOptions } from './convert';
import { AgentEdits } from './edits';
import { SignIn } from './signIn';
import { signInNeeded } from './signInMethods';
import { BridgedTools, ChatParams, METHOD_INFO, ModelInfo } from './wire';

/**
 * `isUserSelectable` and `configurationSchema` are not in the `@types/vscode` this extension builds
 * against; VS Code 1.139 reads both, ungated (docs/usage.md, "The agent's own choices").
 */
type ModelInformation = vscode.LanguageModelChatInformation & { isUserSelectable: boolean; configurationSchema?: Record<string, unknown> };

export class SymposiumProvider implements vscode.LanguageModelChatProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly tokens = new TokenEstimate();
  private readonly bytesPerToken = new Map<string, number>(); // by model id, as the backend last listed them

  constructor(
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
    private readonly edits: AgentEdits = new AgentEdits(),
    private readonly signIn?: SignIn,
    /** Resolves once the agents' keys are read from the secret storage (they go in each agent's env). */
    private readonly keysRead: Promise<void> = Promise.resolve(),
  ) {}

  /** The agents or the backend changed: VS Code asks for the models again. */
  refresh(): void {
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }

  async provideLanguageModelChatInformation(options: { silent: boolean }): Promise<ModelInformation[]> {
    try {
      await this.keysRead; // the definitions the backend knows agents' models by carry their keys
      const { models } = await this.backend.request<{ models: ModelInfo[] }>(METHOD_INFO, {
        silent: options.silent,
        agents: wireAgentEntries(this.agents()),
      });
      this.bytesPerToken.clear();
      models.forEach((m) => m.bytesPerToken && this.bytesPerToken.set(m.id, m.bytesPerToken));
      return models.map((m) => ({
        id: m.id,
        name: m.name,
        family: m.family,
        version: m.version,
        maxInputTokens: m.maxInputTokens,
        maxOutputTokens: m.maxOutputTokens,
        capabilities: capabilitiesOf(m),
        detail: m.detail,
        tooltip: m.tooltip,
        isUserSelectable: true, // some of VS Code's lists (e.g. MCP sampling models) offer only these
        ...(m.configurationSchema ? { configurationSchema: m.configurationSchema } : {}),
      }));
    } catch (error) {
      this.log.error(`could not list the models: ${messageOf(error)}`);
      return [];
    }
  }

  async provideLanguageModelChatResponse(
    model: vscode.LanguageModelChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const thinking = vscode.workspace.getConfiguration('symposium').get<ThinkingMode>('thinking', 'quote');
    const report = (part: unknown) => progress.report(part as vscode.LanguageModelResponsePart);
    const stream = new ResponseStream(model.id, thinking, report, this.log, undefined, (edit) => this.edits.record(model.name, edit));
    const controller = new AbortController();
    const cancellation = token.onCancellationRequested(() => controller.abort());
    await this.keysRead;
    const request = modelRequest(model.id, this.agents());
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    // Every folder of a multi-root workspace: the agent's session gets them all (docs/usage.md, "Workspace folders").
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    try {
      if (!request) {
        throw new Error(`No agent is configured for the model "${model.id}" (see the symposium.agents setting)`);
      }
      const bridgedTools = vscode.workspace.getConfiguration('symposium').get<BridgedTools>('bridgedTools', 'default');
      const params: ChatParams = {
        modelId: model.id,
        messages: toWireMessages(messages, this.log),
        agent: request.agent,
        options: toWireOptions(options),
        ...(folder?.scheme === 'file' ? { cwd: folder.fsPath } : {}),
        ...(folders.length > 1 ? { folders } : {}),
        ...(Object.keys(request.agentOptions).length ? { agentOptions: request.agentOptions } : {}),
        ...(bridgedTools !== 'default' ? { bridgedTools } : {}),
        ...modelConfigurationOf(options),
      };
      this.log.debug(`chat request for ${model.id}: ${messages.length} messages, ${params.options.tools.length} tools`);
      const outcome = await this.backend.chat(params, (part) => stream.push(part), controller.signal);
      this.log.debug(`chat request for ${model.id}: ${outcome}`);
    } catch (error) {
      const message = messageOf(error);
      this.log.error(`chat request for ${model.id} failed: ${message}${detailOf(error)}`);
      // The agent wants a sign-in: beside the chat's error, a button per way it offers.
      const needed = signInNeeded(error);
      if (needed && request && this.signIn) {
        this.signIn.offer(needed, request.agent, folder?.scheme === 'file' ? folder.fsPath : undefined, request.id);
      }
      // The consumer shows this message (Copilot: "Sorry, your request failed… Reason: …"): once, so no
      // text part repeats it.
      throw new vscode.LanguageModelError(message);
    } finally {
      cancellation.dispose();
    }
  }

  /** An estimate, in the extension (Copilot asks thousands of times per request), by the agent's bytes per token. */
  provideTokenCount(model: vscode.LanguageModelChatInformation, text: string | vscode.LanguageModelChatRequestMessage): Promise<number> {
    return Promise.resolve(this.tokens.count(countedText(text), this.bytesPerToken.get(model.id)));
  }

  private agents(): AgentSetting[] {
    const { agents, problems } = readAgents(vscode.workspace.getConfiguration('symposium').get('agents'));
    problems.forEach((problem) => this.log.warn(problem));
    return agents;
  }
}

/** The model's capabilities for VS Code: only what its stable API reads (docs/usage.md, "Copilot Chat: tools and edits"). */
function capabilitiesOf(m: ModelInfo): vscode.LanguageModelChatInformation['capabilities'] {
  return { toolCalling: m.capabilities.toolCalling, imageInput: m.capabilities.imageInput };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The backend's `data` of an error (the agent's stderr), for the log. */
function detailOf(error: unknown): string {
  const data = (error as { data?: unknown })?.data;
  return data === undefined ? '' : `\n${JSON.stringify(data, null, 2)}`;
}
