// VS Code's LM types ⇄ the wire's. Faithful both ways: nothing is summarised or dropped silently.

import * as vscode from 'vscode';
import { Log } from './backend';
import * as wire from './wire';

// Classes this VS Code may or may not have: `engines.vscode` ^1.104 types them as proposed or not at
// all, so they are looked up at run time.
interface DataPartLike { data: Uint8Array; mimeType: string }
interface ThinkingPartLike { value: string | string[] }
const api = vscode as unknown as Record<string, (new (...args: any[]) => any) | undefined>;
const DataPart = api.LanguageModelDataPart as (new (data: Uint8Array, mimeType: string) => DataPartLike) | undefined;
type ThinkingCtor = new (value: string) => ThinkingPartLike;
const ThinkingPart = api.LanguageModelThinkingPart as ThinkingCtor | undefined;
const ToolResultPart2 = api.LanguageModelToolResultPart2;

const SYSTEM_ROLE = 3; // LanguageModelChatMessageRole.System (proposed `languageModelSystem`)

export function toWireMessages(messages: readonly vscode.LanguageModelChatRequestMessage[], log: Log): wire.Message[] {
  return messages.map((message, index) => {
    const content: wire.Part[] = [];
    for (const part of message.content) {
      const converted = toWirePart(part);
      if (converted) {
        content.push(converted);
      } else {
        log.warn(`messages[${index}]: skipped a part this extension does not know: ${describe(part)}`);
      }
    }
    const result: wire.Message = { role: toWireRole(message.role), content };
    if (message.name) {
      result.name = message.name;
    }
    return result;
  });
}

export function toWireRole(role: vscode.LanguageModelChatMessageRole): wire.Role {
  switch (role as number) {
    case vscode.LanguageModelChatMessageRole.Assistant:
      return 'assistant';
    case SYSTEM_ROLE:
      return 'system';
    default:
      return 'user';
  }
}

/** One part of a request message, or undefined when it is of no kind we know. */
export function toWirePart(part: unknown): wire.Part | undefined {
  if (part instanceof vscode.LanguageModelTextPart) {
    return { type: 'text', value: part.value };
  }
  if (ThinkingPart && part instanceof ThinkingPart) {
    const value = (part as ThinkingPartLike).value;
    return { type: 'thinking', value: Array.isArray(value) ? value.join('') : value };
  }
  if (part instanceof vscode.LanguageModelToolCallPart) {
    return { type: 'tool_call', toolCallId: part.callId, toolName: part.name, parameters: part.input };
  }
  if (part instanceof vscode.LanguageModelToolResultPart || (ToolResultPart2 && part instanceof ToolResultPart2)) {
    const result = part as vscode.LanguageModelToolResultPart;
    return { type: 'tool_result', toolCallId: result.callId, content: toolResultContent(result.content) };
  }
  if (DataPart && part instanceof DataPart) {
    const { data, mimeType } = part as DataPartLike;
    if (mimeType === wire.MARKER_MIME) {
      // `<modelId>\<token>`: the token is what follows the first backslash.
      const text = Buffer.from(data).toString('utf8');
      const slash = text.indexOf('\\');
      return slash < 0 ? undefined : { type: 'marker', value: text.slice(slash + 1) };
    }
    return { type: 'data', mimeType, data: Buffer.from(data).toString('base64') };
  }
  return undefined;
}

/** A tool result's content as text and data items (prompt-tsx rendered to its text). */
export function toolResultContent(items: readonly unknown[]): (wire.TextPart | wire.DataPart)[] {
  const content: (wire.TextPart | wire.DataPart)[] = [];
  for (const item of items) {
    if (item instanceof vscode.LanguageModelTextPart) {
      content.push({ type: 'text', value: item.value });
    } else if (DataPart && item instanceof DataPart) {
      const { data, mimeType } = item as DataPartLike;
      content.push({ type: 'data', mimeType, data: Buffer.from(data).toString('base64') });
    } else if (item instanceof vscode.LanguageModelPromptTsxPart) {
      content.push({ type: 'text', value: promptTsxText(item.value) });
    } else if (typeof item === 'string') {
      content.push({ type: 'text', value: item });
    } else if (item && typeof item === 'object' && 'value' in item) {
      const value = (item as { value: unknown }).value;
      content.push({ type: 'text', value: typeof value === 'string' ? value : promptTsxText(value) });
    }
  }
  return content;
}

/** The text of a serialized prompt-tsx element (`{node}`: pieces with children, text leaves). */
export function promptTsxText(value: unknown): string {
  const out: string[] = [];
  const walk = (node: any): void => {
    if (typeof node === 'string') {
      out.push(node);
    } else if (node && typeof node === 'object') {
      if (node.type === 2 /* Text */) {
        if (node.lineBreakBefore) {
          out.push('\n');
        }
        if (typeof node.text === 'string') {
          out.push(node.text);
        }
      } else if (Array.isArray(node.children)) {
        node.children.forEach(walk);
      }
    }
  };
  walk(value && typeof value === 'object' && 'node' in value ? (value as { node: unknown }).node : value);
  return out.join('');
}

/**
 * What the user chose in the model's own controls: VS Code 1.139 passes it as `modelConfiguration`
 * (not in the `@types/vscode` this extension builds against), its schema's defaults filled in.
 */
export function modelConfigurationOf(options: object): { modelConfiguration?: Record<string, unknown> } {
  const chosen = (options as { modelConfiguration?: unknown }).modelConfiguration;
  return typeof chosen === 'object' && chosen !== null && !Array.isArray(chosen) && Object.keys(chosen).length
    ? { modelConfiguration: chosen as Record<string, unknown> }
    : {};
}

export function toWireOptions(options: vscode.ProvideLanguageModelChatResponseOptions): wire.ChatOptions {
  return {
    tools: (options.tools ?? []).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema ?? {} })),
    toolMode: options.toolMode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto',
  };
}

/** The text a token count is asked for: the string, or a message's text parts. */
export function countedText(text: string | vscode.LanguageModelChatRequestMessage): string {
  if (typeof text === 'string') {
    return text;
  }
  return text.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
}

/**
 * Token counts, estimated as the backend does: a text's UTF-8 bytes over the agent's bytes per token
 * (four until its usage says otherwise; agents do their own accounting). Each text's size is
 * remembered: Copilot asks about every part of every prompt it builds, most of them again on the
 * next request. Bounded: the least recently asked texts are forgotten first.
 */
export class TokenEstimate {
  private readonly known = new Map<string, number>(); // text → its UTF-8 bytes
  private chars = 0;

  constructor(private readonly maxTexts = 10_000, private readonly maxChars = 8_000_000) {}

  count(text: string, bytesPerToken = 4): number {
    let bytes = this.known.get(text);
    if (bytes !== undefined) {
      this.known.delete(text); // re-inserted below: the most recently asked
    } else {
      bytes = Buffer.byteLength(text, 'utf8');
      this.chars += text.length;
    }
    this.known.set(text, bytes);
    for (const oldest of this.known.keys()) {
      if (this.known.size <= this.maxTexts && this.chars <= this.maxChars) {
        break;
      }
      this.known.delete(oldest);
      this.chars -= oldest.length;
    }
    return Math.max(1, Math.ceil(bytes / (bytesPerToken > 0 ? bytesPerToken : 4)));
  }

  /** The texts remembered, least recently asked first. */
  texts(): string[] {
    return [...this.known.keys()];
  }
}

export type ThinkingMode = 'quote' | 'text' | 'hidden';

/**
 * Turns the backend's response parts into VS Code's, in order. Thoughts become thinking parts where
 * VS Code has them, else text per `symposium.thinking`.
 */
export class ResponseStream {
  private inThought = false;

  constructor(
    private readonly modelId: string,
    private readonly thinking: ThinkingMode,
    private readonly report: (part: unknown) => void,
    private readonly log: Log,
    private readonly thinkingPart: ThinkingCtor | null = ThinkingPart ?? null,
    private readonly onEdit: (edit: wire.EditPart) => void = () => {},
  ) {}

  push(part: wire.ResponsePart): void {
    if (part.type === 'thinking') {
      this.thought(part.value);
      return;
    }
    this.endThought();
    switch (part.type) {
      case 'text':
        this.report(new vscode.LanguageModelTextPart(part.value));
        break;
      case 'tool_call':
        this.report(new vscode.LanguageModelToolCallPart(part.toolCallId, part.toolName, (part.parameters ?? {}) as object));
        break;
      case 'marker':
        if (DataPart) {
          this.report(new DataPart(Buffer.from(`${this.modelId}\\${part.value}`, 'utf8'), wire.MARKER_MIME));
        }
        break;
      case 'edit':
        this.onEdit(part); // for Symposium: Review / Revert Agent Edits; the chat shows the diff as text
        break;
      case 'usage':
        if (DataPart) {
          this.report(new DataPart(Buffer.from(JSON.stringify(usageJson(part)), 'utf8'), wire.USAGE_MIME));
        }
        break;
      default:
        this.log.warn(`ignored a response part of unknown type: ${JSON.stringify(part)}`);
    }
  }

  private thought(value: string): void {
    if (this.thinkingPart) {
      this.report(new this.thinkingPart(value));
    } else if (this.thinking === 'text') {
      this.report(new vscode.LanguageModelTextPart(value));
      this.inThought = true;
    } else if (this.thinking === 'quote') {
      const quoted = value.replace(/\n/g, '\n> ');
      this.report(new vscode.LanguageModelTextPart(this.inThought ? quoted : `> *Thinking:* ${quoted}`));
      this.inThought = true;
    }
  }

  private endThought(): void {
    if (this.inThought) {
      this.inThought = false;
      this.report(new vscode.LanguageModelTextPart('\n\n'));
    }
  }
}

/** A usage part as Copilot Chat reads it: OpenAI's field names. */
export function usageJson(part: wire.UsagePart): object {
  return {
    prompt_tokens: part.promptTokens,
    completion_tokens: part.completionTokens,
    total_tokens: part.totalTokens,
    prompt_tokens_details: { cached_tokens: part.cachedTokens },
  };
}

function describe(part: unknown): string {
  const name = (part as object)?.constructor?.name ?? typeof part;
  try {
    return `${name} ${JSON.stringify(part)?.slice(0, 200)}`;
  } catch {
    return name;
  }
}
