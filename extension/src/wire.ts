// The extension ⇄ backend wire protocol (DESIGN §3): JSON-RPC 2.0, one object per line.

export const METHOD_INFO = 'lm/provideLanguageModelChatInformation';
export const METHOD_CHAT = 'lm/provideLanguageModelChatResponse';
export const METHOD_TOKENS = 'lm/provideTokenCount';
export const METHOD_CANCEL = 'lm/cancel';
export const METHOD_PART = 'lm/responsePart';
export const METHOD_COMPLETE = 'lm/responseComplete';

export const AGENT_ACTION_TOOL = 'symposium-agent-action';
// The tool's whole answer on Allow; the backend takes nothing else (Skip, errors, other text) as a yes.
export const AGENT_ACTION_APPROVED = 'symposium-agent-action:approved';
export const MARKER_MIME = 'stateful_marker';

export const CANCELLED = -32800;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface TextPart { type: 'text'; value: string }
export interface ThinkingPart { type: 'thinking'; value: string }
export interface ToolCallPart { type: 'tool_call'; toolCallId: string; toolName: string; parameters: unknown }
export interface DataPart { type: 'data'; mimeType: string; data: string /* base64 */ }
export interface MarkerPart { type: 'marker'; value: string }
export interface ToolResultPart { type: 'tool_result'; toolCallId: string; content: (TextPart | DataPart)[] }

/** What a request message may hold. */
export type Part = TextPart | ThinkingPart | ToolCallPart | ToolResultPart | DataPart | MarkerPart;
/** What the backend streams back. */
export type ResponsePart = TextPart | ThinkingPart | ToolCallPart | MarkerPart;

export type Role = 'user' | 'assistant' | 'system';

export interface Message { role: Role; content: Part[]; name?: string }

export interface Tool { name: string; description: string; inputSchema: unknown }

export interface ChatOptions { tools: Tool[]; toolMode: 'auto' | 'required' }

export type Agent =
  | { eliza: { deterministic: boolean } }
  | { mcp_server: { name: string; command: string; args: string[]; env: { name: string; value: string }[] } };

export interface AgentEntry { id: string; name: string; agent: Agent }

export interface ChatParams {
  modelId: string;
  messages: Message[];
  agent: Agent;
  options: ChatOptions;
  cwd?: string;
}

export interface ModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling?: boolean | number; imageInput?: boolean };
  detail?: string;
  tooltip?: string;
}
