// Warm-up: asks the backend (`lm/prepareModel`) to start an agent and keep a session ready for its
// next new conversation: for the model last used when the window opens, and for each model once it
// has answered a first request. VS Code does not tell a model provider when the user picks one of its
// models in the picker, so those are the moments we know of. No `vscode` import.

import { Backend, Log } from './backend';
import { Agent, METHOD_CHAT, METHOD_PREPARE, PrepareParams, PrepareResult } from './wire';

export interface WarmupStore {
  lastModel(): string | undefined;
  setLastModel(modelId: string): void;
}

export class Warmup {
  private readonly chats = new Map<unknown, PrepareParams>(); // chat request id → what to prepare after it
  private readonly prepared = new Set<string>(); // model ids prepared in the running backend

  constructor(
    private readonly backend: Backend,
    private readonly store: WarmupStore,
    private readonly log: Log,
  ) {}

  /** Every message to and from the backend (the Backend's onMessage hook). */
  observe(direction: 'send' | 'recv', message: any): void {
    if (direction === 'send' && message?.method === METHOD_CHAT && message.params) {
      const { modelId, agent, cwd } = message.params;
      if (this.store.lastModel() !== modelId) {
        this.store.setLastModel(modelId);
      }
      if (!this.prepared.has(modelId) && !agent?.eliza) {
        this.chats.set(message.id, { modelId, agent, ...(cwd ? { cwd } : {}) });
      }
    } else if (direction === 'recv' && message?.id !== undefined && !message.method && this.chats.has(message.id)) {
      // After the answer, not before: making a session costs the agent CPU the request would wait for.
      const params = this.chats.get(message.id)!;
      this.chats.delete(message.id);
      void this.prepare(params);
    }
  }

  /** The backend exited: the next one has nothing prepared. */
  reset(): void {
    this.prepared.clear();
    this.chats.clear();
  }

  /** Prepares a model (once per backend); never throws: a failure here shows in the chat request. */
  async prepare(params: PrepareParams): Promise<PrepareResult | undefined> {
    if (this.prepared.has(params.modelId)) {
      return undefined;
    }
    return this.request(params).catch(() => undefined);
  }

  /** `lm/prepareModel` now, prepared before or not (after an install, to hear what the agent says). */
  async request(params: PrepareParams): Promise<PrepareResult | undefined> {
    this.prepared.add(params.modelId);
    const started = Date.now();
    try {
      const result = await this.backend.request<PrepareResult>(METHOD_PREPARE, params);
      this.log.info(`warmed up ${params.modelId} in ${Date.now() - started} ms${result.ready ? '' : ` (no session: ${result.error ?? 'unknown'})`}`);
      return result;
    } catch (error) {
      this.prepared.delete(params.modelId);
      this.log.warn(`could not warm up ${params.modelId}: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }
}

/** The params to warm up `modelId` with, when it is a configured agent's. */
export function prepareParams(modelId: string, agent: Agent | undefined, cwd: string | undefined): PrepareParams | undefined {
  return agent ? { modelId, agent, ...(cwd ? { cwd } : {}) } : undefined;
}
