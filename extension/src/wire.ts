// The extension ⇄ backend wire protocol (docs/DESIGN.md, "Wire protocol"): JSON-RPC 2.0, one object per line.

export const METHOD_INFO = 'lm/provideLanguageModelChatInformation';
export const METHOD_CHAT = 'lm/provideLanguageModelChatResponse';
export const METHOD_CANCEL = 'lm/cancel';
export const METHOD_PART = 'lm/responsePart';
export const METHOD_COMPLETE = 'lm/responseComplete';
export const METHOD_PREPARE = 'lm/prepareModel';
/** Backend → extension: an agent's models, context window or bytes per token changed; ask again. */
export const METHOD_MODELS_CHANGED = 'lm/modelsChanged';
export const METHOD_AGENT_OPTIONS = 'lm/agentOptions';
export const METHOD_LIST_SESSIONS = 'lm/listSessions';
export const METHOD_AGENT_COMMANDS = 'lm/agentCommands';

/** A slash command an agent announced (lm/agentCommands), with how a user types it in the chat. */
export interface AgentCommandInfo {
  name: string;
  description: string;
  hint: string;
  typed: string;
}
/** The user chose one of an agent's sign-in methods: a terminal one has run, an agent-handled one is started. */
export const METHOD_AUTHENTICATE = 'lm/authenticate';
export const METHOD_LOGOUT = 'lm/logout';

export const AGENT_ACTION_TOOL = 'symposium-agent-action';
// The tool's whole answer on Allow; the backend takes nothing else (Skip, errors, other text) as a yes.
export const AGENT_ACTION_APPROVED = 'symposium-agent-action:approved';
export const MARKER_MIME = 'stateful_marker';
/** The data part Copilot Chat reads an extension model's usage from (its context-window indicator). */
export const USAGE_MIME = 'usage';

export const CANCELLED = -32800;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface TextPart { type: 'text'; value: string }
export interface ThinkingPart { type: 'thinking'; value: string }
export interface ToolCallPart { type: 'tool_call'; toolCallId: string; toolName: string; parameters: unknown }
export interface DataPart { type: 'data'; mimeType: string; data: string /* base64 */ }
export interface MarkerPart { type: 'marker'; value: string }
export interface ToolResultPart { type: 'tool_result'; toolCallId: string; content: (TextPart | DataPart)[] }
/** A file the agent changed on disk: the whole file or a region (`oldText` absent: it created the file). */
export interface EditPart { type: 'edit'; path: string; oldText?: string; newText: string; conversation: string }
/** What the agent reported a response cost; `promptTokens` is its context as it last reported it. */
export interface UsagePart { type: 'usage'; promptTokens: number; completionTokens: number; totalTokens: number; cachedTokens: number }

/** What a request message may hold. */
export type Part = TextPart | ThinkingPart | ToolCallPart | ToolResultPart | DataPart | MarkerPart;
/** What the backend streams back. */
export type ResponsePart = TextPart | ThinkingPart | ToolCallPart | MarkerPart | UsagePart | EditPart;

export type Role = 'user' | 'assistant' | 'system';

export interface Message { role: Role; content: Part[]; name?: string }

export interface Tool { name: string; description: string; inputSchema: unknown }

export interface ChatOptions { tools: Tool[]; toolMode: 'auto' | 'required' }

export type Agent =
  | { eliza: { deterministic: boolean } }
  | { mcp_server: { name: string; command: string; args: string[]; env: { name: string; value: string }[] } };

export interface AgentEntry { id: string; name: string; agent: Agent; options?: AgentOptions }

/** The agent's own options a request wants, by option id or category: `{ model: 'sonnet', mode: 'plan' }`. */
export type AgentOptions = Record<string, string | boolean>;

/** `symposium.bridgedTools`, passed through: the backend decides which tools agents get. */
export type BridgedTools = 'default' | 'all' | string[];

export interface ChatParams {
  modelId: string;
  messages: Message[];
  agent: Agent;
  options: ChatOptions;
  cwd?: string;
  /** Every folder of a multi-root workspace (`cwd` is the first): the agent's session gets them all. */
  folders?: string[];
  agentOptions?: AgentOptions;
  bridgedTools?: BridgedTools;
  /** What the user chose in the model's own controls (VS Code's `modelConfiguration`), passed through: the backend reads it. */
  modelConfiguration?: Record<string, unknown>;
}

/** `lm/prepareModel`: the agent started, and whether a session could be made ahead for it. */
export interface PrepareParams { modelId: string; agent: Agent; cwd?: string }
export interface AuthMethod { id?: string; name?: string; description?: string; type?: string; args?: string[]; env?: Record<string, string> }
export interface PrepareResult { ready: boolean; authMethods: AuthMethod[]; signIn?: SignInState; agentInfo?: { name?: string; title?: string; version?: string } | null; error?: string }

/** One of an agent's sign-in methods, as the backend offers it (docs/DESIGN.md, "Sign-in"). */
export interface SignInMethod {
  id: string;
  name: string;
  kind: 'env_var' | 'terminal' | 'agent';
  description: string;
  /** The variables it reads a key from: an env_var method's (each needed), an agent method's the agent facts name. */
  vars?: string[];
  /** What the key box asks for, in order (a method without it takes no key). */
  askFor?: string[];
  /** A terminal method's command line, and the variables it adds to the agent's own env. */
  terminal?: { command: string; args: string[]; env: Record<string, string> };
  /** Variables the agent asked it to set (or to ask for) that the backend refused (protocol/acp/auth.py, `may_set`): said, never set. */
  refused?: string[];
}

/**
 * An agent's sign-in: its methods, the one it signed in with on this run, who it says it is signed in
 * as (where it pushes that), whether it can log out.
 */
export interface SignInState { methods: SignInMethod[]; authenticated: string | null; status?: string | null; canLogOut: boolean }
export interface AuthenticateParams { agent: Agent; methodId: string; cwd?: string }

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
  /** The agent's, learned from its usage: token counts divide a text's UTF-8 bytes by it. */
  bytesPerToken?: number;
  /** The agent's options as the model's own controls (a JSON schema's enum properties), passed to VS Code as they are. */
  configurationSchema?: Record<string, unknown>;
}

/** One option an agent's sessions offer (lm/agentOptions). */
export interface AgentOption {
  id: string;
  name: string;
  category: string | null;
  type: 'select' | 'boolean';
  current: string | boolean | null;
  description: string;
  values: { value: string; name: string; description: string; bypassesPermissions: boolean }[];
}

/** One of an agent's own sessions (lm/listSessions); `token` continues it in a new chat. */
export interface AgentSessionInfo {
  sessionId: string;
  cwd: string;
  title: string | null;
  updatedAt: string | null;
  token: string;
}

export interface SessionListing {
  supported: boolean;
  reason?: string;
  sessions: AgentSessionInfo[];
  nextCursor?: string;
}
